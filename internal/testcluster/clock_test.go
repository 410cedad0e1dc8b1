package testcluster

import (
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
)

func TestClocksJumpOneNodeOnly(t *testing.T) {
	var chained bool
	c := NewClocks(func(*node.Config) { chained = true })
	a, b := node.Config{ID: "n0"}, node.Config{ID: "n1"}
	c.Configure(&a)
	c.Configure(&b)
	if !chained || a.Now == nil || b.Now == nil {
		t.Fatalf("Configure set Now %v %v, chained %v", a.Now != nil, b.Now != nil, chained)
	}
	if off := c.Jump("n0", 10*time.Minute); off != 10*time.Minute {
		t.Fatalf("offset after +10m: %v", off)
	}
	c.Jump("n0", -25*time.Minute)
	real := time.Now()
	if d := a.Now().Sub(real); d < -15*time.Minute-time.Second || d > -15*time.Minute+time.Second {
		t.Errorf("n0 is %v off the real time, want -15m", d)
	}
	if d := b.Now().Sub(real); d < -time.Second || d > time.Second {
		t.Errorf("n1 moved with n0: %v off", d)
	}
	// Wall reading only: a monotonic part would hide the step from Sub.
	if s := a.Now().String(); strings.Contains(s, "m=") {
		t.Errorf("reading %q carries a monotonic clock", s)
	}
	c.Reset()
	if off := c.Offset("n0"); off != 0 {
		t.Errorf("offset after Reset: %v", off)
	}
}
