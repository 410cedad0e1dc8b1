package broker

import (
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/internal/fakereplica"

	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

func TestDelayedSendIsStoredInScheduleTopic(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	// Level 30 is clamped to the ladder's last level (18); TIMER_* loses to DELAY.
	r := tb.call(t, transport.SendMessage, sendExt("T1", 3, props(store.PropertyDelayLevel, "30", store.PropertyUniqKey, "U1", store.PropertyTimerDeliverMS, "1")), []byte("late"))
	if r.ResponseCode() != transport.Success || r.Field("queueId") != "3" || r.Field("queueOffset") != "0" {
		t.Fatalf("delayed send: code %d %s ext %v", r.Code, r.Remark, r.Fields())
	}
	msgs := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 17)
	if len(msgs) != 1 {
		t.Fatalf("schedule queue 17 holds %d messages", len(msgs))
	}
	p := store.ParseProperties(msgs[0].Properties)
	if p[store.PropertyRealTopic] != "T1" || p[store.PropertyRealQueueID] != "3" || p[store.PropertyDelayLevel] != "18" ||
		p[store.PropertyUniqKey] != "U1" || p[store.PropertyTimerDeliverMS] != "" || string(msgs[0].Body) != "late" {
		t.Errorf("stored %v body %q", p, msgs[0].Body)
	}
	if got := fakereplica.ReadQueue(t, tb.st, "T1", 3); len(got) != 0 {
		t.Errorf("the real queue already holds %d messages", len(got))
	}
	if topic, ok := tb.replica.Topic(schedule.Topic); !ok || topic.WriteQueueNums != 18 {
		t.Errorf("schedule topic %+v %v, want 18 queues", topic, ok)
	}
	// A timer an hour ahead waits in the 1h level (queue 16) with the timer kept;
	// one in the past goes through.
	future := strconv.FormatInt(time.Now().Add(time.Hour+time.Minute).UnixMilli(), 10)
	if r := tb.call(t, transport.SendMessage, sendExt("T1", 0, props(store.PropertyTimerDeliverMS, future)), []byte("x")); r.ResponseCode() != transport.Success {
		t.Errorf("future TIMER_DELIVER_MS: code %d %s", r.Code, r.Remark)
	}
	parked := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 16)
	if len(parked) != 1 {
		t.Fatalf("1h level holds %d messages", len(parked))
	}
	if pp := store.ParseProperties(parked[0].Properties); pp[store.PropertyTimerDeliverMS] != future || pp[store.PropertyDelayLevel] != "17" || pp[store.PropertyRealTopic] != "T1" {
		t.Errorf("parked timed message properties %v", pp)
	}
	if r := tb.call(t, transport.SendMessage, sendExt("T1", 0, props(store.PropertyTimerDeliverMS, "1")), []byte("x")); r.ResponseCode() != transport.Success {
		t.Errorf("past TIMER_DELIVER_MS: code %d %s", r.Code, r.Remark)
	}
}

