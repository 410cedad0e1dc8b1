package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// newTestSupervisor runs /bin/sh scripts in place of this binary.
func newTestSupervisor(t *testing.T) (*devSupervisor, *proctest.SyncBuffer, chan os.Signal) {
	t.Helper()
	out := &proctest.SyncBuffer{}
	s := newDevSupervisor("/bin/sh", t.TempDir(), out)
	s.delay = 20 * time.Millisecond
	stop := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { s.wait(stop); close(done) }()
	t.Cleanup(func() {
		stop <- os.Interrupt
		<-done
		s.stopAll()
	})
	return s, out, stop
}

func waitOutput(t *testing.T, out *proctest.SyncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("dev did not print %q; it printed:\n%s", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A process that exits is started again, and one that keeps exiting right
// after its start is given up on after devQuickExitLimit exits, saying why.
func TestDevRestartsAnExitedProcessThenGivesUp(t *testing.T) {
	s, out, _ := newTestSupervisor(t)
	if _, err := s.start("n1", true, nil, "-c", "exit 3"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "not starting it again: it exited 3 times in a row")
	for _, want := range []string{"n1 exited (exit status 3)", "starting it again in 20ms", "n1 started again"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dev did not print %q:\n%s", want, out.String())
		}
	}
	time.Sleep(100 * time.Millisecond) // no further run may come
	if n := strings.Count(out.String(), "started again"); n != devQuickExitLimit-1 {
		t.Fatalf("started again %d times, want %d:\n%s", n, devQuickExitLimit-1, out.String())
	}
}

// The console is not restarted; stopAll ends what runs, and nothing is
// started after it.
func TestDevDoesNotRestartTheConsoleAndStopsEverything(t *testing.T) {
	s, out, stop := newTestSupervisor(t)
	if _, err := s.start("console", false, nil, "-c", "exit 0"); err != nil {
		t.Fatal(err)
	}
	node, err := s.start("n0", true, nil, "-c", "sleep 60")
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, out, "console exited after")
	if !strings.Contains(out.String(), "the cluster keeps running") || strings.Contains(out.String(), "console started again") {
		t.Fatalf("dev output:\n%s", out.String())
	}
	stop <- os.Interrupt
	time.Sleep(50 * time.Millisecond) // wait returns
	started := time.Now()
	cmd := node.cmd
	s.stopAll()
	if took := time.Since(started); took > 10*time.Second {
		t.Fatalf("stopAll took %v for a process that ends on SIGTERM", took)
	}
	if cmd.ProcessState == nil {
		t.Fatal("n0 still runs after stopAll")
	}
}
