package main

import (
	"net"
	"testing"
)

// freePort is a TCP port on 127.0.0.1 that nothing listens on right now, for a
// test that must name its port before it listens (config files, raft peers).
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
