package docker

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rocketraft/rocketraft/config"
)

type composeService struct {
	Image      string         `yaml:"image"`
	Build      map[string]any `yaml:"build"`
	PullPolicy string         `yaml:"pull_policy"`
	Command    []string       `yaml:"command"`
	Volumes    []string       `yaml:"volumes"`
	Ports      []string       `yaml:"ports"`
	Networks   map[string]struct {
		IPv4 string `yaml:"ipv4_address"`
	} `yaml:"networks"`
	Healthcheck struct {
		Test        []string `yaml:"test"`
		StartPeriod string   `yaml:"start_period"`
	} `yaml:"healthcheck"`
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cf composeFile
	if err := yaml.Unmarshal(b, &cf); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if len(cf.Services) == 0 {
		t.Fatal("compose.yaml: no services")
	}
	return cf
}

// mountedConfig returns the host file mounted at the path given to -c.
func mountedConfig(t *testing.T, name string, s composeService) string {
	t.Helper()
	i := slices.Index(s.Command, "-c")
	if i < 0 || i+1 >= len(s.Command) {
		t.Fatalf("%s: command %v has no -c <config>", name, s.Command)
	}
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == s.Command[i+1] {
			return filepath.FromSlash(parts[0])
		}
	}
	t.Fatalf("%s: %s is not mounted from a file", name, s.Command[i+1])
	return ""
}

// healthPort is the port of the http://127.0.0.1:<port>/healthz a check fetches.
func healthPort(t *testing.T, name string, s composeService) string {
	t.Helper()
	for _, a := range s.Healthcheck.Test {
		if rest, ok := strings.CutPrefix(a, "http://127.0.0.1:"); ok && strings.HasSuffix(rest, "/healthz") {
			return strings.TrimSuffix(rest, "/healthz")
		}
	}
	t.Fatalf("%s: health check %v does not fetch /healthz on loopback", name, s.Healthcheck.Test)
	return ""
}

func port(t *testing.T, hostport string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("%q: %v", hostport, err)
	}
	return p
}

func ipOf(s composeService) string {
	for _, n := range s.Networks {
		return n.IPv4
	}
	return ""
}

// published is one entry of a service's ports: [host_ip:]host_port:container_port[/proto].
type published struct {
	hostIP, hostPort, containerPort string
}

func parsePublished(spec string) (published, bool) {
	spec, _, _ = strings.Cut(spec, "/")
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 2:
		return published{hostPort: parts[0], containerPort: parts[1]}, true
	case 3:
		return published{hostIP: parts[0], hostPort: parts[1], containerPort: parts[2]}, true
	}
	return published{}, false
}

// loaded is a compose service with the config it mounts, loaded by the binary's loader.
type loaded struct {
	name    string
	svc     composeService
	ns      *config.Namesrv
	broker  *config.Broker
	admin   string // adminListen of the config
	clients string // listenPort of the config
	vip     string // a broker's VIP channel port (listenPort-2); "" for the nameserver
}

func loadServices(t *testing.T, cf composeFile) []loaded {
	t.Helper()
	var out []loaded
	for name, s := range cf.Services {
		l := loaded{name: name, svc: s}
		path := mountedConfig(t, name, s)
		switch s.Command[0] {
		case "namesrv":
			ns, err := config.LoadNamesrv(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			l.ns, l.admin, l.clients = &ns, ns.AdminListen, strconv.Itoa(ns.ListenPort)
		case "broker":
			b, err := config.LoadBroker(path)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			l.broker, l.admin, l.clients, l.vip = &b, b.AdminListen, strconv.Itoa(b.ListenPort), strconv.Itoa(b.VIPPort())
		default:
			t.Fatalf("%s: unknown command %v", name, s.Command)
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b loaded) int { return strings.Compare(a.name, b.name) })
	return out
}

func TestComposeConfigsLoadAndAgree(t *testing.T) {
	cf := loadCompose(t)
	var brokers []config.Broker
	var nsAddr string
	hostPorts := map[string]string{}
	for _, l := range loadServices(t, cf) {
		name, s := l.name, l.svc
		for _, p := range s.Ports {
			pub, ok := parsePublished(p)
			if !ok {
				t.Errorf("%s: port %q is not [ip:]host:container", name, p)
				continue
			}
			if other, dup := hostPorts[pub.hostPort]; dup {
				t.Errorf("host port %s published by %s and %s", pub.hostPort, other, name)
			}
			hostPorts[pub.hostPort] = name
		}
		if l.admin == "" || healthPort(t, name, s) != port(t, l.admin) {
			t.Errorf("%s: health check port differs from adminListen %q", name, l.admin)
		}
		if l.ns != nil {
			nsAddr = net.JoinHostPort(ipOf(s), strconv.Itoa(l.ns.ListenPort))
			continue
		}
		b := *l.broker
		if b.BrokerIP1 != ipOf(s) {
			t.Errorf("%s: brokerIP1=%s but the container's address is %s", name, b.BrokerIP1, ipOf(s))
		}
		self, _, err := b.Self()
		if err != nil || strings.Split(self.Addr, ":")[0] != ipOf(s) {
			t.Errorf("%s: own raft address %q is not on the container's address %s (%v)", name, self.Addr, ipOf(s), err)
		}
		if !mountsNamedVolume(s, b.StorePathRootDir, cf.Volumes) {
			t.Errorf("%s: storePathRootDir=%s is not a named volume: data would die with the container", name, b.StorePathRootDir)
		}
		brokers = append(brokers, b)
	}
	if nsAddr == "" || len(brokers) != 3 {
		t.Fatalf("want one nameserver and three brokers, got ns=%q brokers=%d", nsAddr, len(brokers))
	}
	ids := map[string]bool{}
	for _, b := range brokers {
		ref := brokers[0]
		if !slices.Equal(b.Peers, ref.Peers) || !slices.Equal(b.PeerClientAddrs, ref.PeerClientAddrs) ||
			b.BrokerName != ref.BrokerName || b.ClusterName != ref.ClusterName || b.DLegerGroup != ref.DLegerGroup {
			t.Errorf("%s disagrees with %s on the group (peers, client addrs, names)", b.SelfID, ref.SelfID)
		}
		if ids[b.SelfID] {
			t.Errorf("dLegerSelfId %s used twice", b.SelfID)
		}
		ids[b.SelfID] = true
		if !slices.Equal(b.NamesrvAddrs, []string{nsAddr}) {
			t.Errorf("%s: namesrvAddr=%v, want the nameserver service %s", b.SelfID, b.NamesrvAddrs, nsAddr)
		}
		for _, p := range b.PeerClientAddrs {
			if p.ID == b.SelfID && p.Addr != net.JoinHostPort(b.BrokerIP1, strconv.Itoa(b.ListenPort)) {
				t.Errorf("%s: dLegerPeerClientAddrs says %s, but it listens on %s:%d", b.SelfID, p.Addr, b.BrokerIP1, b.ListenPort)
			}
		}
	}
	for _, p := range brokers[0].Peers {
		if !ids[p.ID] {
			t.Errorf("peer %s has no container", p.ID)
		}
	}
}

func mountsNamedVolume(s composeService, dir string, named map[string]any) bool {
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && parts[1] == dir {
			_, ok := named[parts[0]]
			return ok
		}
	}
	return false
}
