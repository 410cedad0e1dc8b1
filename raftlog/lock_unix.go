//go:build unix

package raftlog

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dirLock is an exclusive flock on <dir>/LOCK, held for the life of a Stores.
// flock locks belong to the open file description, so a second OpenStores on the
// same directory conflicts even inside one process.
type dirLock struct {
	f *os.File
}

func lockDir(path string) (*dirLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, ErrDirLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &dirLock{f: f}, nil
}

// Close releases the lock (closing the descriptor drops the flock).
func (l *dirLock) Close() error {
	return l.f.Close()
}
