package clientapi

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/broker/schedule"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// defaultRetryMaxTimes is Java's retryMaxTimes of a group nobody configured.
const defaultRetryMaxTimes = 16

// placement is where a single (non-batch) SEND is stored: its own topic and
// queue, SCHEDULE_TOPIC_XXXX for a delayed message, %DLQ%<group> for a retry
// past its maximum, or the half queue for a prepared message. The response
// always names the requested queue (Java does the same).
type placement struct {
	topic   string
	queueID int32
	props   string
}

// placeArgs is what the placement rules read of a SEND header.
type placeArgs struct {
	Topic             string
	QueueID           int32
	ProducerGroup     string
	ReconsumeTimes    int32
	MaxReconsumeTimes int32
	// MaxReconsumeSet says whether the request carried maxReconsumeTimes at all.
	MaxReconsumeSet bool
}

// placeSend applies RocketMQ's send-time rewrites to one message bound for
// (h.Topic, queueID) with properties props (Java handleRetryAndDLQ and
// HookUtils.transformDelayLevelMessage):
//   - a %RETRY% message whose reconsumeTimes exceeds maxReconsumeTimes goes to
//     %DLQ%<group> (the client's fallback for a failed CONSUMER_SEND_MSG_BACK);
//   - DELAY > 0 stores it in SCHEDULE_TOPIC_XXXX queue level−1 with REAL_TOPIC and
//     REAL_QID (levels past the ladder are clamped; DELAY wins over TIMER_*);
//   - TIMER_DELIVER_MS in the future parks it in the largest delay level that
//     does not overshoot (schedule.TimerHop); the schedule service re-parks it
//     until it is due.
func (a *API) placeSend(ctx context.Context, h placeArgs, props string) (placement, error) {
	queueID := h.QueueID
	p := placement{topic: h.Topic, queueID: queueID, props: props}
	if group, ok := strings.CutPrefix(h.Topic, RetryPrefix); ok {
		maxTimes := h.MaxReconsumeTimes
		if !h.MaxReconsumeSet {
			maxTimes = a.groupRetryMax(group)
		}
		if h.ReconsumeTimes > maxTimes {
			return a.placeDLQ(ctx, group, props)
		}
	}
	level, hasDelay, err := schedule.DelayLevelOf(props)
	if err != nil {
		return p, err
	}
	if hasDelay {
		return a.placeDelayed(ctx, h.Topic, queueID, props, level)
	}
	if v, ok := store.Property(props, store.PropertyTimerDeliverMS); ok {
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("%w: property %s=%q: must be epoch milliseconds", route.ErrBadHeader, store.PropertyTimerDeliverMS, v)
		}
		if level, wait := schedule.TimerHop(a.d.MessageDelayLevel, at-a.now().UnixMilli()); wait {
			if err := a.ensureTopic(ctx, schedule.Topic, int32(len(a.d.MessageDelayLevel))); err != nil {
				return placement{}, err
			}
			return placement{topic: schedule.Topic, queueID: level.QueueID(), props: schedule.TimedProps(props, h.Topic, queueID, level)}, nil
		}
		p.props = withoutProps(props, store.PropertyTimerDeliverMS, schedule.PropTimerDelaySec, schedule.PropTimerDelayMS)
	}
	return p, nil
}

// placeDelayed stores a message for (topic, queueID) in SCHEDULE_TOPIC_XXXX.
func (a *API) placeDelayed(ctx context.Context, topic string, queueID int32, props string, level schedule.DelayLevel) (placement, error) {
	if n := schedule.DelayLevel(len(a.d.MessageDelayLevel)); level > n {
		level = n
	}
	if err := a.ensureTopic(ctx, schedule.Topic, int32(len(a.d.MessageDelayLevel))); err != nil {
		return placement{}, err
	}
	return placement{topic: schedule.Topic, queueID: level.QueueID(), props: schedule.DelayedProps(props, topic, queueID, level)}, nil
}

// placeDLQ stores a message in %DLQ%<group> queue 0, undelayed.
func (a *API) placeDLQ(ctx context.Context, group, props string) (placement, error) {
	dlq := DLQPrefix + group
	if err := a.ensureTopic(ctx, dlq, 1); err != nil {
		return placement{}, err
	}
	return placement{topic: dlq, queueID: 0, props: withoutProps(props, store.PropertyDelayLevel)}, nil
}

