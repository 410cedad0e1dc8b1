//go:build !unix

package raftlog

// dirLock is a no-op where flock is unavailable; rocketraft ships for Linux and
// this only keeps the package compiling elsewhere.
type dirLock struct{}

func lockDir(string) (*dirLock, error) { return &dirLock{}, nil }

func (*dirLock) Close() error { return nil }