// TestDelayedSendIsDeliveredByTheLeadersService runs the whole path on the real
// clock: send with DELAY=1, the service started on the leader role re-puts it.
func TestDelayedSendIsDeliveredByTheLeadersService(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	start := time.Now()
	if r := tb.call(t, transport.SendMessage, sendExt("T1", 1, props(store.PropertyDelayLevel, "1", store.PropertyUniqKey, "U9")), []byte("soon")); r.ResponseCode() != transport.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if msgs := fakereplica.ReadQueue(t, tb.st, "T1", 1); len(msgs) == 1 {
			if since := time.Since(start); since < 900*time.Millisecond {
				t.Errorf("delivered after %v, level 1 is 1 s", since)
			}
			p := store.ParseProperties(msgs[0].Properties)
			if p[store.PropertyUniqKey] != "U9" || p[store.PropertyDelayLevel] != "" || string(msgs[0].Body) != "soon" {
				t.Errorf("delivered %v %q", p, msgs[0].Body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("not delivered within 5 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sendBackExt(group string, off store.PhysicalOffset, delayLevel, maxTimes int) map[string]string {
	return map[string]string{"group": group, "offset": strconv.FormatInt(int64(off), 10), "delayLevel": strconv.Itoa(delayLevel),
		"originMsgId": "ORIG", "originTopic": "T1", "unitMode": "false", "maxReconsumeTimes": strconv.Itoa(maxTimes)}
}

func sendOne(t *testing.T, tb *testBroker, ext map[string]string, body string) store.PhysicalOffset {
	t.Helper()
	r := tb.call(t, transport.SendMessage, ext, []byte(body))
	if r.ResponseCode() != transport.Success {
		t.Fatalf("send: %d %s", r.Code, r.Remark)
	}
	_, off, err := store.ParseOffsetMsgID(r.Field("msgId"))
	if err != nil {
		t.Fatal(err)
	}
	return off
}

func TestSendBackDelaysIntoRetryThenDLQ(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	off := sendOne(t, tb, sendExt("T1", 0, props(store.PropertyUniqKey, "U1", store.PropertyTags, "a")), "payload")

	// delayLevel 0, reconsumeTimes 0 → level 3 (queue 2), reconsumeTimes 1.
	if r := tb.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", off, 0, 2), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("send back: %d %s", r.Code, r.Remark)
	}
	msgs := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 2)
	if len(msgs) != 1 {
		t.Fatalf("schedule queue 2 holds %d messages", len(msgs))
	}
	m := msgs[0]
	p := store.ParseProperties(m.Properties)
	if p[store.PropertyRealTopic] != "%RETRY%G" || p[store.PropertyRealQueueID] != "0" || p[store.PropertyRetryTopic] != "T1" ||
		p[store.PropertyOriginMsgID] != "U1" || p[store.PropertyUniqKey] != "U1" || p[store.PropertyTags] != "a" ||
		m.ReconsumeTimes != 1 || string(m.Body) != "payload" {
		t.Errorf("retry message %v reconsume=%d body=%q", p, m.ReconsumeTimes, m.Body)
	}
	if _, ok := tb.replica.Topic("%RETRY%G"); !ok {
		t.Error("the retry topic of G was not created")
	}

	// The retry copy again, as the consumer would after it came back: now at
	// reconsumeTimes 1; an explicit level 1 is honoured.
	retryOff := m.PhysicalOffset
	if r := tb.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", retryOff, 1, 2), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("second send back: %d %s", r.Code, r.Remark)
	}
	if got := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 0); len(got) != 1 || got[0].ReconsumeTimes != 2 {
		t.Fatalf("level 1 queue: %d messages", len(got))
	}
	// reconsumeTimes 2 ≥ max 2 → DLQ, undelayed, RETRY_TOPIC kept.
	lvl1 := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 0)[0]
	if r := tb.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", lvl1.PhysicalOffset, 0, 2), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("third send back: %d %s", r.Code, r.Remark)
	}
	dlq := fakereplica.ReadQueue(t, tb.st, "%DLQ%G", 0)
	if len(dlq) != 1 {
		t.Fatalf("DLQ holds %d messages", len(dlq))
	}
	dp := store.ParseProperties(dlq[0].Properties)
	if dlq[0].ReconsumeTimes != 3 || dp[store.PropertyRetryTopic] != "T1" || dp[store.PropertyDelayLevel] != "" || dp[store.PropertyOriginMsgID] != "U1" {
		t.Errorf("DLQ message %v reconsume=%d", dp, dlq[0].ReconsumeTimes)
	}
	// delayLevel −1 goes straight to the DLQ.
	off2 := sendOne(t, tb, sendExt("T1", 0, props(store.PropertyUniqKey, "U2")), "orderly")
	if r := tb.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", off2, -1, 16), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("send back -1: %d %s", r.Code, r.Remark)
	}
	if got := fakereplica.ReadQueue(t, tb.st, "%DLQ%G", 0); len(got) != 2 || string(got[1].Body) != "orderly" {
		t.Errorf("DLQ after -1: %d messages", len(got))
	}
	// An offset that holds no message is a SYSTEM_ERROR (the client falls back).
	if r := tb.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", 1<<40, 0, 16), nil); r.ResponseCode() != transport.SystemError {
		t.Errorf("bad offset: code %d %s", r.Code, r.Remark)
	}
}

// TestRetryFallbackSend: the client's plain SEND to %RETRY%<group> with DELAY is
// delayed; past maxReconsumeTimes it goes to the DLQ (Java handleRetryAndDLQ).
func TestRetryFallbackSend(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	ext := sendExt("%RETRY%G", 0, props(store.PropertyDelayLevel, "4", store.PropertyUniqKey, "R1"))
	ext["reconsumeTimes"], ext["maxReconsumeTimes"] = "2", "2"
	sendOne(t, tb, ext, "again")
	if got := fakereplica.ReadQueue(t, tb.st, schedule.Topic, 3); len(got) != 1 || store.ParseProperties(got[0].Properties)[store.PropertyRealTopic] != "%RETRY%G" {
		t.Fatalf("level 4 queue: %d messages", len(got))
	}
	ext = sendExt("%RETRY%G", 0, props(store.PropertyDelayLevel, "5", store.PropertyUniqKey, "R2"))
	ext["reconsumeTimes"], ext["maxReconsumeTimes"] = "3", "2"
	sendOne(t, tb, ext, "dead")
	dlq := fakereplica.ReadQueue(t, tb.st, "%DLQ%G", 0)
	if len(dlq) != 1 || string(dlq[0].Body) != "dead" || store.ParseProperties(dlq[0].Properties)[store.PropertyDelayLevel] != "" {
		t.Fatalf("DLQ: %d messages", len(dlq))
	}
}

func TestSendBackOnFollowerIsForwarded(t *testing.T) {
	leader := startTestBroker(t, replica.RoleLeader, nil)
	follower := startTestBroker(t, replica.RoleFollower, []Peer{{ID: "n0", ClientAddr: leader.b.Addr()}})
	off := sendOne(t, leader, sendExt("T1", 0, props(store.PropertyUniqKey, "U1")), "m")
	r := follower.call(t, transport.ConsumerSendMsgBack, sendBackExt("G", off, 2, 16), nil)
	if r.ResponseCode() != transport.Success || follower.replica.PutCount() != 0 {
		t.Fatalf("forwarded send back: %d %s (follower stored %d entries)", r.Code, r.Remark, follower.replica.PutCount())
	}
	if got := fakereplica.ReadQueue(t, leader.st, schedule.Topic, 1); len(got) != 1 || got[0].ReconsumeTimes != 1 {
		t.Fatalf("leader's level 2 queue holds %d messages", len(got))
	}
}
