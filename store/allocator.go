package store

import (
	"path/filepath"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// allocator creates the next CommitLog segment in the background (RocketMQ's
// AllocateMappedFileService), so that rolling over does not stall an append behind
// creating, pre-zeroing and syncing a large file. createMappedFile writes the file as
// <name>.tmp and renames it, so a crash never leaves a half-created segment under a
// real name; a complete but never adopted one is removed by recovery (it starts at or
// beyond the valid end).
//
// Concurrency: request and take may be called from any goroutine; at most one
// allocation is in flight.
type allocator struct {
	dir     string
	size    int64
	preZero bool
	// warmAhead is how many bytes at the start of each created segment are
	// populated into the page cache (warmer.go); 0 = none.
	warmAhead int64
	log       hclog.Logger
	// hook is the store's IOHook (nil in production), asked before each creation.
	hook IOHook

	mu sync.Mutex
	// pending is the allocation requested last, nil when none.
	pending *allocation
	closed  bool
	wg      sync.WaitGroup
	// quit is closed by close; it stops the warming of a created segment.
	quit chan struct{}
}

type allocation struct {
	start int64
	done  chan struct{}
	// mf and err are set before done is closed.
	mf  *mappedFile
	err error
}

func newAllocator(dir string, size int64, preZero bool, log hclog.Logger) *allocator {
	return &allocator{dir: dir, size: size, preZero: preZero, log: log, quit: make(chan struct{})}
}

// request starts creating the segment at start unless that is already under way.
// An older pending allocation for another start is discarded.
func (a *allocator) request(start int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || (a.pending != nil && a.pending.start == start) {
		return
	}
	if old := a.pending; old != nil {
		a.discardLocked(old)
	}
	al := &allocation{start: start, done: make(chan struct{})}
	a.pending = al
	a.wg.Add(1)
	hook := a.hook // read under mu: setHook may run while a creation is in flight
	go func() {
		defer a.wg.Done()
		if al.err = hook.call(IOCall{Op: IOCreate, Path: filepath.Join(a.dir, fileName(al.start))}); al.err == nil {
			al.mf, al.err = createMappedFile(a.dir, al.start, a.size, fillOf(a.preZero))
		}
		if al.err != nil {
			a.log.Warn("pre-allocating segment failed; will create it synchronously", "segment", fileName(al.start), "error", al.err)
		}
		close(al.done)
		// The segment is ready to be taken; warm its first window meanwhile, so
		// the appends after the roll-over copy into populated pages (warmer.go).
		if a.warmAhead > 0 && al.mf != nil && al.mf.acquire() {
			populate(al.mf, a.warmAhead, a.quit, a.log)
			al.mf.release()
		}
	}()
}

// take returns the pre-allocated segment for start, waiting for it if it is still
// being created. ok is false when there is none (or it failed); the caller then
// creates the file itself.
func (a *allocator) take(start int64) (mf *mappedFile, ok bool) {
	a.mu.Lock()
	al := a.pending
	if al == nil {
		a.mu.Unlock()
		return nil, false
	}
	a.pending = nil
	if al.start != start {
		a.discardLocked(al)
		a.mu.Unlock()
		return nil, false
	}
	a.mu.Unlock()
	<-al.done
	if al.err != nil {
		return nil, false
	}
	return al.mf, true
}

// discardLocked destroys an allocation nobody will adopt, waiting for it to complete.
// It is synchronous on purpose: a later synchronous creation of a file with the same
// name must never race with this removal.
func (a *allocator) discardLocked(al *allocation) {
	<-al.done
	if al.mf != nil {
		if err := al.mf.destroy(); err != nil {
			a.log.Warn("removing unused pre-allocated segment", "segment", fileName(al.start), "error", err)
		}
	}
}

// close waits for in-flight work and removes a segment that was never adopted.
func (a *allocator) close() {
	a.mu.Lock()
	if !a.closed {
		close(a.quit)
	}
	a.closed = true
	if al := a.pending; al != nil {
		a.pending = nil
		a.discardLocked(al)
	}
	a.mu.Unlock()
	a.wg.Wait()
}
