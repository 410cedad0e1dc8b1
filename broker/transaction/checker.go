package transaction

import (
	"context"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/broker/loop"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
)

// Checker asks producers about undecided half messages (Java
// TransactionalMessageCheckService). It runs on the leader only, after its
// barrier, and keeps no state of its own (package doc).
//
// Concurrency: Run is one goroutine; Round is not safe for concurrent use.
type Checker struct {
	scanner
	rep replica.Transactions
}

// NewChecker builds the Checker for one leader term over the half queue in st
// and the replicated decisions in rep.
func NewChecker(cfg Config, st Reader, rep replica.Transactions) *Checker {
	cfg = cfg.withDefaults()
	return &Checker{scanner: scanner{cfg: cfg, st: st, log: cfg.Logger.Named("transaction")}, rep: rep}
}

// Run does a round at once (a new leader picks up what the old one left) and
// then every Interval until ctx ends.
func (c *Checker) Run(ctx context.Context) {
	loop.Every(ctx, c.cfg.Interval, loop.AtOnce, func(time.Time) {
		if _, err := c.Round(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("transaction check round failed; the next round starts from the replicated state", "error", err)
		}
	})
}

// RoundStats counts what one round did: check-backs recorded, half messages
// moved to CheckMaxTopic, and Expire ops for offsets retention removed.
type RoundStats struct {
	Checked, Discarded, Expired int
}

// Round scans the half queue from the first undecided offset and, batch by
// batch, records and sends check-backs for half messages older than Timeout,
// discards those that had CheckMax checks, and expires offsets retention removed.
func (c *Checker) Round(ctx context.Context) (RoundStats, error) {
	var stats RoundStats
	state := c.rep.TransactionState()
	now := c.cfg.Now()
	off := state.FirstUndecided()
	for {
		ops, checks, next, more, err := c.scan(state, off, now)
		if err != nil {
			return stats, err
		}
		if len(ops) > 0 {
			if err := c.apply(ctx, ops, checks, &stats); err != nil {
				return stats, err
			}
		}
		if !more {
			return stats, nil
		}
		off = next
	}
}

// apply records the batch, then sends the check-backs whose op took effect (a
// half message decided in the meantime is not asked about).
func (c *Checker) apply(ctx context.Context, ops []replica.TransactionOp, checks []pendingCheck, stats *RoundStats) error {
	for _, op := range ops {
		if op.Kind == fsm.TxDiscard && op.Record != nil {
			if err := c.cfg.EnsureTopic(ctx, CheckMaxTopic, 1); err != nil {
				return err
			}
			break
		}
	}
	res, err := c.rep.ApplyTransactionOps(ctx, ops)
	if err != nil {
		return fmt.Errorf("record %d transaction ops: %w", len(ops), err)
	}
	for i, op := range ops {
		if i < len(res) && res[i].Decided {
			continue
		}
		switch op.Kind {
		case fsm.TxDiscard:
			stats.Discarded++
			c.log.Warn("half message reached the check limit; moved to "+CheckMaxTopic, "halfOffset", op.HalfOffset, "checks", c.cfg.CheckMax)
		case fsm.TxExpire:
			stats.Expired++
		}
	}
	for _, p := range checks {
		if p.op < len(res) && res[p.op].Decided {
			continue
		}
		stats.Checked++
		conn, ok := c.cfg.Producer(p.group)
		if !ok {
			c.log.Debug("no live producer for a transaction check-back", "group", p.group, "halfOffset", ops[p.op].HalfOffset)
			continue
		}
		if err := conn.InvokeOneway(p.req); err != nil {
			c.log.Debug("transaction check-back not sent", "group", p.group, "error", err)
		}
	}
	return nil
}
