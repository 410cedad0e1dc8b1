package chaos

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Faults of a Network. Hosts are named by index: 0..n-1 are the broker nodes,
// NamesrvIndex the nameserver. Every fault has its heal; Heal undoes them all.

// NamesrvIndex is the host index of the nameserver.
func (n *Network) NamesrvIndex() int { return len(n.hosts) - 1 }

// Blackhole takes host i's bridge-side veth down: its packets go nowhere and
// nothing reaches it, with no RST or ICMP, so every peer (and the test's
// clients) only times out. Unblackhole brings it back.
func (n *Network) Blackhole(i int) error {
	return run("ip", "-n", n.bridgeNS, "link", "set", n.hosts[i].brVeth, "down")
}

// Unblackhole brings host i's bridge-side veth up again.
func (n *Network) Unblackhole(i int) error {
	return run("ip", "-n", n.bridgeNS, "link", "set", n.hosts[i].brVeth, "up")
}

// DropFrom drops, inside host from's namespace, pct percent (1–100) of the
// packets it sends to host to, chosen at random per packet. The other
// direction flows: to's packets reach from, but a TCP connection either way
// loses from's half (SYN-ACKs, ACKs, answers).
func (n *Network) DropFrom(from, to, pct int) error {
	if pct < 1 || pct > 100 {
		return fmt.Errorf("netns: DropFrom pct=%d: must be 1..100", pct)
	}
	return n.addRule(from, "out", "ip daddr "+n.hosts[to].IP+lossExpr(pct)+" drop")
}

// IsolateFromPeers drops every packet between broker node i and the other
// broker nodes, both directions, while the nameserver and the test's clients
// still reach it: the stale-leader partition.
func (n *Network) IsolateFromPeers(i int) error {
	var peers []string
	for j := range n.NamesrvIndex() {
		if j != i {
			peers = append(peers, n.hosts[j].IP)
		}
	}
	set := "{ " + strings.Join(peers, ", ") + " }"
	return errors.Join(n.addRule(i, "out", "ip daddr "+set+" drop"), n.addRule(i, "in", "ip saddr "+set+" drop"))
}

// IsolateFromNamesrv drops every packet between host i and the nameserver,
// both directions; its peers and the clients still reach it.
func (n *Network) IsolateFromNamesrv(i int) error {
	ns := n.NamesrvHost().IP
	return errors.Join(n.addRule(i, "out", "ip daddr "+ns+" drop"), n.addRule(i, "in", "ip saddr "+ns+" drop"))
}

// Unfilter removes every drop rule of host i.
func (n *Network) Unfilter(i int) error {
	ns := n.hosts[i].NS
	return errors.Join(
		run("ip", "netns", "exec", ns, "nft", "flush", "chain", "inet", netnsTable, "in"),
		run("ip", "netns", "exec", ns, "nft", "flush", "chain", "inet", netnsTable, "out"))
}

// Flap blackholes host i for down, brings it back for up, and repeats until
// StopFlap or Heal. It returns at once; the FlapStats count the down
// transitions and keep the first failed toggle (read them after StopFlap).
func (n *Network) Flap(i int, down, up time.Duration) (*FlapStats, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, fmt.Errorf("netns: Flap n%d on a closed network", i)
	}
	if _, ok := n.flaps[i]; ok {
		return nil, fmt.Errorf("netns: host %s already flapping", n.hosts[i].Name)
	}
	f := flap{stop: make(chan struct{}), done: make(chan struct{})}
	n.flaps[i] = f
	stop := f.stop
	st := &FlapStats{}
	go func() {
		defer close(f.done)
		defer func() { st.record(n.Unblackhole(i)) }()
		for {
			st.record(n.Blackhole(i))
			st.Downs++
			select {
			case <-stop:
				return
			case <-time.After(down):
			}
			st.record(n.Unblackhole(i))
			select {
			case <-stop:
				return
			case <-time.After(up):
			}
		}
	}()
	return st, nil
}

// FlapStats is what one Flap did. Read it after StopFlap.
type FlapStats struct {
	Downs int
	Err   error // the first failed toggle, if any
}

func (s *FlapStats) record(err error) {
	if err != nil && s.Err == nil {
		s.Err = err
	}
}

// StopFlap ends host i's flapping and leaves its link up.
func (n *Network) StopFlap(i int) {
	n.mu.Lock()
	f, ok := n.flaps[i]
	delete(n.flaps, i)
	n.mu.Unlock()
	if ok {
		close(f.stop)
		<-f.done
	}
}

// flap is one running Flap: closing stop ends it, done is closed once its
// link is back up.
type flap struct{ stop, done chan struct{} }

// Heal ends every fault: flapping stopped, every link up, every drop rule gone.
func (n *Network) Heal() error {
	n.mu.Lock()
	var flapping []int
	for i := range n.flaps {
		flapping = append(flapping, i)
	}
	n.mu.Unlock()
	for _, i := range flapping {
		n.StopFlap(i)
	}
	var errs []error
	for i := range n.hosts {
		errs = append(errs, n.Unblackhole(i), n.Unfilter(i))
	}
	return errors.Join(errs...)
}

func (n *Network) addRule(i int, chain, rule string) error {
	argv := append([]string{"ip", "netns", "exec", n.hosts[i].NS, "nft", "add", "rule", "inet", netnsTable, chain}, strings.Fields(rule)...)
	return run(argv...)
}

// lossExpr is the nft match for "this packet is among pct percent", empty for 100.
func lossExpr(pct int) string {
	if pct >= 100 {
		return ""
	}
	return fmt.Sprintf(" numgen random mod 100 < %d", pct)
}
