package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRunning is returned by Proc.Start when the process is already running.
var ErrRunning = errors.New("process already running")

// Proc is one rocketraft process (nameserver or broker node) whose output is
// appended to its own log file across restarts.
type Proc struct {
	Name    string
	Bin     string
	Args    []string
	LogPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{} // closed when the current incarnation exited
	exitErr  error
	paused   bool
	restarts int
}

// Start launches a new incarnation.
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
	fmt.Fprintf(logf, "=== chaos harness: start %s at %s\n", p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.Bin, p.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
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
	p.cmd, p.done, p.paused = cmd, done, false
	p.restarts++
	return nil
}

// Running reports whether the current incarnation is alive (paused counts as alive).
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

// Exited returns a channel closed when the current incarnation exits.
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

func (p *Proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// Kill sends SIGKILL (resuming a paused process first is unnecessary: SIGKILL
// works on stopped processes) and waits until the process is gone.
func (p *Proc) Kill() {
	p.signal(syscall.SIGKILL)
	<-p.Exited()
}

// Stop sends SIGTERM (after SIGCONT if paused), waits up to grace, then SIGKILLs.
// It reports whether the process exited on its own.
func (p *Proc) Stop(grace time.Duration) bool {
	if !p.Running() {
		return true
	}
	p.signal(syscall.SIGCONT)
	p.signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
		return true
	case <-time.After(grace):
		p.Kill()
		return false
	}
}

// Pause sends SIGSTOP.
func (p *Proc) Pause() {
	p.signal(syscall.SIGSTOP)
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

// Resume sends SIGCONT.
func (p *Proc) Resume() {
	p.signal(syscall.SIGCONT)
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
}

// RSSBytes reads VmRSS of the current incarnation from /proc (Linux); 0 when unknown.
func (p *Proc) RSSBytes() int64 {
	pid := p.Pid()
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Tail returns the last n lines of the log.
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

// LogContains reports whether the log contains s (used to find a clear refusal).
func (p *Proc) LogContains(s string) bool {
	b, err := os.ReadFile(p.LogPath)
	return err == nil && bytes.Contains(b, []byte(s))
}

// BuildBinary compiles cmd/rocketraft of the module rooted at repoRoot into dir.
func BuildBinary(repoRoot, dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go tool not in PATH: %w", err)
	}
	out := filepath.Join(dir, "rocketraft")
	cmd := exec.Command(goTool, "build", "-o", out, "./cmd/rocketraft")
	cmd.Dir = repoRoot
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/rocketraft: %w\n%s", err, buf.String())
	}
	return out, nil
}
