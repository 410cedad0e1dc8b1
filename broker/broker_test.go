package broker

import (
	"fmt"

	"github.com/rocketraft/rocketraft/broker/clientapi"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"

	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Pull sysFlag bits (PullSysFlag.java), as clients set them.
const (
	pullFlagSuspend      = 0x2
	pullFlagSubscription = 0x4
)

type testBroker struct {
	b       *Broker
	st      *store.Store
	replica *fakereplica.Replica
	client  *transport.Client
}

func startTestBroker(t *testing.T, role replica.Role, peers []Peer, opts ...func(*Config)) *testBroker {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	rep := fakereplica.New(st, role)
	if role != replica.RoleLeader {
		st := rep.Status()
		st.SelfID, st.LeaderID = "n1", "n0"
		rep.SetStatusQuietly(st)
	}
	self := "n0"
	if role != replica.RoleLeader {
		self = "n1"
	}
	cfg := Config{
		ClusterName: "c", BrokerName: "broker-a", ListenAddr: "127.0.0.1:0", ClientAddr: "127.0.0.1:10911",
		SelfID: self, Peers: peers, MaxMessageSize: 1024, AutoCreateTopicEnable: true, LongPollingEnable: true,
		OffsetFlushInterval: time.Hour,
	}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := New(cfg, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	t.Cleanup(func() {
		c.Close()
		b.Close()
		st.Close()
	})
	return &testBroker{b: b, st: st, replica: rep, client: c}
}

func (tb *testBroker) call(t *testing.T, code transport.RequestCode, ext map[string]string, body []byte) *transport.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := tb.client.Invoke(ctx, tb.b.Addr(), transport.NewRequest(code, ext, body))
	if err != nil {
		t.Fatalf("invoke %d: %v", code, err)
	}
	return resp
}

func sendExt(topic string, queueID int, props string) map[string]string {
	return map[string]string{"producerGroup": "pg", "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(queueID), "sysFlag": "0", "bornTimestamp": "1700000000000", "flag": "0",
		"properties": props, "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
}

func props(kv ...string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return store.EncodeProperties(m)
}

func pullExt(group, topic string, queueID int, offset int64, suspendMillis int) map[string]string {
	flag := 0
	if suspendMillis > 0 {
		flag = pullFlagSuspend
	}
	return map[string]string{"consumerGroup": group, "topic": topic, "queueId": strconv.Itoa(queueID),
		"queueOffset": strconv.FormatInt(offset, 10), "maxMsgNums": "32", "sysFlag": strconv.Itoa(flag),
		"commitOffset": "0", "suspendTimeoutMillis": strconv.Itoa(suspendMillis), "subscription": "", "subVersion": "0",
		"expressionType": "TAG"}
}

func heartbeat(t *testing.T, tb *testBroker, group, topic string, tags ...string) {
	t.Helper()
	sub := map[string]any{"topic": topic, "subString": "*", "tagsSet": []string{}, "expressionType": "TAG", "subVersion": 1}
	if len(tags) > 0 {
		sub["subString"], sub["tagsSet"] = strings.Join(tags, " || "), tags
	}
	body, _ := json.Marshal(map[string]any{
		"clientID": "10.0.0.1@1", "producerDataSet": []any{},
		"consumerDataSet": []any{map[string]any{"groupName": group, "consumeType": "CONSUME_PASSIVELY", "messageModel": "CLUSTERING",
			"consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionDataSet": []any{sub}}},
	})
	if r := tb.call(t, transport.HeartBeat, nil, body); r.ResponseCode() != transport.Success {
		t.Fatalf("heartbeat: %v", r)
	}
}

func TestSendThenPullDecodesWithRealClient(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	for i, tag := range []string{"a", "b", "a"} {
		r := tb.call(t, transport.SendMessage, sendExt("T1", 0, props(store.PropertyTags, tag, store.PropertyUniqKey, "U"+strconv.Itoa(i), store.PropertyKeys, "k"+strconv.Itoa(i))), []byte("body-"+strconv.Itoa(i)))
		if r.ResponseCode() != transport.Success {
			t.Fatalf("send %d: code %d %s", i, r.Code, r.Remark)
		}
		if r.Field("queueOffset") != strconv.Itoa(i) || r.Field("queueId") != "0" || r.Field("transactionId") != "U"+strconv.Itoa(i) {
			t.Fatalf("send %d ext %v", i, r.Fields())
		}
		if _, err := primitive.UnmarshalMsgID([]byte(r.Field("msgId"))); err != nil {
			t.Fatalf("msgId %q not parseable by the client: %v", r.Field("msgId"), err)
		}
	}
	if topic, ok := tb.replica.Topic("T1"); !ok || topic.WriteQueueNums != 4 {
		t.Fatalf("auto-created topic %+v %v", topic, ok)
	}
	// No heartbeat yet: the push consumer's subscription is unknown.
	if r := tb.call(t, transport.PullMessage, pullExt("g", "T1", 0, 0, 0), nil); r.ResponseCode() != transport.SubscriptionNotExist {
		t.Fatalf("pull before heartbeat: code %d", r.Code)
	}
	heartbeat(t, tb, "g", "T1", "a")
	if err := tb.st.WaitDispatched(context.Background(), tb.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	r := tb.call(t, transport.PullMessage, pullExt("g", "T1", 0, 0, 0), nil)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("pull: code %d %s", r.Code, r.Remark)
	}
	msgs := primitive.DecodeMessage(r.Body)
	if len(msgs) != 2 || string(msgs[0].Body) != "body-0" || string(msgs[1].Body) != "body-2" || msgs[1].GetTags() != "a" {
		t.Fatalf("tag-filtered pull got %d messages", len(msgs))
	}
	if msgs[1].QueueOffset != 2 || msgs[1].MsgId != "U2" || msgs[1].GetKeys() != "k2" || r.Field("nextBeginOffset") != "3" {
		t.Fatalf("offsets/ids: %+v next %s", msgs[1], r.Field("nextBeginOffset"))
	}
	if r.Field("suggestWhichBrokerId") != "0" {
		t.Fatal("suggestWhichBrokerId missing")
	}
	// At the end of the queue without suspend: PULL_NOT_FOUND, next = offset.
	r = tb.call(t, transport.PullMessage, pullExt("g", "T1", 0, 3, 0), nil)
	if r.ResponseCode() != transport.PullNotFound || r.Field("nextBeginOffset") != "3" {
		t.Fatalf("overflow one: code %d next %s", r.Code, r.Field("nextBeginOffset"))
	}
	// Far beyond: OFFSET_MOVED to max.
	r = tb.call(t, transport.PullMessage, pullExt("g", "T1", 0, 100, 0), nil)
	if r.ResponseCode() != transport.PullOffsetMoved || r.Field("nextBeginOffset") != "3" {
		t.Fatalf("overflow badly: code %d next %s", r.Code, r.Field("nextBeginOffset"))
	}
}

func TestLongPollWakesOnNewMessage(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	if r := tb.call(t, transport.SendMessage, sendExt("T2", 1, ""), []byte("first")); r.ResponseCode() != transport.Success {
		t.Fatal(r.Remark)
	}
	heartbeat(t, tb, "g", "T2")
	done := make(chan *transport.Command, 1)
	start := time.Now()
	go func() { done <- tb.call(t, transport.PullMessage, pullExt("g", "T2", 1, 1, 20000), nil) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("held pull answered before any message: code %d", r.Code)
	default:
	}
	// Another request on the same connection is not blocked by the held pull.
	if r := tb.call(t, transport.GetMaxOffset, map[string]string{"topic": "T2", "queueId": "1"}, nil); r.Field("offset") != "1" {
		t.Fatalf("max offset while a pull is held: %v", r.Fields())
	}
	if r := tb.call(t, transport.SendMessage, sendExt("T2", 1, ""), []byte("second")); r.ResponseCode() != transport.Success {
		t.Fatal(r.Remark)
	}
	r := <-done
	if r.ResponseCode() != transport.Success {
		t.Fatalf("held pull: code %d %s", r.Code, r.Remark)
	}
	if msgs := primitive.DecodeMessage(r.Body); len(msgs) != 1 || string(msgs[0].Body) != "second" {
		t.Fatalf("held pull returned %d messages", len(msgs))
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Fatalf("held pull answered only after %s: the send did not wake it", waited)
	}
}

func TestConsumerOffsetRules(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	tb.call(t, transport.SendMessage, sendExt("T3", 0, ""), []byte("x"))
	q := map[string]string{"consumerGroup": "g", "topic": "T3", "queueId": "0"}
	// A new group starts at 0 while message 0 is still stored (offset-0 rule).
	if r := tb.call(t, transport.QueryConsumerOffset, q, nil); r.ResponseCode() != transport.Success || r.Field("offset") != "0" {
		t.Fatalf("offset-0 rule: code %d ext %v", r.Code, r.Fields())
	}
	u := map[string]string{"consumerGroup": "g", "topic": "T3", "queueId": "0", "commitOffset": "1"}
	if r := tb.call(t, transport.UpdateConsumerOffset, u, nil); r.ResponseCode() != transport.Success {
		t.Fatal(r.Remark)
	}
	if r := tb.call(t, transport.QueryConsumerOffset, q, nil); r.Field("offset") != "1" {
		t.Fatalf("after update: %v", r.Fields())
	}
	if err := tb.b.offsets.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if off, ok := tb.replica.ConsumerOffset("g", "T3", 0); !ok || off != 1 {
		t.Fatalf("replicated offset %d %v", off, ok)
	}
}

func TestBadInputGetsSpecificCodes(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	cases := []struct {
		name string
		code transport.RequestCode
		ext  map[string]string
		body []byte
		want transport.ResponseCode
	}{
		{"illegal topic chars", transport.SendMessage, sendExt("a/b", 0, ""), []byte("x"), transport.InvalidParameter},
		{"128-char topic", transport.SendMessage, sendExt(strings.Repeat("t", 128), 0, ""), []byte("x"), transport.InvalidParameter},
		{"system topic", transport.SendMessage, sendExt("SCHEDULE_TOPIC_XXXX", 0, ""), []byte("x"), transport.NoPermission},
		{"body too large", transport.SendMessage, sendExt("T", 0, ""), make([]byte, 1025), transport.MessageIllegal},
		{"properties too long", transport.SendMessage, sendExt("T", 0, strings.Repeat("p", 32768)), []byte("x"), transport.MessageIllegal},
		{"bad queueId", transport.SendMessage, map[string]string{"topic": "T", "queueId": "x"}, []byte("x"), transport.InvalidParameter},
		{"queueId out of range", transport.SendMessage, sendExt("T", 99, ""), []byte("x"), transport.InvalidParameter},
		{"malformed batch", transport.SendBatchMessage, map[string]string{"b": "T", "e": "0", "m": "true"}, []byte{0, 0, 0, 99}, transport.InvalidParameter},
		{"unknown code", transport.RequestCode(9999), nil, nil, transport.RequestCodeNotSupported},
		{"pull unknown topic", transport.PullMessage, pullExt("g", "Nope", 0, 0, 0), nil, transport.TopicNotExist},
	}
	for _, c := range cases {
		r := tb.call(t, c.code, c.ext, c.body)
		if r.ResponseCode() != c.want {
			t.Errorf("%s: code %d (%s), want %d", c.name, r.Code, r.Remark, c.want)
		}
		if r.ResponseCode() != transport.Success && r.Remark == "" {
			t.Errorf("%s: error without a remark", c.name)
		}
	}
	if r := tb.call(t, transport.SendMessage, sendExt("T", 0, ""), []byte("still fine")); r.ResponseCode() != transport.Success {
		t.Fatalf("broker unusable after bad input: %d %s", r.Code, r.Remark)
	}
}

func TestBatchSendAnswersCommaJoinedIDs(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	body := clientapi.EncodeBatch([]clientapi.BatchElement{{Body: []byte("m1")}, {Body: []byte("m2"), Properties: props(store.PropertyKeys, "k")}})
	ext := map[string]string{"a": "pg", "b": "TB", "c": "TBW102", "d": "4", "e": "2", "f": "0", "g": "1", "h": "0", "i": "", "j": "0", "k": "false", "l": "0", "m": "true"}
	r := tb.call(t, transport.SendBatchMessage, ext, body)
	if r.ResponseCode() != transport.Success {
		t.Fatalf("batch: %d %s", r.Code, r.Remark)
	}
	ids := strings.Split(r.Field("msgId"), ",")
	if len(ids) != 2 || r.Field("queueOffset") != "0" || r.Field("queueId") != "2" {
		t.Fatalf("batch response %v", r.Fields())
	}
	if err := tb.st.WaitDispatched(context.Background(), tb.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	if got := tb.st.MaxQueueOffset("TB", 2); got != 2 {
		t.Fatalf("stored %d messages", got)
	}
}

func TestFollowerForwardsWritesToLeader(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}})
	r := follower.call(t, transport.SendMessage, sendExt("TF", 0, ""), []byte("via follower"))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("forwarded send: %d %s", r.Code, r.Remark)
	}
	if leader.replica.PutCount() != 1 || follower.replica.PutCount() != 0 {
		t.Fatalf("puts: leader %d follower %d", leader.replica.PutCount(), follower.replica.PutCount())
	}
	if err := leader.st.WaitDispatched(context.Background(), leader.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	if got := leader.st.MaxQueueOffset("TF", 0); got != 1 {
		t.Fatalf("leader stored %d", got)
	}
	// A follower with no known leader address answers SERVICE_NOT_AVAILABLE (retried by clients).
	lonely := startTestBroker(t, replica.RoleFollower, nil)
	if r := lonely.call(t, transport.SendMessage, sendExt("TF", 0, ""), []byte("x")); r.ResponseCode() != transport.ServiceNotAvailable {
		t.Fatalf("no leader address: %d %s", r.Code, r.Remark)
	}
}

