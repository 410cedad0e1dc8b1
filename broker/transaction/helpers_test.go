package transaction_test

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/transaction"
	"github.com/rocketraft/rocketraft/internal/fakereplica"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

var testStoreHost = netip.MustParseAddrPort("127.0.0.1:10911")

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// recConn records check-backs.
type recConn struct {
	mu   sync.Mutex
	reqs []*transport.Command
}

func (c *recConn) InvokeOneway(req *transport.Command) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs = append(c.reqs, req)
	return nil
}

func (c *recConn) take() []*transport.Command {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.reqs
	c.reqs = nil
	return out
}

// countingTx counts the TransactionOps entries that reached the fake's state.
type countingTx struct {
	*fakereplica.Replica
	mu      sync.Mutex
	entries int
}

func (c *countingTx) ApplyTransactionOps(ctx context.Context, ops []replica.TransactionOp) ([]replica.TransactionOpResult, error) {
	res, err := c.Replica.ApplyTransactionOps(ctx, ops)
	if err == nil {
		c.mu.Lock()
		c.entries++
		c.mu.Unlock()
	}
	return res, err
}

func (c *countingTx) entryCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries
}

// putHalf stores n half messages for group as the send path would.
func putHalf(t *testing.T, rep *fakereplica.Replica, group string, n int) {
	t.Helper()
	var recs [][]byte
	for i := range n {
		key := fmt.Sprintf("H-%d", i)
		m := store.Message{
			Topic: transaction.HalfTopic, BornTimestamp: 1700000000000, BornHost: testStoreHost, StoreHost: testStoreHost,
			Body: []byte("body-" + key),
			Properties: store.EncodeProperties(map[string]string{store.PropertyUniqKey: key, store.PropertyTransaction: "true",
				store.PropertyProducerGroup: group, store.PropertyRealTopic: "Real", store.PropertyRealQueueID: strconv.Itoa(i % 2)}),
		}
		rec, err := store.AppendMessage(nil, &m)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := rep.PutMessages(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	fakereplica.WaitDispatched(t, rep.Store())
}
