package broker

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Java defaults (BrokerConfig): transactionTimeOut, transactionCheckInterval,
// transactionCheckMax.
const (
	DefaultTransactionTimeout       = 6 * time.Second
	DefaultTransactionCheckInterval = 30 * time.Second
	DefaultTransactionCheckMax      = 15
)

// txWriter is the replicated side of the check service (Replica).
type txWriter interface {
	TransactionState() TransactionState
	ApplyTransactionOps(ctx context.Context, ops []TransactionOp) ([]TransactionOpResult, error)
}

// checkConn is where a check-back goes (*transport.Conn).
type checkConn interface {
	InvokeOneway(req *transport.Command) error
}

// txCheckConfig configures the leader-only transaction check service.
type txCheckConfig struct {
	// Timeout is how old a half message must be before it is checked.
	Timeout time.Duration
	// Interval is the time between check rounds.
	Interval time.Duration
	// CheckMax is how many check-backs a half message gets before it is moved to
	// TRANS_CHECK_MAX_TIME_TOPIC.
	CheckMax   int32
	BrokerName string
	StoreHost  netip.AddrPort
	// Now is the clock the age check uses (tests inject one).
	Now func() time.Time
	// MaxOps bounds one TransactionOps entry (default 1024).
	MaxOps int
	// Producer returns a live connection of a producer group.
	Producer func(group string) (checkConn, bool)
	// EnsureTopic creates a system topic through raft (TRANS_CHECK_MAX_TIME_TOPIC).
	EnsureTopic func(ctx context.Context, name string, queues int32) error
	Logger      hclog.Logger
}

