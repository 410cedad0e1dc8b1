package admin

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
	"github.com/rocketraft/rocketraft/transport"
)

// topicBroker is one fake broker node holding a topic table: GET_TOPIC_CONFIG
// answers from it, UPDATE_AND_CREATE_TOPIC replaces an entry, as the real
// broker's handlers do. The first one also answers as the nameserver.
type topicBroker struct {
	name   string
	mu     sync.Mutex
	topics map[string]nameserver.TopicConfig
	writes []map[string]string // UPDATE_AND_CREATE_TOPIC headers received
	// old makes it answer GET_TOPIC_CONFIG as a broker without the code does.
	old bool
}

func (b *topicBroker) handle(peers func() map[string]string) transport.HandlerFunc {
	return func(_ context.Context, _ *transport.Conn, req *transport.Command) *transport.Command {
		b.mu.Lock()
		defer b.mu.Unlock()
		ok := func(body any) *transport.Command {
			r := transport.NewResponse(transport.Success, "")
			if body != nil {
				r.Body, _ = json.Marshal(body)
			}
			return r
		}
		switch req.RequestCode() {
		case transport.GetBrokerClusterInfo:
			ci := nameserver.ClusterInfo{BrokerAddrTable: map[string]nameserver.BrokerData{}}
			for name, addr := range peers() {
				ci.BrokerAddrTable[name] = nameserver.BrokerData{Cluster: "C", BrokerName: name, BrokerAddrs: nameserver.BrokerAddrs{0: addr}}
			}
			return ok(ci)
		case transport.GetTopicConfig:
			if b.old {
				return transport.NewResponse(transport.RequestCodeNotSupported, "")
			}
			tc, found := b.topics[req.Field("topic")]
			if !found {
				return transport.NewResponse(transport.TopicNotExist, "No topic in this broker. topic: "+req.Field("topic"))
			}
			return ok(tc)
		case transport.UpdateAndCreateTopic:
			b.writes = append(b.writes, req.Fields())
			n := func(k string) int32 { v, _ := strconv.Atoi(req.Field(k)); return int32(v) }
			b.topics[req.Field("topic")] = nameserver.TopicConfig{TopicName: req.Field("topic"),
				ReadQueueNums: n("readQueueNums"), WriteQueueNums: n("writeQueueNums"), Perm: nameserver.Perm(n("perm")),
				TopicFilterType: req.Field("topicFilterType"), TopicSysFlag: n("topicSysFlag"), Order: req.Field("order") == "true"}
			return ok(nil)
		}
		return transport.NewResponse(transport.RequestCodeNotSupported, "")
	}
}

func (b *topicBroker) writesSoFar() []map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]map[string]string(nil), b.writes...)
}

