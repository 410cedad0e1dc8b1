package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/loop"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
)

// Service re-puts due delayed messages into their real topic. It runs on the
// leader only (after its barrier) and keeps no state of its own besides single:
// every scan starts from the replicated progress, and every entry it proposes
// moves that progress with a compare-and-set (package doc).
//
// Concurrency: Run is one goroutine; Tick is not safe for concurrent use.
type Service struct {
	cfg Config
	st  Reader
	rep replica.Schedule
	log hclog.Logger
	// single makes the next Tick propose one message per entry, after the store
	// refused a whole batch (so one bad record cannot hold a level back forever).
	// Invariant: reset by the first Tick whose entry applies.
	single bool
}

// New builds the Service for one leader term over the store st and the
// replicated progress rep.
func New(cfg Config, st Reader, rep replica.Schedule) *Service {
	cfg = cfg.withDefaults()
	return &Service{cfg: cfg, st: st, rep: rep, log: cfg.Logger.Named("schedule")}
}

// Run ticks at once and until ctx ends: again at once while a full batch was
// delivered without error (more may be due now), else after Interval.
func (s *Service) Run(ctx context.Context) {
	loop.Drain(ctx, s.cfg.Interval, loop.AtOnce, func() bool {
		_, more, err := s.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("schedule delivery failed; retrying from the replicated progress", "error", err)
		}
		return more && err == nil
	})
}

// scanBatch is what one Tick collects: re-put records and per-level advances.
type scanBatch struct {
	recs     [][]byte
	advances []fsm.ScheduleAdvance
	bytes    int
	full     bool
}

// Tick scans every level from its replicated progress, proposes one entry with
// every due message found (bounded by the batch limits) and reports how many were
// delivered and whether the batch was full (more may be due now).
func (s *Service) Tick(ctx context.Context) (delivered int, more bool, err error) {
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
			b.advances = append(b.advances, fsm.ScheduleAdvance{Level: int32(level), From: from, To: to})
		}
	}
	if len(b.advances) == 0 {
		return 0, false, nil
	}
	dropped, err := s.rep.DeliverScheduled(ctx, b.recs, b.advances)
	if err != nil {
		// A moved progress, a lost leadership or an unknown outcome says nothing
		// about the records; anything else may be one bad record refusing the batch.
		if !errors.Is(err, fsm.ErrScheduleConflict) && !errors.Is(err, replica.ErrNotLeader) && !errors.Is(err, replica.ErrUnknownOutcome) {
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

// scanLevel appends the due messages of one level starting at from and returns
// the offset after the last one taken (or skipped as undeliverable).
func (s *Service) scanLevel(level DelayLevel, from store.QueueOffset, now time.Time, maxMsgs int, b *scanBatch) (store.QueueOffset, error) {
	delay := s.cfg.Levels[level-1].Milliseconds()
	nowMS := now.UnixMilli()
	off := from
	for {
		room := maxMsgs - len(b.recs)
		if room <= 0 || b.bytes >= s.cfg.MaxBatchBytes {
			b.full = true
			return off, nil
		}
		res, err := s.st.GetMessages(Topic, level.QueueID(), off, room, s.cfg.MaxBatchBytes-b.bytes, nil)
		if err != nil {
			return from, fmt.Errorf("read %s queue %d at %d: %w", Topic, level.QueueID(), off, err)
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
			rec, err := realMessage(m, nowMS, s.cfg.Levels, s.cfg.StoreHost)
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
