package chaos

import (
	"context"
	"fmt"

	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// The clock scenarios (C1–C5) need the broker's leader services (lock
// manager, schedule, transaction check-back, retention), which run inside a
// node: so, like D1 and D2, they run in the test process. clockGroup is a
// testcluster group with a jumpable wall clock per node (testcluster.Clocks)
// and the inprocGroup's real broker on every node, served over loopback TCP;
// the test talks to the brokers with the project's transport client, as a
// RocketMQ client would, and the load is the real clients'.

// clockGroupOptions shape a clock scenario's group.
type clockGroupOptions struct {
	Store store.Config
	// Broker adjusts every node's broker config.
	Broker func(*broker.Config)
}

type clockGroup struct {
	// inprocGroup is the nameserver and the brokers on the nodes, which the
	// real-client load and the scenario's own requests use.
	*inprocGroup
	clocks *testcluster.Clocks
	tc     *transport.Client
	// started is when the group was started.
	started time.Time

	mu sync.Mutex
	// checks are the CHECK_TRANSACTION_STATE requests the producer connection
	// received, in arrival order.
	checks []receivedCheck
	// steps are the clock steps taken, in order (for the load report).
	steps []stepRecord
	// leaders records the ready leader, to report whether a step moved it.
	leaders *leaderLog
}

type stepRecord struct {
	at    time.Time
	label string
}

type receivedCheck struct {
	at         time.Time
	halfOffset string
	txID       string
}

func startClockGroup(t *testing.T, opts clockGroupOptions) *clockGroup {
	t.Helper()
	started := time.Now()
	clocks := testcluster.NewClocks(nil)
	c := testcluster.New(t, 3, testcluster.Options{Configure: clocks.Configure, Logger: inprocLogger(), Store: opts.Store})
	g := &clockGroup{clocks: clocks, started: started}
	g.tc = transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, OnRequest: transport.HandlerFunc(g.onRequest)})
	t.Cleanup(func() { _ = g.tc.Close() })
	g.inprocGroup = startInprocGroup(t, c, opts.Broker)
	g.leaders = watchLeaders(c)
	t.Cleanup(g.leaders.stop)
	return g
}

func (g *clockGroup) onRequest(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
	if req.RequestCode() == transport.CheckTransactionState {
		g.mu.Lock()
		g.checks = append(g.checks, receivedCheck{at: time.Now(), halfOffset: req.Field("tranStateTableOffset"), txID: req.Field("transactionId")})
		g.mu.Unlock()
	}
	return nil
}

// checksSince returns the check-backs received at or after since.
func (g *clockGroup) checksSince(since time.Time) []receivedCheck {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []receivedCheck
	for _, c := range g.checks {
		if !c.at.Before(since) {
			out = append(out, c)
		}
	}
	return out
}

// leader is the ready leader's id.
func (g *clockGroup) leader() raft.ServerID { return g.c.WaitLeader(10 * time.Second).ID }

// follower is a running node other than the leader.
func (g *clockGroup) follower() raft.ServerID {
	l := g.leader()
	for _, m := range g.c.Members() {
		if m.ID != l {
			return m.ID
		}
	}
	g.t.Fatal("no follower")
	return ""
}

// call sends one request to id's broker.
func (g *clockGroup) call(id raft.ServerID, code transport.RequestCode, ext map[string]string, body []byte) (*transport.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return g.tc.Invoke(ctx, g.addrs[id], transport.NewRequest(code, ext, body))
}

