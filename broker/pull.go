package broker

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// maxPullBytes bounds one pull response body (Java maxTransferBytesOnMessageInDisk).
const maxPullBytes = 256 << 10

// handlePull serves PULL_MESSAGE (11). Every node serves what it has applied; the
// response always suggests brokerId 0. A pull that finds nothing is held (long
// polling) until a message arrives or suspendTimeoutMillis passes.
func (b *Broker) handlePull(ctx context.Context, conn *transport.Conn, req *transport.Command) *transport.Command {
	h, err := parsePullHeader(req.ExtFields)
	if err != nil {
		return errorResponse(err)
	}
	if err := validateTopic(h.Topic); err != nil {
		return errorResponse(err)
	}
	topic, ok := b.replica.Topic(h.Topic)
	if !ok {
		return errorResponse(fmt.Errorf("%w: topic %s", ErrTopicNotExist, h.Topic))
	}
	if h.QueueID < 0 || h.QueueID >= topic.ReadQueueNums {
		return errorResponse(fmt.Errorf("%w: queueId=%d, topic %s has %d read queues", ErrQueueIDInvalid, h.QueueID, h.Topic, topic.ReadQueueNums))
	}
	filter, resp := b.pullFilter(h)
	if resp != nil {
		return resp
	}
	if h.SysFlag&pullFlagCommitOffset != 0 && h.CommitOffset > 0 && b.isLeader() {
		b.offsets.put(offsetKey{h.ConsumerGroup, h.Topic, h.QueueID}, store.QueueOffset(h.CommitOffset))
	}
	maxMsgs := int(h.MaxMsgNums)
	if maxMsgs <= 0 || maxMsgs > 1024 {
		maxMsgs = 32
	}
	offset := store.QueueOffset(h.QueueOffset)
	res, err := b.store.GetMessages(h.Topic, h.QueueID, offset, maxMsgs, maxPullBytes, filter)
	if err != nil {
		return errorResponse(err)
	}
	if res.Status != store.Found && h.SysFlag&pullFlagSuspend != 0 && wouldWait(res.Status) {
		res.Release()
		suspend := min(time.Duration(h.SuspendTimeoutMillis)*time.Millisecond, b.cfg.MaxPullSuspend)
		if !b.cfg.LongPollingEnable {
			suspend = min(suspend, time.Second)
		}
		tq := store.TopicQueue{Topic: h.Topic, QueueID: h.QueueID}
		b.pulls.wait(ctx, tq, offset, suspend, func() bool { return b.store.MaxQueueOffset(h.Topic, h.QueueID) > offset })
		if res, err = b.store.GetMessages(h.Topic, h.QueueID, offset, maxMsgs, maxPullBytes, filter); err != nil {
			return errorResponse(err)
		}
	}
	return pullResponse(res, offset)
}

// wouldWait reports the statuses that mean "nothing yet at this offset".
func wouldWait(s store.GetStatus) bool {
	return s == store.OffsetOverflowOne || s == store.NoMessageInQueue || s == store.OffsetFoundNull
}

// pullFilter picks the subscription: in-band when the request carries one (pull and
// lite-pull consumers), else the one registered by heartbeats (push consumers).
func (b *Broker) pullFilter(h PullHeader) (store.MessageFilter, *transport.Command) {
	var sub subscriptionData
	if h.SysFlag&pullFlagSubscription != 0 {
		sub = subscriptionData{Topic: h.Topic, SubString: h.Subscription, ExpressionType: h.ExpressionType, SubVersion: h.SubVersion}
		if sub.ExpressionType == "" || sub.ExpressionType == "TAG" {
			for _, t := range strings.Split(h.Subscription, "||") {
				if t = strings.TrimSpace(t); t != "" && t != "*" {
					sub.TagsSet = append(sub.TagsSet, t)
				}
			}
		}
	} else {
		var ok bool
		sub, ok = b.clients.subscription(h.ConsumerGroup, h.Topic)
		if !ok {
			return nil, transport.NewResponse(transport.SubscriptionNotExist,
				fmt.Sprintf("consumer group %s has no subscription to %s (no heartbeat yet)", h.ConsumerGroup, h.Topic))
		}
	}
	return b.clients.subscriptionFilter(h.ConsumerGroup, sub)
}

// pullResponse maps a store result onto RocketMQ's pull codes and next offsets
// (rocketmq-protocol.md §2.4.4); the body is the stored bytes, zero copy.
func pullResponse(res *store.GetResult, requested store.QueueOffset) *transport.Command {
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
	r := transport.NewResponse(code, res.Status.String())
	r.ExtFields = map[string]string{
		"nextBeginOffset":      strconv.FormatInt(int64(res.NextBeginOffset), 10),
		"minOffset":            strconv.FormatInt(int64(res.MinOffset), 10),
		"maxOffset":            strconv.FormatInt(int64(res.MaxOffset), 10),
		"suggestWhichBrokerId": "0",
	}
	if code == transport.Success && len(res.Messages) > 0 {
		r.BodyParts = res.Messages
		r.OnWritten = res.Release
	} else {
		res.Release()
	}
	return r
}
