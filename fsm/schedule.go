package fsm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/rocketraft/rocketraft/store"
)

// CmdDeliverScheduled re-puts due delayed messages and advances their delay levels'
// progress in one raft entry (code 24: the first free code after the reserved 9..23).
const CmdDeliverScheduled CommandType = 24

// ErrScheduleConflict is the result of a DeliverScheduled whose From offsets no
// longer match the replicated progress: another entry (an earlier proposal whose
// outcome the leader did not learn, or a previous leader's) already delivered that
// range. Nothing is stored, so a re-proposal can never deliver a message twice.
var ErrScheduleConflict = errors.New("fsm: schedule progress moved")

// ScheduleAdvance moves one delay level's progress from From to To. Apply checks
// From against the replicated progress (a compare-and-set), so an entry proposed
// twice, or by two leaders, applies at most once.
type ScheduleAdvance struct {
	Level int32
	From  store.QueueOffset
	To    store.QueueOffset
}

// DeliverScheduled stores Put.Messages (the due messages, already rewritten to their
// real topic and queue) and applies every advance, atomically: a failover between the
// re-put and the progress cannot exist, because both are one entry.
type DeliverScheduled struct {
	Advances []ScheduleAdvance
	Put      PutMessages
}

func (DeliverScheduled) commandType() CommandType { return CmdDeliverScheduled }

// maxScheduleAdvances bounds the advance count so a corrupt count cannot allocate much.
const maxScheduleAdvances = 1 << 16

// AppendDeliverScheduled appends an encoded DeliverScheduled to dst. Payload:
//
//	uint32 n | n × (int32 level | int64 from | int64 to) | PutMessages payload
func AppendDeliverScheduled(dst []byte, c *DeliverScheduled) ([]byte, error) {
	if len(c.Advances) > maxScheduleAdvances {
		return dst, fmt.Errorf("%w: %s: %d advances", ErrBadCommand, CmdDeliverScheduled, len(c.Advances))
	}
	be := binary.BigEndian
	dst = append(dst, byte(CmdDeliverScheduled), commandVersion)
	dst = be.AppendUint32(dst, uint32(len(c.Advances)))
	for _, a := range c.Advances {
		if a.To < a.From {
			return dst, fmt.Errorf("%w: %s: level %d moves back from %d to %d", ErrBadCommand, CmdDeliverScheduled, a.Level, a.From, a.To)
		}
		dst = be.AppendUint32(dst, uint32(a.Level))
		dst = be.AppendUint64(dst, uint64(a.From))
		dst = be.AppendUint64(dst, uint64(a.To))
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

// DeliverScheduledSize is the encoded size of a DeliverScheduled command; the
// schedule service bounds an entry by it.
func DeliverScheduledSize(advances int, host netip.AddrPort, msgs [][]byte) int {
	return 4 + advances*20 + PutMessagesSize(host, msgs)
}

func decodeDeliverScheduled(p []byte) (*DeliverScheduled, error) {
	const t = CmdDeliverScheduled
	be := binary.BigEndian
	if len(p) < 4 {
		return nil, badf(t, "short count")
	}
	n := be.Uint32(p)
	p = p[4:]
	if n > maxScheduleAdvances || uint64(n)*20 > uint64(len(p)) {
		return nil, badf(t, "advance count %d does not fit in %d bytes", n, len(p))
	}
	c := &DeliverScheduled{Advances: make([]ScheduleAdvance, n)}
	for i := range c.Advances {
		a := ScheduleAdvance{Level: int32(be.Uint32(p)), From: store.QueueOffset(be.Uint64(p[4:])), To: store.QueueOffset(be.Uint64(p[12:]))}
		if a.To < a.From {
			return nil, badf(t, "advance %d: level %d moves back from %d to %d", i, a.Level, a.From, a.To)
		}
		c.Advances[i] = a
		p = p[20:]
	}
	if err := decodePutMessages(p, &c.Put); err != nil {
		return nil, badf(t, "messages: %v", err)
	}
	return c, nil
}

// applyDeliverScheduled checks every advance against the replicated progress; if
// all match it stores the messages and moves the progress, else it stores nothing.
// A message the put refuses on its own (real topic deleted, queue gone) is dropped
// with its result error, and the progress still moves past it: it can never be
// delivered, and holding the level back would block every later message. When the
// store refuses the whole batch, nothing moves, so the service can retry smaller.
func (f *FSM) applyDeliverScheduled(index uint64, c *DeliverScheduled) *PutResult {
	cur := f.meta.ScheduleProgress()
	for _, a := range c.Advances {
		if cur[a.Level] != a.From {
			err := fmt.Errorf("%w: level %d is at %d, entry expects %d", ErrScheduleConflict, a.Level, cur[a.Level], a.From)
			res := &PutResult{Results: make([]MessageResult, len(c.Put.Messages)), Err: err}
			for i := range res.Results {
				res.Results[i].Err = err
			}
			return res
		}
	}
	res := f.applyPut(index, &c.Put, nil, len(c.Put.Messages))
	if res.Err != nil {
		return res
	}
	es := make([]ScheduleEntry, len(c.Advances))
	for i, a := range c.Advances {
		es[i] = ScheduleEntry{Level: a.Level, Offset: a.To}
	}
	f.meta.setSchedule(es)
	return res
}
