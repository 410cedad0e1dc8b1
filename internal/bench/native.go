package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// autoCreateQueues is the queue count the native client asks for when the
// topic does not exist yet (defaultTopicQueueNums of the send header); the
// broker creates it with at most its own defaultTopicQueueNums.
const autoCreateQueues = 4

// sendTimeout bounds one request of the native client.
const sendTimeout = 5 * time.Second

// queueTarget is one write queue: the leader address of its broker group and
// the queue id there.
type queueTarget struct {
	addr  string
	queue int32
}

// resolveTargets returns every write queue of topic: for each broker group
// with a leader (brokerId 0) and write permission, queues 0 …
// writeQueueNums-1, groups in name order. A topic without a route yet is
// routed like TBW102 but with at most autoCreateQueues queues per group, the
// queues the broker will create on the first send; auto reports that case.
func resolveTargets(ctx context.Context, ns *nameserver.Client, namesrv []string, topic string) (ts []queueTarget, auto bool, err error) {
	var lastErr error
	for _, lookup := range []string{topic, "TBW102"} {
		for _, addr := range namesrv {
			rd, err := ns.GetRoute(ctx, addr, lookup)
			if err != nil {
				lastErr = err
				continue
			}
			ts := targetsOf(rd, lookup != topic)
			if len(ts) > 0 {
				return ts, lookup != topic, nil
			}
			lastErr = fmt.Errorf("route of %s has no writable queue on a leader (brokerId 0)", lookup)
		}
	}
	return nil, false, fmt.Errorf("bench: no route for topic %s: %w", topic, lastErr)
}

// targetsOf lists the write queues of a route (see resolveTargets).
func targetsOf(rd nameserver.TopicRouteData, autoCreate bool) []queueTarget {
	qds := append([]nameserver.QueueData(nil), rd.QueueDatas...)
	sort.Slice(qds, func(i, j int) bool { return qds[i].BrokerName < qds[j].BrokerName })
	var ts []queueTarget
	for _, qd := range qds {
		if qd.Perm&nameserver.PermWrite == 0 || qd.WriteQueueNums <= 0 {
			continue
		}
		var leader string
		for _, bd := range rd.BrokerDatas {
			if bd.BrokerName == qd.BrokerName {
				leader = bd.BrokerAddrs[nameserver.MasterID]
			}
		}
		if leader == "" {
			continue
		}
		n := qd.WriteQueueNums
		if autoCreate {
			n = min(n, autoCreateQueues)
		}
		for q := range n {
			ts = append(ts, queueTarget{addr: leader, queue: q})
		}
	}
	return ts
}

// encodeBatchBody lays out SEND_BATCH_MESSAGE elements (MessageDecoder.encodeMessage).
func encodeBatchBody(bodies [][]byte, props []string) []byte {
	var b []byte
	for i, body := range bodies {
		total := 22 + len(body) + len(props[i])
		var hdr [20]byte
		binary.BigEndian.PutUint32(hdr[0:], uint32(total))
		binary.BigEndian.PutUint32(hdr[16:], uint32(len(body)))
		b = append(b, hdr[:]...)
		b = append(b, body...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(props[i])))
		b = append(b, props[i]...)
	}
	return b
}

// nativeSender sends with the project's remoting client, round-robin over
// every write queue of the route: send k goes to targets[k mod len].
type nativeSender struct {
	tc        *transport.Client
	serialize transport.SerializeType
	targets   []queueTarget
	shape     shape
	batch     int64
	creds     sign.Credentials

	// header is the unsigned single send's extFields, encoded once but for
	// the fields that vary (see ext).
	headerOnce sync.Once
	header     *transport.ExtTemplate
}

// request builds the send of o.
func (s *nativeSender) request(o op, t queueTarget) *transport.Command {
	born := o.sent.UnixMilli()
	if o.sent.IsZero() {
		born = time.Now().UnixMilli()
	}
	if s.batch <= 1 && !s.creds.Set() {
		// The common case without a map: the same fields, appended in the
		// order a map of them encodes in (TestNativeRequestWithoutAMapEncodesLikeTheMap).
		return &transport.Command{Code: int16(transport.SendMessage), Language: transport.LanguageGo, Version: transport.ProtocolVersion,
			Serialize: s.serialize, Ext: s.ext(t, born, s.shape.encodedProperties(o.first)), Body: s.shape.body}
	}
	r := s.mapRequest(o, t, born)
	r.Serialize = s.serialize
	return r
}

func (s *nativeSender) sysFlag() int32 {
	if s.shape.transaction {
		return store.SysFlagTxPrepared // MessageSysFlag.TRANSACTION_PREPARED_TYPE
	}
	return 0
}

// mapRequest is request with its fields in a map: batches, and signed sends
// (the signature is computed over the map).
func (s *nativeSender) mapRequest(o op, t queueTarget, born int64) *transport.Command {
	ext := map[string]string{
		"producerGroup": s.shape.group, "topic": s.shape.topic, "defaultTopic": "TBW102",
		"defaultTopicQueueNums": strconv.Itoa(autoCreateQueues), "queueId": strconv.Itoa(int(t.queue)),
		"sysFlag": strconv.Itoa(int(s.sysFlag())), "bornTimestamp": strconv.FormatInt(born, 10),
		"flag": "0", "reconsumeTimes": "0", "unitMode": "false", "maxReconsumeTimes": "0", "batch": "false",
	}
	code := transport.SendMessage
	var payload []byte
	if s.batch > 1 {
		// A short last batch (a count that --batch does not divide), even of
		// one message, stays a batch, so every send takes the same path.
		code, ext["batch"] = transport.SendBatchMessage, "true"
		bodies, props := make([][]byte, o.msgs), make([]string, o.msgs)
		for i := range bodies {
			bodies[i], props[i] = s.shape.body, s.shape.encodedProperties(o.first+int64(i))
		}
		payload = encodeBatchBody(bodies, props)
	} else {
		ext["properties"] = s.shape.encodedProperties(o.first)
		payload = s.shape.body
	}
	return transport.NewRequest(code, s.creds.SignExt(ext, payload), payload)
}

