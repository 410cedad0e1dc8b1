//go:build !linux

package raftlog

// fadviseDontNeed is a no-op where posix_fadvise is not wired up; rocketraft
// ships for Linux and this only keeps the package compiling elsewhere.
func fadviseDontNeed(int, int64, int64) error { return nil }
