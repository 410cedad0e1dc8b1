package broker

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// rawFrame is one request frame with a hand-written JSON header, the way a
// client that is not ours may spell it.
func rawFrame(header string, body []byte) []byte {
	f := make([]byte, 8, 8+len(header)+len(body))
	n := 4 + len(header) + len(body)
	f[0], f[1], f[2], f[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	f[5], f[6], f[7] = byte(len(header)>>16), byte(len(header)>>8), byte(len(header))
	f = append(f, header...)
	return append(f, body...)
}

// TestNumericExtFieldsOverTheWire: a client that writes numbers and booleans as
// extFields values (Apache's broker takes them, through fastjson) sends, reads
// the max offset and pulls on one raw TCP connection, gets normal answers, and
// the connection stays open throughout.
func TestNumericExtFieldsOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	nc, err := net.DialTimeout("tcp", rb.b.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	props, _ := json.Marshal(props(store.PropertyUniqKey, "NUM1", store.PropertyTags, "t"))
	exchange := func(opaque int, header string, body []byte) *transport.Command {
		t.Helper()
		if _, err := nc.Write(rawFrame(header, body)); err != nil {
			t.Fatalf("opaque %d: write: %v", opaque, err)
		}
		resp, err := transport.DecodeFrame(nc, 0)
		if err != nil {
			t.Fatalf("opaque %d: the broker closed the connection or sent garbage: %v", opaque, err)
		}
		if resp.Opaque != int32(opaque) || !resp.IsResponse() {
			t.Fatalf("opaque %d: answer %v", opaque, resp)
		}
		return resp
	}
	send := exchange(1, `{"code":10,"language":"CPP","version":479,"opaque":1,"flag":0,"extFields":{"producerGroup":"pg",`+
		`"topic":"Numbers","defaultTopic":"TBW102","defaultTopicQueueNums":4,"queueId":2,"sysFlag":0,`+
		`"bornTimestamp":1700000000000,"flag":0,"properties":`+string(props)+`,"reconsumeTimes":0,"unitMode":false,"batch":false,`+
		`"maxReconsumeTimes":null}}`, []byte("numeric header"))
	if send.ResponseCode() != transport.Success || send.Field("queueId") != "2" || send.Field("queueOffset") != "0" {
		t.Fatalf("send: %s %q ext %v", send.ResponseCode(), send.Remark, send.Fields())
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	maxOff := exchange(2, `{"code":"30","opaque":2,"extFields":{"topic":"Numbers","queueId":2}}`, nil)
	if maxOff.ResponseCode() != transport.Success || maxOff.Field("offset") != "1" {
		t.Fatalf("max offset: %s %q ext %v", maxOff.ResponseCode(), maxOff.Remark, maxOff.Fields())
	}
	pull := exchange(3, `{"code":11,"opaque":3,"flag":0,"extFields":{"consumerGroup":"cg","topic":"Numbers","queueId":2,`+
		`"queueOffset":0,"maxMsgNums":32,"sysFlag":4,"commitOffset":0,"suspendTimeoutMillis":0,"subscription":"*",`+
		`"subVersion":0,"expressionType":"TAG"}}`, nil)
	if pull.ResponseCode() != transport.Success || pull.Field("nextBeginOffset") != "1" {
		t.Fatalf("pull: %s %q ext %v", pull.ResponseCode(), pull.Remark, pull.Fields())
	}
	if msgs := primitive.DecodeMessage(pull.Body); len(msgs) != 1 || string(msgs[0].Body) != "numeric header" || msgs[0].MsgId != "NUM1" {
		t.Fatalf("pulled %d messages", len(msgs))
	}
	// A header that is not JSON still closes the connection (framing is lost),
	// but only after the good ones were all answered.
	if _, err := nc.Write(rawFrame(`{"code":`, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.DecodeFrame(nc, 0); err == nil {
		t.Fatal("the broker answered a header that is not JSON")
	}
}

// TestCheckClientConfigOverTheWire: CHECK_CLIENT_CONFIG (46), which a Java SQL92
// push consumer sends before it starts and whose start fails on anything but
// SUCCESS, is SUCCESS for TAG and for SQL92 that compiles, and
// SUBSCRIPTION_PARSE_FAILED naming the reason otherwise.
func TestCheckClientConfigOverTheWire(t *testing.T) {
	rb := startRaftBroker(t)
	body := func(typ, expr string) []byte {
		b, _ := json.Marshal(map[string]any{"clientId": "10.0.0.7@1", "group": "sqlGroup",
			"subscriptionData": map[string]any{"classFilterMode": false, "topic": "T", "subString": expr, "tagsSet": []string{},
				"codeSet": []int{}, "subVersion": 1700000000000, "expressionType": typ}})
		return b
	}
	cases := []struct {
		name   string
		body   []byte
		want   transport.ResponseCode
		remark string
	}{
		{"TAG", body("TAG", "a || b"), transport.Success, ""},
		{"SQL92", body("SQL92", "a > 5 AND b IN ('x', 'y')"), transport.Success, ""},
		{"no expression type is TAG", body("", "*"), transport.Success, ""},
		{"no subscription", []byte(`{"clientId":"c","group":"g"}`), transport.Success, ""},
		{"no body", nil, transport.Success, ""},
		{"SQL92 that does not compile", body("SQL92", "a > AND"), transport.SubscriptionParseFailed, "a > AND"},
		{"unknown expression type", body("GROOVY", "x"), transport.SubscriptionParseFailed, "GROOVY"},
		{"body not JSON", []byte(`{"clientId":`), transport.InvalidParameter, "CHECK_CLIENT_CONFIG body"},
	}
	for _, c := range cases {
		r := rb.call(t, transport.CheckClientConfig, nil, c.body)
		if r.ResponseCode() != c.want || !strings.Contains(r.Remark, c.remark) {
			t.Errorf("%s: %s %q, want %s with %q", c.name, r.ResponseCode(), r.Remark, c.want, c.remark)
		}
	}
}

// TestLitePullServesLikePull: LITE_PULL_MESSAGE (361, Java 5.x lite-pull
// consumers) answers exactly what PULL_MESSAGE answers.
func TestLitePullServesLikePull(t *testing.T) {
	rb := startRaftBroker(t)
	for i := range 3 {
		mustOK(t, "send", rb.call(t, transport.SendMessage, sendExt("Lite", 0, props(store.PropertyUniqKey, "L"+strconv.Itoa(i))), []byte("lite")))
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	ext := pullExt("liteGroup", "Lite", 0, 1, 0)
	ext["sysFlag"], ext["subscription"], ext["maxMsgNums"] = strconv.Itoa(pullFlagSubscription|0x10), "*", "10"
	lite := mustOK(t, "lite pull", rb.call(t, transport.LitePullMessage, ext, nil))
	pull := mustOK(t, "pull", rb.call(t, transport.PullMessage, ext, nil))
	lm, pm := primitive.DecodeMessage(lite.Body), primitive.DecodeMessage(pull.Body)
	if len(lm) != 2 || len(pm) != 2 || lm[0].MsgId != "L1" || pm[1].MsgId != "L2" ||
		lite.Field("nextBeginOffset") != "3" || lite.Field("nextBeginOffset") != pull.Field("nextBeginOffset") ||
		lite.Field("maxOffset") != pull.Field("maxOffset") {
		t.Fatalf("lite pull %d messages ext %v; pull %d messages ext %v", len(lm), lite.Fields(), len(pm), pull.Fields())
	}
}

// TestJavaPropertiesKeepTheirLastEntry: Java's messageProperties2String writes no
// separator after the last property (captured from the 4.9.8 client: "WAIT\u0001true\u0002n\u000115").
// The broker's CLUSTER stamp used to be glued onto it, which lost the last user
// property (and the stamp) of every Java message, so SQL92 over it matched
// nothing. The message keeps all three, and a heartbeat SQL92 filter over the
// last one matches.
func TestJavaPropertiesKeepTheirLastEntry(t *testing.T) {
	rb := startRaftBroker(t)
	for i, n := range []string{"15", "5"} {
		ext := map[string]string{"a": "pg", "b": "JavaProps", "c": "TBW102", "d": "4", "e": "0", "f": "0",
			"g": "1700000000000", "h": "0", "i": "WAIT\x01true\x02UNIQ_KEY\x01J" + strconv.Itoa(i) + "\x02n\x01" + n,
			"j": "0", "k": "false", "m": "false"}
		mustOK(t, "send", rb.call(t, transport.SendMessageV2, ext, []byte("java")))
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	ext := pullExt("propsGroup", "JavaProps", 0, 0, 0)
	ext["sysFlag"], ext["subscription"] = strconv.Itoa(pullFlagSubscription), "*"
	msgs := primitive.DecodeMessage(mustOK(t, "pull", rb.call(t, transport.PullMessage, ext, nil)).Body)
	if len(msgs) != 2 || msgs[0].GetProperty("n") != "15" || msgs[0].GetProperty("WAIT") != "true" || msgs[0].GetProperty("CLUSTER") != "c" {
		t.Fatalf("stored properties: %d messages, first %v", len(msgs), msgs[0].GetProperties())
	}
	ext["subscription"], ext["expressionType"] = "n >= 10", "SQL92"
	sql := primitive.DecodeMessage(mustOK(t, "SQL92 pull", rb.call(t, transport.PullMessage, ext, nil)).Body)
	if len(sql) != 1 || sql[0].MsgId != "J0" {
		t.Fatalf("SQL92 n >= 10 pulled %d messages", len(sql))
	}
}

// TestJavaOnewayAndWholeQueuePull: two traps for Java tools. A oneway request
// (flag bit 1, which Java sets and Go never does) is served but never answered,
// so the next answer on the connection is the next request's; and a pull that
// asks for a whole queue at once (mqadmin consumeMessage: maxMsgNums = max −
// offset + 1) is capped, at 32 messages and about 256 KiB, far below the 16 MiB
// frame that would make Java drop the connection.
func TestJavaOnewayAndWholeQueuePull(t *testing.T) {
	rb := startRaftBroker(t)
	nc, err := net.DialTimeout("tcp", rb.b.Addr(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	oneway := `{"code":15,"flag":2,"opaque":41,"language":"JAVA","version":409,"extFields":{"consumerGroup":"owG","topic":"T","queueId":"0","commitOffset":"9"}}`
	next := `{"code":14,"flag":0,"opaque":42,"language":"JAVA","version":409,"extFields":{"consumerGroup":"owG","topic":"T","queueId":"0"}}`
	if _, err := nc.Write(rawFrame(oneway, nil)); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if extra, err := transport.DecodeFrame(nc, 0); err == nil {
		t.Fatalf("the oneway request was answered: %v", extra)
	}
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := nc.Write(rawFrame(next, nil)); err != nil {
		t.Fatal(err)
	}
	resp, err := transport.DecodeFrame(nc, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Opaque != 42 || resp.ResponseCode() != transport.Success || resp.Field("offset") != "9" {
		t.Fatalf("answer opaque=%d %s %v, want the query's (42) with the oneway commit's offset 9", resp.Opaque, resp.ResponseCode(), resp.Fields())
	}

	body := make([]byte, 10<<10)
	for i := range 60 {
		mustOK(t, "send", rb.call(t, transport.SendMessage, sendExt("Whole", 0, props(store.PropertyUniqKey, "W"+strconv.Itoa(i))), body))
	}
	if err := rb.b.store.WaitDispatched(context.Background(), rb.b.store.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	ext := pullExt("TOOLS_CONSUMER", "Whole", 0, 0, 0)
	ext["sysFlag"], ext["subscription"], ext["maxMsgNums"] = strconv.Itoa(pullFlagSubscription), "*", "100000"
	r := mustOK(t, "whole-queue pull", rb.call(t, transport.PullMessage, ext, nil))
	msgs := primitive.DecodeMessage(r.Body)
	if len(msgs) == 0 || len(msgs) > 32 || len(r.Body) > 256<<10+len(body)+512 {
		t.Fatalf("pulled %d messages, %d bytes; want 1..32 messages within about 256 KiB", len(msgs), len(r.Body))
	}
	if next, _ := strconv.Atoi(r.Field("nextBeginOffset")); next != len(msgs) {
		t.Fatalf("nextBeginOffset %s after %d messages", r.Field("nextBeginOffset"), len(msgs))
	}
}
