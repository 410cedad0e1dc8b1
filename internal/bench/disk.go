package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"
)

// Why a disk probe: every acknowledged send waits for an fdatasync on the
// leader and on a follower (design.md §2), so a node's send latency has the
// disk's durable-append latency under it, and no broker change moves that
// floor. On the shared VMs we measure on, one sync producer ran at 3,348
// msgs/s in one hour and 1,173 in another with the broker unchanged, and in the
// slow hour durable appends were 0.45 of its 0.75 ms per send
// (docs/performance.md, twenty-ninth and thirty-first passes). `rocketraft
// bench disk` measures that floor the way the raft log pays it: pwrite into a
// segment whose blocks are reserved with fallocate and never written, then
// fdatasync, one append at a time per appender. Both perf harnesses run it
// before their rounds, so a report says how fast the disk was while its
// numbers were taken.

// Disk probe bounds. A segment is rolled over like the raft log's (a new file
// with unwritten blocks) so a long probe never holds more than diskSegment
// bytes of disk.
const (
	diskSegment = 64 << 20
	DiskMinSize = 512
	DiskMaxSize = 16 << 20
	// DiskMaxParallel bounds --parallel: each appender holds a 64 MiB file.
	DiskMaxParallel = 64
	diskFilePrefix  = ".rocketraft-disk-probe-"
)

// DiskOptions configures a disk probe.
type DiskOptions struct {
	Dir      string        // the directory measured; the probe's file is made in it and removed
	Size     int           // bytes per append, DiskMinSize to DiskMaxSize
	Count    int           // appends; 0 = run for Duration
	Duration time.Duration // used when Count is 0
	Parallel int           // appenders at once, each on its own file; 0 = 1
	Out      io.Writer     // the summary text; nil = none
	JSON     io.Writer     // one JSON line with the result; nil = none
}

// DiskResult is what a disk probe measured.
type DiskResult struct {
	Appends int64
	Bytes   int64
	Elapsed time.Duration
	Append  Stats // one pwrite and its fdatasync
	Sync    Stats // the fdatasync alone
}

// AppendsPerSec is the rate of durable appends, over all appenders.
func (r DiskResult) AppendsPerSec() float64 { return perSec(r.Appends, r.Elapsed) }

func (o DiskOptions) check() error {
	if o.Dir == "" {
		return errors.New("bench disk: --dir is empty: name the directory to measure (the broker's storePathRootDir)")
	}
	if o.Size < DiskMinSize || o.Size > DiskMaxSize {
		return fmt.Errorf("bench disk: --size %d: must be %d to %d bytes", o.Size, DiskMinSize, DiskMaxSize)
	}
	if o.Parallel < 0 || o.Parallel > DiskMaxParallel {
		return fmt.Errorf("bench disk: --parallel %d: must be 1 to %d", o.Parallel, DiskMaxParallel)
	}
	if o.Count < 0 {
		return fmt.Errorf("bench disk: --count %d: must be 0 (run for --duration) or more", o.Count)
	}
	if o.Count == 0 && o.Duration <= 0 {
		return fmt.Errorf("bench disk: --duration %s: must be positive when --count is 0", o.Duration)
	}
	return nil
}

// Disk measures Dir's durable-append latency: Size-byte pwrites at increasing
// offsets of a fallocated file, each followed by fdatasync, until Count appends
// are done, Duration has passed or ctx ends. Parallel appenders do this at
// once, each on a file of its own, as the nodes of a group sharing one disk
// do; Count is over all of them. The files are removed on return.
func Disk(ctx context.Context, o DiskOptions) (DiskResult, error) {
	if err := o.check(); err != nil {
		return DiskResult{}, err
	}
	buf := make([]byte, o.Size)
	for i := range buf {
		buf[i] = byte(i*7 + 1) // not zeros: a compressing or deduplicating layer must not skip them
	}
	var taken atomic.Int64 // appends handed out, for Count
	take := func() bool { return o.Count == 0 || taken.Add(1) <= int64(o.Count) }
	start := time.Now()
	deadline := start.Add(o.Duration)
	if o.Count > 0 {
		deadline = time.Time{}
	}
	workers := make([]diskAppender, max(o.Parallel, 1))
	runCtx, stop := context.WithCancel(ctx) // the first appender to fail stops the others
	defer stop()
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.appends, w.syncs = newHistogram(), newHistogram()
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.err = w.run(runCtx, o.Dir, buf, deadline, take); w.err != nil {
				stop()
			}
		}()
	}
	wg.Wait()
	res := DiskResult{Elapsed: time.Since(start)}
	appends, syncs := newHistogram(), newHistogram()
	var errs []error
	for i := range workers {
		w := &workers[i]
		res.Appends += w.n
		appends.Merge(w.appends)
		syncs.Merge(w.syncs)
		errs = append(errs, w.err)
	}
	res.Bytes = res.Appends * int64(o.Size)
	res.Append, res.Sync = statsOf(appends), statsOf(syncs)
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	if o.Out != nil {
		writeDiskSummary(o.Out, o, res)
	}
	if o.JSON != nil {
		if err := writeDiskJSON(o.JSON, o, res); err != nil {
			return res, fmt.Errorf("bench disk: write results: %w", err)
		}
	}
	return res, nil
}

