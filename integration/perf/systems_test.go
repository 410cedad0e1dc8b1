//go:build perf

package perf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// remotingSystem is a system the RocketMQ remoting clients drive: rocketraft
// or Apache RocketMQ, a nameserver and one three-node group of processes.
type remotingSystem interface {
	name() string
	// start launches the processes with data under dir and returns once the
	// nameserver lists the group's leader and both followers.
	start(t *testing.T, dir string) error
	namesrv() string
	cluster() string
	serverPIDs() []int
	stop()
}

// rocketraftSystem runs bin/rocketraft: `rocketraft namesrv` and three
// `rocketraft broker` processes with the default raft timeouts and store sizes
// (not the shortened ones of the functional tests).
type rocketraftSystem struct {
	bin string
	// label is the system's name in the report: "rocketraft", or
	// "rocketraft:k=v+k=v" for a variant whose broker.conf adds extra.
	label string
	extra []string
	ns    string
	procs []*proctest.Proc
}

// newRocketraftSystem parses a PERF_SYSTEMS entry: "rocketraft" runs the
// defaults; "rocketraft:key=value+key=value" sets broker keys on every node,
// so an A/B of one setting runs interleaved in one harness run;
// "rocketraft@BINARY" (optionally followed by ":key=value...") runs another
// build, e.g. the base of a change against it.
func newRocketraftSystem(bin, label string) (*rocketraftSystem, error) {
	s := &rocketraftSystem{bin: bin, label: label}
	rest, ok := strings.CutPrefix(label, "rocketraft")
	if !ok {
		return nil, fmt.Errorf("system %q: want rocketraft[@BINARY][:key=value[+key=value]]", label)
	}
	if path, ok := strings.CutPrefix(rest, "@"); ok {
		path, rest, _ = strings.Cut(path, ":")
		if path == "" {
			return nil, fmt.Errorf("system %q: empty binary after @", label)
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			return nil, fmt.Errorf("system %q: binary %q is not a file", label, path)
		}
		s.bin = path
		if rest != "" {
			rest = ":" + rest
		}
	}
	if rest == "" {
		return s, nil
	}
	kvs, ok := strings.CutPrefix(rest, ":")
	if !ok || kvs == "" {
		return nil, fmt.Errorf("system %q: want rocketraft[@BINARY][:key=value[+key=value]]", label)
	}
	for _, kv := range strings.Split(kvs, "+") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("system %q: %q is not key=value", label, kv)
		}
		s.extra = append(s.extra, k+"="+v)
	}
	return s, nil
}

func (s *rocketraftSystem) name() string    { return s.label }
func (s *rocketraftSystem) namesrv() string { return s.ns }
func (s *rocketraftSystem) cluster() string { return "PerfCluster" }

func (s *rocketraftSystem) start(t *testing.T, dir string) error {
	ports, err := proctest.FreePorts(7)
	if err != nil {
		return err
	}
	s.ns = fmt.Sprintf("127.0.0.1:%d", ports[0])
	var peers, clients []proctest.Peer
	for i := range 3 {
		peers = append(peers, proctest.Peer{ID: fmt.Sprintf("n%d", i), Addr: fmt.Sprintf("127.0.0.1:%d", ports[4+i])})
		clients = append(clients, proctest.Peer{ID: fmt.Sprintf("n%d", i), Addr: fmt.Sprintf("127.0.0.1:%d", ports[1+i])})
	}
	nsConf := filepath.Join(dir, "namesrv.conf")
	if err := (proctest.NamesrvConfig{Addr: s.ns, LogLevel: "warn"}).Write(nsConf); err != nil {
		return err
	}
	launch := func(name string, args ...string) error {
		p := &proctest.Proc{Name: name, Bin: s.bin, Args: args, LogPath: filepath.Join(dir, name+".log")}
		if err := p.Start(); err != nil {
			return err
		}
		s.procs = append(s.procs, p)
		return nil
	}
	if err := launch("namesrv", "namesrv", "-c", nsConf); err != nil {
		return err
	}
	for i := range 3 {
		id := fmt.Sprintf("n%d", i)
		conf := filepath.Join(dir, id+".conf")
		err := proctest.BrokerConfig{ClusterName: s.cluster(), BrokerName: "broker-a", ClientAddr: clients[i].Addr,
			NamesrvAddr: s.ns, DataDir: filepath.Join(dir, id), Peers: peers, PeerClients: clients, SelfID: id,
			LogLevel: "warn", Extra: withBenchDiskRatio(s.extra)}.Write(conf)
		if err != nil {
			return err
		}
		if err := launch(id, "broker", "-c", conf); err != nil {
			return err
		}
	}
	return waitGroup(s.ns, s.cluster(), "broker-a", 60*time.Second)
}

// benchDiskRatio lets every system's store fill the disk to RocketMQ's
// highest allowed usage before retention deletes unexpired segments. At the
// default 75 % a shared machine's disk can already be over the line, and
// retention then deletes the oldest CommitLog segment of a backlog while it
// is being measured (seen: a 1 GiB backlog whose first 770k messages were gone
// before the drain began).
const benchDiskRatio = "diskMaxUsedSpaceRatio=95"

// withBenchDiskRatio is extra with benchDiskRatio first, unless extra sets the
// key itself.
func withBenchDiskRatio(extra []string) []string {
	key, _, _ := strings.Cut(benchDiskRatio, "=")
	for _, kv := range extra {
		if strings.HasPrefix(kv, key+"=") {
			return extra
		}
	}
	return append([]string{benchDiskRatio}, extra...)
}

