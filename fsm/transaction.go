package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocketraft/rocketraft/store"
)

// CmdTransactionOps records transaction decisions and check-backs, with the
// messages they re-put, in one raft entry (code 25, after DeliverScheduled).
const CmdTransactionOps CommandType = 25

// ErrTransactionDecided is the result of an op on a half message that an earlier
// entry (or an earlier op of the same entry) already decided: a client retry, a
// check-back answer racing the original END_TRANSACTION, or a new leader repeating
// a decision. The op stores and records nothing.
var ErrTransactionDecided = errors.New("fsm: transaction already decided")

// TransactionOpKind says what one op does to a half message.
type TransactionOpKind uint8

// Op kinds. The numbers are part of the log format.
const (
	// TxCommit re-puts its record (the message in its real topic and queue) and
	// decides the half message.
	TxCommit TransactionOpKind = 1
	// TxRollback decides the half message; nothing is stored.
	TxRollback TransactionOpKind = 2
	// TxDiscard decides a half message that reached the check limit; its optional
	// record is the message for TRANS_CHECK_MAX_TIME_TOPIC.
	TxDiscard TransactionOpKind = 3
	// TxCheck counts one check-back sent for an undecided half message.
	TxCheck TransactionOpKind = 4
	// TxExpire decides every half offset below HalfOffset: retention removed them.
	TxExpire TransactionOpKind = 5
)

func (k TransactionOpKind) String() string {
	switch k {
	case TxCommit:
		return "commit"
	case TxRollback:
		return "rollback"
	case TxDiscard:
		return "discard"
	case TxCheck:
		return "check"
	case TxExpire:
		return "expire"
	}
	return fmt.Sprintf("TransactionOpKind(%d)", uint8(k))
}

// NoRecord is TransactionOp.Record for an op that stores nothing.
const NoRecord int32 = -1

// TransactionOp is one decision or check on the half message at HalfOffset (its
// queue offset in RMQ_SYS_TRANS_HALF_TOPIC queue 0).
type TransactionOp struct {
	Kind       TransactionOpKind
	HalfOffset store.QueueOffset
	// Record indexes the op's message in TransactionOps.Put.Messages, or NoRecord.
	Record int32
}

// TransactionOps applies its ops in order, atomically with the put of the records
// of the ops that take effect: a commit's re-put and its "done" cannot be split by
// a failover, and an op on a decided half message stores nothing.
type TransactionOps struct {
	Ops []TransactionOp
	Put PutMessages
}

func (TransactionOps) commandType() CommandType { return CmdTransactionOps }

// TransactionOpResult is the outcome of one op. Err is ErrTransactionDecided for a
// duplicate; Message is the put result of the op's record when it took effect
// (Message.Err set when the record's topic or queue refused it — the op is still
// recorded, as a message that can never be stored must not be retried forever).
type TransactionOpResult struct {
	Message MessageResult
	Err     error
}

// TransactionResult is what Apply returns for TransactionOps. Err is set when the
// store refused the whole batch: then nothing was recorded either.
type TransactionResult struct {
	Ops []TransactionOpResult
	Err error
}

// maxTransactionOps bounds the op count so a corrupt count cannot allocate much.
const maxTransactionOps = 1 << 20

// transactionOpLen is kind (1) + halfOffset (8) + record index (4).
const transactionOpLen = 13

func validateTransactionOps(ops []TransactionOp, nrecs int) error {
	if len(ops) > maxTransactionOps {
		return fmt.Errorf("%d ops, limit %d", len(ops), maxTransactionOps)
	}
	used := make([]bool, nrecs)
	for i, op := range ops {
		if op.HalfOffset < 0 {
			return fmt.Errorf("op %d: half offset %d", i, op.HalfOffset)
		}
		switch op.Kind {
		case TxCommit:
			if op.Record == NoRecord {
				return fmt.Errorf("op %d: commit without a record", i)
			}
		case TxDiscard:
		case TxRollback, TxCheck, TxExpire:
			if op.Record != NoRecord {
				return fmt.Errorf("op %d: %s carries record %d", i, op.Kind, op.Record)
			}
		default:
			return fmt.Errorf("op %d: kind %d", i, uint8(op.Kind))
		}
		if op.Record == NoRecord {
			continue
		}
		if op.Record < 0 || int(op.Record) >= nrecs {
			return fmt.Errorf("op %d: record %d of %d", i, op.Record, nrecs)
		}
		if used[op.Record] {
			return fmt.Errorf("op %d: record %d used twice", i, op.Record)
		}
		used[op.Record] = true
	}
	for i, u := range used {
		if !u {
			return fmt.Errorf("record %d belongs to no op", i)
		}
	}
	return nil
}

