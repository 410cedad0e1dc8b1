package raftlog

import (
	"syscall"

	"github.com/hashicorp/raft-wal/types"
)

// dropCacheFS is raft-wal's file system with each segment's written bytes
// dropped from the page cache once they are fsynced.
//
// Every raft entry is written twice on a node: into the raft log here and into
// the CommitLog by the FSM. The CommitLog's pages are what consumers read; the
// raft log's are read back only on a miss of the log cache in front of it
// (logcache.go: a follower catching up from further back than its newest
// entries, a restart's replay), which the disk can serve. Kept, they grow the
// page cache by the whole write stream; every new page-cache page is memory
// the kernel has to find (and on a virtual machine that has not touched that
// memory yet, a fault in the hypervisor too), and the write that fills it pays
// for it. Measured on this project's 2-core VM (docs/performance.md, eleventh
// pass): 80 KiB pwrites into a page cache that grows cost 140–350 µs of CPU
// each, 40 µs when the pages come from files just freed; raft-wal's pwrite was
// 13 % of a loaded leader's CPU and 36 % of a follower's. Dropping each synced
// range hands its pages straight back for the next write to reuse.
//
// Only whole pages below the synced end are dropped (the kernel rounds the
// range inward), so the partly written tail page stays cached for the next
// append. A failed advice is ignored: it changes what is cached, never what is
// on disk.
type dropCacheFS struct {
	types.VFS
}

func (f dropCacheFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	w, err := f.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return newDropCacheFile(w), nil
}

func (f dropCacheFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	w, err := f.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return newDropCacheFile(w), nil
}

// dropCacheFile tracks the end of what was written since its last Sync and
// drops [dropped, end) from the page cache after the next Sync succeeds.
// raft-wal calls WriteAt and Sync from its single writer, under its lock.
type dropCacheFile struct {
	types.WritableFile
	raw     syscall.RawConn // nil: the file has no descriptor to advise on
	end     int64           // highest offset written
	dropped int64           // everything below was advised away (page aligned)
}

func newDropCacheFile(w types.WritableFile) types.WritableFile {
	d := &dropCacheFile{WritableFile: w}
	// *os.File (OpenWriter) and raft-wal's fs.File (Create, which embeds one).
	if f, ok := w.(interface {
		SyscallConn() (syscall.RawConn, error)
	}); ok {
		if raw, err := f.SyscallConn(); err == nil {
			d.raw = raw
		}
	}
	return d
}

func (d *dropCacheFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := d.WritableFile.WriteAt(p, off)
	if e := off + int64(n); e > d.end {
		d.end = e
	}
	if off < d.dropped {
		// A rewrite of a range already dropped (raft-wal does not do this,
		// but a truncation-and-reopen might): start again from there.
		d.dropped = off &^ (pageSize - 1)
	}
	return n, err
}

func (d *dropCacheFile) Sync() error {
	if err := d.WritableFile.Sync(); err != nil {
		return err
	}
	to := d.end &^ (pageSize - 1)
	if d.raw == nil || to <= d.dropped {
		return nil
	}
	from := d.dropped
	_ = d.raw.Control(func(fd uintptr) {
		_ = fadviseDontNeed(int(fd), from, to-from)
	})
	d.dropped = to
	return nil
}

// pageSize is the granularity the kernel drops at; 4 KiB covers every
// platform this runs on (a larger real page only leaves a little more cached).
const pageSize = 4096
