package raftlog

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

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
// and syncs the directory. It first shrinks each file in steps of
// truncateStep, truncatePause apart: a compaction drops ~1 GiB of segments at
// a time under load, and unlinking them at once made ext4 free all their
// extents in one journal transaction that every node's next fsync waited for,
// which halved the group's throughput for 2–3 s at every snapshot, on the
// leader or a follower alike (docs/performance.md, eighth pass). A crash before that leaves a file raft-wal's
// metadata no longer names, which wal.Open already removes as an orphan
// (wal.go's recovery deletes listed segments missing from the meta). A
// name is never reused (segment IDs only grow), so a queued file cannot be
// confused with a new one. Close waits for the queue.
type lateDeleteFS struct {
	types.VFS
	log hclog.Logger
	// step and pause pace the truncation; step 0 unlinks at once.
	step  int64
	pause time.Duration

	mu      sync.Mutex
	queue   []lateDelete
	running bool
	hurry   bool       // Close is waiting: no more pauses
	idle    *sync.Cond // signalled when the queue drains and the worker stops
}

// Deletion pacing: 8 MiB freed every 20 ms is 400 MiB/s, a compaction's
// gigabyte in under 3 s, between snapshots a minute or more apart.
const (
	truncateStep  = 8 << 20
	truncatePause = 20 * time.Millisecond
)

type lateDelete struct{ dir, name string }

func newLateDeleteFS(vfs types.VFS, log hclog.Logger) *lateDeleteFS {
	f := &lateDeleteFS{VFS: vfs, log: log, step: truncateStep, pause: truncatePause}
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
		f.shrink(filepath.Join(d.dir, d.name))
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

// shrink truncates path to nothing in steps of f.step, pausing between them
// unless Close is waiting. The file is no segment any more (raft-wal's meta
// dropped it before Delete), so a crash part way leaves an orphan, which the
// next open deletes by its name, without reading it. Errors are left to the
// unlink that follows.
func (f *lateDeleteFS) shrink(path string) {
	if f.step <= 0 {
		return
	}
	fh, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return
	}
	for size := st.Size(); size > 0; {
		size = max(size-f.step, 0)
		if err := fh.Truncate(size); err != nil {
			return
		}
		f.mu.Lock()
		hurry := f.hurry
		f.mu.Unlock()
		if !hurry && size > 0 {
			time.Sleep(f.pause)
		}
	}
}

// Close waits until every queued file is deleted, without pausing any more.
func (f *lateDeleteFS) Close() error {
	f.mu.Lock()
	f.hurry = true
	for f.running {
		f.idle.Wait()
	}
	f.mu.Unlock()
	return nil
}
