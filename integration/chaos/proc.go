package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// Proc is one rocketraft process of a Cluster: a proctest.Proc (start, stop,
// kill, restart, its log) plus what only chaos does to a process, pausing it,
// and what the input scenarios measure, its memory.
type Proc struct {
	*proctest.Proc
	// host, when set, is the network namespace the process runs in: Bin is
	// then "ip" (netns exec) and realBin the rocketraft binary it execs.
	host    *NetHost
	realBin string
}

// Start starts a new incarnation; inside a namespace it also checks that the
// pid it got is rocketraft itself (ip netns exec exec'ed it), so Kill, Pause
// and RSSBytes act on the broker and not on a wrapper.
func (p *Proc) Start() error {
	if err := p.Proc.Start(); err != nil {
		return err
	}
	if p.host == nil {
		return nil
	}
	if err := p.host.VerifyExec(p.Pid(), p.realBin, 5*time.Second); err != nil {
		p.Kill()
		return fmt.Errorf("start %s: %w\n%s", p.Name, err, p.Tail(10))
	}
	return nil
}

func newProc(name, bin, logPath string, args ...string) *Proc {
	return &Proc{Proc: &proctest.Proc{Name: name, Bin: bin, Args: args, LogPath: logPath}}
}

// Pause sends SIGSTOP. Stop and Kill still work on a paused process.
func (p *Proc) Pause() { _ = p.Signal(syscall.SIGSTOP) }

// Resume sends SIGCONT.
func (p *Proc) Resume() { _ = p.Signal(syscall.SIGCONT) }

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