func TestBatchWithDelayIsRefused(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	body := clientapi.EncodeBatch([]clientapi.BatchElement{{Body: []byte("m1")}, {Body: []byte("m2"), Properties: props(store.PropertyDelayLevel, "3")}})
	ext := map[string]string{"a": "pg", "b": "TBD", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0", "i": "", "j": "0", "k": "false", "l": "0", "m": "true"}
	r := tb.call(t, transport.SendBatchMessage, ext, body)
	if r.ResponseCode() != transport.MessageIllegal || !strings.Contains(r.Remark, "DELAY") {
		t.Fatalf("delayed batch: code %d %q", r.Code, r.Remark)
	}
}

// A node that is not the leader never moves a consumer's offset: its queue may
// only lag the leader's (a client whose route still names the old leader pulls
// there after a failover), and a consumer told PULL_OFFSET_MOVED persists the
// follower's end, behind what it had consumed. It answers
// PULL_RETRY_IMMEDIATELY and suggests brokerId 0, as an Apache slave does.
func TestFollowerPullNeverMovesTheOffset(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	for i := range 3 {
		if r := tb.call(t, transport.SendMessage, sendExt("TL", 0, ""), fmt.Appendf(nil, "m%d", i)); r.ResponseCode() != transport.Success {
			t.Fatalf("send: %d %s", r.Code, r.Remark)
		}
	}
	heartbeat(t, tb, "g", "TL")
	if err := tb.st.WaitDispatched(context.Background(), tb.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	pull := func(offset int64) *transport.Command {
		t.Helper()
		return tb.call(t, transport.PullMessage, pullExt("g", "TL", 0, offset, 0), nil)
	}
	if r := pull(100); r.ResponseCode() != transport.PullOffsetMoved || r.Field("nextBeginOffset") != "3" {
		t.Fatalf("leader, offset past the end: code %d next %s, want OFFSET_MOVED to 3", r.Code, r.Field("nextBeginOffset"))
	}
	st := tb.replica.Status()
	st.Role = replica.RoleFollower
	tb.replica.SetStatus(st)
	if r := pull(100); r.ResponseCode() != transport.PullRetryImmediately || r.Field("suggestWhichBrokerId") != "0" ||
		r.Field("nextBeginOffset") != "100" {
		t.Fatalf("follower, offset past its end: code %d suggest %s next %s, want PULL_RETRY_IMMEDIATELY suggesting 0 and keeping offset 100",
			r.Code, r.Field("suggestWhichBrokerId"), r.Field("nextBeginOffset"))
	}
	if r := pull(0); r.ResponseCode() != transport.Success || len(primitive.DecodeMessage(r.Body)) != 3 {
		t.Fatalf("follower, offset 0: code %d, want its 3 messages", r.Code)
	}
	if r := pull(3); r.ResponseCode() != transport.PullNotFound {
		t.Fatalf("follower, at its end: code %d, want PULL_NOT_FOUND", r.Code)
	}
}

// A send in ROCKETMQ headers (Java with -Drocketmq.serialize.type=ROCKETMQ) is
// answered in ROCKETMQ headers carrying the fields a JSON send gets: the send
// answer's pre-encoded extFields follow the request's encoding (decision 0013).
func TestSendInRocketMQHeadersIsAnsweredInKind(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	invoke := func(code transport.RequestCode, ext map[string]string, body []byte, st transport.SerializeType) *transport.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := transport.NewRequest(code, ext, body)
		req.Serialize = st
		resp, err := tb.client.Invoke(ctx, tb.b.Addr(), req)
		if err != nil {
			t.Fatalf("invoke %d: %v", code, err)
		}
		return resp
	}
	js := invoke(transport.SendMessage, sendExt("TR", 1, props(store.PropertyUniqKey, "U0")), []byte("b0"), transport.SerializeJSON)
	rm := invoke(transport.SendMessage, sendExt("TR", 1, props(store.PropertyUniqKey, "U1")), []byte("b1"), transport.SerializeRocketMQ)
	if js.Serialize != transport.SerializeJSON || rm.Serialize != transport.SerializeRocketMQ {
		t.Fatalf("answers in %s and %s, want JSON and ROCKETMQ", js.Serialize, rm.Serialize)
	}
	if rm.ResponseCode() != transport.Success || rm.Field("queueOffset") != "1" || rm.Field("queueId") != "1" ||
		rm.Field("transactionId") != "U1" || rm.Field("MSG_REGION") != js.Field("MSG_REGION") ||
		rm.Field("TRACE_ON") != "true" || len(rm.Fields()) != len(js.Fields()) {
		t.Fatalf("ROCKETMQ answer %v, JSON answer %v", rm.Fields(), js.Fields())
	}
	if _, err := primitive.UnmarshalMsgID([]byte(rm.Field("msgId"))); err != nil {
		t.Fatalf("msgId %q: %v", rm.Field("msgId"), err)
	}
	body := clientapi.EncodeBatch([]clientapi.BatchElement{{Body: []byte("m1")}, {Body: []byte("m2")}})
	ext := map[string]string{"a": "pg", "b": "TRB", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0", "i": "", "j": "0", "k": "false", "l": "0", "m": "true"}
	batch := invoke(transport.SendBatchMessage, ext, body, transport.SerializeRocketMQ)
	if ids := strings.Split(batch.Field("msgId"), ","); batch.Serialize != transport.SerializeRocketMQ || len(ids) != 2 || batch.Field("queueOffset") != "0" {
		t.Fatalf("ROCKETMQ batch answer in %s: %v", batch.Serialize, batch.Fields())
	}
	// An error answer (no pre-encoded extFields) follows the request too.
	bad := invoke(transport.SendMessage, sendExt("", 0, ""), nil, transport.SerializeRocketMQ)
	if bad.ResponseCode() == transport.Success || bad.Serialize != transport.SerializeRocketMQ || bad.Remark == "" {
		t.Fatalf("bad send answered %d %q in %s", bad.Code, bad.Remark, bad.Serialize)
	}
}
