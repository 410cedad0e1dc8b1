package broker

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/devcert"
)

// TestTLSEnforcingWithTheGoClient: a nameserver and a broker with
// tlsMode=enforcing; the broker registers over TLS (verifying the nameserver
// against the CA), the official Go client with WithTls(true) produces and
// consumes through both, and plaintext clients are refused on both ports.
func TestTLSEnforcingWithTheGoClient(t *testing.T) {
	files, err := devcert.Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	serverTLS := &transport.TLSConfig{Mode: transport.TLSEnforcing, CertFile: files.Cert, KeyFile: files.Key}
	clientTLS, err := transport.ClientTLS(files.Cert, files.Key, files.CACert, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := startNameserver(t, nameserver.Config{TLS: serverTLS})
	st := openBrokerStore(t)
	rep := fakereplica.New(st, replica.RoleLeader)
	addr := proctest.TestAddr(t)
	b, err := New(Config{ClusterName: "c", BrokerName: "broker-a", ListenAddr: addr, ClientAddr: addr,
		NamesrvAddrs: []string{ns.Addr()}, SelfID: "n0", Peers: []Peer{{ID: "n0", ClientAddr: addr}},
		LongPollingEnable: true, TLS: serverTLS, ClientTLS: clientTLS}, st, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	const topic = "Secure"
	if err := rep.UpsertTopic(context.Background(), fsmTopic(topic)); err != nil {
		t.Fatal(err)
	}
	b.registerAll() // over TLS: the nameserver refuses anything else
	waitRoute(t, ns.Addr(), topic, clientTLS)

	plain := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	defer plain.Close()
	for name, a := range map[string]string{"nameserver": ns.Addr(), "broker": addr} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, err := plain.Invoke(ctx, a, transport.NewRequest(transport.HeartBeat, nil, []byte("{}")))
		cancel()
		if err == nil {
			t.Errorf("plaintext request to the %s was answered", name)
		}
	}

	// The Go client caches its clients by instance name, namesrv included: unique
	// names keep -count=N runs apart.
	run := time.Now().UnixNano()
	instance := func(name string) string { return fmt.Sprintf("%s-%d", name, run) }

	// The Go client's WithTls writes a process-wide default
	// (remote.DefaultRemotingClientConfig), read at every dial: it would leak into
	// every later client of this test binary, so it is put back at the end.
	t.Cleanup(func() {
		if _, err := rocketmq.NewProducer(producer.WithTls(false), producer.WithNameServer([]string{ns.Addr()}),
			producer.WithInstanceName(instance("tls-reset"))); err != nil {
			t.Error(err)
		}
	})

	const n = 5
	p, err := rocketmq.NewProducer(producer.WithNameServer([]string{ns.Addr()}), producer.WithGroupName("PG_tls"),
		producer.WithInstanceName(instance("tls-producer")), producer.WithRetry(0), producer.WithSendMsgTimeout(5*time.Second),
		producer.WithTls(true))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	var sent []string
	for i := range n {
		body := fmt.Sprintf("over TLS %d", i)
		if _, err := p.SendSync(context.Background(), primitive.NewMessage(topic, []byte(body))); err != nil {
			t.Fatalf("send %d over TLS: %v", i, err)
		}
		sent = append(sent, body)
	}
	_ = p.Shutdown()

	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	pc, err := rocketmq.NewPushConsumer(consumer.WithNameServer([]string{ns.Addr()}), consumer.WithGroupName("CG_tls"),
		consumer.WithInstance(instance("tls-consumer")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithTls(true))
	if err != nil {
		t.Fatal(err)
	}
	err = pc.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			got = append(got, string(m.Body))
		}
		if len(got) == n {
			close(done)
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Fatalf("consumed %d of %d messages over TLS: %v", len(got), n, got)
	}
	_ = pc.Shutdown()
	mu.Lock()
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(sent) {
		t.Errorf("consumed %v, want %v", got, sent)
	}
	mu.Unlock()

	// The same client without TLS: its first connection (the nameserver) is closed.
	pp, err := rocketmq.NewProducer(producer.WithNameServer([]string{ns.Addr()}), producer.WithGroupName("PG_plain"),
		producer.WithInstanceName(instance("plain-producer")), producer.WithRetry(0), producer.WithSendMsgTimeout(3*time.Second),
		producer.WithTls(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pp.Shutdown() }()
	if _, err := pp.SendSync(context.Background(), primitive.NewMessage(topic, []byte("in the clear"))); err == nil {
		t.Fatal("a plaintext Go client sent through tlsMode=enforcing")
	}
	if c := rep.PutCount(); c != n {
		t.Fatalf("%d messages stored, want the %d sent over TLS", c, n)
	}
}
