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
	"sync/atomic"
	"syscall"
	"time"
)

// A Network puts every process of a Cluster in its own Linux network namespace
// with its own address, so that faults are the kernel's: a link taken down
// drops packets without a RST, an nftables rule drops one direction. Layout, for
// a test whose namespaces are named rrchaos-<pid>-<seq>-*:
//
//	           rrchaos-…-br: bridge br0
//	  ┌──────────┬─────┴────┬──────────┬──────────┐
//	b-host     b-n0       b-n1       b-n2       b-ns      (bridge-side veths)
//	  │          │          │          │          │
//	root ns    …-n0       …-n1       …-n2       …-ns      (one veth "eth0" each)
//	10.x.y.1   10.x.y.10  10.x.y.11  10.x.y.12  10.x.y.2
//
// The root end (the test process and its clients) is a veth named
// rrc<pid>-<seq> in the test's own namespace, so every node and the
// nameserver are reachable from the test at their own addresses, and a fault
// on one node's links never cuts the test off from the others.
//
// Faults: Blackhole sets a host's bridge-side veth down (nobody reaches it, it
// reaches nobody, and nothing is answered: TCP peers only time out); DropFrom
// and the isolations below install nftables drop rules inside a host's
// namespace (table inet rrchaos, chains in and out), which can be one-way and,
// with a percentage, random loss. tc netem is not assumed (these machines'
// kernels lack it). Heal undoes every fault.
type Network struct {
	id       string // "<pid>-<seq>"
	subnet   string // "10.x.y"
	bridgeNS string
	rootLink string
	hosts    []*NetHost // nodes 0..n-1, then the nameserver

	mu      sync.Mutex
	flaps   map[int]flap
	closed  bool
	created []string // namespaces created so far, for Close
}

// NetHost is one namespace of a Network: a broker node or the nameserver.
type NetHost struct {
	Name   string // "n0".. or "ns"
	NS     string // network namespace name
	IP     string // its address on the bridge
	brVeth string // its veth's name in the bridge namespace
}

// Prefixes of everything a Network creates; Sweep removes leftovers by them.
const (
	netnsPrefix    = "rrchaos-"
	rootLinkPrefix = "rrc"
	netnsTable     = "rrchaos"
)

// ErrNetnsUnavailable says why this machine cannot run network-namespace
// scenarios (not root, ip or nft missing).
var ErrNetnsUnavailable = errors.New("network namespaces unavailable")

var netSeq atomic.Int32

// NetnsAvailable reports nil when this process can build a Network, or an
// ErrNetnsUnavailable error naming what is missing.
func NetnsAvailable() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: needs root (euid %d) to create namespaces and links", ErrNetnsUnavailable, os.Geteuid())
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%w: %s not in PATH (iproute2 and nftables; .ci/deps.sh installs them): %v", ErrNetnsUnavailable, tool, err)
		}
	}
	return nil
}

