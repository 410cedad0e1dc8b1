package nameserver

import (
	"context"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// TestRealGoClientParsesRoute asks our nameserver through rocketmq-client-go's own
// admin API, so its real route parser (internal/route.go) reads our JSON.
// FetchPublishMessageQueues lists write queues only for brokerNames whose
// brokerAddrs has id 0; a whitespace or shape mistake in our encoding loses the
// master and the queues with it.
func TestRealGoClientParsesRoute(t *testing.T) {
	rlog.SetLogLevel("fatal")
	s := startServer(t, Config{})
	c := NewClient(newTransportClient(t))
	ctx := ctxT(t)
	for _, r := range []RegisterRequest{
		reg("broker-a", "127.0.0.1:10911", 0, 1, 0, "GoTopic"),
		reg("broker-a", "127.0.0.1:10921", 1, 1, 0),
		reg("broker-a", "127.0.0.1:10931", 2, 1, 0),
		reg("broker-b", "127.0.0.1:20911", 0, 1, 0, "GoTopic"),
		reg("broker-c", "127.0.0.1:30921", 1, 1, 0), // follower only: no writable queues
	} {
		if _, err := c.RegisterBroker(ctx, s.Addr(), r); err != nil {
			t.Fatal(err)
		}
	}
	// broker-c's master registers the topic, then leaves; its follower stays.
	if _, err := c.RegisterBroker(ctx, s.Addr(), reg("broker-c", "127.0.0.1:30911", 0, 1, 0, "GoTopic")); err != nil {
		t.Fatal(err)
	}
	if err := c.UnregisterBroker(ctx, s.Addr(), UnregisterRequest{ClusterName: "DefaultCluster",
		BrokerName: "broker-c", BrokerAddr: "127.0.0.1:30911", BrokerID: 0}); err != nil {
		t.Fatal(err)
	}

	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{s.Addr()})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = adm.Close() }()

	mqs, err := adm.FetchPublishMessageQueues(context.Background(), "GoTopic")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, mq := range mqs {
		count[mq.BrokerName]++
	}
	if want := map[string]int{"broker-a": 4, "broker-b": 4}; !reflect.DeepEqual(count, want) {
		t.Fatalf("Go client publish queues per broker = %v, want %v", count, want)
	}

	tl, err := adm.FetchAllTopicList(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(tl.TopicList)
	if !reflect.DeepEqual(tl.TopicList, []string{"GoTopic"}) {
		t.Fatalf("Go client topic list = %v", tl.TopicList)
	}
}