// placeHalf stores a prepared message as a half message: RMQ_SYS_TRANS_HALF_TOPIC
// queue 0 with REAL_TOPIC and REAL_QID (Java TransactionalMessageBridge
// parseHalfMessageInner). The caller clears the transaction type from sysFlag,
// so the record gets its queue offset like any other. DELAY and timers are
// dropped, as the Java producer does for transactional sends. Its signature is
// placeSend's.
func (a *API) placeHalf(ctx context.Context, h placeArgs, props string) (placement, error) {
	if err := a.ensureTopic(ctx, transaction.HalfTopic, 1); err != nil {
		return placement{}, err
	}
	return placement{topic: transaction.HalfTopic, queueID: 0,
		props: transaction.HalfProperties(props, h.ProducerGroup, h.Topic, h.QueueID)}, nil
}

// groupRetryMax is the group's retryMaxTimes (16 when the group is unknown).
func (a *API) groupRetryMax(group string) int32 {
	for _, g := range a.d.Replica.SubscriptionGroups() {
		if g.GroupName == group && g.RetryMaxTimes > 0 {
			return g.RetryMaxTimes
		}
	}
	return defaultRetryMaxTimes
}

// ensureTopic creates a system topic (read and write) with at least queues
// queues through raft, and re-registers so clients can route to it.
func (a *API) ensureTopic(ctx context.Context, name string, queues int32) error {
	cctx, cancel := context.WithTimeout(ctx, topicChangeTimeout)
	defer cancel()
	created, err := replica.EnsureTopic(cctx, a.metadataFor(ctx), fsm.NewTopic(name, queues, fsm.PermRead|fsm.PermWrite))
	if err != nil {
		return err
	}
	if created {
		a.d.TopicsChanged()
	}
	return nil
}

// ensureRetryTopic is the one place %RETRY%<group> is made (heartbeat,
// send-back): the group's subscription config, created with RocketMQ's
// defaults when missing (autoCreateSubscriptionGroup), then the topic with the
// group's retryQueueNums (1 by default), perm RW, both through raft
// (TopicConfigManager.createTopicInSendMessageBackMethod). Nothing is written
// when both exist.
func (a *API) ensureRetryTopic(ctx context.Context, group string) error {
	cctx, cancel := context.WithTimeout(ctx, topicChangeTimeout)
	defer cancel()
	cfg, ok := a.subscriptionGroup(group)
	if !ok {
		cfg = fsm.DefaultSubscriptionGroup(group)
		if err := a.metadataFor(ctx).UpsertSubscriptionGroup(cctx, cfg); err != nil {
			return fmt.Errorf("create subscription group %s: %w", group, err)
		}
	}
	return a.ensureTopic(cctx, RetryPrefix+group, max(cfg.RetryQueueNums, 1))
}

// subscriptionGroup is the replicated config of group.
func (a *API) subscriptionGroup(group string) (fsm.SubscriptionGroupConfig, bool) {
	for _, g := range a.d.Replica.SubscriptionGroups() {
		if g.GroupName == group {
			return g, true
		}
	}
	return fsm.SubscriptionGroupConfig{}, false
}

// EnsureTopic is ensureTopic for the transaction check service (its
// TRANS_CHECK_MAX_TIME_TOPIC).
func (a *API) EnsureTopic(ctx context.Context, name string, queues int32) error {
	return a.ensureTopic(ctx, name, queues)
}

// withoutProps returns props without the named properties (the bytes are
// unchanged when none is present).
func withoutProps(props string, names ...string) string {
	found := false
	for _, n := range names {
		if _, ok := store.Property(props, n); ok {
			found = true
			break
		}
	}
	if !found {
		return props
	}
	m := store.ParseProperties(props)
	for _, n := range names {
		delete(m, n)
	}
	return store.EncodeProperties(m)
}

// maxReconsumeSet says whether a SEND header carried maxReconsumeTimes (V1 key
// or V2 letter "l").
func maxReconsumeSet(req *transport.Command) bool {
	if req.Field("maxReconsumeTimes") != "" {
		return true
	}
	if _, v2 := req.LookupField("b"); v2 {
		return req.Field("l") != ""
	}
	return false
}
