package raftlog

import (
	"errors"
	"io/fs"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft-wal/types"
)

// lateDeleteFS is raft-wal's file system with segment deletion moved off the
// write path.
//
// raft-wal v0.4.2 deletes the segments a head truncation (raft's log
// compaction after a snapshot) drops while it still holds its write lock: the
// state change's finalizer runs as the old state is released inside
// DeleteRange, and its Delete unlinks each 64 MiB file and fsyncs the
// directory. Every StoreLogs waits behind that. Measured under a paced 7,500
// msgs/s (docs/performance.md, seventh pass), the leader's sends stalled for
// 0.6–1.4 s at each snapshot, as long as the compaction took.
//
// Here Delete queues the file and returns; one goroutine unlinks queued files
// and syncs the directory. A crash before that leaves a file raft-wal's
// metadata no longer names, which wal.Open already removes as an orphan
// (wal.go's recovery deletes listed segments missing from the meta). A
// name is never reused (segment IDs only grow), so a queued file cannot be
// confused with a new one. Close waits for the queue.
type lateDeleteFS struct {
	types.VFS
	log hclog.Logger

	mu      sync.Mutex
	queue   []lateDelete
	running bool
	idle    *sync.Cond // signalled when the queue drains and the worker stops
}

type lateDelete struct{ dir, name string }

func newLateDeleteFS(vfs types.VFS, log hclog.Logger) *lateDeleteFS {
	f := &lateDeleteFS{VFS: vfs, log: log}
	f.idle = sync.NewCond(&f.mu)
	return f
}

// Delete queues dir/name for deletion and returns at once.
func (f *lateDeleteFS) Delete(dir, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, lateDelete{dir, name})
	if !f.running {
		f.running = true
		go f.drain()
	}
	return nil
}

func (f *lateDeleteFS) drain() {
	f.mu.Lock()
	for len(f.queue) > 0 {
		d := f.queue[0]
		f.queue = f.queue[1:]
		f.mu.Unlock()
		// Not there: a reopen's recovery queued an orphan twice.
		if err := f.VFS.Delete(d.dir, d.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// The file stays until the next open removes it as an orphan.
			f.log.Warn("deleting a compacted raft log segment failed; the next open removes it", "file", d.name, "error", err)
		}
		f.mu.Lock()
	}
	f.running = false
	f.idle.Broadcast()
	f.mu.Unlock()
}

// Close waits until every queued file is deleted.
func (f *lateDeleteFS) Close() error {
	f.mu.Lock()
	for f.running {
		f.idle.Wait()
	}
	f.mu.Unlock()
	return nil
}