// AppendTransactionOps appends an encoded TransactionOps to dst. Payload:
//
//	uint32 n | n × (uint8 kind | int64 halfOffset | int32 record) | PutMessages payload
func AppendTransactionOps(dst []byte, c *TransactionOps) ([]byte, error) {
	if err := validateTransactionOps(c.Ops, len(c.Put.Messages)); err != nil {
		return dst, fmt.Errorf("%w: %s: %v", ErrBadCommand, CmdTransactionOps, err)
	}
	be := binary.BigEndian
	dst = append(dst, byte(CmdTransactionOps), commandVersion)
	dst = be.AppendUint32(dst, uint32(len(c.Ops)))
	for _, op := range c.Ops {
		dst = append(dst, byte(op.Kind))
		dst = be.AppendUint64(dst, uint64(op.HalfOffset))
		dst = be.AppendUint32(dst, uint32(op.Record))
	}
	// The PutMessages payload follows without its own type and version bytes.
	mark := len(dst)
	out, err := AppendPutMessages(dst, c.Put.StoreTimestamp, c.Put.StoreHost, c.Put.Messages)
	if err != nil {
		return dst, err
	}
	copy(out[mark:], out[mark+headerLen:])
	return out[:len(out)-headerLen], nil
}

// TransactionOpsSize is the encoded size of a TransactionOps command.
func TransactionOpsSize(ops int, host netip.AddrPort, msgs [][]byte) int {
	return 4 + ops*transactionOpLen + PutMessagesSize(host, msgs)
}

func decodeTransactionOps(p []byte) (*TransactionOps, error) {
	const t = CmdTransactionOps
	be := binary.BigEndian
	if len(p) < 4 {
		return nil, badf(t, "short count")
	}
	n := be.Uint32(p)
	p = p[4:]
	if n > maxTransactionOps || uint64(n)*transactionOpLen > uint64(len(p)) {
		return nil, badf(t, "op count %d does not fit in %d bytes", n, len(p))
	}
	c := &TransactionOps{Ops: make([]TransactionOp, n)}
	for i := range c.Ops {
		c.Ops[i] = TransactionOp{
			Kind:       TransactionOpKind(p[0]),
			HalfOffset: store.QueueOffset(be.Uint64(p[1:])),
			Record:     int32(be.Uint32(p[9:])),
		}
		p = p[transactionOpLen:]
	}
	if err := decodePutMessages(p, &c.Put); err != nil {
		return nil, badf(t, "messages: %v", err)
	}
	if err := validateTransactionOps(c.Ops, len(c.Put.Messages)); err != nil {
		return nil, badf(t, "%v", err)
	}
	return c, nil
}

// applyTransactionOps decides, in op order, which ops take effect (an op on an
// offset that is decided, before this entry or by an earlier op of it, is a
// duplicate), stores the records of the effective ops in one batch, and only then
// records the decisions and check counts. If the store refuses the whole batch,
// nothing is recorded, so the leader can retry.
func (f *FSM) applyTransactionOps(index uint64, c *TransactionOps) *TransactionResult {
	res := &TransactionResult{Ops: make([]TransactionOpResult, len(c.Ops))}
	effective := make([]bool, len(c.Ops))
	decidedHere := map[store.QueueOffset]bool{}
	var expiredBelow store.QueueOffset
	var recs [][]byte
	var slots []int  // op index of each record in recs
	var recIdx []int // index in c.Put.Messages of each record in recs
	f.meta.mu.RLock()
	for i, op := range c.Ops {
		if op.Kind == TxExpire {
			effective[i] = true
			expiredBelow = max(expiredBelow, op.HalfOffset)
			continue
		}
		_, decided := f.meta.trans.isDecided(op.HalfOffset)
		if decided || decidedHere[op.HalfOffset] || op.HalfOffset < expiredBelow {
			res.Ops[i].Err = fmt.Errorf("%w: %s of half offset %d", ErrTransactionDecided, op.Kind, op.HalfOffset)
			continue
		}
		effective[i] = true
		if op.Kind == TxCheck {
			continue
		}
		decidedHere[op.HalfOffset] = true
		if op.Record != NoRecord {
			recs = append(recs, c.Put.Messages[op.Record])
			recIdx = append(recIdx, int(op.Record))
			slots = append(slots, i)
		}
	}
	f.meta.mu.RUnlock()
	if len(recs) > 0 {
		put := f.applyPut(index, &PutMessages{StoreTimestamp: c.Put.StoreTimestamp, StoreHost: c.Put.StoreHost, Messages: recs}, recIdx, len(c.Put.Messages))
		if put.Err != nil {
			for i := range res.Ops {
				if res.Ops[i].Err == nil {
					res.Ops[i].Err = put.Err
				}
			}
			res.Err = put.Err
			return res
		}
		for j, r := range put.Results {
			res.Ops[slots[j]].Message = r
		}
	}
	f.meta.mu.Lock()
	defer f.meta.mu.Unlock()
	for i, op := range c.Ops {
		if !effective[i] {
			continue
		}
		switch op.Kind {
		case TxExpire:
			f.meta.trans.decide(0, op.HalfOffset)
		case TxCheck:
			f.meta.trans.checks[op.HalfOffset]++
		default:
			f.meta.trans.decide(op.HalfOffset, op.HalfOffset+1)
		}
	}
	return res
}
