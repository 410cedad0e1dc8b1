package fsm

import (
	"encoding/binary"
)

// CmdOffsetReset sets consumer offsets because an operator reset them
// (INVOKE_BROKER_TO_RESET_OFFSET), code 27, the next free number after
// MemberUpsert.
const CmdOffsetReset CommandType = 27

// OffsetReset sets Offsets like ConsumerOffsets and records each as a reset
// made at At (the leader's clock, Unix ms; Apply reads no clock). Every node
// thereby knows which offsets were just reset, so whichever node leads next
// can hold the group's clients to them (broker/offsets): a client commits its
// old offset for up to the 10 s it takes to apply a reset, and a commit
// replicated in that window, by this leader or by the next one, would undo
// the reset (chaos scenario O1).
type OffsetReset struct {
	At      int64
	Offsets []OffsetEntry
}

func (OffsetReset) commandType() CommandType { return CmdOffsetReset }

// ResetMark is the last reset of one (group, topic, queue): the offset it set
// and when (the resetting leader's clock, Unix ms).
type ResetMark struct {
	Offset int64
	At     int64
}

// OffsetReset payload: at int64, then ConsumerOffsets' payload.
func appendOffsetReset(dst []byte, c *OffsetReset) ([]byte, error) {
	dst = append(dst, byte(CmdOffsetReset), commandVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.At))
	return appendOffsetEntries(dst, c.Offsets)
}

func decodeOffsetReset(p []byte) (*OffsetReset, error) {
	const t = CmdOffsetReset
	if len(p) < 8 {
		return nil, badf(t, "short time")
	}
	es, err := decodeOffsetEntries(t, p[8:])
	if err != nil {
		return nil, err
	}
	return &OffsetReset{At: int64(binary.BigEndian.Uint64(p)), Offsets: es}, nil
}

// setResets records es as reset at at. The marks are not part of the
// checkpoint or snapshot image: they matter for seconds, and a node that
// rebuilt its state from an image is at worst one that holds clients to a
// reset for a shorter time.
func (m *Metadata) setResets(at int64, es []OffsetEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.resets == nil {
		m.resets = map[resetKey]ResetMark{}
	}
	for _, e := range es {
		m.resets[resetKey{e.Group, TopicQueue{e.Topic, e.QueueID}}] = ResetMark{Offset: int64(e.Offset), At: at}
	}
}

type resetKey struct {
	group string
	tq    TopicQueue
}

// LastReset is the last reset of (group, topic, queueID) this node applied.
func (m *Metadata) LastReset(group, topic string, queueID int32) (ResetMark, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.resets[resetKey{group, TopicQueue{topic, queueID}}]
	return r, ok
}
