package schedule

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// realMessage rebuilds a scheduled record that is due at nowMS: for its real
// topic and queue, where DELAY, REAL_TOPIC, REAL_QID and the timer properties go
// and everything else (UNIQ_KEY, so the MsgId is unchanged; born host and time;
// reconsume times) stays (Java ScheduleMessageService.messageTimeUp); or, for a
// timed message not yet due, for the next level it waits in (TimerHop).
func realMessage(rec []byte, nowMS int64, levels []time.Duration, storeHost netip.AddrPort) ([]byte, error) {
	m, err := store.DecodeMessage(rec, false)
	if err != nil {
		return nil, err
	}
	props := store.ParseProperties(m.Properties)
	topic := props[store.PropertyRealTopic]
	qid, err := strconv.ParseInt(props[store.PropertyRealQueueID], 10, 32)
	if topic == "" || err != nil || qid < 0 {
		return nil, fmt.Errorf("%w: REAL_TOPIC=%q REAL_QID=%q", store.ErrMessageIllegal, topic, props[store.PropertyRealQueueID])
	}
	if v, ok := props[store.PropertyTimerDeliverMS]; ok {
		// A timed message hops from level to level until it is due.
		if at, err := strconv.ParseInt(v, 10, 64); err == nil {
			if level, wait := TimerHop(levels, at-nowMS); wait {
				parked := m
				parked.Topic, parked.QueueID = Topic, level.QueueID()
				parked.StoreHost = storeHost
				parked.Properties = TimedProps(m.Properties, topic, int32(qid), level)
				return store.AppendMessage(nil, &parked)
			}
		}
	}
	for _, k := range []string{store.PropertyDelayLevel, store.PropertyRealTopic, store.PropertyRealQueueID,
		store.PropertyTimerDeliverMS, PropTimerDelaySec, PropTimerDelayMS} {
		delete(props, k)
	}
	out := store.Message{
		Topic:          topic,
		QueueID:        int32(qid),
		Flag:           m.Flag,
		SysFlag:        m.SysFlag,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       m.BornHost,
		StoreHost:      storeHost,
		ReconsumeTimes: m.ReconsumeTimes,
		Body:           m.Body,
		Properties:     store.EncodeProperties(props),
	}
	return store.AppendMessage(nil, &out)
}
