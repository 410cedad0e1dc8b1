package node_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
)

const testTopic = "TestTopic"

// ack is one acknowledged message.
type ack struct {
	queue int32
	body  []byte
	res   fsm.MessageResult
}

// history records what producers saw.
type history struct {
	mu            sync.Mutex
	acks          []ack
	failed        atomic.Int64 // definitely not applied (after retries gave up)
	unknown       atomic.Int64 // ErrUnknownOutcome
	unknownBodies [][]byte
	seq           atomic.Int64 // makes every body unique across produce calls
}

func (h *history) add(a ack) {
	h.mu.Lock()
	h.acks = append(h.acks, a)
	h.mu.Unlock()
}

func body(producer, seq int) []byte {
	return fmt.Appendf(nil, "p%03d-s%06d-%s", producer, seq, bytes.Repeat([]byte{'x'}, 64))
}

// produce runs producers that each send count messages, one per Propose,
// through c.Propose (which follows the leader and retries definite failures),
// round-robin over queues. It stops early when stop is closed.
func produce(t *testing.T, c *testcluster.Cluster, h *history, producers, count int, queues int32, stop <-chan struct{}) {
	t.Helper()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range count {
				select {
				case <-stop:
					return
				default:
				}
				q := int32((p*count + s) % int(queues))
				b := body(p, int(h.seq.Add(1)))
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := c.Propose(ctx, [][]byte{testcluster.Message(testTopic, q, b)})
				cancel()
				switch {
				case err == nil && res[0].Err == nil:
					h.add(ack{queue: q, body: b, res: res[0]})
				case errors.Is(err, node.ErrUnknownOutcome):
					h.unknown.Add(1)
					h.mu.Lock()
					h.unknownBodies = append(h.unknownBodies, b)
					h.mu.Unlock()
				case err == nil:
					t.Errorf("business failure: %v", res[0].Err)
					return
				default:
					h.failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

// verifyAcks checks on every running node that each ack is stored at its
// physical offset with its body and at its queue offset, and that no body is
// stored twice.
func verifyAcks(t *testing.T, c *testcluster.Cluster, h *history) {
	t.Helper()
	c.WaitConverged(30 * time.Second)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range c.Running() {
		st := m.Node().Store()
		seen := map[string]int{}
		for _, tq := range st.Topics() {
			off := st.MinQueueOffset(tq.Topic, tq.QueueID)
			for {
				r, err := st.GetMessages(tq.Topic, tq.QueueID, off, 1024, 64<<20, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, raw := range r.Messages {
					msg, err := store.DecodeMessage(raw, true)
					if err != nil {
						t.Fatalf("%s: decode: %v", m.ID, err)
					}
					seen[string(msg.Body)]++
				}
				got, next := len(r.Messages), r.NextBeginOffset
				r.Release()
				if got == 0 || next <= off {
					break
				}
				off = next
			}
		}
		for _, a := range h.acks {
			got, err := testcluster.ReadBody(m, a.res.PhysicalOffset)
			if err != nil {
				t.Fatalf("%s: ack %q at %d: %v", m.ID, a.body, a.res.PhysicalOffset, err)
			}
			if !bytes.Equal(got, a.body) {
				t.Fatalf("%s: ack at %d holds %q, want %q", m.ID, a.res.PhysicalOffset, got, a.body)
			}
			if a.res.QueueID != a.queue {
				t.Fatalf("ack %q: queue %d, sent to %d", a.body, a.res.QueueID, a.queue)
			}
			if n := seen[string(a.body)]; n != 1 {
				t.Fatalf("%s: acked body %q stored %d times", m.ID, a.body, n)
			}
			r, err := st.GetMessages(testTopic, a.queue, a.res.QueueOffset, 1, 1<<20, nil)
			if err != nil || len(r.Messages) != 1 || store.PhysicalOffsetOf(r.Messages[0]) != a.res.PhysicalOffset {
				t.Fatalf("%s: queue %d offset %d does not point at ack's physical offset %d (%v)", m.ID, a.queue, a.res.QueueOffset, a.res.PhysicalOffset, err)
			}
			r.Release()
		}
		for b, n := range seen {
			if n != 1 {
				t.Fatalf("%s: body %q stored %d times", m.ID, b, n)
			}
		}
	}
}

func bodyOf(t *testing.T, raw []byte) string {
	t.Helper()
	msg, err := store.DecodeMessage(raw, false)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return string(msg.Body)
}
