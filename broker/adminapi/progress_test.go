package adminapi

import (
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

func TestQueueProgressLag(t *testing.T) {
	cases := []struct {
		off            store.QueueOffset
		committed      bool
		minOff, maxOff store.QueueOffset
		wantLag        int64
		wantConsumer   store.QueueOffset
	}{
		{3, true, 0, 10, 7, 3},
		{0, false, 4, 10, 6, -1},
		{12, true, 0, 10, 0, 12}, // an offset past max (retention reset) is no negative lag
	}
	for _, c := range cases {
		p := queueProgress("T", 0, c.off, c.committed, c.minOff, c.maxOff)
		if p.Lag != c.wantLag || p.ConsumerOffset != c.wantConsumer || p.BrokerOffset != c.maxOff {
			t.Errorf("%+v → %+v", c, p)
		}
	}
}
