package admin

import (
	"strings"
	"testing"
)

// goRunningInfo is shaped like the Go client's ConsumerRunningInfo.Encode: valid
// JSON except mqTable, whose keys are objects.
const goRunningInfo = `{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","PROP_CLIENT_VERSION":"v2.1.3","odd":"a\"b}"},` +
	`"statusTable":{"T":{"pullRT":1.5}},` +
	`"subscriptionSet":[{"classFilterMode":false,"topic":"T","subString":"a > 5","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"SQL92"}],` +
	`"mqTable":{{"topic":"T","brokerName":"broker-a","queueId":0}:{"commitOffset":3}},"jstack":""}`

func TestParseRunningInfoToleratesObjectKeys(t *testing.T) {
	ri := parseRunningInfo("c@1", []byte(goRunningInfo))
	if ri.Properties["PROP_CONSUME_TYPE"] != "CONSUME_PASSIVELY" || ri.Properties["odd"] != `a"b}` || len(ri.Properties) != 3 {
		t.Fatalf("properties %v", ri.Properties)
	}
	if len(ri.Subscriptions) != 1 || ri.Subscriptions[0] != (RunningSubscription{Topic: "T", SubString: "a > 5", ExpressionType: "SQL92"}) {
		t.Fatalf("subscriptions %+v", ri.Subscriptions)
	}
	out := RunningInfoTable("g", []RunningInfo{ri}).String()
	for _, want := range []string{"PROP_CLIENT_VERSION  v2.1.3", "subscription T", "SQL92 a > 5", "consumer group g: 1 clients"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestTopLevelValue(t *testing.T) {
	doc := []byte(`{"a":{"properties":1},"properties" : [1,{"x":"]"}], "n": 12, "s":"v,w"}`)
	cases := map[string]string{"properties": `[1,{"x":"]"}]`, "n": "12", "s": `"v,w"`, "missing": ""}
	for key, want := range cases {
		if got := string(topLevelValue(doc, key)); got != want {
			t.Errorf("topLevelValue(%q) = %q, want %q", key, got, want)
		}
	}
}
