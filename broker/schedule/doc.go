// Package schedule owns RocketMQ's delayed and timed messages on the leader: the
// delay-level ladder, the SCHEDULE_TOPIC_XXXX layout and its property rewrites,
// and the leader-only Service that re-puts due messages into their real topic.
//
// # Layout
//
// A delayed message (DELAY=n) is stored in SCHEDULE_TOPIC_XXXX queue n−1 with
// REAL_TOPIC and REAL_QID naming where it goes (DelayedProps). Each level queue
// is FIFO with one fixed delay, so a level's head is always the next one due. A
// timed message (TIMER_DELIVER_MS) waits in the largest level that does not
// overshoot its time (TimerHop, TimedProps) and hops from level to level until it
// is due. The replicated progress (replica.Schedule.ScheduleProgress) is each
// level's delivered queue offset.
//
// # Why it survives a failover
//
// The Service keeps no state of its own. Every Tick starts from the replicated
// progress and proposes the re-puts together with the advances From → To as one
// fsm.DeliverScheduled entry, applied only if every From still matches
// (fsm.ErrScheduleConflict otherwise). A new leader, or a new Service after an
// unknown outcome, resumes exactly where the last applied entry stopped, and a
// stale proposal stores nothing: every message is delivered once.
//
// # Imports
//
// It may import broker/replica, broker/route (errors), broker/loop, fsm and
// store. It must not import the broker root, the handler rooms
// (broker/clientapi, broker/adminapi), broker/node or broker/transaction: the
// send path calls the helpers here, never the other way.
//
// # Concurrency
//
// The helpers are pure and safe for concurrent use. A Service is driven by one
// goroutine: Run, or Tick from a test; Tick is not safe for concurrent use. Run
// it only while this node leads (after its barrier) and cancel its context when
// leadership goes.
//
// # Usage
//
//	// send path (broker/clientapi):
//	if level, ok, err := schedule.DelayLevelOf(props); err == nil && ok {
//		topic, queueID = schedule.Topic, level.QueueID()
//		props = schedule.DelayedProps(props, realTopic, realQueueID, level)
//	}
//
//	// leader term:
//	svc := schedule.New(schedule.Config{Levels: levels, StoreHost: host, Logger: log}, st, rep)
//	go svc.Run(ctx) // returns when ctx ends
package schedule
