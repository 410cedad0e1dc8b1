package broker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// scheduleTopic holds delayed messages: queue = delay level − 1 (Java
// TopicValidator.RMQ_SYS_SCHEDULE_TOPIC).
const scheduleTopic = "SCHEDULE_TOPIC_XXXX"

// Properties the schedule path sets or clears besides the store's named ones.
const (
	propTimerDelaySec = "TIMER_DELAY_SEC"
	propTimerDelayMS  = "TIMER_DELAY_MS"
)

// DefaultMessageDelayLevel is RocketMQ's delay ladder (messageDelayLevel), levels 1..18.
var DefaultMessageDelayLevel = []time.Duration{
	time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
	6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
	20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
}

// DelayLevel is a RocketMQ delay level: 1 is the first rung of the ladder.
type DelayLevel int32

// queueID is the SCHEDULE_TOPIC_XXXX queue of the level.
func (l DelayLevel) queueID() int32 { return int32(l) - 1 }

// ScheduleAdvance moves one delay level's delivered offset From → To in the same
// raft entry as the re-puts of the messages in between (fsm.DeliverScheduled).
type ScheduleAdvance struct {
	Level DelayLevel
	From  store.QueueOffset
	To    store.QueueOffset
}

// ErrScheduleConflict: the replicated progress moved since the service read it (an
// earlier proposal landed after all, or another leader delivered); nothing was stored.
var ErrScheduleConflict = errors.New("schedule progress moved")

// scheduleReader is the store side the service scans (*store.Store).
type scheduleReader interface {
	GetMessages(topic string, queueID int32, offset store.QueueOffset, maxMsgs int, maxBytes int, filter store.MessageFilter) (*store.GetResult, error)
}

// scheduleWriter is the replicated side (Replica).
type scheduleWriter interface {
	ScheduleProgress() map[int32]store.QueueOffset
	DeliverScheduled(ctx context.Context, recs [][]byte, advances []ScheduleAdvance) (dropped []error, err error)
}

// scheduleConfig configures the leader-only schedule service.
type scheduleConfig struct {
	Levels    []time.Duration
	StoreHost netip.AddrPort
	// Now is the clock the due check uses (tests inject one).
	Now func() time.Time
	// Interval between scans when nothing more is due (default 100 ms).
	Interval time.Duration
	// MaxBatchMsgs and MaxBatchBytes bound one DeliverScheduled entry.
	MaxBatchMsgs  int
	MaxBatchBytes int
	Logger        hclog.Logger
}