// ext is mapRequest's extFields for one message to t, encoded in the
// sender's header encoding with the keys in sorted order (the order a map
// encodes in). The fixed fields are encoded once, in a template; a send
// encodes only its born time, properties and queue. Building a map, sorting
// and encoding it per send was a third of the bench client's CPU per async
// send, and encoding every field per send a sixth.
func (s *nativeSender) ext(t queueTarget, born int64, props string) transport.EncodedExt {
	s.headerOnce.Do(func() {
		h := transport.NewExtTemplate(s.serialize)
		h.Add("batch", "false")
		h.Slot("bornTimestamp")
		h.Add("defaultTopic", "TBW102")
		h.Add("defaultTopicQueueNums", strconv.Itoa(autoCreateQueues))
		h.Add("flag", "0")
		h.Add("maxReconsumeTimes", "0")
		h.Add("producerGroup", s.shape.group)
		h.Slot("properties")
		h.Slot("queueId")
		h.Add("reconsumeTimes", "0")
		h.Add("sysFlag", strconv.Itoa(int(s.sysFlag())))
		h.Add("topic", s.shape.topic)
		h.Add("unitMode", "false")
		s.header = h
	})
	return s.header.Fill(strconv.FormatInt(born, 10), props, strconv.Itoa(int(t.queue)))
}

// answer is one send's outcome: the body bytes sent, or why it failed.
type answer struct {
	bytes int64
	err   error
}

// send sends o to the next write queue and waits for the answer (and commits
// it, for a transaction). A plain send is sendAsync with one send in flight:
// its timeout is the connection's sweep of InvokeAsync deadlines, not a
// context and timer per send (those were 4 % of the client's CPU at one
// sync producer).
func (s *nativeSender) send(ctx context.Context, o op) (int64, error) {
	if s.shape.transaction {
		return s.sendAndCommit(ctx, o)
	}
	ch := make(chan answer, 1)
	s.sendAsync(o, func(bytes int64, err error) { ch <- answer{bytes, err} })
	select {
	case a := <-ch:
		return a.bytes, a.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// sendAndCommit sends o as a half message and commits it once it is stored.
func (s *nativeSender) sendAndCommit(ctx context.Context, o op) (int64, error) {
	t := s.targets[(o.first/s.batch)%int64(len(s.targets))]
	sctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	resp, err := s.tc.Invoke(sctx, t.addr, s.request(o, t))
	if err != nil {
		return 0, err
	}
	if resp.ResponseCode() != transport.Success {
		return 0, fmt.Errorf("send to %s queue %d: %s %s", t.addr, t.queue, resp.ResponseCode(), resp.Remark)
	}
	if err := s.commit(sctx, t.addr, o.first, resp); err != nil {
		return 0, err
	}
	return int64(o.msgs) * int64(len(s.shape.body)), nil
}

// sendAsync is send without a goroutine, context or timer per message: the
// answer is handled on the connection's reader (transport.InvokeAsync).
// Transactions, which send their commit after the answer, use sendAndCommit.
func (s *nativeSender) sendAsync(o op, done func(int64, error)) {
	t := s.targets[(o.first/s.batch)%int64(len(s.targets))]
	bytes := int64(o.msgs) * int64(len(s.shape.body))
	// A dial, when there is no connection yet, is bounded by the client's DialTimeout.
	err := s.tc.InvokeAsync(context.Background(), t.addr, s.request(o, t), sendTimeout, func(resp *transport.Command, err error) {
		switch {
		case err != nil:
			done(0, err)
		case resp.ResponseCode() != transport.Success:
			done(0, fmt.Errorf("send to %s queue %d: %s %s", t.addr, t.queue, resp.ResponseCode(), resp.Remark))
		default:
			done(bytes, nil)
		}
	})
	if err != nil {
		done(0, err)
	}
}

// produceNative runs the load with the project's own client.
func produceNative(ctx context.Context, o ProduceOptions, r *runner) error {
	sh := newShape(o, time.Now())
	cfg := transport.ClientConfig{DialTimeout: 3 * time.Second, TLS: o.TLS}
	if o.Transaction {
		// A broker that missed our END_TRANSACTION asks on this connection
		// (CHECK_TRANSACTION_STATE); every bench transaction commits.
		cfg.OnRequest = checkBackHandler(sh.group, o.Credentials)
	}
	tc := transport.NewClient(cfg)
	defer tc.Close()
	ns := nameserver.NewClient(tc)
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	targets, auto, err := resolveTargets(rctx, ns, o.Namesrv, o.Topic)
	cancel()
	if err != nil {
		return err
	}
	if auto {
		fmt.Fprintf(o.Out, "topic %s has no route yet: sending to %d queues, which the broker auto-creates\n", o.Topic, len(targets))
	}
	s := &nativeSender{tc: tc, serialize: o.Serialize, targets: targets, shape: sh, batch: int64(o.Batch), creds: o.Credentials}
	window := 1
	if o.Mode == ModeAsync {
		window = o.Window
	}
	if window > 1 && !o.Transaction {
		return r.runWith(ctx, window, s.send, s.sendAsync)
	}
	return r.run(ctx, window, s.send)
}
