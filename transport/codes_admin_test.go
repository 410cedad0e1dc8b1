package transport

import (
	"strconv"
	"testing"
)

// rocketMQAdminCode lists the admin codes that are RocketMQ's own, not ours.
var rocketMQAdminCode = map[RequestCode]bool{
	GetBrokerRuntimeInfo: true, InvokeBrokerToResetOffset: true, UpdateAndCreateSubscriptionGroup: true,
	GetTopicStatsInfo: true, GetConsumerConnectionList: true, GetProducerConnectionList: true,
	DeleteSubscriptionGroup: true, GetConsumeStats: true,
}

func TestAdminCodesNamedAndInRange(t *testing.T) {
	for c, want := range adminCodeNames {
		if got := c.String(); got != want+"("+strconv.Itoa(int(c))+")" {
			t.Errorf("String(%d) = %q, want %s(%d)", c, got, want, c)
		}
		if c < 9100 && !rocketMQAdminCode[c] || c > 9199 {
			t.Errorf("admin code %s is outside rocketraft's range 9100..9199", c)
		}
	}
	if got := RequestCode(9199).String(); got != "UNKNOWN(9199)" {
		t.Errorf("unused admin-range code: got %s", got)
	}
}