// NewNetwork sweeps leftovers of crashed runs, then creates the bridge
// namespace, one namespace per node plus one for the nameserver, and the root
// veth. On any error it removes what it created.
func NewNetwork(nodes int) (*Network, error) {
	if err := NetnsAvailable(); err != nil {
		return nil, err
	}
	Sweep()
	seq := netSeq.Add(1)
	n := &Network{id: fmt.Sprintf("%d-%d", os.Getpid(), seq), flaps: map[int]flap{}}
	subnet, err := freeSubnet(os.Getpid(), int(seq))
	if err != nil {
		return nil, err
	}
	n.subnet = subnet
	n.bridgeNS = netnsPrefix + n.id + "-br"
	n.rootLink = rootLinkPrefix + n.id
	if len(n.rootLink) > 15 {
		return nil, fmt.Errorf("netns: root link name %q longer than 15 bytes (IFNAMSIZ)", n.rootLink)
	}
	for i := range nodes {
		name := fmt.Sprintf("n%d", i)
		n.hosts = append(n.hosts, &NetHost{Name: name, NS: netnsPrefix + n.id + "-" + name, IP: fmt.Sprintf("%s.%d", subnet, 10+i), brVeth: "b-" + name})
	}
	n.hosts = append(n.hosts, &NetHost{Name: "ns", NS: netnsPrefix + n.id + "-ns", IP: subnet + ".2", brVeth: "b-ns"})
	if err := n.build(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Network) build() error {
	if err := n.addNS(n.bridgeNS); err != nil {
		return err
	}
	br := n.bridgeNS
	if err := runAll(
		[]string{"ip", "-n", br, "link", "set", "lo", "up"},
		[]string{"ip", "-n", br, "link", "add", "br0", "type", "bridge"},
		[]string{"ip", "-n", br, "link", "set", "br0", "up"},
	); err != nil {
		return err
	}
	table := fmt.Sprintf("table inet %s {\n chain in { type filter hook input priority 0; policy accept; }\n chain out { type filter hook output priority 0; policy accept; }\n}\n", netnsTable)
	for _, h := range n.hosts {
		if err := n.addNS(h.NS); err != nil {
			return err
		}
		if err := runAll(
			[]string{"ip", "link", "add", "name", "eth0", "netns", h.NS, "type", "veth", "peer", "name", h.brVeth, "netns", br},
			[]string{"ip", "-n", h.NS, "addr", "add", h.IP + "/24", "dev", "eth0"},
			[]string{"ip", "-n", h.NS, "link", "set", "lo", "up"},
			[]string{"ip", "-n", h.NS, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", br, "link", "set", h.brVeth, "master", "br0"},
			[]string{"ip", "-n", br, "link", "set", h.brVeth, "up"},
		); err != nil {
			return err
		}
		if err := runStdin(table, "ip", "netns", "exec", h.NS, "nft", "-f", "-"); err != nil {
			return err
		}
	}
	return runAll(
		[]string{"ip", "link", "add", "name", n.rootLink, "type", "veth", "peer", "name", "b-host", "netns", br},
		[]string{"ip", "addr", "add", n.subnet + ".1/24", "dev", n.rootLink},
		[]string{"ip", "link", "set", n.rootLink, "up"},
		[]string{"ip", "-n", br, "link", "set", "b-host", "master", "br0"},
		[]string{"ip", "-n", br, "link", "set", "b-host", "up"},
	)
}

func (n *Network) addNS(name string) error {
	if err := run("ip", "netns", "add", name); err != nil {
		return err
	}
	n.mu.Lock()
	n.created = append(n.created, name)
	n.mu.Unlock()
	return nil
}

// hostOrNil is host i, or nil on a nil Network (a loopback cluster).
func (n *Network) hostOrNil(i int) *NetHost {
	if n == nil {
		return nil
	}
	return n.hosts[i]
}

// Node is host i (a broker node); NamesrvHost is the nameserver's.
func (n *Network) Node(i int) *NetHost { return n.hosts[i] }

// NamesrvHost is the nameserver's namespace.
func (n *Network) NamesrvHost() *NetHost { return n.hosts[len(n.hosts)-1] }

// HostIP is the test process's own address on the bridge.
func (n *Network) HostIP() string { return n.subnet + ".1" }

// Command returns the argv that runs bin with args inside h's namespace.
// ip netns exec execs the program in place (no fork), so the process the
// caller starts, and later kills, is bin itself; VerifyExec checks that.
func (h *NetHost) Command(bin string, args ...string) (string, []string) {
	return "ip", append([]string{"netns", "exec", h.NS, bin}, args...)
}

// VerifyExec waits until process pid runs bin (ip netns exec has exec'ed it)
// and is in h's namespace; an error names what differs, so a harness that
// would SIGKILL a wrapper instead of the broker fails loudly.
func (h *NetHost) VerifyExec(pid int, bin string, timeout time.Duration) error {
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return fmt.Errorf("netns: %s: %w", bin, err)
	}
	nsIno, err := inode(filepath.Join("/run/netns", h.NS))
	if err != nil {
		return fmt.Errorf("netns: namespace %s: %w", h.NS, err)
	}
	deadline := time.Now().Add(timeout)
	var exe string
	var ino uint64
	for {
		exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		ino, _ = inode(fmt.Sprintf("/proc/%d/ns/net", pid))
		if exe == want && ino == nsIno {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("netns: pid %d runs %q in net namespace inode %d, want %q in %s (inode %d)", pid, exe, ino, want, h.NS, nsIno)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func inode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// Close stops any flapping, kills processes still inside the namespaces (a
// test that failed before stopping its cluster), and deletes every namespace
// and the root veth. Deleting the bridge namespace destroys the veth pairs.
// Idempotent; errors are collected, not fatal, so everything is attempted.
func (n *Network) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	flaps := n.flaps
	n.flaps = map[int]flap{}
	created := n.created
	n.mu.Unlock()
	for _, f := range flaps {
		close(f.stop)
		<-f.done
	}
	var errs []error
	for _, ns := range created {
		killNSProcs(ns)
	}
	if n.rootLink != "" && linkExists(n.rootLink) {
		errs = append(errs, run("ip", "link", "del", n.rootLink))
	}
	for _, ns := range created {
		errs = append(errs, run("ip", "netns", "del", ns))
	}
	return errors.Join(errs...)
}

// Sweep removes namespaces and root links left by an earlier run whose process
// is gone (a crash or a go test timeout skips Cleanup): their names carry the
// creating process's pid. Live runs' networks are left alone.
func Sweep() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], netnsPrefix) {
			continue
		}
		if ownerAlive(strings.TrimPrefix(f[0], netnsPrefix)) {
			continue
		}
		killNSProcs(f[0])
		_ = run("ip", "netns", "del", f[0])
	}
	out, _ = exec.Command("ip", "-o", "link", "show").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		if !strings.HasPrefix(name, rootLinkPrefix) || ownerAlive(strings.TrimPrefix(name, rootLinkPrefix)) {
			continue
		}
		_ = run("ip", "link", "del", name)
	}
}

