package raftlog

import "golang.org/x/sys/unix"

func fadviseDontNeed(fd int, off, n int64) error {
	return unix.Fadvise(fd, off, n, unix.FADV_DONTNEED)
}
