//go:build !linux

package chaos

import "fmt"

// MountTmpfs is Linux-only; elsewhere it reports ErrMountNotPermitted.
func MountTmpfs(dir string, size int64) error {
	return fmt.Errorf("%w: tmpfs mounts are Linux-only", ErrMountNotPermitted)
}

// ResizeTmpfs is Linux-only.
func ResizeTmpfs(dir string, size int64) error {
	return fmt.Errorf("%w: tmpfs mounts are Linux-only", ErrMountNotPermitted)
}

// Unmount is Linux-only.
func Unmount(dir string) error {
	return fmt.Errorf("%w: tmpfs mounts are Linux-only", ErrMountNotPermitted)
}

// FreeBytes is Linux-only.
func FreeBytes(dir string) (free, total int64, err error) {
	return 0, 0, fmt.Errorf("%w: statfs is only used on Linux", ErrMountNotPermitted)
}
