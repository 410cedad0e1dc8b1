package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	// devRestartDelay is how long dev waits before it starts a process that
	// exited again: long enough to watch the group elect a new leader without
	// the killed node, short enough not to wait for it by hand.
	devRestartDelay = 5 * time.Second
	// devQuickExit is how soon after its start an exit counts as quick, and
	// devQuickExitLimit how many quick exits in a row end the restarts: a
	// node that cannot start (a refused config, corrupt data, a port taken)
	// says so in its log, and starting it again would only repeat that.
	devQuickExit      = 30 * time.Second
	devQuickExitLimit = 3
)

// devProc is one process dev runs, restarted when it exits (but the console).
type devProc struct {
	name    string
	args    []string
	env     []string // nil: dev's own environment
	restart bool
	cmd     *exec.Cmd
	started time.Time
	quick   int // exits in a row within devQuickExit of their start
}

// devExit reports that one run of a process ended.
type devExit struct {
	p   *devProc
	cmd *exec.Cmd
	err error
}

// devSupervisor starts dev's processes, each with its log under logDir, and
// starts a node, or the nameserver, again after it exits. A three-node group
// outlives one node, so `kill -9` of the leader under `make run` shows a
// failover, then the old leader rejoining as a follower, as in production
// under a service manager; it no longer stops the whole cluster.
type devSupervisor struct {
	self    string
	logDir  string
	out     io.Writer // what dev prints
	procs   []*devProc
	exited  chan devExit
	restart chan *devProc
	delay   time.Duration
}

func newDevSupervisor(self, logDir string, out io.Writer) *devSupervisor {
	return &devSupervisor{self: self, logDir: logDir, out: out, exited: make(chan devExit, 16),
		restart: make(chan *devProc, 16), delay: devRestartDelay}
}

// start runs a new process; restart says whether it is started again when it exits.
func (s *devSupervisor) start(name string, restart bool, env []string, args ...string) (*devProc, error) {
	p := &devProc{name: name, args: args, env: env, restart: restart}
	if err := s.run(p); err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}

// run starts one run of p, appending to its log.
func (s *devSupervisor) run(p *devProc) error {
	logf, err := os.OpenFile(s.logPath(p), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	c := exec.Command(s.self, p.args...)
	c.Stdout, c.Stderr = logf, logf
	c.Env = p.env
	if err := c.Start(); err != nil {
		_ = logf.Close()
		return fmt.Errorf("dev: start %s: %w", p.name, err)
	}
	p.cmd, p.started = c, time.Now()
	go func() {
		err := c.Wait()
		_ = logf.Close()
		s.exited <- devExit{p: p, cmd: c, err: err}
	}()
	return nil
}

func (s *devSupervisor) logPath(p *devProc) string {
	return filepath.Join(s.logDir, p.name+".log")
}

// handleExit reports an exit and schedules the restart, unless p keeps
// exiting right after its start or is not restarted at all.
func (s *devSupervisor) handleExit(e devExit) {
	p := e.p
	if e.cmd != p.cmd {
		return // an older run
	}
	p.cmd = nil
	how := "exited"
	if e.err != nil {
		how = fmt.Sprintf("exited (%v)", e.err)
	}
	ran := time.Since(p.started).Round(time.Second)
	if !p.restart {
		fmt.Fprintf(s.out, "\n%s %s after %v (see %s); the cluster keeps running\n", p.name, how, ran, s.logPath(p))
		return
	}
	if time.Since(p.started) < devQuickExit {
		p.quick++
	} else {
		p.quick = 1
	}
	if p.quick >= devQuickExitLimit {
		fmt.Fprintf(s.out, "\n%s %s after %v (see %s); not starting it again: it exited %d times in a row within %v of its start\n",
			p.name, how, ran, s.logPath(p), p.quick, devQuickExit)
		return
	}
	fmt.Fprintf(s.out, "\n%s %s after %v (see %s); the others keep running; starting it again in %v\n",
		p.name, how, ran, s.logPath(p), s.delay)
	time.AfterFunc(s.delay, func() { s.restart <- p })
}

// restartNow starts p again, unless a run of it is already going.
func (s *devSupervisor) restartNow(p *devProc) {
	if p.cmd != nil {
		return
	}
	if err := s.run(p); err != nil {
		fmt.Fprintf(s.out, "%s: %v; not starting it again\n", p.name, err)
		return
	}
	fmt.Fprintf(s.out, "%s started again (%s)\n", p.name, strings.Join(p.args, " "))
}

// wait restarts processes until stop delivers.
func (s *devSupervisor) wait(stop <-chan os.Signal) {
	for {
		select {
		case <-stop:
			return
		case e := <-s.exited:
			s.handleExit(e)
		case p := <-s.restart:
			s.restartNow(p)
		}
	}
}

// stopAll sends SIGTERM to every running process and waits for them, up to
// 15 s, then kills what is left. No process is started again after it.
func (s *devSupervisor) stopAll() {
	running := map[*exec.Cmd]bool{}
	for _, p := range s.procs {
		if p.cmd != nil {
			running[p.cmd] = true
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(15 * time.Second)
	for len(running) > 0 {
		select {
		case e := <-s.exited:
			delete(running, e.cmd)
			if e.p.cmd == e.cmd {
				e.p.cmd = nil
			}
		case <-deadline:
			for c := range running {
				_ = c.Process.Kill()
			}
			deadline = nil
		case <-s.restart: // dropped: stopping
		}
	}
}
