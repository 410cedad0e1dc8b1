package fakereplica

import (
	"context"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// dispatchWait bounds how long a test waits for the reput to index what it
// appended.
const dispatchWait = 5 * time.Second

// OpenStore opens a small real store in a temporary directory, closed when
// the test ends.
func OpenStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 4 << 20, ConsumeQueueEntriesPerFile: 1000,
		IndexHashSlots: 100, IndexMaxEntries: 4000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// WaitDispatched waits until the ConsumeQueues cover everything appended.
func WaitDispatched(t testing.TB, st *store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dispatchWait)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}

// ReadQueue returns every message of one queue, copied out of the store, once
// everything appended is dispatched.
func ReadQueue(t testing.TB, st *store.Store, topic string, q int32) []store.Message {
	t.Helper()
	WaitDispatched(t, st)
	res, err := st.GetMessages(topic, q, 0, 1000, 16<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	var out []store.Message
	for _, b := range res.Messages {
		m, err := store.DecodeMessage(b, true)
		if err != nil {
			t.Fatal(err)
		}
		m.Body = append([]byte(nil), m.Body...)
		m.Properties = string([]byte(m.Properties))
		out = append(out, m)
	}
	return out
}
