package broker

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// placement is where a single (non-batch) SEND is stored: its own topic and queue,
// SCHEDULE_TOPIC_XXXX for a delayed message, or %DLQ%<group> for a retry past its
// maximum. The response always names the requested queue (Java does the same).
type placement struct {
	topic   string
	queueID int32
	props   string
}

// placeSend applies RocketMQ's send-time rewrites to one message bound for
// (h.Topic, queueID) with properties props (Java handleRetryAndDLQ and
// HookUtils.transformDelayLevelMessage):
//   - a %RETRY% message whose reconsumeTimes exceeds maxReconsumeTimes goes to
//     %DLQ%<group> (the client's fallback for a failed CONSUMER_SEND_MSG_BACK);
//   - DELAY > 0 stores it in SCHEDULE_TOPIC_XXXX queue level−1 with REAL_TOPIC and
//     REAL_QID (levels past the ladder are clamped; DELAY wins over TIMER_*);
//   - TIMER_DELIVER_MS in the future parks it in the largest delay level that does
//     not overshoot (timerHop); the schedule service re-parks it until it is due.
//
// maxReconsumeSet says whether the request carried maxReconsumeTimes at all.
func (b *Broker) placeSend(ctx context.Context, h SendHeader, queueID int32, props string, maxReconsumeSet bool) (placement, error) {
	p := placement{topic: h.Topic, queueID: queueID, props: props}
	if group, ok := strings.CutPrefix(h.Topic, retryPrefix); ok {
		maxTimes := h.MaxReconsumeTimes
		if !maxReconsumeSet {
			maxTimes = b.groupRetryMax(group)
		}
		if h.ReconsumeTimes > maxTimes {
			return b.placeDLQ(ctx, group, props)
		}
	}
	level, hasDelay, err := delayLevelOf(props)
	if err != nil {
		return p, err
	}
	if hasDelay {
		return b.placeDelayed(ctx, h.Topic, queueID, props, level)
	}
	if v, ok := store.Property(props, store.PropertyTimerDeliverMS); ok {
		at, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return p, fmt.Errorf("%w: property %s=%q: must be epoch milliseconds", ErrBadHeader, store.PropertyTimerDeliverMS, v)
		}
		if level, wait := timerHop(b.cfg.MessageDelayLevel, at-time.Now().UnixMilli()); wait {
			return b.placeTimed(ctx, h.Topic, queueID, props, level)
		}
		p.props = withoutProps(props, store.PropertyTimerDeliverMS, propTimerDelaySec, propTimerDelayMS)
	}
	return p, nil
}

// timerDueSlack: a timed message due within this many milliseconds is delivered now
// rather than parked for another full smallest level, which bounds its error to half
// a second either way (Java's timer wheel has 1 s precision).
const timerDueSlack = 500

// timerHop picks where a message due in remainingMS waits next: the largest delay
// level that does not overshoot. Waiting through successive hops (each level queue
// is FIFO with one fixed delay) gives arbitrary delivery times without a timer
// wheel and without a message due later blocking one due earlier. wait is false
// when the message is due now.
func timerHop(levels []time.Duration, remainingMS int64) (DelayLevel, bool) {
	if remainingMS <= timerDueSlack || len(levels) == 0 {
		return 0, false
	}
	level := DelayLevel(1)
	for i, d := range levels {
		if d.Milliseconds() <= remainingMS {
			level = DelayLevel(i + 1)
		}
	}
	return level, true
}

// placeTimed parks a TIMER_DELIVER_MS message in a delay level, keeping the timer
// property so that the schedule service re-parks it until it is due.
func (b *Broker) placeTimed(ctx context.Context, topic string, queueID int32, props string, level DelayLevel) (placement, error) {
	if err := b.ensureTopic(ctx, scheduleTopic, int32(len(b.cfg.MessageDelayLevel))); err != nil {
		return placement{}, err
	}
	return placement{topic: scheduleTopic, queueID: level.queueID(), props: timedProps(props, topic, queueID, level)}, nil
}

