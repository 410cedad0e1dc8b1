package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// devCluster describes the local cluster `rocketraft dev` runs: one nameserver and
// groups of nodes, each node a separate process of this binary.
type devCluster struct {
	dataDir     string
	groups      int
	nodes       int
	namesrvPort int
	brokerPort  int
	raftPort    int
	segmentSize int64
	tls         bool          // --tls: every client port enforcing TLS
	certs       devcert.Files // set by run when tls
	// acl turns access control on with fresh accounts (dev_acl.go).
	acl         bool
	aclFile     string
	aclAccounts []devAccount
	// console is where the web console listens ("" = no console).
	console string
	// namesrvAdmin is the nameserver's adminListen: namesrvPort+2 if free
	// (writeConfigs sets it), else "".
	namesrvAdmin string
	// set are --set key=value lines appended to every node's broker.conf
	// (the broker validates them at start, naming a bad key or value).
	set []string
}

func newDevCommand() *cobra.Command {
	d := &devCluster{}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a local nameserver and a three-node broker group (data under ./data/dev)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			return d.run()
		},
	}
	f := cmd.Flags()
	f.StringVar(&d.dataDir, "data-dir", "data/dev", "directory for configs, logs and data (kept across restarts)")
	f.IntVar(&d.groups, "groups", 1, "number of broker groups (broker-a, broker-b, …)")
	f.IntVar(&d.nodes, "nodes", 3, "nodes per group")
	f.IntVar(&d.namesrvPort, "namesrv-port", 9876, "nameserver port")
	f.IntVar(&d.brokerPort, "broker-port", 10911, "client port of the first node; node i of group g uses +100*g+10*i, its VIP channel that -2, its admin HTTP that +2")
	f.IntVar(&d.raftPort, "raft-port", 40911, "raft port of the first node, same spacing")
	f.Int64Var(&d.segmentSize, "segment-size", 64<<20, "CommitLog segment size in bytes")
	f.BoolVar(&d.tls, "tls", false, "make a throw-away CA and certificate under <data-dir>/tls and run every client port with tlsMode=enforcing")
	f.StringVar(&d.console, "console", DefaultConsoleListen, "HTTP address of the web console it starts too (\"\" = none)")
	f.BoolVar(&d.acl, "acl", false, "turn access control on: write plain_acl.yml with an admin and a client account and print them")
	f.StringArrayVar(&d.set, "set", nil, "broker.conf key=value for every node, after the generated keys (repeatable), e.g. --set groupCommitMaxInflight=1")
	return cmd
}

func (d devCluster) groupName(g int) string { return "broker-" + string(rune('a'+g)) }

