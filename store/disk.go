package store

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DiskUsedRatio is the used fraction (0-1) of the file system holding dir, counting
// only the blocks available to unprivileged users as free (what df shows as Use%). The
// broker passes it to CleanExpired.
func DiskUsedRatio(dir string) (float64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("store: statfs: %w", err)
	}
	used := float64(st.Blocks - st.Bfree)
	avail := float64(st.Bavail)
	if used+avail == 0 {
		return 0, nil
	}
	return used / (used + avail), nil
}

// DiskUsedRatio is DiskUsedRatio of the store root.
func (s *Store) DiskUsedRatio() (float64, error) { return DiskUsedRatio(s.cfg.Dir) }

// DiskFreeBytes is the space available to unprivileged users on the file system
// holding dir (df's Avail).
func DiskFreeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("store: statfs: %w", err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// DiskFreeBytes is DiskFreeBytes of the store root.
func (s *Store) DiskFreeBytes() (uint64, error) { return DiskFreeBytes(s.cfg.Dir) }

// DiskTotalBytes is the size of the file system holding the store root (df's Size).
func (s *Store) DiskTotalBytes() (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(s.cfg.Dir, &st); err != nil {
		return 0, fmt.Errorf("store: statfs: %w", err)
	}
	return st.Blocks * uint64(st.Bsize), nil
}

// SegmentSize is the CommitLog segment size this store writes.
func (s *Store) SegmentSize() int64 { return s.cfg.CommitLogSegmentSize }
