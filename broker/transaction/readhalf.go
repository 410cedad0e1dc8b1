package transaction

import (
	"fmt"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
)

// MessageReader is the store side ReadHalf reads (*store.Store).
type MessageReader interface {
	// ReadMessageAt returns the record at off, its QUEUEOFFSET the half queue's
	// (ReadHalf checks it against tranStateTableOffset); release ends the borrow of raw.
	ReadMessageAt(off store.PhysicalOffset) (raw []byte, release func(), err error)
}

// ReadHalf reads and checks the half message END_TRANSACTION names: a half
// message at commitLogOffset, at half queue offset halfOffset, of producerGroup
// (Java EndTransactionProcessor.checkPrepareMessage). Every failure wraps
// route.ErrHalfMessage; a mismatch also returns the half message found.
func ReadHalf(st MessageReader, commitLogOffset store.PhysicalOffset, halfOffset store.QueueOffset, producerGroup string) (Half, error) {
	raw, release, err := st.ReadMessageAt(commitLogOffset)
	if err != nil {
		return Half{}, fmt.Errorf("%w: commitLogOffset=%d: %w", route.ErrHalfMessage, commitLogOffset, err)
	}
	h, err := DecodeHalf(raw)
	release()
	if err != nil {
		return Half{}, fmt.Errorf("%w: commitLogOffset=%d: %w", route.ErrHalfMessage, commitLogOffset, err)
	}
	switch {
	case h.Msg.Topic != HalfTopic:
		return h, fmt.Errorf("%w: commitLogOffset=%d holds a message of topic %s", route.ErrHalfMessage, commitLogOffset, h.Msg.Topic)
	case h.Msg.QueueOffset != halfOffset:
		return h, fmt.Errorf("%w: commitLogOffset=%d is half offset %d, tranStateTableOffset=%d", route.ErrHalfMessage,
			commitLogOffset, h.Msg.QueueOffset, halfOffset)
	case h.Props[store.PropertyProducerGroup] != producerGroup:
		return h, fmt.Errorf("%w: commitLogOffset=%d belongs to producer group %q, not %q", route.ErrHalfMessage,
			commitLogOffset, h.Props[store.PropertyProducerGroup], producerGroup)
	}
	return h, nil
}
