package clientapi

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// maxPullBytes bounds one pull response body (Java maxTransferBytesOnMessageInDisk).
const maxPullBytes = 256 << 10

// shortPollCap bounds a held pull when long polling is off (Java's
// shortPollingTimeMills default, 1 s).
const shortPollCap = time.Second

// Pull sysFlag bits (PullSysFlag.java).
const (
	pullFlagCommitOffset = 0x1
	pullFlagSuspend      = 0x2
	pullFlagSubscription = 0x4
)

// PullHeader is PULL_MESSAGE's header.
type PullHeader struct {
	ConsumerGroup        string
	Topic                string
	QueueID              int32
	QueueOffset          int64
	MaxMsgNums           int32
	SysFlag              int32
	CommitOffset         int64
	SuspendTimeoutMillis int64
	Subscription         string
	SubVersion           int64
	ExpressionType       string
}

func parsePullHeader(req *transport.Command) (PullHeader, error) {
	e := route.FieldsOf(req)
	h := PullHeader{
		ConsumerGroup:        e.Str("consumerGroup", true),
		Topic:                e.Str("topic", true),
		QueueID:              e.Int32("queueId", true, 0),
		QueueOffset:          e.Int64("queueOffset", true, 0),
		MaxMsgNums:           e.Int32("maxMsgNums", false, 32),
		SysFlag:              e.Int32("sysFlag", false, 0),
		CommitOffset:         e.Int64("commitOffset", false, 0),
		SuspendTimeoutMillis: e.Int64("suspendTimeoutMillis", false, 0),
		Subscription:         e.Str("subscription", false),
		SubVersion:           e.Int64("subVersion", false, 0),
		ExpressionType:       e.Str("expressionType", false),
	}
	return h, e.Err
}

// handlePull serves PULL_MESSAGE (11). Every node serves what it has applied;
// the response always suggests brokerId 0. A pull that finds nothing is held
// (long polling) until a message arrives or suspendTimeoutMillis passes: it is
// deferred, and answered by whatever fires its waiter (clients.PullWaiters),
// so no goroutine waits for it.
//
// A pull of a queue's newest messages runs on its connection's reader
// goroutine (pullServedInline; routes.go). Nothing here blocks it: the
// messages it reads were written moments ago, and a pull that has to wait is
// deferred.
func (a *API) handlePull(ctx context.Context, req *route.Request) (*transport.Command, error) {
	h, err := parsePullHeader(req.Command)
	if err != nil {
		return nil, err
	}
	if err := route.ValidateTopic(h.Topic); err != nil {
		return nil, err
	}
	topic, ok := a.d.Replica.Topic(h.Topic)
	if !ok {
		return nil, fmt.Errorf("%w: topic %s", fsm.ErrTopicNotFound, h.Topic)
	}
	if h.QueueID < 0 || h.QueueID >= topic.ReadQueueNums {
		return nil, fmt.Errorf("%w: queueId=%d, topic %s has %d read queues", fsm.ErrQueueIDInvalid, h.QueueID, h.Topic, topic.ReadQueueNums)
	}
	filter, err := a.pullFilter(h)
	if err != nil {
		return nil, err
	}
	if a.leading() {
		// First: a pull from a reset offset ends the reset's hold, and the
		// commit it carries is then progress past the reset.
		a.d.Offsets.Pulled(h.ConsumerGroup, h.Topic, h.QueueID, store.QueueOffset(h.QueueOffset))
		if h.SysFlag&pullFlagCommitOffset != 0 && h.CommitOffset > 0 {
			a.d.Offsets.Advance(h.ConsumerGroup, h.Topic, h.QueueID, store.QueueOffset(h.CommitOffset))
		}
	}
	p := pull{h: h, filter: filter, offset: store.QueueOffset(h.QueueOffset), maxMsgs: int(h.MaxMsgNums)}
	if p.maxMsgs <= 0 || p.maxMsgs > 1024 {
		p.maxMsgs = 32
	}
	st := a.d.Store
	res, err := a.read(&p)
	if err != nil {
		return nil, err
	}
	if res.Status == store.Found || h.SysFlag&pullFlagSuspend == 0 || !wouldWait(res.Status) {
		return a.pullAnswer(&p, res), nil
	}
	res.Release()
	suspend := min(time.Duration(h.SuspendTimeoutMillis)*time.Millisecond, a.d.MaxPullSuspend)
	if !a.d.LongPollingEnable {
		suspend = min(suspend, shortPollCap)
	}
	tq := store.TopicQueue{Topic: h.Topic, QueueID: h.QueueID}
	hasNew := func() bool { return st.MaxQueueOffset(h.Topic, h.QueueID) > p.offset }
	if !req.CanDefer() {
		a.d.Pulls.Wait(ctx, tq, p.offset, suspend, hasNew)
		return a.readAndAnswer(&p)
	}
	resp, derr := req.Defer() // before the answer may come
	a.d.Pulls.Hold(ctx, tq, p.offset, suspend, hasNew, func() { req.AnswerWith(func() (*transport.Command, error) { return a.readAndAnswer(&p) }) })
	return resp, derr
}

