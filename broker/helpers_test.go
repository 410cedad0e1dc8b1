package broker

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

var testStoreHost = netip.MustParseAddrPort("127.0.0.1:10911")

func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 4 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 4000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// delivered reads everything in Real's two queues: UNIQ_KEY → count, and checks
// each delivered message is rebuilt correctly.
func delivered(t *testing.T, st *store.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	for q := int32(0); q < 2; q++ {
		res, err := st.GetMessages("Real", q, 0, 10000, 64<<20, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Messages {
			m, err := store.DecodeMessage(b, true)
			if err != nil {
				t.Fatal(err)
			}
			p := store.ParseProperties(m.Properties)
			key := p[store.PropertyUniqKey]
			out[key]++
			for _, gone := range []string{store.PropertyDelayLevel, store.PropertyRealTopic, store.PropertyRealQueueID} {
				if _, ok := p[gone]; ok {
					t.Errorf("%s: property %s survived delivery", key, gone)
				}
			}
			if p[store.PropertyTags] != "TagA" || string(m.Body) != "body-"+key || m.ReconsumeTimes != 2 || m.BornTimestamp != 1700000000000 {
				t.Errorf("%s: rebuilt message differs: tags=%q body=%q reconsume=%d born=%d", key, p[store.PropertyTags], m.Body, m.ReconsumeTimes, m.BornTimestamp)
			}
		}
		res.Release()
	}
	return out
}

// waitStoreDispatched waits until the ConsumeQueues cover everything appended.
func waitStoreDispatched(t *testing.T, st *store.Store) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.WaitDispatched(ctx, st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
}
