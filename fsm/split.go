package fsm

import (
	"encoding/binary"

	"github.com/rocketraft/rocketraft/store"
)

// SplitRecords splits a CmdPutMessages command into its head (type, version, store
// timestamp and store host: everything before the message count) and its message
// records, so that a raft log kept in CommitLog form (decision 0016) can store the
// records as CommitLog records. JoinRecords puts them back together.
//
// ok is false for every other command, for a PutMessages that does not decode, and
// for one whose messages are not all well-formed stored records: such an entry is
// stored whole, and Apply refuses what it must, as before. head and records alias
// data.
func SplitRecords(data []byte) (head []byte, records [][]byte, storeTimestamp int64, ok bool) {
	if len(data) < headerLen+9 || CommandType(data[0]) != CmdPutMessages || data[1] != commandVersion {
		return nil, nil, 0, false
	}
	var c PutMessages
	if err := decodePutMessages(data[headerLen:], &c); err != nil {
		return nil, nil, 0, false
	}
	for _, rec := range c.Messages {
		if _, err := store.ViewRecord(rec); err != nil {
			return nil, nil, 0, false
		}
	}
	headEnd := headerLen + 8 + 1 + int(data[headerLen+8]) + 2 // up to the uint32 count
	return data[:headEnd:headEnd], c.Messages, c.StoreTimestamp, true
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
	dst = append(dst, head...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(records)))
	for _, r := range records {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(r)))
		dst = append(dst, r...)
	}
	return dst
}