func (c txCheckConfig) withDefaults() txCheckConfig {
	if c.Timeout == 0 {
		c.Timeout = DefaultTransactionTimeout
	}
	if c.Interval == 0 {
		c.Interval = DefaultTransactionCheckInterval
	}
	if c.CheckMax == 0 {
		c.CheckMax = DefaultTransactionCheckMax
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxOps == 0 {
		c.MaxOps = 1024
	}
	if c.Producer == nil {
		c.Producer = func(string) (checkConn, bool) { return nil, false }
	}
	if c.EnsureTopic == nil {
		c.EnsureTopic = func(context.Context, string, int32) error { return nil }
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// txCheckService asks producers about undecided half messages (Java
// TransactionalMessageCheckService). It runs on the leader only, after its
// barrier, and keeps no state of its own: each round starts from the replicated
// decisions, and check counts are replicated (batched, one entry per round), so a
// new leader checks exactly the undecided half messages and resumes their counts.
//
// Concurrency: run is one goroutine; round is not safe for concurrent use.
type txCheckService struct {
	cfg txCheckConfig
	st  scheduleReader
	rep txWriter
	log hclog.Logger
}

func newTxCheckService(cfg txCheckConfig, st scheduleReader, rep txWriter) *txCheckService {
	cfg = cfg.withDefaults()
	return &txCheckService{cfg: cfg, st: st, rep: rep, log: cfg.Logger.Named("transaction")}
}

// run does a round at once (a new leader picks up what the old one left) and
// then every Interval until ctx is done.
func (s *txCheckService) run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := s.round(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("transaction check round failed; the next round starts from the replicated state", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// roundStats counts what one round did.
type roundStats struct {
	Checked, Discarded, Expired int
}

// pendingCheck is a check-back to send once its TxCheck op is recorded.
type pendingCheck struct {
	op    int // index in the batch's ops
	group string
	req   *transport.Command
}

// round scans the half queue from the first undecided offset and, batch by batch,
// records and sends check-backs for half messages older than Timeout, discards
// those that had CheckMax checks, and expires offsets retention removed.
func (s *txCheckService) round(ctx context.Context) (roundStats, error) {
	var stats roundStats
	state := s.rep.TransactionState()
	now := s.cfg.Now()
	off := state.FirstUndecided()
	for {
		ops, checks, next, more, err := s.scan(state, off, now)
		if err != nil {
			return stats, err
		}
		if len(ops) > 0 {
			if err := s.apply(ctx, ops, checks, &stats); err != nil {
				return stats, err
			}
		}
		if !more {
			return stats, nil
		}
		off = next
	}
}

// scan collects up to MaxOps ops from off; more says the batch is full.
func (s *txCheckService) scan(state TransactionState, off store.QueueOffset, now time.Time) (ops []TransactionOp, checks []pendingCheck, next store.QueueOffset, more bool, err error) {
	for {
		room := s.cfg.MaxOps - len(ops)
		if room <= 0 {
			return ops, checks, off, true, nil
		}
		if end, ok := state.Decided(off); ok {
			off = end
			continue
		}
		if nd, ok := state.NextDecided(off); ok && int64(nd-off) < int64(room) {
			room = int(nd - off)
		}
		res, err := s.st.GetMessages(transHalfTopic, 0, off, room, 4<<20, nil)
		if err != nil {
			return nil, nil, off, false, fmt.Errorf("read %s at %d: %w", transHalfTopic, off, err)
		}
		switch res.Status {
		case store.Found:
		case store.OffsetTooSmall:
			// Retention removed half messages nobody decided: record that, so the
			// state stays bounded and a new leader does not look for them.
			if res.NextBeginOffset <= off {
				return ops, checks, off, false, nil
			}
			ops = append(ops, TransactionOp{Kind: fsm.TxExpire, HalfOffset: res.NextBeginOffset})
			off = res.NextBeginOffset
			continue
		case store.OffsetFoundNull, store.NoMatchedMessage:
			if res.NextBeginOffset <= off {
				return ops, checks, off, false, nil
			}
			off = res.NextBeginOffset
			continue
		default:
			// Nothing beyond off yet.
			return ops, checks, off, false, nil
		}
		young := false
		for i, raw := range res.Messages {
			qo := res.QueueOffsets[i]
			if _, ok := state.Decided(qo); ok {
				off = qo + 1
				continue
			}
			if now.UnixMilli()-store.StoreTimestampOf(raw) < s.cfg.Timeout.Milliseconds() {
				// Half messages are in store order: the rest are younger still.
				young = true
				break
			}
			hm, err := decodeHalf(raw)
			if err != nil {
				s.log.Warn("undecodable half message; discarding it", "halfOffset", qo, "error", err)
				ops = append(ops, TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo})
				off = qo + 1
				continue
			}
			if state.Checks(qo) >= s.cfg.CheckMax {
				rec, err := checkMaxRecord(hm, s.cfg.StoreHost)
				if err != nil {
					s.log.Warn("half message cannot be copied to the check-max topic; discarding it", "halfOffset", qo, "error", err)
				}
				ops = append(ops, TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo, Record: rec})
			} else {
				req, err := s.checkRequest(hm, qo)
				if err != nil {
					s.log.Warn("half message has no real topic; discarding it", "halfOffset", qo, "error", err)
					ops = append(ops, TransactionOp{Kind: fsm.TxDiscard, HalfOffset: qo})
				} else {
					checks = append(checks, pendingCheck{op: len(ops), group: hm.props[store.PropertyProducerGroup], req: req})
					ops = append(ops, TransactionOp{Kind: fsm.TxCheck, HalfOffset: qo})
				}
			}
			off = qo + 1
		}
		if !young && res.NextBeginOffset > off {
			off = res.NextBeginOffset
		}
		res.Release()
		if young {
			return ops, checks, off, false, nil
		}
	}
}

// apply records the batch, then sends the check-backs whose op took effect (a
// half message decided in the meantime is not asked about).
func (s *txCheckService) apply(ctx context.Context, ops []TransactionOp, checks []pendingCheck, stats *roundStats) error {
	for _, op := range ops {
		if op.Kind == fsm.TxDiscard && op.Record != nil {
			if err := s.cfg.EnsureTopic(ctx, transCheckMaxTopic, 1); err != nil {
				return err
			}
			break
		}
	}
	res, err := s.rep.ApplyTransactionOps(ctx, ops)
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
			s.log.Warn("half message reached the check limit; moved to "+transCheckMaxTopic, "halfOffset", op.HalfOffset, "checks", s.cfg.CheckMax)
		case fsm.TxExpire:
			stats.Expired++
		}
	}
	for _, c := range checks {
		if c.op < len(res) && res[c.op].Decided {
			continue
		}
		stats.Checked++
		conn, ok := s.cfg.Producer(c.group)
		if !ok {
			s.log.Debug("no live producer for a transaction check-back", "group", c.group, "halfOffset", ops[c.op].HalfOffset)
			continue
		}
		if err := conn.InvokeOneway(c.req); err != nil {
			s.log.Debug("transaction check-back not sent", "group", c.group, "error", err)
		}
	}
	return nil
}

// checkRequest builds CHECK_TRANSACTION_STATE for a half message: the header Java
// sends and the message in the stored layout with its real topic and queue
// (Java Broker2Client.checkProducerTransactionState).
func (s *txCheckService) checkRequest(hm halfMessage, qo store.QueueOffset) (*transport.Command, error) {
	topic, qid, err := hm.realTopicQueue()
	if err != nil {
		return nil, err
	}
	m := hm.msg
	m.Topic, m.QueueID = topic, qid
	body, err := store.AppendMessage(nil, &m)
	if err != nil {
		return nil, err
	}
	uniq := hm.props[store.PropertyUniqKey]
	ext := map[string]string{
		"tranStateTableOffset": strconv.FormatInt(int64(qo), 10),
		"commitLogOffset":      strconv.FormatInt(int64(m.PhysicalOffset), 10),
		"msgId":                uniq,
		"transactionId":        uniq,
		"offsetMsgId":          store.OffsetMsgID(m.StoreHost, m.PhysicalOffset),
		"topic":                topic,
		"bname":                s.cfg.BrokerName,
	}
	return transport.NewRequest(transport.CheckTransactionState, ext, body), nil
}

// newTxCheckRun builds the transaction check service for a new leader term
// (leaderService.newRun).
func (b *Broker) newTxCheckRun(ReplicaStatus) func(context.Context) {
	svc := newTxCheckService(txCheckConfig{
		Timeout: b.cfg.TransactionTimeout, Interval: b.cfg.TransactionCheckInterval, CheckMax: b.cfg.TransactionCheckMax,
		BrokerName: b.cfg.BrokerName, StoreHost: b.storeHost, Logger: b.log,
		Producer: func(group string) (checkConn, bool) {
			if c := b.clients.producerConn(group); c != nil {
				return c, true
			}
			return nil, false
		},
		EnsureTopic: b.ensureTopic,
	}, b.store, b.replica)
	return svc.run
}
