package testcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// CreateTopic replicates a topic config with queues read/write queues through
// the leader.
func (c *Cluster) CreateTopic(topic string, queues int32) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		l := c.WaitLeader(10 * time.Second)
		resp, err := l.Node().Apply(ctx, fsm.TopicUpsert{Topic: fsm.TopicConfig{
			Name: topic, ReadQueueNums: queues, WriteQueueNums: queues, Perm: fsm.PermRead | fsm.PermWrite,
		}})
		if err == nil {
			if r, ok := resp.(*fsm.ConfigResult); !ok || r.Err != nil {
				c.t.Fatalf("create topic %s: %#v", topic, resp)
			}
			return
		}
		if ctx.Err() != nil {
			c.t.Fatalf("create topic %s: %v", topic, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Message encodes one message as the broker would before proposing it.
func Message(topic string, queueID int32, body []byte) []byte {
	b, err := store.AppendMessage(nil, &store.Message{Topic: topic, QueueID: queueID, Body: body, BornTimestamp: 1})
	if err != nil {
		panic(fmt.Sprintf("testcluster: encode message: %v", err))
	}
	return b
}

// ReadBody reads the body of the message stored at off on m's node.
func ReadBody(m *Member, off store.PhysicalOffset) ([]byte, error) {
	rec, release, err := m.Node().Store().ReadMessageAt(off)
	if err != nil {
		return nil, err
	}
	defer release()
	msg, err := store.DecodeMessage(rec, true)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(msg.Body), nil
}

// ReplicaDigest summarises one node's data for comparison.
type ReplicaDigest struct {
	AppliedIndex    uint64
	MinOffset       store.PhysicalOffset
	CommitLogOffset store.PhysicalOffset
	CommitLogSHA    [32]byte
	// Queues maps "topic/queue" to the physical offsets of its entries from
	// the queue's minimum offset, and MinQueue to that minimum.
	Queues   map[string][]store.PhysicalOffset
	MinQueue map[string]store.QueueOffset
}

// Digest reads one node's CommitLog [from, to) and all its ConsumeQueues.
func Digest(m *Member, from, to store.PhysicalOffset) (ReplicaDigest, error) {
	n := m.Node()
	st := n.Store()
	d := ReplicaDigest{
		AppliedIndex:    n.State().AppliedIndex,
		MinOffset:       st.MinPhysicalOffset(),
		CommitLogOffset: n.FSM().CommitLogOffset(),
		Queues:          map[string][]store.PhysicalOffset{},
		MinQueue:        map[string]store.QueueOffset{},
	}
	h := sha256.New()
	if err := st.ReadRange(from, to, func(chunk []byte) error { h.Write(chunk); return nil }); err != nil {
		return d, fmt.Errorf("read CommitLog [%d,%d) of %s: %w", from, to, m.ID, err)
	}
	copy(d.CommitLogSHA[:], h.Sum(nil))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, to); err != nil {
		return d, fmt.Errorf("wait dispatch to %d on %s: %w", to, m.ID, err)
	}
	for _, tq := range st.Topics() {
		key := fmt.Sprintf("%s/%d", tq.Topic, tq.QueueID)
		off := st.MinQueueOffset(tq.Topic, tq.QueueID)
		d.MinQueue[key] = off
		var offs []store.PhysicalOffset
		for {
			r, err := st.GetMessages(tq.Topic, tq.QueueID, off, 1024, 64<<20, nil)
			if err != nil {
				return d, fmt.Errorf("read queue %s on %s: %w", key, m.ID, err)
			}
			for _, msg := range r.Messages {
				offs = append(offs, store.PhysicalOffsetOf(msg))
			}
			got := len(r.Messages)
			next := r.NextBeginOffset
			r.Release()
			if got == 0 || next <= off {
				break
			}
			off = next
		}
		d.Queues[key] = offs
	}
	return d, nil
}

// AssertReplicasIdentical waits until every running node has applied the
// leader's last index, then checks the invariant of design.md §4: CommitLog
// bytes identical on every replica (from the highest minimum offset to the
// common applied offset) and identical ConsumeQueues.
func (c *Cluster) AssertReplicasIdentical() map[string]ReplicaDigest {
	c.t.Helper()
	c.WaitConverged(30 * time.Second)
	running := c.Running()
	var from, to store.PhysicalOffset
	for i, m := range running {
		n := m.Node()
		lo, hi := n.Store().MinPhysicalOffset(), n.FSM().CommitLogOffset()
		if i == 0 || lo > from {
			from = lo
		}
		if i == 0 || hi < to {
			to = hi
		}
	}
	digests := map[string]ReplicaDigest{}
	var ref *ReplicaDigest
	var refID string
	for _, m := range running {
		d, err := Digest(m, from, to)
		if err != nil {
			c.t.Fatal(err)
		}
		digests[string(m.ID)] = d
		if ref == nil {
			ref, refID = &d, string(m.ID)
			continue
		}
		if d.AppliedIndex != ref.AppliedIndex || d.CommitLogOffset != ref.CommitLogOffset {
			c.t.Errorf("%s applied index %d offset %d, %s applied index %d offset %d",
				m.ID, d.AppliedIndex, d.CommitLogOffset, refID, ref.AppliedIndex, ref.CommitLogOffset)
		}
		if d.CommitLogSHA != ref.CommitLogSHA {
			c.t.Errorf("CommitLog [%d,%d) of %s differs from %s", from, to, m.ID, refID)
		}
		compareQueues(c, refID, ref, string(m.ID), &d)
	}
	return digests
}

func compareQueues(c *Cluster, aID string, a *ReplicaDigest, bID string, b *ReplicaDigest) {
	c.t.Helper()
	keys := map[string]bool{}
	for k := range a.Queues {
		keys[k] = true
	}
	for k := range b.Queues {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	bad := 0
	for _, k := range sorted {
		qa, qb := a.Queues[k], b.Queues[k]
		if a.MinQueue[k] != b.MinQueue[k] || len(qa) != len(qb) {
			c.t.Errorf("queue %s: %s has [%d,+%d), %s has [%d,+%d)", k, aID, a.MinQueue[k], len(qa), bID, b.MinQueue[k], len(qb))
			bad++
		} else {
			for i := range qa {
				if qa[i] != qb[i] {
					c.t.Errorf("queue %s entry %d: %s → %d, %s → %d", k, i, aID, qa[i], bID, qb[i])
					bad++
					break
				}
			}
		}
		if bad > 10 {
			c.t.Fatalf("too many ConsumeQueue differences")
		}
	}
}

// tearCommitLogTail writes the first bytes of a record after the last record of
// the newest CommitLog segment, as a crash mid-write leaves it.
func tearCommitLogTail(storeDir string) error {
	dir := filepath.Join(storeDir, "commitlog")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var last string
	for _, e := range ents {
		if len(e.Name()) == 20 && e.Name() > last {
			last = e.Name()
		}
	}
	if last == "" {
		return fmt.Errorf("no CommitLog segment in %s", dir)
	}
	path := filepath.Join(dir, last)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	if end+64 > len(data) {
		return fmt.Errorf("segment %s has no room for a torn record", path)
	}
	var torn [40]byte
	binary.BigEndian.PutUint32(torn[0:], 300) // TOTALSIZE
	magic := store.MagicV1
	binary.BigEndian.PutUint32(torn[4:], uint32(magic))                // MAGIC
	binary.BigEndian.PutUint32(torn[8:], 0xdeadbeef)                   // BODYCRC
	copy(torn[12:], []byte("torn write: the rest never hit the disk")) // partial fields
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(torn[:], int64(end)); err != nil {
		return err
	}
	return f.Sync()
}