// sendExt is a SEND_MESSAGE header with properties props (UNIQ_KEY = id).
func clockSendExt(topic string, queueID int32, group, id string, props map[string]string) map[string]string {
	p := map[string]string{store.PropertyUniqKey: id, store.PropertyKeys: id}
	for k, v := range props {
		p[k] = v
	}
	return map[string]string{"producerGroup": group, "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": "4",
		"queueId": strconv.Itoa(int(queueID)), "sysFlag": "0", "bornTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10), "flag": "0",
		"properties": store.EncodeProperties(p), "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
}

// sendAck is what a successful SEND_MESSAGE answered.
type sendAck struct {
	queueOffset int64
	physOffset  int64
}

// send sends one message to id's broker; a non-success answer is an error
// naming its code.
func (g *clockGroup) send(id raft.ServerID, ext map[string]string, body string) (sendAck, error) {
	r, err := g.call(id, transport.SendMessage, ext, []byte(body))
	if err != nil {
		return sendAck{}, err
	}
	if r.ResponseCode() != transport.Success {
		return sendAck{}, fmt.Errorf("send %s: %s %s", body, r.ResponseCode(), r.Remark)
	}
	qo, err := strconv.ParseInt(r.Field("queueOffset"), 10, 64)
	if err != nil {
		return sendAck{}, fmt.Errorf("send %s: queueOffset %q: %w", body, r.Field("queueOffset"), err)
	}
	_, phys, err := store.ParseOffsetMsgID(r.Field("msgId"))
	if err != nil {
		return sendAck{}, fmt.Errorf("send %s: msgId %q: %w", body, r.Field("msgId"), err)
	}
	return sendAck{queueOffset: qo, physOffset: int64(phys)}, nil
}

// storedMessage is one message read from a node's store.
type storedMessage struct {
	body    string
	offset  int64
	storeTS int64
}

// readQueueAt reads every message of topic/queue from id's store.
func (g *clockGroup) readQueueAt(id raft.ServerID, topic string, qid int32) ([]storedMessage, error) {
	n := g.c.Member(id).Node()
	if n == nil {
		return nil, fmt.Errorf("%s is not running", id)
	}
	st := n.Store()
	var out []storedMessage
	for off := st.MinQueueOffset(topic, qid); off < st.MaxQueueOffset(topic, qid); {
		res, err := st.GetMessages(topic, qid, off, 256, 4<<20, nil)
		if err != nil {
			return nil, fmt.Errorf("%s %s@%d: %w", id, topic, off, err)
		}
		if res.Status != store.Found || len(res.Messages) == 0 {
			res.Release()
			return out, nil
		}
		for i, raw := range res.Messages {
			m, err := store.DecodeMessage(raw, true)
			if err != nil {
				res.Release()
				return nil, fmt.Errorf("%s %s@%d: %w", id, topic, res.QueueOffsets[i], err)
			}
			out = append(out, storedMessage{body: string(m.Body), offset: int64(res.QueueOffsets[i]), storeTS: m.StoreTimestamp})
		}
		off = res.NextBeginOffset
		res.Release()
	}
	return out, nil
}

// jump steps id's clock by d and notes it in rep.
func (g *clockGroup) jump(rep *Report, id raft.ServerID, role string, d time.Duration) {
	off := g.clocks.Jump(id, d)
	sign := "+"
	if d < 0 {
		sign = ""
	}
	g.mu.Lock()
	g.steps = append(g.steps, stepRecord{at: time.Now(), label: fmt.Sprintf("%s %s %s%v", role, id, sign, d)})
	g.mu.Unlock()
	rep.Note("at %v: %s %s's clock stepped %+v (now %+v off the real time)", time.Since(g.started).Round(100*time.Millisecond), role, id, d, off)
}

// reportSteps notes, for each clock step, the load's throughput in the
// pacedMeasure before it and from it to the next step (the clock stays
// stepped until then) and how soon a send called after it was acknowledged;
// then the D7–D9 lines for the whole stepped span, from the first step to
// reset (when every clock went back to the real time) and pacedMeasure
// past it, and who led.
func (g *clockGroup) reportSteps(p *pacedLoad, reset time.Time) {
	end := reset.Add(pacedMeasure)
	time.Sleep(time.Until(end))
	g.mu.Lock()
	steps := append([]stepRecord(nil), g.steps...)
	g.mu.Unlock()
	v := sendsView(p.h.Sends())
	if len(steps) == 0 {
		p.rep.Fail("no clock was stepped")
		return
	}
	for i, s := range steps {
		next := reset
		if i+1 < len(steps) {
			next = steps[i+1].at
		}
		stepped := "none before the next step" // two steps at once (a leader's back, a follower's off)
		if next.Sub(s.at) >= 100*time.Millisecond {
			stepped = fmt.Sprintf("%.0f msgs/s (%v, to the next step or the reset)", v.throughput(s.at, next), next.Sub(s.at).Round(100*time.Millisecond))
		}
		p.rep.Note("step %d (%s at %v): throughput before %.0f msgs/s (%v), stepped %s; first ack of a send called after it %s",
			i+1, s.label, s.at.Sub(g.started).Round(100*time.Millisecond), v.throughput(s.at.Add(-pacedMeasure), s.at), pacedMeasure,
			stepped, v.firstAck(s.at))
	}
	p.reportSpan(v, "clocks stepped", steps[0].at, reset, end)
	// A wall-clock step must not slow the group (raft and the leases run on
	// monotonic time), so the load is held to a third of the max throughout.
	if got := v.throughput(steps[0].at, reset); got < p.maxRate/3 {
		p.rep.Fail("load while the clocks were stepped ran at %.0f msgs/s, under a third of the max %.0f", got, p.maxRate)
	}
	g.leaders.stop()
	_, desc := g.leaders.since(steps[0].at, time.Now())
	p.rep.Note("leadership from the first step to %v after the reset: %s", time.Since(reset).Round(100*time.Millisecond), desc)
	p.rep.Note("refused sends (the checker holds each to not stored): %s", v.refusals(g.started))
}

// repeatEvery calls f(0), f(1), … one interval apart, each after waiting d,
// on a goroutine counted in wg, until stop is closed: the clock scenarios'
// senders, lock askers and watchers.
func repeatEvery(wg *sync.WaitGroup, stop <-chan struct{}, d time.Duration, f func(i int)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(d):
			}
			f(i)
		}
	}()
}