// twoGroups starts broker-a (holding T) and broker-b (without it).
func twoGroups(t *testing.T) (*Client, *topicBroker, *topicBroker) {
	t.Helper()
	a := &topicBroker{name: "broker-a", topics: map[string]nameserver.TopicConfig{
		"T": {TopicName: "T", ReadQueueNums: 3, WriteQueueNums: 5, Perm: 6, TopicFilterType: "SINGLE_TAG", TopicSysFlag: 1, Order: true}}}
	b := &topicBroker{name: "broker-b", topics: map[string]nameserver.TopicConfig{}}
	// The addresses are known only after Start, and handlers read them: a
	// sync.Map gives the race detector the ordering the network gives.
	var addrs sync.Map
	peers := func() map[string]string {
		out := map[string]string{}
		addrs.Range(func(k, v any) bool { out[k.(string)] = v.(string); return true })
		return out
	}
	for _, br := range []*topicBroker{a, b} {
		srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0"}, br.handle(peers))
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		addrs.Store(br.name, srv.Addr())
	}
	ns, _ := addrs.Load(a.name)
	c := New(Config{NamesrvAddrs: []string{ns.(string)}, Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c, a, b
}

func int32p(v int32) *int32 { return &v }

func TestTopicUpdateKeepsWhatIsNotGiven(t *testing.T) {
	c, a, b := twoGroups(t)
	ctx := context.Background()

	cs, err := c.TopicUpdate(ctx, "T", "", "", TopicPatch{Perm: int32p(4)})
	if err != nil || TopicUpdateError(cs) != nil || len(cs) != 2 {
		t.Fatalf("update: %+v %v", cs, err)
	}
	if cs[0].Group != "broker-a" || cs[0].Outcome() != "updated" || cs[1].Group != "broker-b" || cs[1].Outcome() != "absent" {
		t.Fatalf("outcomes %s=%s %s=%s", cs[0].Group, cs[0].Outcome(), cs[1].Group, cs[1].Outcome())
	}
	ws := a.writesSoFar()
	if len(ws) != 1 {
		t.Fatalf("broker-a got %d writes, want 1", len(ws))
	}
	for k, want := range map[string]string{"topic": "T", "readQueueNums": "3", "writeQueueNums": "5", "perm": "4",
		"topicSysFlag": "1", "order": "true", "topicFilterType": "SINGLE_TAG"} {
		if ws[0][k] != want {
			t.Errorf("write %s=%q, want %q (all: %v)", k, ws[0][k], want, ws[0])
		}
	}
	if n := len(b.writesSoFar()); n != 0 {
		t.Errorf("broker-b, which lacks the topic, got %d writes", n)
	}

	// -w 16 next: the perm just written stays.
	cs, err = c.TopicUpdate(ctx, "T", "", "broker-a", TopicPatch{WriteQueueNums: int32p(16)})
	if err != nil || len(cs) != 1 || cs[0].After.Perm != 4 || cs[0].After.WriteQueueNums != 16 || cs[0].After.ReadQueueNums != 3 {
		t.Fatalf("second update: %+v %v", cs, err)
	}
	out := TopicUpdateTable("T", cs).String()
	for _, want := range []string{"5->16", "R--(4)", "true", "OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	// The same value again writes nothing.
	cs, err = c.TopicUpdate(ctx, "T", "", "broker-a", TopicPatch{WriteQueueNums: int32p(16)})
	if err != nil || cs[0].Outcome() != "unchanged" || len(a.writesSoFar()) != 2 {
		t.Fatalf("no-op update: %+v %v, %d writes", cs, err, len(a.writesSoFar()))
	}
}

func TestTopicUpdateRefusals(t *testing.T) {
	c, a, _ := twoGroups(t)
	ctx := context.Background()
	_, err := c.TopicUpdate(ctx, "Nope", "", "", TopicPatch{Perm: int32p(4)})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Nope") || !strings.Contains(err.Error(), "topic create") {
		t.Errorf("missing topic: %v", err)
	}
	// broker-b alone does not have T: that is the same error, not a silent no-op.
	if _, err := c.TopicUpdate(ctx, "T", "", "broker-b", TopicPatch{Perm: int32p(4)}); !errors.Is(err, ErrNotFound) {
		t.Errorf("group without the topic: %v", err)
	}
	if _, err := c.TopicUpdate(ctx, "T", "", "", TopicPatch{}); !errors.Is(err, ErrNothingToChange) {
		t.Errorf("empty patch: %v", err)
	}
	if _, err := c.TopicUpdate(ctx, "T", "", "broker-z", TopicPatch{Perm: int32p(4)}); !errors.Is(err, ErrNoTarget) {
		t.Errorf("unknown group: %v", err)
	}
	// A broker without GET_TOPIC_CONFIG: refuse rather than write defaults.
	a.mu.Lock()
	a.old = true
	a.mu.Unlock()
	cs, err := c.TopicUpdate(ctx, "T", "", "broker-a", TopicPatch{Perm: int32p(4)})
	if err != nil || len(cs) != 1 {
		t.Fatalf("old broker: %+v %v", cs, err)
	}
	if uerr := TopicUpdateError(cs); !errors.Is(uerr, ErrBrokerResponse) || !strings.Contains(uerr.Error(), "upgrade") {
		t.Errorf("old broker error: %v", uerr)
	}
	if n := len(a.writesSoFar()); n != 0 {
		t.Errorf("old broker got %d writes", n)
	}
	if out := TopicUpdateTable("T", cs).String(); !strings.Contains(out, "FAILED") {
		t.Errorf("table of a failed read:\n%s", out)
	}
}