// timedProps are the properties of a parked timed message.
func timedProps(props, topic string, queueID int32, level DelayLevel) string {
	m := store.ParseProperties(props)
	delete(m, propTimerDelaySec)
	delete(m, propTimerDelayMS)
	m[store.PropertyDelayLevel] = strconv.Itoa(int(level))
	m[store.PropertyRealTopic] = topic
	m[store.PropertyRealQueueID] = strconv.Itoa(int(queueID))
	return store.EncodeProperties(m)
}

// delayLevelOf reads DELAY: absent, empty or ≤ 0 means no delay.
func delayLevelOf(props string) (DelayLevel, bool, error) {
	v, ok := store.Property(props, store.PropertyDelayLevel)
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false, fmt.Errorf("%w: property %s=%q: must be a decimal delay level", ErrBadHeader, store.PropertyDelayLevel, v)
	}
	if n <= 0 {
		return 0, false, nil
	}
	return DelayLevel(n), true, nil
}

// placeDelayed stores a message for (topic, queueID) in SCHEDULE_TOPIC_XXXX.
func (b *Broker) placeDelayed(ctx context.Context, topic string, queueID int32, props string, level DelayLevel) (placement, error) {
	if n := DelayLevel(len(b.cfg.MessageDelayLevel)); level > n {
		level = n
	}
	if err := b.ensureTopic(ctx, scheduleTopic, int32(len(b.cfg.MessageDelayLevel))); err != nil {
		return placement{}, err
	}
	m := store.ParseProperties(props)
	delete(m, store.PropertyTimerDeliverMS)
	delete(m, propTimerDelaySec)
	delete(m, propTimerDelayMS)
	m[store.PropertyDelayLevel] = strconv.Itoa(int(level))
	m[store.PropertyRealTopic] = topic
	m[store.PropertyRealQueueID] = strconv.Itoa(int(queueID))
	return placement{topic: scheduleTopic, queueID: level.queueID(), props: store.EncodeProperties(m)}, nil
}

// placeDLQ stores a message in %DLQ%<group> queue 0, undelayed.
func (b *Broker) placeDLQ(ctx context.Context, group, props string) (placement, error) {
	dlq := dlqPrefix + group
	if err := b.ensureTopic(ctx, dlq, 1); err != nil {
		return placement{}, err
	}
	return placement{topic: dlq, queueID: 0, props: withoutProps(props, store.PropertyDelayLevel)}, nil
}

// groupRetryMax is the group's retryMaxTimes (16 when the group is unknown).
func (b *Broker) groupRetryMax(group string) int32 {
	for _, g := range b.replica.SubscriptionGroups() {
		if g.GroupName == group && g.RetryMaxTimes > 0 {
			return g.RetryMaxTimes
		}
	}
	return 16
}

// ensureTopic creates a system topic (read and write) with at least queues queues
// through raft, and re-registers so clients can route to it.
func (b *Broker) ensureTopic(ctx context.Context, name string, queues int32) error {
	if t, ok := b.replica.Topic(name); ok && t.WriteQueueNums >= queues && t.ReadQueueNums >= queues {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t := TopicConfig{Name: name, ReadQueueNums: queues, WriteQueueNums: queues, Perm: PermRead | PermWrite}
	if err := b.replica.UpsertTopic(cctx, t); err != nil {
		return fmt.Errorf("create topic %s: %w", name, err)
	}
	b.registerAllAsync()
	return nil
}

// withoutProps returns props without the named properties (the bytes are unchanged
// when none is present).
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

// maxReconsumeSet says whether a SEND header carried maxReconsumeTimes (V1 key or
// V2 letter "l").
func maxReconsumeSet(fields map[string]string) bool {
	if v, ok := fields["maxReconsumeTimes"]; ok && v != "" {
		return true
	}
	if _, v2 := fields["b"]; v2 {
		v, ok := fields["l"]
		return ok && v != ""
	}
	return false
}