// diskAppender is one appender of a probe, with its own file and histograms.
type diskAppender struct {
	appends, syncs *hdrhistogram.Histogram
	n              int64
	err            error
}

// run appends buf until take says no, deadline (unless zero) passes or ctx ends.
func (w *diskAppender) run(ctx context.Context, dir string, buf []byte, deadline time.Time, take func() bool) error {
	seg := &diskSegmentFile{dir: dir, size: diskSegment}
	defer seg.close()
	for ctx.Err() == nil && (deadline.IsZero() || time.Now().Before(deadline)) && take() {
		f, off, err := seg.next(len(buf))
		if err != nil {
			return err
		}
		t0 := time.Now()
		if _, err := f.WriteAt(buf, off); err != nil {
			return fmt.Errorf("bench disk: write %s: %w", f.Name(), err)
		}
		t1 := time.Now()
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return fmt.Errorf("bench disk: fdatasync %s: %w", f.Name(), err)
		}
		t2 := time.Now()
		v, _ := histValue(t2.Sub(t0))
		w.appends.RecordValue(v) //nolint:errcheck // histValue keeps v in range
		v, _ = histValue(t2.Sub(t1))
		w.syncs.RecordValue(v) //nolint:errcheck // as above
		w.n++
	}
	return nil
}

// diskSegmentFile is the probe's current file and the next offset in it.
type diskSegmentFile struct {
	dir  string
	size int64 // bytes per file: diskSegment
	f    *os.File
	off  int64
}

// next returns where the next size-byte append goes, rolling to a fresh
// fallocated file when the current one is full.
func (s *diskSegmentFile) next(size int) (*os.File, int64, error) {
	if s.f != nil && s.off+int64(size) <= s.size {
		off := s.off
		s.off += int64(size)
		return s.f, off, nil
	}
	s.close()
	f, err := os.CreateTemp(s.dir, diskFilePrefix+"*")
	if err != nil {
		return nil, 0, fmt.Errorf("bench disk: %w", err)
	}
	s.f, s.off = f, int64(size)
	if err := unix.Fallocate(int(f.Fd()), 0, 0, s.size); err != nil {
		return nil, 0, fmt.Errorf("bench disk: fallocate %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil { // the allocation is not what the appends measure
		return nil, 0, fmt.Errorf("bench disk: fsync %s: %w", f.Name(), err)
	}
	return f, 0, nil
}

func (s *diskSegmentFile) close() {
	if s.f == nil {
		return
	}
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
	s.f = nil
}

func writeDiskSummary(w io.Writer, o DiskOptions, r DiskResult) {
	fmt.Fprintf(w, "disk: %d appends of %d bytes, each pwrite + fdatasync, %d at a time, in %s: %.0f appends/s\n",
		r.Appends, o.Size, max(o.Parallel, 1), round(r.Elapsed), r.AppendsPerSec())
	for _, s := range []struct {
		name string
		st   Stats
	}{{"append", r.Append}, {"fdatasync", r.Sync}} {
		fmt.Fprintf(w, "  %-9s p50 %s  p90 %s  p99 %s  max %s\n", s.name,
			round(s.st.P50), round(s.st.P90), round(s.st.P99), round(s.st.Max))
	}
}

// DiskJSON is the JSON line of a disk probe.
type DiskJSON struct {
	Type          string    `json:"type"` // "disk"
	Dir           string    `json:"dir"`
	Size          int       `json:"size"`
	Parallel      int       `json:"parallel"`
	Appends       int64     `json:"appends"`
	ElapsedS      float64   `json:"elapsed_s"`
	AppendsPerSec float64   `json:"appends_per_s"`
	Append        JSONStats `json:"append"`
	Sync          JSONStats `json:"fdatasync"`
}

func writeDiskJSON(w io.Writer, o DiskOptions, r DiskResult) error {
	b, err := json.Marshal(DiskJSON{Type: "disk", Dir: o.Dir, Size: o.Size, Parallel: max(o.Parallel, 1), Appends: r.Appends,
		ElapsedS: r.Elapsed.Seconds(), AppendsPerSec: r.AppendsPerSec(),
		Append: jsonStatsOf(r.Append), Sync: jsonStatsOf(r.Sync)})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
