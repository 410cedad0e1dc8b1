package transport

import "testing"

// TestEcosystemCodesAreRocketMQs pins the numbers to RequestCode.java: a typo
// here would answer the dashboard REQUEST_CODE_NOT_SUPPORTED without a trace.
func TestEcosystemCodesAreRocketMQs(t *testing.T) {
	for c, want := range map[RequestCode]string{21: "GET_ALL_TOPIC_CONFIG(21)", 304: "GET_SYSTEM_TOPIC_LIST_FROM_NS(304)",
		328: "GET_ALL_PRODUCER_INFO(328)"} {
		if got := c.String(); got != want {
			t.Errorf("RequestCode(%d).String() = %q, want %q", int(c), got, want)
		}
	}
}
