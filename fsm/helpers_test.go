package fsm

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/store"
)

// fakeStore is an in-memory MessageStore: one contiguous CommitLog without segments.
// It implements the contract the FSM relies on (offset assignment, patching, batch
// rejection without side effects, truncate rebuilding the queue table).
type fakeStore struct {
	base    store.PhysicalOffset
	data    []byte
	flushed store.PhysicalOffset
	queues  map[TopicQueue]store.QueueOffset
	// flushLag makes Flush report this many bytes less than written (a store that
	// could not flush everything).
	flushLag  int64
	appendErr error
}

func newFakeStore() *fakeStore { return &fakeStore{queues: map[TopicQueue]store.QueueOffset{}} }

func (s *fakeStore) AppendBatch(recs [][]byte, ts int64) ([]store.AppendResult, error) {
	if s.appendErr != nil {
		return nil, s.appendErr
	}
	for i, r := range recs {
		if _, err := store.DecodeMessage(r, false); err != nil {
			return nil, fmt.Errorf("%w: record %d: %w", store.ErrMessageIllegal, i, err)
		}
	}
	out := make([]store.AppendResult, 0, len(recs))
	for _, r := range recs {
		m, _ := store.DecodeMessage(r, false)
		tq := TopicQueue{m.Topic, m.QueueID}
		qo := s.queues[tq]
		s.queues[tq] = qo + 1
		phys := s.MaxPhysicalOffset()
		start := len(s.data)
		s.data = append(s.data, r...)
		dst := s.data[start:]
		store.PatchOffsets(dst, qo, phys)
		store.PatchStoreTimestamp(dst, ts)
		out = append(out, store.AppendResult{Topic: m.Topic, QueueID: m.QueueID, QueueOffset: qo, PhysicalOffset: phys, Size: int32(len(r)), StoreTimestamp: ts})
	}
	return out, nil
}

func (s *fakeStore) rebuild() {
	s.queues = map[TopicQueue]store.QueueOffset{}
	for p := 0; p < len(s.data); {
		m, err := store.DecodeMessage(s.data[p:], false)
		if err != nil {
			panic(err)
		}
		s.queues[TopicQueue{m.Topic, m.QueueID}] = m.QueueOffset + 1
		p += int(m.StoreSize)
	}
}

func (s *fakeStore) Truncate(off store.PhysicalOffset) error {
	if off < s.base || off > s.MaxPhysicalOffset() {
		return fmt.Errorf("truncate %d: %w", off, store.ErrOffsetOutOfRange)
	}
	s.data = s.data[:off-s.base]
	s.flushed = min(s.flushed, off)
	s.rebuild()
	return nil
}

func (s *fakeStore) Flush() (store.PhysicalOffset, error) {
	s.flushed = max(s.flushed, s.MaxPhysicalOffset()-store.PhysicalOffset(s.flushLag))
	return s.flushed, nil
}

func (s *fakeStore) MinPhysicalOffset() store.PhysicalOffset { return s.base }
func (s *fakeStore) MaxPhysicalOffset() store.PhysicalOffset {
	return s.base + store.PhysicalOffset(len(s.data))
}

func (s *fakeStore) ReadRange(from, to store.PhysicalOffset, fn func([]byte) error) error {
	if from < s.base || to > s.MaxPhysicalOffset() || from > to {
		return store.ErrOffsetOutOfRange
	}
	const chunk = 100 // small, so the chunked path is exercised
	for p := from; p < to; {
		e := min(p+chunk, to)
		if err := fn(s.data[p-s.base : e-s.base]); err != nil {
			return err
		}
		p = e
	}
	return nil
}

func (s *fakeStore) ResetFrom(start store.PhysicalOffset, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.base, s.data, s.flushed = start, b, start+store.PhysicalOffset(len(b))
	s.rebuild()
	return nil
}

// bytesOf returns a store's whole CommitLog.
func bytesOf(t testing.TB, st MessageStore) []byte {
	t.Helper()
	var out []byte
	if err := st.ReadRange(st.MinPhysicalOffset(), st.MaxPhysicalOffset(), func(c []byte) error {
		out = append(out, c...)
		return nil
	}); err != nil {
		t.Fatalf("read range: %v", err)
	}
	return out
}

var (
	leaderHost = netip.MustParseAddrPort("10.0.0.1:10911")
	bornHost   = netip.MustParseAddrPort("192.168.1.7:51000")
)

// msg encodes one message as the leader would (its own store host already in place).
func msg(t testing.TB, topic string, queueID int32, body string) []byte {
	t.Helper()
	m := store.Message{
		Topic: topic, QueueID: queueID, BornTimestamp: 1700000000000, BornHost: bornHost,
		StoreHost: leaderHost, Body: []byte(body), Properties: store.EncodeProperties(map[string]string{"KEYS": body}),
	}
	b, err := store.AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func enc(t testing.TB, c Command) []byte {
	t.Helper()
	b, err := Encode(nil, c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func cmdLog(index uint64, data []byte) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: data}
}

// workload returns a deterministic log: topics, then puts over several queues mixed
// with offset commits and config changes, starting at index 1.
func workload(t testing.TB, puts int) []*raft.Log {
	t.Helper()
	var ls []*raft.Log
	add := func(c Command) { ls = append(ls, cmdLog(uint64(len(ls)+1), enc(t, c))) }
	add(TopicUpsert{Topic: TopicConfig{Name: "TopicA", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6}})
	add(TopicUpsert{Topic: TopicConfig{Name: "TopicB", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 6}})
	add(SubscriptionGroupUpsert{Group: DefaultSubscriptionGroup("GroupA")})
	for i := 0; i < puts; i++ {
		var msgs [][]byte
		for j := 0; j <= i%5; j++ {
			topic, q := "TopicA", int32((i+j)%4)
			if j%3 == 2 {
				topic, q = "TopicB", int32(j%2)
			}
			msgs = append(msgs, msg(t, topic, q, strings.Repeat(fmt.Sprintf("m%d.%d;", i, j), 1+i%7)))
		}
		add(PutMessages{StoreTimestamp: 1700000001000 + int64(i), StoreHost: leaderHost, Messages: msgs})
		if i%10 == 9 {
			add(ConsumerOffsets{Offsets: []OffsetEntry{{Group: "GroupA", Topic: "TopicA", QueueID: int32(i % 4), Offset: store.QueueOffset(i)}}})
			ls = append(ls, &raft.Log{Index: uint64(len(ls) + 1), Term: 1, Type: raft.LogNoop})
		}
	}
	return ls
}

func newFSM(t testing.TB, st MessageStore, dir string) *FSM {
	t.Helper()
	f, err := New(Config{Store: st, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// applyAll feeds logs in batches of n through ApplyBatch (n ≤ 1: Apply one by one).
func applyAll(f *FSM, ls []*raft.Log, n int) []any {
	var out []any
	if n <= 1 {
		for _, l := range ls {
			out = append(out, f.Apply(l))
		}
		return out
	}
	for i := 0; i < len(ls); i += n {
		out = append(out, f.ApplyBatch(ls[i:min(i+n, len(ls))])...)
	}
	return out
}

// memSink is an in-memory raft.SnapshotSink.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }

func snapshotBytes(t testing.TB, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	if !sink.closed || sink.cancelled {
		t.Fatalf("sink closed=%v cancelled=%v", sink.closed, sink.cancelled)
	}
	return sink.Bytes()
}

func mustPanic(t *testing.T, fn func()) string {
	t.Helper()
	var msg string
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatal("expected a panic")
			}
			msg = fmt.Sprint(r)
		}()
		fn()
	}()
	return msg
}
