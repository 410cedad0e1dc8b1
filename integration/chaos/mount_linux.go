//go:build linux

package chaos

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// MountTmpfs mounts a tmpfs of size bytes on dir (created if missing): a file
// system that runs out of space at a chosen size, for disk-full scenarios. It
// needs CAP_SYS_ADMIN; without it the error wraps ErrMountNotPermitted.
func MountTmpfs(dir string, size int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mount tmpfs: %w", err)
	}
	err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)+",mode=0755")
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return fmt.Errorf("%w: mount tmpfs on %s: %w", ErrMountNotPermitted, dir, err)
	}
	if err != nil {
		return fmt.Errorf("mount tmpfs of %d bytes on %s: %w", size, dir, err)
	}
	return nil
}

// ResizeTmpfs changes the size of the tmpfs mounted on dir in place (files stay):
// growing it is how a scenario "frees space" without touching the broker's files.
func ResizeTmpfs(dir string, size int64) error {
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT, "size="+strconv.FormatInt(size, 10)); err != nil {
		return fmt.Errorf("resize tmpfs on %s to %d bytes: %w", dir, size, err)
	}
	return nil
}

// Unmount unmounts dir, lazily (MNT_DETACH) when it is still busy, so a cleanup
// never leaves a mount behind because a process still held a file open.
func Unmount(dir string) error {
	err := unix.Unmount(dir, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(dir, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}

// FreeBytes is the space left for unprivileged writers on the file system
// holding dir (statfs f_bavail), and its total size.
func FreeBytes(dir string) (free, total int64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), int64(st.Blocks) * int64(st.Bsize), nil
}