// pull is one PULL_MESSAGE request, checked: what to read and how to filter.
type pull struct {
	h       PullHeader
	filter  store.MessageFilter
	offset  store.QueueOffset
	maxMsgs int
}

// read reads what p asks for from the store.
func (a *API) read(p *pull) (*store.GetResult, error) {
	return a.d.Store.GetMessages(p.h.Topic, p.h.QueueID, p.offset, p.maxMsgs, maxPullBytes, p.filter)
}

// readAndAnswer reads p again (after its hold) and builds the answer.
func (a *API) readAndAnswer(p *pull) (*transport.Command, error) {
	res, err := a.read(p)
	if err != nil {
		return nil, err
	}
	return a.pullAnswer(p, res), nil
}

// pullAnswer counts what p pulled and builds its response, which owns res.
func (a *API) pullAnswer(p *pull, res *store.GetResult) *transport.Command {
	if a.d.Pulled != nil && (res.Status == store.Found || res.Status == store.OffsetOverflowOne || res.Status == store.NoMatchedMessage) {
		a.d.Pulled(p.h.ConsumerGroup, p.h.Topic, p.h.QueueID, res.NextBeginOffset, len(res.Messages), res.TotalBytes)
	}
	return pullResponse(res, p.offset, a.leading())
}

// pullInlineSpan is how close to its queue's end a pull must start to be served
// on the connection's reader goroutine: such a pull reads the queue's newest
// messages, which are in memory, or finds nothing and is held. A pull further
// back (a consumer catching up on a backlog) may read from the disk, and runs
// on a handler goroutine so that other requests on the connection do not wait
// for that read.
const pullInlineSpan = 256

