package store

import (
	"encoding/binary"
	"fmt"
)

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
