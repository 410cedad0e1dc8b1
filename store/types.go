package store

import (
	"errors"
	"fmt"
)

// PhysicalOffset is a byte position in the CommitLog (the global, group-wide log of
// stored messages). It is never a queue offset and never a raft index.
type PhysicalOffset int64

// QueueOffset is an entry number in one ConsumeQueue (topic, queueId): the n-th
// message of that queue. It is never a byte position.
type QueueOffset int64

// Magic codes of the stored-message format (rocketmq-protocol.md §4.1).
const (
	// MagicV1 marks a stored message with a 1-byte topic length; the only version the
	// Go client decodes, so the only one we write.
	MagicV1 int32 = -626843481 // 0xDAA320A7
	// MagicV2 marks a record with a 2-byte topic length (Java, topics > 127 bytes). We
	// decode it but never write it.
	MagicV2 int32 = -626843477 // 0xDAA320AB
	// MagicBlank marks the padding record that fills the tail of a CommitLog segment
	// when the next message does not fit; it never reaches a client.
	MagicBlank int32 = -875286124 // 0xCBD43194
)

// Limits shared with RocketMQ (reliability-plan.md "Bad input and limits").
const (
	MaxTopicLength      = 127
	MaxPropertiesLength = 32767
	// MinBlankRecord is the smallest padding record: TOTALSIZE + MAGIC. A segment
	// always keeps room for it so that its end can be marked.
	MinBlankRecord = 8
)

// Sentinel errors. Callers match them with errors.Is; messages are wrapped with
// identifiers (offset, file) where they are returned.
var (
	// ErrCorrupt reports a record that fails its structure or CRC check.
	ErrCorrupt = errors.New("store: corrupt record")
	// ErrMessageIllegal reports a message that violates a RocketMQ limit.
	ErrMessageIllegal = errors.New("store: message illegal")
	// ErrOffsetOutOfRange reports a read or truncate outside [min, max].
	ErrOffsetOutOfRange = errors.New("store: offset out of range")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("store: closed")
	// ErrShortBuffer reports bytes that end before the record they claim to hold.
	ErrShortBuffer = errors.New("store: short buffer")
)

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
