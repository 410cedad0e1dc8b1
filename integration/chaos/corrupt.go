package chaos

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/rocketraft/rocketraft/store"
)

// Magic numbers of the stored layout (store/doc.go).
const (
	magicMessage = 0xDAA320A7
	magicBlank   = 0xCBD43194
)

// ErrNoRecords is returned when a CommitLog holds no message to corrupt.
var ErrNoRecords = errors.New("no message records in the CommitLog")

// RecordPos locates one stored message in a CommitLog segment file.
type RecordPos struct {
	File   string // segment path
	Off    int64  // offset inside the file
	Size   int32
	Global int64 // CommitLog offset
	Body   string
}

// CommitLogRecords walks every message record of the CommitLog under storeDir,
// stopping at the first zero or invalid size (the end of written data).
func CommitLogRecords(storeDir string) ([]RecordPos, error) {
	dir := filepath.Join(storeDir, "commitlog")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if len(e.Name()) == 20 {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []RecordPos
	for _, name := range names {
		var start int64
		if _, err := fmt.Sscanf(name, "%d", &start); err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for off := int64(0); off+8 <= int64(len(b)); {
			size := int32(binary.BigEndian.Uint32(b[off:]))
			magic := binary.BigEndian.Uint32(b[off+4:])
			if size <= 0 || off+int64(size) > int64(len(b)) {
				break
			}
			if magic == magicBlank {
				break // rest of the segment is padding
			}
			if magic != magicMessage {
				return out, fmt.Errorf("%s at %d: magic %#x", path, off, magic)
			}
			rec := b[off : off+int64(size)]
			m, err := store.DecodeMessage(rec, false)
			if err != nil {
				return out, fmt.Errorf("%s at %d: %w", path, off, err)
			}
			out = append(out, RecordPos{File: path, Off: off, Size: size, Global: start + off, Body: string(m.Body)})
			off += int64(size)
		}
	}
	return out, nil
}

// FlipBodyBit flips one bit in the body of the record at fraction frac (0-1) of
// the CommitLog's records and returns it. The record's CRC no longer matches.
func FlipBodyBit(storeDir string, frac float64) (RecordPos, error) {
	recs, err := CommitLogRecords(storeDir)
	if err != nil {
		return RecordPos{}, err
	}
	if len(recs) == 0 {
		return RecordPos{}, ErrNoRecords
	}
	r := recs[min(int(frac*float64(len(recs))), len(recs)-1)]
	f, err := os.OpenFile(r.File, os.O_RDWR, 0)
	if err != nil {
		return r, err
	}
	defer f.Close()
	rec := make([]byte, r.Size)
	if _, err := f.ReadAt(rec, r.Off); err != nil {
		return r, err
	}
	i := bytes.Index(rec, []byte(r.Body)) // the body precedes topic and properties
	if i < 0 || r.Body == "" {
		return r, fmt.Errorf("body of record at %d not found", r.Global)
	}
	rec[i] ^= 0x01
	if _, err := f.WriteAt(rec[i:i+1], r.Off+int64(i)); err != nil {
		return r, err
	}
	return r, f.Sync()
}

// TearTail overwrites the second half of the last record with random bytes and
// writes random garbage after it, like a torn write at a crash. It returns the
// record it tore.
func TearTail(storeDir string, rng *rand.Rand) (RecordPos, error) {
	recs, err := CommitLogRecords(storeDir)
	if err != nil {
		return RecordPos{}, err
	}
	if len(recs) == 0 {
		return RecordPos{}, ErrNoRecords
	}
	r := recs[len(recs)-1]
	f, err := os.OpenFile(r.File, os.O_RDWR, 0)
	if err != nil {
		return r, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return r, err
	}
	at := r.Off + int64(r.Size)/2
	garbage := make([]byte, min(int64(r.Size)/2+256, st.Size()-at)) // never grow the segment
	for i := range garbage {
		garbage[i] = byte(rng.UintN(256))
	}
	if _, err := f.WriteAt(garbage, at); err != nil {
		return r, err
	}
	return r, f.Sync()
}