func (s *rocketraftSystem) serverPIDs() []int { return pidsOf(s.procs) }
func (s *rocketraftSystem) stop()             { proctest.StopAll(20*time.Second, s.procs...); s.procs = nil }

// apacheSystem runs Apache RocketMQ's NamesrvStartup and three DLedger
// BrokerStartup JVMs from the jars rocketmq/ copied out of Maven Central.
// flushDiskType is Apache's ASYNC_FLUSH (its default) or SYNC_FLUSH.
type apacheSystem struct {
	lib       string // rocketmq/target/lib
	flushDisk string
	ns        string
	procs     []*proctest.Proc
}

func (s *apacheSystem) name() string {
	if s.flushDisk == "SYNC_FLUSH" {
		return "rocketmq-syncflush"
	}
	return "rocketmq"
}
func (s *apacheSystem) namesrv() string { return s.ns }
func (s *apacheSystem) cluster() string { return "RaftCluster" }

func (s *apacheSystem) start(t *testing.T, dir string) error {
	ports, err := proctest.FreePorts(7)
	if err != nil {
		return err
	}
	s.ns = fmt.Sprintf("127.0.0.1:%d", ports[0])
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, ports[4+i]))
	}
	java := func(name, main string, conf []string) error {
		path := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(path, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		// user.home moves Apache's logs (~/logs/rocketmqlogs) under dir, one
		// tree per process; the heap is fixed so the JVMs fit next to the others.
		p := &proctest.Proc{Name: name, Bin: "java", LogPath: filepath.Join(dir, name+".log"),
			Env: []string{"ROCKETMQ_HOME=" + home},
			Args: []string{"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-Duser.home=" + filepath.Join(dir, name),
				"-cp", filepath.Join(s.lib, "*"), main, "-c", path}}
		if err := p.Start(); err != nil {
			return err
		}
		s.procs = append(s.procs, p)
		return nil
	}
	if err := java("namesrv", "org.apache.rocketmq.namesrv.NamesrvStartup",
		[]string{fmt.Sprintf("listenPort=%d", ports[0])}); err != nil {
		return err
	}
	for i := range 3 {
		store := filepath.Join(dir, fmt.Sprintf("node%02d", i))
		conf := []string{
			"brokerClusterName=" + s.cluster(), "brokerName=RaftNode00",
			fmt.Sprintf("listenPort=%d", ports[1+i]), "namesrvAddr=" + s.ns, "brokerIP1=127.0.0.1",
			"storePathRootDir=" + store, "storePathCommitLog=" + filepath.Join(store, "commitlog"),
			"enableDLegerCommitLog=true", "dLegerGroup=RaftNode00", "dLegerPeers=" + strings.Join(peers, ";"),
			fmt.Sprintf("dLegerSelfId=n%d", i), "sendMessageThreadPoolNums=16", "flushDiskType=" + s.flushDisk,
			benchDiskRatio,
		}
		if err := java(fmt.Sprintf("n%d", i), "org.apache.rocketmq.broker.BrokerStartup", conf); err != nil {
			return err
		}
	}
	return waitGroup(s.ns, s.cluster(), "RaftNode00", 180*time.Second)
}

func (s *apacheSystem) serverPIDs() []int { return pidsOf(s.procs) }
func (s *apacheSystem) stop()             { proctest.StopAll(30*time.Second, s.procs...); s.procs = nil }

func pidsOf(ps []*proctest.Proc) []int {
	var out []int
	for _, p := range ps {
		if pid := p.Pid(); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// waitGroup waits until the nameserver at ns lists brokerName in cluster with
// a leader (brokerId 0) and two followers.
func waitGroup(ns, cluster, brokerName string, timeout time.Duration) error {
	tc := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer tc.Close()
	nsc := nameserver.NewClient(tc)
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ci, err := nsc.GetClusterInfo(ctx, ns)
		cancel()
		if err == nil {
			bd, ok := ci.BrokerAddrTable[brokerName]
			if _, leader := bd.BrokerAddrs[0]; ok && leader && len(bd.BrokerAddrs) == 3 && ci.ClusterAddrTable[cluster] != nil {
				return nil
			}
			last = fmt.Sprintf("%v", ci.BrokerAddrTable)
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("group %s of cluster %s not registered with a leader and two followers after %v (last: %s)",
		brokerName, cluster, timeout, last)
}

// createTopic creates the bench topic with 8 queues through the nameserver,
// the same request (UPDATE_AND_CREATE_TOPIC to each group's leader) for both
// systems.
func createTopic(bin, ns, cluster, topic string) error {
	var out []byte
	var err error
	for range 20 {
		out, err = exec.Command(bin, "admin", "-n", ns, "topic", "create", topic, "-c", cluster, "-r", "8", "-w", "8").CombinedOutput()
		if err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("create topic %s: %v: %s", topic, err, out)
}

// freePorts picks n free loopback ports (proctest's picker, below the
// ephemeral range).
func freePorts(n int) ([]int, error) { return proctest.FreePorts(n) }

// newRemotingSystem is the system a PERF_SYSTEMS entry names, for the
// RocketMQ remoting clients.
func newRemotingSystem(s settings, sys string) (remotingSystem, error) {
	switch sys {
	case "rocketmq":
		return &apacheSystem{lib: s.rocketmqLib, flushDisk: "ASYNC_FLUSH"}, nil
	case "rocketmq-syncflush":
		return &apacheSystem{lib: s.rocketmqLib, flushDisk: "SYNC_FLUSH"}, nil
	}
	return newRocketraftSystem(s.bin, sys)
}