func (c scheduleConfig) withDefaults() scheduleConfig {
	if len(c.Levels) == 0 {
		c.Levels = DefaultMessageDelayLevel
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Interval == 0 {
		c.Interval = 100 * time.Millisecond
	}
	if c.MaxBatchMsgs == 0 {
		c.MaxBatchMsgs = 2048
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = 4 << 20
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// scheduleService re-puts due delayed messages into their real topic. It runs on
// the leader only (after its barrier) and keeps no state of its own: every scan
// starts from the replicated progress, and every entry it proposes moves that
// progress with a compare-and-set, so a new leader (or a new instance after an
// unknown outcome) resumes exactly where the last applied entry stopped.
//
// Concurrency: run is one goroutine; tick is not safe for concurrent use.
type scheduleService struct {
	cfg scheduleConfig
	st  scheduleReader
	rep scheduleWriter
	log hclog.Logger
	// single makes the next tick propose one message per entry, after the store
	// refused a whole batch (so one bad record cannot hold a level back forever).
	single bool
}

func newScheduleService(cfg scheduleConfig, st scheduleReader, rep scheduleWriter) *scheduleService {
	cfg = cfg.withDefaults()
	return &scheduleService{cfg: cfg, st: st, rep: rep, log: cfg.Logger.Named("schedule")}
}

// run ticks until ctx is done, without pausing while full batches are due.
func (s *scheduleService) run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		_, more, err := s.tick(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("schedule delivery failed; retrying from the replicated progress", "error", err)
		}
		if more && err == nil {
			if ctx.Err() != nil {
				return
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// scanBatch is what one tick collects: re-put records and per-level advances.
type scanBatch struct {
	recs     [][]byte
	advances []ScheduleAdvance
	bytes    int
	full     bool
}

// tick scans every level from its replicated progress, proposes one entry with every
// due message found (bounded by the batch limits) and reports how many were
// delivered and whether the batch was full (more may be due now).
func (s *scheduleService) tick(ctx context.Context) (int, bool, error) {
	progress := s.rep.ScheduleProgress()
	now := s.cfg.Now()
	b := &scanBatch{}
	maxMsgs := s.cfg.MaxBatchMsgs
	if s.single {
		maxMsgs = 1
	}
	for i := range s.cfg.Levels {
		if b.full {
			break
		}
		level := DelayLevel(i + 1)
		from := progress[int32(level)]
		to, err := s.scanLevel(level, from, now, maxMsgs, b)
		if err != nil {
			return 0, false, err
		}
		if to != from {
			b.advances = append(b.advances, ScheduleAdvance{Level: level, From: from, To: to})
		}
	}
	if len(b.advances) == 0 {
		return 0, false, nil
	}
	dropped, err := s.rep.DeliverScheduled(ctx, b.recs, b.advances)
	if err != nil {
		if !errors.Is(err, ErrScheduleConflict) && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrUnknownOutcome) {
			s.single = true
		}
		return 0, false, fmt.Errorf("deliver %d scheduled messages (%d levels): %w", len(b.recs), len(b.advances), err)
	}
	s.single = false
	n := len(b.recs)
	for i, e := range dropped {
		if e != nil {
			n--
			s.log.Warn("scheduled message dropped: its real topic or queue refused it", "index", i, "error", e)
		}
	}
	return n, b.full, nil
}

// scanLevel appends the due messages of one level starting at from and returns the
// offset after the last one taken (or skipped as undeliverable).
func (s *scheduleService) scanLevel(level DelayLevel, from store.QueueOffset, now time.Time, maxMsgs int, b *scanBatch) (store.QueueOffset, error) {
	delay := s.cfg.Levels[level-1].Milliseconds()
	nowMS := now.UnixMilli()
	off := from
	for {
		room := maxMsgs - len(b.recs)
		if room <= 0 || b.bytes >= s.cfg.MaxBatchBytes {
			b.full = true
			return off, nil
		}
		res, err := s.st.GetMessages(scheduleTopic, level.queueID(), off, room, s.cfg.MaxBatchBytes-b.bytes, nil)
		if err != nil {
			return from, fmt.Errorf("read %s queue %d at %d: %w", scheduleTopic, level.queueID(), off, err)
		}
		switch res.Status {
		case store.Found:
		case store.OffsetTooSmall, store.OffsetFoundNull, store.NoMatchedMessage:
			// Retention removed the head, or nothing readable here: move on.
			if res.NextBeginOffset <= off {
				return off, nil
			}
			off = res.NextBeginOffset
			continue
		default:
			// Nothing beyond off yet (OVERFLOW_ONE, an empty queue, or a ConsumeQueue
			// still catching up after a restart, OVERFLOW_BADLY): never move back.
			return off, nil
		}
		stop := false
		for i, m := range res.Messages {
			ts := store.StoreTimestampOf(m)
			// Due when store time + delay has passed; a store time further ahead than
			// the delay (a previous leader's clock was fast) is delivered now, as
			// Java's correctDeliverTimestamp does, rather than held for that skew.
			if ts+delay > nowMS && ts <= nowMS+delay {
				stop = true
				break
			}
			rec, err := s.realMessage(m, nowMS)
			if err != nil {
				s.log.Warn("scheduled message is not deliverable; skipping it", "level", level, "queueOffset", res.QueueOffsets[i], "error", err)
			} else {
				b.recs = append(b.recs, rec)
				b.bytes += len(rec)
			}
			off = res.QueueOffsets[i] + 1
		}
		if !stop && res.NextBeginOffset > off {
			off = res.NextBeginOffset
		}
		res.Release()
		if stop {
			return off, nil
		}
	}
}

// realMessage rebuilds a scheduled record for its real topic and queue: DELAY,
// REAL_TOPIC, REAL_QID and the timer properties go, everything else (UNIQ_KEY, so
// the MsgId is unchanged; born host and time; reconsume times) stays (Java
// ScheduleMessageService.messageTimeUp).
func (s *scheduleService) realMessage(rec []byte, nowMS int64) ([]byte, error) {
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
		// A timed message hops from level to level until it is due (timerHop).
		if at, err := strconv.ParseInt(v, 10, 64); err == nil {
			if level, wait := timerHop(s.cfg.Levels, at-nowMS); wait {
				parked := m
				parked.Topic, parked.QueueID = scheduleTopic, level.queueID()
				parked.StoreHost = s.cfg.StoreHost
				parked.Properties = timedProps(m.Properties, topic, int32(qid), level)
				return store.AppendMessage(nil, &parked)
			}
		}
	}
	for _, k := range []string{store.PropertyDelayLevel, store.PropertyRealTopic, store.PropertyRealQueueID,
		store.PropertyTimerDeliverMS, propTimerDelaySec, propTimerDelayMS} {
		delete(props, k)
	}
	out := store.Message{
		Topic:          topic,
		QueueID:        int32(qid),
		Flag:           m.Flag,
		SysFlag:        m.SysFlag,
		BornTimestamp:  m.BornTimestamp,
		BornHost:       m.BornHost,
		StoreHost:      s.cfg.StoreHost,
		ReconsumeTimes: m.ReconsumeTimes,
		Body:           m.Body,
		Properties:     store.EncodeProperties(props),
	}
	return store.AppendMessage(nil, &out)
}

// newScheduleRun builds the schedule service for a new leader term
// (leaderService.newRun).
func (b *Broker) newScheduleRun(ReplicaStatus) func(context.Context) {
	svc := newScheduleService(scheduleConfig{
		Levels: b.cfg.MessageDelayLevel, StoreHost: b.storeHost, Logger: b.log,
	}, b.store, b.replica)
	return svc.run
}

// fsmAdvances converts the broker's advances to the FSM command's.
func fsmAdvances(as []ScheduleAdvance) []fsm.ScheduleAdvance {
	out := make([]fsm.ScheduleAdvance, len(as))
	for i, a := range as {
		out[i] = fsm.ScheduleAdvance{Level: int32(a.Level), From: a.From, To: a.To}
	}
	return out
}
