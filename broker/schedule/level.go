package schedule

import "time"

// Topic holds delayed messages: queue = delay level − 1 (Java
// TopicValidator.RMQ_SYS_SCHEDULE_TOPIC).
const Topic = "SCHEDULE_TOPIC_XXXX"

// DefaultMessageDelayLevel is RocketMQ's delay ladder (messageDelayLevel), levels 1..18.
var DefaultMessageDelayLevel = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
	6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
	20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
}

// DelayLevel is a RocketMQ delay level: 1 is the first rung of the ladder.
type DelayLevel int32

// QueueID is the SCHEDULE_TOPIC_XXXX queue of the level.
func (l DelayLevel) QueueID() int32 { return int32(l) - 1 }

// timerDueSlack: a timed message due within this many milliseconds is delivered
// now rather than parked for another full smallest level, which bounds its error
// to half a second either way (Java's timer wheel has 1 s precision).
const timerDueSlack = 500

// TimerHop picks where a message due in remainingMS waits next: the largest delay
// level that does not overshoot. Waiting through successive hops (each level
// queue is FIFO with one fixed delay) gives arbitrary delivery times without a
// timer wheel and without a message due later blocking one due earlier. wait is
// false when the message is due now (within timerDueSlack) or levels is empty.
func TimerHop(levels []time.Duration, remainingMS int64) (level DelayLevel, wait bool) {
	if remainingMS <= timerDueSlack || len(levels) == 0 {
		return 0, false
	}
	level = DelayLevel(1)
	for i, d := range levels {
		if d.Milliseconds() <= remainingMS {
			level = DelayLevel(i + 1)
		}
	}
	return level, true
}
