package transport

import "testing"

// TestBrokerConfigCodesAreRocketMQs: the numbers are Apache's RequestCode.java
// values (mqadmin sends exactly these), and each prints its Java name.
func TestBrokerConfigCodesAreRocketMQs(t *testing.T) {
	for code, want := range map[RequestCode]string{
		25:  "UPDATE_BROKER_CONFIG(25)",
		26:  "GET_BROKER_CONFIG(26)",
		315: "VIEW_BROKER_STATS_DATA(315)",
		300: "QUERY_TOPIC_CONSUME_BY_WHO(300)",
	} {
		if got := code.String(); got != want {
			t.Errorf("RequestCode(%d).String() = %q, want %q", code, got, want)
		}
	}
	if UpdateBrokerConfig != 25 || GetBrokerConfig != 26 || ViewBrokerStatsData != 315 || QueryTopicConsumeByWho != 300 {
		t.Errorf("codes %d %d %d %d, want Apache's 25 26 315 300", UpdateBrokerConfig, GetBrokerConfig, ViewBrokerStatsData, QueryTopicConsumeByWho)
	}
}