// writeConfigs writes namesrv.conf and one broker.conf per node.
func (d *devCluster) writeConfigs() (namesrvConf string, brokerConfs []string, err error) {
	confDir := filepath.Join(d.dataDir, "conf")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return "", nil, err
	}
	var aclLines []string
	if d.acl {
		if d.aclFile, d.aclAccounts, err = writeDevACL(confDir); err != nil {
			return "", nil, err
		}
		aclLines = []string{"aclEnable=true", "aclFile=" + d.aclFile}
	}
	// With --acl the brokers also authenticate to the nameserver: one secret
	// per group, in every node's broker.conf and in the nameserver's
	// brokerAuthFile; the nameserver's admin writes need the admin account.
	var groupSecrets map[string]string
	d.namesrvAdmin = freeLoopback(d.namesrvPort + 2)
	nsLines := append([]string{"listenAddr=127.0.0.1", fmt.Sprintf("listenPort=%d", d.namesrvPort), "adminListen=" + d.namesrvAdmin}, d.tlsLines(false)...)
	if d.acl {
		var groups []string
		for g := 0; g < d.groups; g++ {
			groups = append(groups, d.groupName(g))
		}
		authFile, secrets, err := writeDevBrokerAuth(confDir, groups)
		if err != nil {
			return "", nil, err
		}
		groupSecrets = secrets
		nsLines = append(append(nsLines, aclLines...), "brokerAuthFile="+authFile)
	}
	namesrvConf = filepath.Join(confDir, "namesrv.conf")
	ns := strings.Join(append(nsLines, ""), "\n")
	if err := os.WriteFile(namesrvConf, []byte(ns), 0o644); err != nil {
		return "", nil, err
	}
	for g := 0; g < d.groups; g++ {
		var peers, clients []string
		for i := 0; i < d.nodes; i++ {
			peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, d.raftPort+100*g+10*i))
			clients = append(clients, fmt.Sprintf("n%d-127.0.0.1:%d", i, d.brokerPort+100*g+10*i))
		}
		for i := 0; i < d.nodes; i++ {
			abs, err := filepath.Abs(filepath.Join(d.dataDir, d.groupName(g), fmt.Sprintf("n%d", i)))
			if err != nil {
				return "", nil, err
			}
			conf := strings.Join([]string{
				"brokerClusterName=DefaultCluster",
				"brokerName=" + d.groupName(g),
				"brokerIP1=127.0.0.1",
				fmt.Sprintf("listenPort=%d", d.brokerPort+100*g+10*i),
				fmt.Sprintf("namesrvAddr=127.0.0.1:%d", d.namesrvPort),
				"storePathRootDir=" + abs,
				"dLegerGroup=" + d.groupName(g),
				"dLegerPeers=" + strings.Join(peers, ";"),
				"dLegerPeerClientAddrs=" + strings.Join(clients, ";"),
				fmt.Sprintf("dLegerSelfId=n%d", i),
				fmt.Sprintf("mappedFileSizeCommitLog=%d", d.segmentSize),
				// IndexFiles are allocated whole at creation; 42 MB instead of 420 MB per node.
				"maxHashSlotNum=500000", "maxIndexNum=2000000",
				fmt.Sprintf("adminListen=127.0.0.1:%d", d.brokerPort+100*g+10*i+2),
				strings.Join(d.tlsLines(true), "\n"),
			}, "\n") + "\n"
			for _, l := range aclLines {
				conf += l + "\n"
			}
			if len(d.set) > 0 {
				if conf, err = d.applySet(conf); err != nil {
					return "", nil, err
				}
			}
			mode := os.FileMode(0o644)
			if secret, ok := groupSecrets[d.groupName(g)]; ok {
				conf += "namesrvAuthSecret=" + secret + "\n"
				mode = 0o600 // it holds a secret now
			}
			path := filepath.Join(confDir, fmt.Sprintf("%s-n%d.conf", d.groupName(g), i))
			if err := writeFileMode(path, []byte(conf), mode); err != nil {
				return "", nil, err
			}
			brokerConfs = append(brokerConfs, path)
		}
	}
	return namesrvConf, brokerConfs, nil
}

