package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/raftlog"
	"github.com/rocketraft/rocketraft/store"
)

// nodeRaftDirName is broker/node's RaftDirName (not imported: the suite reads a
// stopped node's files, not its code).
const nodeRaftDirName = "raft"

// ReadReplica opens a stopped node's store offline and returns its queues (ids =
// message bodies) and raw CommitLog bytes. keep selects the topics to read (nil =
// every topic). Opening runs the store's recovery, exactly what a restart would do.
func ReadReplica(node, storeDir string, segmentSize int64, keep func(topic string) bool, log hclog.Logger) (ReplicaLog, error) {
	// The node's raft directory (a sibling of its store) says which kind wrote it.
	raftDir := filepath.Join(filepath.Dir(storeDir), nodeRaftDirName)
	rl := ReplicaLog{Node: node, Queues: map[QueueKey][]string{},
		RaftLog: raftlog.ResolveKind(raftDir, raftlog.LogStoreAuto) == raftlog.LogStoreCommitLog}
	// With the raft log kept in the CommitLog (decision 0016) the store cannot
	// dispatch on its own: its queues are what the node's Apply dispatched before
	// its clean stop (the shutdown checkpoint waits for that), and the CommitLog
	// bytes include raft's entry records, the same on every replica.
	entryLog := rl.RaftLog
	s, err := store.Open(store.Config{Dir: storeDir, CommitLogSegmentSize: segmentSize,
		IndexHashSlots: proctest.IndexHashSlots, IndexMaxEntries: proctest.IndexMaxEntries, Logger: log,
		RaftEntryLog: entryLog})
	if err != nil {
		return rl, fmt.Errorf("replica %s: open store %s: %w", node, storeDir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	minOff, maxOff := s.MinPhysicalOffset(), s.MaxPhysicalOffset()
	if !entryLog {
		if err := s.WaitDispatched(ctx, maxOff); err != nil {
			_ = s.Close()
			return rl, fmt.Errorf("replica %s: dispatch to %d: %w", node, maxOff, err)
		}
	}
	for _, tq := range s.Topics() {
		if keep != nil && !keep(tq.Topic) {
			continue
		}
		q := QueueKey{Topic: tq.Topic, QueueID: tq.QueueID}
		ids, err := readQueue(s, tq.Topic, tq.QueueID)
		if err != nil {
			_ = s.Close()
			return rl, fmt.Errorf("replica %s: queue %s: %w", node, q, err)
		}
		rl.Queues[q] = ids
	}
	if err := s.Close(); err != nil {
		return rl, fmt.Errorf("replica %s: close store: %w", node, err)
	}
	rl.CommitLogMin = int64(minOff)
	rl.CommitLog, err = readCommitLog(filepath.Join(storeDir, "commitlog"), int64(minOff), int64(maxOff))
	if err != nil {
		return rl, fmt.Errorf("replica %s: %w", node, err)
	}
	return rl, nil
}

// readQueue returns the bodies at offsets 0..max-1; offsets below the queue's
// minimum are "".
func readQueue(s *store.Store, topic string, qid int32) ([]string, error) {
	minQ, maxQ := s.MinQueueOffset(topic, qid), s.MaxQueueOffset(topic, qid)
	ids := make([]string, minQ, maxQ)
	for off := minQ; off < maxQ; {
		res, err := s.GetMessages(topic, qid, off, 256, 4<<20, nil)
		if err != nil {
			return nil, fmt.Errorf("GetMessages at %d: %w", off, err)
		}
		if res.Status != store.Found || len(res.Messages) == 0 {
			res.Release()
			return nil, fmt.Errorf("GetMessages at %d of %d: status %v", off, maxQ, res.Status)
		}
		for i, raw := range res.Messages {
			if res.QueueOffsets[i] != off {
				res.Release()
				return nil, fmt.Errorf("expected queue offset %d, store returned %d", off, res.QueueOffsets[i])
			}
			id, err := decodeID(raw)
			if err != nil {
				res.Release()
				return nil, fmt.Errorf("decode message at queue offset %d: %w", off, err)
			}
			ids = append(ids, id)
			off++
		}
		res.Release()
	}
	return ids, nil
}

// CorruptPrefix marks an id whose stored body fails its CRC, so a corrupt replica
// shows up as a replica difference instead of aborting the read.
const CorruptPrefix = "!corrupt:"

func decodeID(raw []byte) (string, error) {
	m, err := store.DecodeMessage(raw, true)
	if err == nil {
		return string(m.Body), nil
	}
	if m2, err2 := store.DecodeMessage(raw, false); err2 == nil {
		return CorruptPrefix + string(m2.Body), nil
	}
	return "", err
}

// readCommitLog concatenates the segment files covering [minOff, maxOff).
func readCommitLog(dir string, minOff, maxOff int64) ([]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if len(e.Name()) == 20 && !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([]byte, 0, maxOff-minOff)
	for _, name := range names {
		var start int64
		if _, err := fmt.Sscanf(name, "%d", &start); err != nil {
			continue
		}
		if start >= maxOff {
			break
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		lo := max(minOff-start, 0)
		hi := min(maxOff-start, int64(len(b)))
		if lo < hi {
			out = append(out, b[lo:hi]...)
		}
	}
	if int64(len(out)) != maxOff-minOff {
		return nil, fmt.Errorf("commitlog %s: read %d bytes for [%d, %d)", dir, len(out), minOff, maxOff)
	}
	return out, nil
}

// StopAndReadReplicas stops every node cleanly and reads each replica offline.
func (c *Cluster) StopAndReadReplicas(keep func(topic string) bool) ([]ReplicaLog, error) {
	for i := range c.Nodes {
		c.Stop(i)
	}
	var logs []ReplicaLog
	var errs []error
	for _, n := range c.Nodes {
		rl, err := ReadReplica(n.ID, n.StoreDir(), c.opts.SegmentSize, keep, c.log)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		logs = append(logs, rl)
	}
	return logs, errors.Join(errs...)
}
