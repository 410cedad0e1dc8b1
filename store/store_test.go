package store

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// e2eRecord is a realistic client message: tags, keys, a UNIQ_KEY.
func e2eRecord(t *testing.T, topic string, queueID int32, i int) ([]byte, Message) {
	m := Message{
		Topic: topic, QueueID: queueID, Flag: int32(i), BornTimestamp: 1700000000000 + int64(i),
		BornHost:  netip.MustParseAddrPort("10.1.2.3:50000"),
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"),
		Body:      bytes.Repeat([]byte{byte(i)}, 100+i%700),
		Properties: EncodeProperties(map[string]string{
			PropertyTags: fmt.Sprintf("tag%d", i%3), PropertyKeys: fmt.Sprintf("key%d", i),
			PropertyUniqKey: fmt.Sprintf("0A010203C35000000000%012x", i),
		}),
	}
	rec, err := AppendMessage(nil, &m)
	if err != nil {
		t.Fatal(err)
	}
	return rec, m
}

func TestEndToEndRestartAndClientDecode(t *testing.T) {
	for _, mode := range []string{"clean", "dirty"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, testConfig(dir))
			const n = 600
			topics := []string{"orders", "payments"}
			want := map[TopicQueue][]Message{}
			var results []AppendResult
			for b := 0; b < n/30; b++ {
				var recs [][]byte
				for i := b * 30; i < (b+1)*30; i++ {
					rec, m := e2eRecord(t, topics[i%2], int32(i%3), i)
					recs = append(recs, rec)
					tq := TopicQueue{m.Topic, m.QueueID}
					want[tq] = append(want[tq], m)
				}
				results = append(results, mustAppend(t, s, recs, 1700000001000+int64(b))...)
			}
			if s.MaxPhysicalOffset() < 3*testSegSize {
				t.Fatalf("only %d bytes: want several segments", s.MaxPhysicalOffset())
			}
			if mode == "clean" {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				crash(s)
			}
			s = openTest(t, testConfig(dir))
			defer s.Close()
			byPhys := map[PhysicalOffset]AppendResult{}
			for _, r := range results {
				byPhys[r.PhysicalOffset] = r
			}
			for tq, msgs := range want {
				if got := s.MaxQueueOffset(tq.Topic, tq.QueueID); got != QueueOffset(len(msgs)) {
					t.Fatalf("%v: max offset %d, want %d", tq, got, len(msgs))
				}
				var next QueueOffset
				for next < QueueOffset(len(msgs)) {
					r, err := s.GetMessages(tq.Topic, tq.QueueID, next, 32, 1<<20, nil)
					if err != nil || r.Status != Found {
						t.Fatalf("%v at %d: %v %v", tq, next, r.Status, err)
					}
					for i, raw := range r.Messages {
						qo := next + QueueOffset(i)
						exts := primitive.DecodeMessage(raw)
						if len(exts) != 1 {
							t.Fatalf("client decoded %d messages", len(exts))
						}
						e, m := exts[0], msgs[qo]
						res := byPhys[PhysicalOffset(e.CommitLogOffset)]
						if e.Topic != m.Topic || e.Queue.QueueId != int(m.QueueID) || e.QueueOffset != int64(qo) ||
							!bytes.Equal(e.Body, m.Body) || e.GetTags() != ParseProperties(m.Properties)[PropertyTags] ||
							e.GetKeys() != ParseProperties(m.Properties)[PropertyKeys] ||
							e.BornTimestamp != m.BornTimestamp || e.StoreTimestamp != res.StoreTimestamp ||
							res.QueueOffset != qo || res.Topic != m.Topic {
							t.Fatalf("%v offset %d: client saw %+v", tq, qo, e)
						}
						if e.OffsetMsgId != OffsetMsgID(m.StoreHost, PhysicalOffset(e.CommitLogOffset)) {
							t.Fatalf("offsetMsgId %s", e.OffsetMsgId)
						}
					}
					next = r.NextBeginOffset
					r.Release()
				}
			}
		})
	}
}
