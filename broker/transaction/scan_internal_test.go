package transaction

import (
	"net/netip"
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

// TestCheckRequestCarriesTheHalfQueueOffset: the message a check-back sends names
// the half queue offset the scan read it at, not the QUEUEOFFSET its record holds
// (0 in an entry-log CommitLog, decision 0016).
func TestCheckRequestCarriesTheHalfQueueOffset(t *testing.T) {
	props := map[string]string{store.PropertyRealTopic: "Real", store.PropertyRealQueueID: "2", store.PropertyUniqKey: "U"}
	h := Half{
		Msg: store.Message{Topic: HalfTopic, Body: []byte("b"), BornTimestamp: 1, PhysicalOffset: 4096,
			StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"), Properties: store.EncodeProperties(props)},
		Props: props,
	}
	req, err := checkRequest(h, 42, "broker-a")
	if err != nil {
		t.Fatal(err)
	}
	m, err := store.DecodeMessage(req.Body, true)
	if err != nil {
		t.Fatal(err)
	}
	if m.QueueOffset != 42 || m.Topic != "Real" || m.QueueID != 2 || req.Field("tranStateTableOffset") != "42" {
		t.Fatalf("check-back message: queue offset %d, %s/%d, tranStateTableOffset %s", m.QueueOffset, m.Topic, m.QueueID, req.Field("tranStateTableOffset"))
	}
}
