package store

import (
	"encoding/binary"
	"fmt"
)

// recordView is the part of a stored message the CommitLog itself needs: where the
// topic and body sit, the queue id and the store timestamp. Its slices alias the
// record; building one allocates nothing, which keeps the append and recovery paths
// free of per-message allocations (DecodeMessage would allocate two strings).
type recordView struct {
	topic          []byte
	body           []byte
	queueID        int32
	storeTimestamp int64
}

// parseRecord checks the structure of one encoded message that fills r exactly
// (TOTALSIZE == len(r), a message magic, every length inside the record and the fields
// adding up to TOTALSIZE) and returns its view. It does not check the body CRC.
func parseRecord(r []byte) (recordView, error) {
	var v recordView
	size, magic, err := RecordSize(r)
	if err != nil {
		return v, err
	}
	if magic != MagicV1 && magic != MagicV2 {
		return v, corruptf("magic %#x is not a message", uint32(magic))
	}
	if int(size) != len(r) || size < fixedV1Size {
		return v, corruptf("total size %d, record holds %d bytes (minimum %d)", size, len(r), fixedV1Size)
	}
	be := binary.BigEndian
	v.queueID = int32(be.Uint32(r[posQueueID:]))
	sysFlag := int32(be.Uint32(r[posSysFlag:]))
	p := posBornHost + hostLen(sysFlag&SysFlagBornHostV6 != 0)
	storeTsPos := p
	p += 8 + hostLen(sysFlag&SysFlagStoreHostV6 != 0) + 4 + 8
	if p+4 > len(r) {
		return v, corruptf("header of %d bytes exceeds total size %d", p+4, size)
	}
	v.storeTimestamp = int64(be.Uint64(r[storeTsPos:]))
	bodyLen := int(int32(be.Uint32(r[p:])))
	p += 4
	if bodyLen < 0 || bodyLen > len(r)-p {
		return v, corruptf("body length %d exceeds record of %d bytes", bodyLen, size)
	}
	v.body = r[p : p+bodyLen]
	p += bodyLen
	var topicLen int
	if magic == MagicV1 {
		if p+1 > len(r) {
			return v, corruptf("topic length beyond record end")
		}
		topicLen = int(r[p])
		p++
	} else {
		if p+2 > len(r) {
			return v, corruptf("topic length beyond record end")
		}
		topicLen = int(be.Uint16(r[p:]))
		p += 2
	}
	if topicLen == 0 || topicLen > len(r)-p {
		return v, corruptf("topic length %d does not fit the record", topicLen)
	}
	v.topic = r[p : p+topicLen]
	p += topicLen
	if p+2 > len(r) {
		return v, corruptf("properties length beyond record end")
	}
	p += 2 + int(be.Uint16(r[p:]))
	if p != len(r) {
		return v, corruptf("fields end at %d, total size says %d", p, size)
	}
	return v, nil
}

// putBlank writes the blank padding record header (TOTALSIZE = n, MAGIC = blank) at
// the start of b. The n-8 bytes after it are already zero (segments are created zeroed
// and every cut zeroes what it removes), so padding costs 8 bytes of writing.
func putBlank(b []byte, n int64) {
	binary.BigEndian.PutUint32(b[posTotalSize:], uint32(n))
	blank := MagicBlank
	binary.BigEndian.PutUint32(b[posMagic:], uint32(blank))
}

// checkBlank reports whether r (which runs to the end of its segment) starts with a
// well-formed blank record: magic blank and TOTALSIZE exactly the bytes left.
func checkBlank(r []byte) error {
	size, magic, err := RecordSize(r)
	if err != nil {
		return err
	}
	if magic != MagicBlank {
		return corruptf("magic %#x is not blank", uint32(magic))
	}
	if int64(size) != int64(len(r)) {
		return fmt.Errorf("%w: blank record of %d bytes, %d left in segment", ErrCorrupt, size, len(r))
	}
	return nil
}
