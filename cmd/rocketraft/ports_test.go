package main

import (
	"testing"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// freePorts is n distinct loopback ports that nothing listens on right now, for
// a test that must name its ports before it listens (config files, raft peers).
// proctest picks them below the ephemeral range, each with the port two below
// (a broker's VIP channel) free too.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := proctest.FreePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}
