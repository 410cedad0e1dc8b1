package schedule_test

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
)

var testStoreHost = netip.MustParseAddrPort("127.0.0.1:10911")

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// putScheduled stores n messages as the send path would for level (REAL_TOPIC
// "Real", REAL_QID alternating 0/1) and returns their UNIQ_KEYs.
func putScheduled(t *testing.T, rep *fakereplica.Replica, level schedule.DelayLevel, prefix string, n int) []string {
	t.Helper()
	var recs [][]byte
	var keys []string
	for i := range n {
		key := fmt.Sprintf("%s-%04d", prefix, i)
		keys = append(keys, key)
		m := store.Message{
			Topic: schedule.Topic, QueueID: level.QueueID(), BornTimestamp: 1700000000000, BornHost: testStoreHost,
			StoreHost: testStoreHost, ReconsumeTimes: 2, Body: []byte("body-" + key),
			Properties: store.EncodeProperties(map[string]string{
				store.PropertyUniqKey: key, store.PropertyTags: "TagA", store.PropertyDelayLevel: strconv.Itoa(int(level)),
				store.PropertyRealTopic: "Real", store.PropertyRealQueueID: strconv.Itoa(i % 2),
			}),
		}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := rep.PutMessages(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	fakereplica.WaitDispatched(t, rep.Store())
	return keys
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

func newTestSchedule(st *store.Store, rep *fakereplica.Replica, clock *fakeClock, maxBatch int) *schedule.Service {
	return schedule.New(schedule.Config{StoreHost: testStoreHost, Now: clock.now, MaxBatchMsgs: maxBatch}, st, rep)
}
