package fsm

import (
	"github.com/rocketraft/rocketraft/store"
)

// SplitRecords splits a command that stores messages (PutMessages, DeliverScheduled,
// TransactionOps: each ends with a PutMessages payload) into its head (everything
// before the message count) and its message records, so that a raft log kept in
// CommitLog form (decision 0016) can store the records as CommitLog records.
// JoinRecords puts them back together.
//
// ok is false for every other command, for one that does not decode, and for one
// whose messages are not all well-formed stored records: such an entry is stored
// whole, and Apply refuses what it must, as before. head and records alias data.
func SplitRecords(data []byte) (head []byte, records [][]byte, storeTimestamp int64, ok bool) {
	if len(data) < headerLen {
		return nil, nil, 0, false
	}
	switch CommandType(data[0]) {
	case CmdPutMessages, CmdDeliverScheduled, CmdTransactionOps:
	default:
		return nil, nil, 0, false
	}
	c, err := DecodeCommand(data)
	if err != nil {
		return nil, nil, 0, false
	}
	var put *PutMessages
	switch c := c.(type) {
	case *PutMessages:
		put = c
	case *DeliverScheduled:
		put = &c.Put
	case *TransactionOps:
		put = &c.Put
	default:
		return nil, nil, 0, false
	}
	tail := 4 // the count, then each record with its length
	for _, rec := range put.Messages {
		if _, err := store.ViewRecord(rec); err != nil {
			return nil, nil, 0, false
		}
		tail += 4 + len(rec)
	}
	headEnd := len(data) - tail
	return data[:headEnd:headEnd], put.Messages, put.StoreTimestamp, true
}

// JoinRecords appends to dst the command SplitRecords split into head and records.
// JoinRecords(nil, SplitRecords(b)) is b, byte for byte.
func JoinRecords(dst, head []byte, records [][]byte) []byte {
	n := len(head) + 4
	for _, r := range records {
		n += 4 + len(r)
	}
	if cap(dst)-len(dst) < n {
		dst = append(make([]byte, 0, len(dst)+n), dst...)
	}
	return appendMessageList(append(dst, head...), records)
}
