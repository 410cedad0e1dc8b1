package store

import (
	"errors"
	"runtime"
	"sync"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// Why the CommitLog's pages are populated ahead of the writer.
//
// Appends copy into the mapping of a segment whose blocks are reserved but never
// written (fallocate). The first write to a page that is not in the page cache
// faults, and the kernel's fault path reads ahead around it: it adds a large folio
// and zero-fills all of it (the extent is unwritten) before the copy goes on. On
// the machines we measure, that is one 18-50 ms stall in the FSM's apply about
// every 8 MB of CommitLog, on every node, and every entry behind it waits for it
// (docs/performance.md, thirteenth pass). The zeroing has to happen somewhere;
// the warmer does it on its own goroutine, a window ahead of the write position,
// with MADV_POPULATE_WRITE: the pages are faulted in writable, as if written,
// without touching their bytes, so the appends then take no page fault at all.
// MADV_POPULATE_READ was measured too: it moves the zeroing but leaves every page
// mapped read-only, and the write-protect fault per page made the apply slower
// than faulting the pages in itself (sync16 -14 %).
//
// The populated pages are dirty zeros until the writer reaches them, and the
// kernel's periodic writeback may write them out before the data arrives; so the
// window is small (4 MiB: about 100 ms of appends at the highest rate we measure),
// and at most that many bytes of zeros go to disk per writeback pass. The
// pre-allocator warms the first window of each new segment the same way, so a
// roll-over lands on warm pages too.
//
// Config.WarmAhead sets the window (DefaultWarmAhead); the warmer wakes once a
// quarter of it has been written, so each round populates about a quarter.
const warmChunk = 2 << 20 // bytes per populate call, so a stop is seen within one chunk

// warmer keeps the last CommitLog segment populated window bytes ahead of its
// write position.
//
// Concurrency: nudge is called by the writer (it never blocks); run is the
// warmer's own goroutine; stop may be called once from anywhere.
type warmer struct {
	mfq    *mappedFileQueue
	window int64
	refill int64 // wake when fewer populated bytes than this are left ahead
	log    hclog.Logger
	kick   chan struct{}
	quit   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

func newWarmer(mfq *mappedFileQueue, window int64, log hclog.Logger) *warmer {
	w := &warmer{mfq: mfq, window: window, refill: window - window/4, log: log,
		kick: make(chan struct{}, 1), quit: make(chan struct{})}
	w.wg.Add(1)
	go w.run()
	w.nudgeAlways()
	return w
}

// nudge wakes the warmer when fewer than refill populated bytes are left ahead
// of pos in f. Called by the writer after it published pos; an atomic load and a
// compare when there is nothing to do.
func (w *warmer) nudge(f *mappedFile, pos int64) {
	if warmed := f.warmed.Load(); warmed-pos < w.refill && warmed < f.size {
		w.nudgeAlways()
	}
}

func (w *warmer) nudgeAlways() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *warmer) run() {
	defer w.wg.Done()
	for {
		select {
		case <-w.quit:
			return
		case <-w.kick:
		}
		f := w.mfq.last()
		if f == nil || !f.acquire() {
			continue
		}
		populate(f, f.wrotePosition.Load()+w.window, w.quit, w.log)
		f.release()
	}
}

// stop ends the warmer and waits for it.
func (w *warmer) stop() {
	w.once.Do(func() { close(w.quit) })
	w.wg.Wait()
}

// populate faults f's pages from its warmed mark (or its write position, if that
// is further) up to `to` into the page cache, warmChunk at a time, and advances the
// mark. It stops early when quit is closed or f is being destroyed. The caller
// holds a reference to f. Failing to populate costs only latency (the writer's own
// faults do the work), so errors are logged at debug level and end the call.
func populate(f *mappedFile, to int64, quit <-chan struct{}, log hclog.Logger) {
	to = min(to, f.size)
	from := max(f.warmed.Load(), f.wrotePosition.Load()) / pageSize * pageSize
	for from < to {
		select {
		case <-quit:
			return
		default:
		}
		if f.closing.Load() {
			return
		}
		end := min(from+warmChunk, to)
		if err := populateRange(f.data[from:end]); err != nil {
			log.Debug("populating CommitLog pages ahead of the writer failed; appends fault them in themselves", "segment", fileName(f.start), "error", err)
			return
		}
		from = end
		f.raiseWarmed(end)
	}
}

// populateRange faults b's pages in writable without changing a byte (the writer
// may be copying into the first of them concurrently). Kernels before 5.14 have no
// MADV_POPULATE_WRITE; there it reads one byte per page, which at least brings
// the pages into the page cache. It never writes: a read-modify-write here could
// overwrite bytes the writer just copied.
func populateRange(b []byte) error {
	err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	if !errors.Is(err, unix.EINVAL) {
		return err
	}
	var sum byte
	for i := 0; i < len(b); i += pageSize {
		sum += b[i]
	}
	runtime.KeepAlive(sum) // the reads must happen
	return nil
}

const pageSize = 4096