// ownerAlive reads the pid from "<pid>-<seq>…" and reports whether it is a
// running process other than a dead one; unparsable names count as alive (not
// ours to delete).
func ownerAlive(rest string) bool {
	pidStr, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil || pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return true
	}
	return syscall.Kill(pid, 0) == nil
}

// killNSProcs SIGKILLs every process inside namespace ns (processes this suite
// started there) and waits briefly for them to go.
func killNSProcs(ns string) {
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		// Never this process: a test thread that entered ns lists it.
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 && pid != os.Getpid() {
			pids = append(pids, pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func linkExists(name string) bool {
	return exec.Command("ip", "link", "show", "dev", name).Run() == nil
}

// freeSubnet picks 10.x.y.0/24 from the pid and sequence number and moves on
// while the root namespace already routes it (the machine's own network, or
// another live run).
func freeSubnet(pid, seq int) (string, error) {
	for k := range 64 {
		v := (pid*7 + seq*13 + k*31) % (200 * 256)
		subnet := fmt.Sprintf("10.%d.%d", 50+v/256, v%256)
		out, err := exec.Command("ip", "-4", "route", "show", "to", "match", subnet+".1").Output()
		if err != nil {
			return "", fmt.Errorf("netns: ip route: %w", err)
		}
		used := false
		for _, line := range strings.Split(string(out), "\n") {
			// Only the default route may cover it; any more specific route
			// means the range is taken.
			if f := strings.Fields(line); len(f) > 0 && f[0] != "default" {
				used = true
			}
		}
		if !used {
			return subnet, nil
		}
	}
	return "", fmt.Errorf("netns: no free 10.x.y.0/24 subnet after 64 tries")
}

func run(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netns: %s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

func runAll(cmds ...[]string) error {
	for _, c := range cmds {
		if err := run(c...); err != nil {
			return err
		}
	}
	return nil
}

func runStdin(stdin string, argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("netns: %s: %w: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
