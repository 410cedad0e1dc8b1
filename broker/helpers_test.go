package broker

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// openBrokerStore opens a small store (1 MiB segments) closed when the test ends.
func openBrokerStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(store.Config{Dir: t.TempDir(), CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 1000, IndexHashSlots: 100, IndexMaxEntries: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// startNameserver starts an in-process nameserver on a free loopback port.
func startNameserver(t testing.TB, cfg nameserver.Config) *nameserver.Server {
	t.Helper()
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = "127.0.0.1:0"
	}
	ns := nameserver.New(cfg, nil)
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ns.Close() })
	return ns
}

// waitRoute waits until the nameserver serves a route for topic; tlsCfg, when
// set, dials it over TLS.
func waitRoute(t *testing.T, nsAddr, topic string, tlsCfg *tls.Config) {
	t.Helper()
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, TLS: tlsCfg})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := c.Invoke(ctx, nsAddr, transport.NewRequest(transport.GetRouteInfoByTopic, map[string]string{"topic": topic}, nil))
		cancel()
		if err == nil && resp.ResponseCode() == transport.Success {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s at the nameserver: %v %v", topic, resp, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
