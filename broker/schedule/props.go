package schedule

import (
	"fmt"
	"strconv"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
)

// Properties the schedule path sets or clears besides the store's named ones.
const (
	PropTimerDelaySec = "TIMER_DELAY_SEC"
	PropTimerDelayMS  = "TIMER_DELAY_MS"
)

// DelayLevelOf reads DELAY: absent, empty or ≤ 0 means no delay (ok false). A
// value that is not a decimal number is an error wrapping route.ErrBadHeader.
// The level is not clamped to the ladder; the caller does that.
func DelayLevelOf(props string) (level DelayLevel, ok bool, err error) {
	v, found := store.Property(props, store.PropertyDelayLevel)
	if !found || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, false, fmt.Errorf("%w: property %s=%q: must be a decimal delay level", route.ErrBadHeader, store.PropertyDelayLevel, v)
	}
	if n <= 0 {
		return 0, false, nil
	}
	return DelayLevel(n), true, nil
}

// TimedProps are the properties of a timed message parked in level on its way
// to (topic, queueID): TIMER_DELIVER_MS stays, so that the Service re-parks it
// until it is due; the relative timer properties go; DELAY, REAL_TOPIC and
// REAL_QID are set.
func TimedProps(props, topic string, queueID int32, level DelayLevel) string {
	m := store.ParseProperties(props)
	delete(m, PropTimerDelaySec)
	delete(m, PropTimerDelayMS)
	setDelayed(m, topic, queueID, level)
	return store.EncodeProperties(m)
}

// DelayedProps are the properties of a DELAY message stored in level on its way
// to (topic, queueID): every timer property goes (DELAY wins over TIMER_*);
// DELAY, REAL_TOPIC and REAL_QID are set. The caller clamps level to the ladder
// and stores the message in Topic queue level.QueueID().
func DelayedProps(props, topic string, queueID int32, level DelayLevel) string {
	m := store.ParseProperties(props)
	delete(m, store.PropertyTimerDeliverMS)
	delete(m, PropTimerDelaySec)
	delete(m, PropTimerDelayMS)
	setDelayed(m, topic, queueID, level)
	return store.EncodeProperties(m)
}

func setDelayed(m map[string]string, topic string, queueID int32, level DelayLevel) {
	m[store.PropertyDelayLevel] = strconv.Itoa(int(level))
	m[store.PropertyRealTopic] = topic
	m[store.PropertyRealQueueID] = strconv.Itoa(int(queueID))
}
