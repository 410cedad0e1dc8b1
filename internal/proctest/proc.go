package proctest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRunning is returned by Proc.Start when the current incarnation is still alive.
var ErrRunning = errors.New("process already running")

// Proc is one rocketraft process (nameserver or broker node). Every incarnation
// runs Bin with the same Args, so a restart comes back on the same config file, and
// so on the same ports and data directory; its stdout and stderr are appended to
// LogPath, which therefore holds every incarnation in order.
//
// Set the exported fields before the first Start and leave them alone afterwards
// (as with exec.Cmd). The methods are safe to call from any goroutine.
type Proc struct {
	Name    string // shown in errors and log headers, e.g. "namesrv" or "n0"
	Bin     string // the rocketraft binary
	Args    []string
	LogPath string
	Env     []string // added to this process's environment ("KEY=value")

	mu      sync.Mutex
	cmd     *exec.Cmd     // current incarnation; nil before the first Start
	done    chan struct{} // closed when the current incarnation exited
	exitErr error         // Wait's result of the last incarnation that exited
}

// Start launches a new incarnation. It fails with ErrRunning while the previous
// one is alive.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s (pid %d): %w", p.Name, p.cmd.Process.Pid, ErrRunning)
		}
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "=== proctest: start %s at %s\n", p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if len(p.Env) > 0 {
		cmd.Env = append(os.Environ(), p.Env...)
	}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		err := cmd.Wait()
		_ = logf.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// Running reports whether the current incarnation is alive (a process stopped
// with SIGSTOP counts as alive).
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Pid of the current incarnation, 0 if never started.
func (p *Proc) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited returns a channel closed when the current incarnation exits (already
// closed if the process was never started).
func (p *Proc) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return p.done
}

// ExitErr is the exit status of the last incarnation that exited.
func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// Signal sends sig to the current incarnation; before the first Start it does
// nothing. The error is os.Process.Signal's (os.ErrProcessDone once it exited).
func (p *Proc) Signal(sig os.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	return cmd.Process.Signal(sig)
}

// Kill sends SIGKILL (kill -9; it works on a process stopped with SIGSTOP too)
// and waits until the process is gone.
func (p *Proc) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	<-p.Exited()
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then SIGKILLs it
// and waits. A process stopped with SIGSTOP is sent SIGCONT first, so that it can
// handle the SIGTERM. Stop reports whether the process exited on its own within
// grace (true as well when it was not running).
func (p *Proc) Stop(grace time.Duration) bool {
	if !p.Running() {
		return true
	}
	_ = p.Signal(syscall.SIGCONT)
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
		return true
	case <-time.After(grace):
		p.Kill()
		return false
	}
}

// StopAll stops every process in parallel, each with Stop(grace), and returns
// when all are gone. Nil entries are skipped.
func StopAll(grace time.Duration, procs ...*Proc) {
	var wg sync.WaitGroup
	for _, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace) }()
	}
	wg.Wait()
}

// Tail returns the last n lines of the log, or a note saying why there is none.
func (p *Proc) Tail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogContains reports whether the log (every incarnation) contains s.
func (p *Proc) LogContains(s string) bool {
	b, err := os.ReadFile(p.LogPath)
	return err == nil && bytes.Contains(b, []byte(s))
}