// pullServedInline reports whether a pull request starts within pullInlineSpan
// of its queue's end. A request whose fields do not parse goes to a handler
// goroutine, where handlePull answers it with the error.
func (a *API) pullServedInline(cmd *transport.Command) bool {
	topic, ok := cmd.LookupField("topic")
	if !ok {
		return false
	}
	q, err1 := strconv.ParseInt(cmd.Field("queueId"), 10, 32)
	off, err2 := strconv.ParseInt(cmd.Field("queueOffset"), 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return int64(a.d.Store.MaxQueueOffset(topic, int32(q)))-off <= pullInlineSpan
}

// wouldWait reports the statuses that mean "nothing yet at this offset".
func wouldWait(s store.GetStatus) bool {
	return s == store.OffsetOverflowOne || s == store.NoMessageInQueue || s == store.OffsetFoundNull
}

// pullFilter picks the subscription: in-band when the request carries one (pull
// and lite-pull consumers), else the one registered by heartbeats (push consumers).
func (a *API) pullFilter(h PullHeader) (store.MessageFilter, error) {
	var sub clients.Subscription
	if h.SysFlag&pullFlagSubscription != 0 {
		sub = clients.Subscription{Topic: h.Topic, SubString: h.Subscription, ExpressionType: h.ExpressionType, SubVersion: h.SubVersion}
		if sub.ExpressionType == "" || sub.ExpressionType == clients.ExpressionTag {
			for _, t := range strings.Split(h.Subscription, "||") {
				if t = strings.TrimSpace(t); t != "" && t != "*" {
					sub.TagsSet = append(sub.TagsSet, t)
				}
			}
		}
	} else {
		var ok bool
		sub, ok = a.d.Clients.Subscription(h.ConsumerGroup, h.Topic)
		if !ok {
			return nil, fmt.Errorf("%w: consumer group %s has no subscription to %s (no heartbeat yet)",
				route.ErrSubscriptionNotExist, h.ConsumerGroup, h.Topic)
		}
	}
	return a.d.Clients.SubscriptionFilter(h.ConsumerGroup, sub)
}

// pullResponse maps a store result onto RocketMQ's pull codes and next offsets
// (rocketmq-protocol.md §2.4.4); the body is the stored bytes, zero copy, with
// each QUEUEOFFSET from the ConsumeQueue (pullBodyParts).
//
// Only the leader tells a consumer its offset moved. A follower's queue may
// just lag the leader's (a client whose route still names the old leader
// after a failover pulls there), and a consumer told PULL_OFFSET_MOVED sets
// and persists nextBeginOffset — the follower's end, behind what it had
// consumed — so its committed offset would go back and it would consume
// again. A follower answers PULL_RETRY_IMMEDIATELY with the requested offset
// as nextBeginOffset instead, suggesting brokerId 0, as an Apache slave does
// (offsetCheckInSlave=false, the default).
func pullResponse(res *store.GetResult, requested store.QueueOffset, leader bool) *transport.Command {
	var code transport.ResponseCode
	switch res.Status {
	case store.Found:
		code = transport.Success
	case store.NoMatchedMessage, store.MessageWasRemoving:
		code = transport.PullRetryImmediately
	case store.OffsetOverflowOne, store.OffsetFoundNull:
		code = transport.PullNotFound
	case store.NoMessageInQueue:
		if requested == 0 {
			code = transport.PullNotFound
		} else {
			code = transport.PullOffsetMoved
		}
	default: // OffsetTooSmall, OffsetOverflowBadly
		code = transport.PullOffsetMoved
	}
	next := res.NextBeginOffset
	if code == transport.PullOffsetMoved && !leader {
		// The consumer keeps its offset (the Go client sets nextBeginOffset on
		// PULL_RETRY_IMMEDIATELY too): Apache's nextOffsetCorrection on a slave.
		code, next = transport.PullRetryImmediately, requested
	}
	r := transport.NewResponse(code, res.Status.String())
	r.ExtFields = map[string]string{
		"nextBeginOffset":      strconv.FormatInt(int64(next), 10),
		"minOffset":            strconv.FormatInt(int64(res.MinOffset), 10),
		"maxOffset":            strconv.FormatInt(int64(res.MaxOffset), 10),
		"suggestWhichBrokerId": "0",
	}
	if code == transport.Success && len(res.Messages) > 0 {
		r.BodyParts = pullBodyParts(res.Messages, res.QueueOffsets)
		r.OnWritten = res.Release
	} else {
		res.Release()
	}
	return r
}

// pullBodyParts lays msgs out as body parts with QUEUEOFFSET taken from qos, the
// ConsumeQueue's offsets, not from the record: with the raft log as the CommitLog the
// field is 0 on disk (decision 0016). Each message is three parts: the bytes before
// the field and after it, aliasing the mapping, and its queue offset from one buffer
// for the whole batch, so a pull costs two allocations whatever its size. The parts
// cost no system call of their own: the connection writes every frame it has queued
// with one writev, which Go splits only every 1024 parts (a pull of 32 messages is 97
// with its header).
func pullBodyParts(msgs [][]byte, qos []store.QueueOffset) [][]byte {
	const w = store.QueueOffsetFieldLen
	offs := make([]byte, w*len(msgs))
	parts := make([][]byte, 0, 3*len(msgs))
	for i, m := range msgs {
		head, tail := store.SplitAtQueueOffset(m)
		qo := offs[i*w : (i+1)*w : (i+1)*w]
		binary.BigEndian.PutUint64(qo, uint64(qos[i]))
		parts = append(parts, head, qo, tail)
	}
	return parts
}
