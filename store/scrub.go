package store

import (
	"fmt"
	"sync"
	"time"
)

// The scrub (decision 0019) checks, in the background and at a bounded rate, the
// CommitLog segments that open did not: open checks the last segments (recoverCommitLog)
// and the raft entries from the entry log's floor up, and nothing older, so that a
// start does not grow with retention. The scrub applies the recovery scan's rules
// (checkRecord: structure, BODYCRC, PHYSICALOFFSET) to every record below that point,
// once per open. A record that fails them is corruption of committed data (bit rot, a
// stray write): the scrub reports it on Corrupt and stops, and the process is expected
// to stop serving, as a start that found it would have refused to open.

// scrubChunk is how many bytes the scrub checks between two looks at its pace and at
// stop.
const scrubChunk = 1 << 20

// scrub is the running check of one open (nil fields: none was started).
type scrub struct {
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
}

// ScrubRemaining is how many bytes the scrub of this open has still to check: 0 once
// it has finished, or when none runs (metrics: rocketraft_store_scrub_remaining_bytes).
func (s *Store) ScrubRemaining() int64 { return s.scrubLeft.Load() }

// Corrupt delivers the error of a scrub that found a bad record below the point open
// checked from (at most one, wrapping ErrCorrupt and naming the segment and offset).
// The channel is never closed.
func (s *Store) Corrupt() <-chan error { return s.corrupt }

// startScrub checks the segments below upTo at rate bytes a second (rate <= 0: no
// scrub). A segment that retention deletes meanwhile is passed over.
func (s *Store) startScrub(upTo PhysicalOffset, rate int64) {
	if rate <= 0 {
		return
	}
	files := s.commitLog.mfq.snapshot()
	if len(files) == 0 || files[0].start >= int64(upTo) {
		return
	}
	sc := &scrub{stop: make(chan struct{}), done: make(chan struct{})}
	s.scrub = sc
	var total int64
	for _, f := range files {
		if f.start < int64(upTo) {
			total += f.size
		}
	}
	s.scrubLeft.Store(total)
	go func() {
		defer close(sc.done)
		began := time.Now()
		var checked int64
		for _, f := range files {
			if f.start >= int64(upTo) {
				break
			}
			stopped, err := scrubSegment(f, rate, began, &checked, sc.stop)
			s.scrubLeft.Store(max(0, total-checked))
			if err != nil {
				s.log.Error("scrub found a corrupt record in the committed CommitLog; this node must stop serving",
					"segment", fileName(f.start), "error", err)
				select {
				case s.corrupt <- err:
				default:
				}
				return
			}
			if stopped {
				return
			}
		}
		s.scrubLeft.Store(0)
		s.log.Info("scrub checked the CommitLog below the recovery scan", "bytes", checked, "to", upTo, "took", time.Since(began))
	}()
}

// stopScrub stops the scrub and waits for it (Close, and a reset that replaces the
// segments it walks).
func (s *Store) stopScrub() {
	sc := s.scrub
	if sc == nil {
		return
	}
	sc.stopped.Do(func() { close(sc.stop) })
	<-sc.done
}

// scrubSegment checks f's records, adding what it checked to *checked and sleeping so
// that *checked bytes since began stay within rate. It reports whether stop closed
// first, or an error wrapping ErrCorrupt. A segment being deleted (acquire fails) is
// passed over.
func scrubSegment(f *mappedFile, rate int64, began time.Time, checked *int64, stop <-chan struct{}) (stopped bool, err error) {
	if !f.acquire() {
		return false, nil
	}
	defer f.release()
	wrote := f.wrotePosition.Load()
	b := f.data[:wrote]
	pos, paced := 0, 0
	for pos < len(b) {
		off := PhysicalOffset(f.start + int64(pos))
		size, kind, err := checkRecord(b[pos:], off)
		switch {
		case err != nil:
			return false, fmt.Errorf("%w (segment %s, written to %d)", err, fileName(f.start), f.start+wrote)
		case kind == recordEnd:
			// Nothing more was written here: only zeros may follow in the written
			// part of a segment below the recovery scan.
			if lastNonZero(b[pos:]) != 0 {
				return false, corruptf("segment %s: bytes after the records' end at %d", fileName(f.start), off)
			}
			pos = len(b)
		case kind == recordBlank:
			pos = len(b)
		default:
			pos += size
		}
		if pos-paced >= scrubChunk || pos == len(b) {
			*checked += int64(pos - paced)
			paced = pos
			due := began.Add(time.Duration(float64(*checked) / float64(rate) * float64(time.Second)))
			select {
			case <-stop:
				return true, nil
			case <-time.After(max(0, time.Until(due))):
			}
		}
	}
	return false, nil
}