// writeFileMode writes data to path and sets mode even when path existed
// (os.WriteFile keeps an existing file's mode, and a dev data directory is
// kept across restarts).
func writeFileMode(path string, data []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, data, mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

func (d *devCluster) run() error {
	if d.tls {
		certs, err := devcert.Write(filepath.Join(d.dataDir, "tls"), time.Now())
		if err != nil {
			return fmt.Errorf("dev: write certificates: %w", err)
		}
		d.certs = certs
	}
	namesrvConf, brokerConfs, err := d.writeConfigs()
	if err != nil {
		return fmt.Errorf("dev: write configs: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logDir := filepath.Join(d.dataDir, "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	sup := newDevSupervisor(self, logDir, os.Stdout)
	if _, err := sup.start("namesrv", true, nil, "namesrv", "-c", namesrvConf); err != nil {
		return err
	}
	for _, conf := range brokerConfs {
		name := strings.TrimSuffix(filepath.Base(conf), ".conf")
		if _, err := sup.start(name, true, nil, "broker", "-c", conf); err != nil {
			sup.stopAll()
			return err
		}
	}
	ns := fmt.Sprintf("127.0.0.1:%d", d.namesrvPort)
	if d.console != "" && !listenable(d.console) {
		fmt.Printf("console: %s is in use; not started (choose another with --console)\n", d.console)
		d.console = ""
	}
	if d.console != "" {
		// The cluster does not need the console: when it exits, dev says so
		// and keeps running.
		if _, err := sup.start("console", false, d.consoleEnv(), d.consoleArgs(ns)...); err != nil {
			sup.stopAll()
			return err
		}
	}
	fmt.Printf("rocketraft dev cluster running (Ctrl-C stops it; a node that exits is started again after %v)\n", devRestartDelay)
	if a := d.namesrvAdmin; a != "" {
		fmt.Printf("  nameserver   %s  metrics http://%s/metrics\n", ns, a)
	} else {
		fmt.Printf("  nameserver   %s\n", ns)
	}
	for g := 0; g < d.groups; g++ {
		for i := 0; i < d.nodes; i++ {
			fmt.Printf("  %s n%d    client 127.0.0.1:%d  vip 127.0.0.1:%d  raft 127.0.0.1:%d  metrics http://127.0.0.1:%d/metrics\n", d.groupName(g), i,
				d.brokerPort+100*g+10*i, d.brokerPort+100*g+10*i-2, d.raftPort+100*g+10*i, d.brokerPort+100*g+10*i+2)
		}
	}
	if d.console != "" {
		login := ""
		if d.acl {
			login = "  (log in with an account below)"
		}
		fmt.Printf("  console      http://%s%s\n", d.console, login)
	}
	fmt.Printf("  data, configs and logs under %s\n\n", d.dataDir)
	if d.tls {
		d.printTLS()
	}
	if d.acl {
		printDevACL(d.aclAccounts, ns, d.exampleTLS(true), d.exampleTLS(false))
	} else {
		fmt.Printf("Try it (in another terminal):\n")
		fmt.Printf("  ./bin/rocketraft bench produce --namesrv %s%s --topic TopicTest --count 1000\n", ns, d.exampleTLS(true))
		fmt.Printf("  ./bin/rocketraft bench consume --namesrv %s%s --topic TopicTest --group demo --count 1000\n", ns, d.exampleTLS(false))
		fmt.Printf("  ./bin/rocketraft admin cluster --namesrv %s%s\n", ns, d.exampleTLS(true))
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	sup.wait(sig)
	fmt.Println("\nstopping…")
	sup.stopAll()
	return nil
}

// consoleArgs runs the console against the dev cluster with its TLS and, with
// --acl, its admin account (through the environment: not in the process list).
func (d *devCluster) consoleArgs(ns string) []string {
	args := []string{"console", "--namesrv", ns, "--listen", d.console}
	if d.tls {
		args = append(args, "--tls", "--tls-ca", d.certs.CACert)
	}
	return args
}

// consoleEnv is the environment of the console process: with --acl, the admin
// account the console reads the cluster with.
func (d *devCluster) consoleEnv() []string {
	env := os.Environ()
	for _, a := range d.aclAccounts {
		if a.role == "admin" {
			env = append(env, envAccessKey+"="+a.accessKey, envSecretKey+"="+a.secretKey)
		}
	}
	return env
}

// listenable reports whether addr can be bound now.
func listenable(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// freeLoopback is 127.0.0.1:port while that port is free, else "": dev gives
// the nameserver an HTTP listener only where it can bind one.
func freeLoopback(port int) string {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return ""
	}
	_ = l.Close()
	return addr
}

// applySet replaces or adds the --set lines in conf, then checks the result
// as the broker will at start, so a bad key or value stops dev at once with
// the broker's message (the key, the value and the rule).
func (d *devCluster) applySet(conf string) (string, error) {
	set := map[string]string{}
	var order []string
	for _, kv := range d.set {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return "", fmt.Errorf("dev: --set %q: want key=value", kv)
		}
		if _, dup := set[k]; !dup {
			order = append(order, k)
		}
		set[k] = v
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(conf, "\n"), "\n") {
		k, _, _ := strings.Cut(l, "=")
		if _, over := set[strings.TrimSpace(k)]; !over {
			out = append(out, l)
		}
	}
	for _, k := range order {
		out = append(out, k+"="+set[k])
	}
	conf = strings.Join(out, "\n") + "\n"
	if _, err := config.ParseBroker([]byte(conf), config.FormatProperties); err != nil {
		return "", fmt.Errorf("dev: --set: %w", err)
	}
	return conf, nil
}
