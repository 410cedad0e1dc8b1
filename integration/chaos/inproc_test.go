package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/internal/testcluster"
	"github.com/rocketraft/rocketraft/store"
)

// In-process scenarios (D1, D2) run a testcluster group in the test process:
// the fault layers they need sit under raft's log inside the node, where a
// separate process cannot be reached. The producers call node.Propose on the
// leader directly (what the broker's send path does after decoding) and record
// every attempt in the same History the process scenarios use, so the same
// checker judges them.

// inprocStoreConfig is testcluster's store geometry: reopening a replica
// offline needs the same file sizes.
func inprocStoreConfig(dir string, log hclog.Logger) store.Config {
	return store.Config{Dir: dir, CommitLogSegmentSize: 1 << 20, ConsumeQueueEntriesPerFile: 4096,
		IndexHashSlots: 4096, IndexMaxEntries: 16384, Logger: log}
}

// readInprocReplica is ReadReplica for a testcluster node's store (same
// recovery on open, same output), reading only topic.
func readInprocReplica(id, storeDir, topic string, log hclog.Logger) (ReplicaLog, error) {
	rl := ReplicaLog{Node: id, Queues: map[QueueKey][]string{}}
	s, err := store.Open(inprocStoreConfig(storeDir, log))
	if err != nil {
		return rl, fmt.Errorf("replica %s: open store: %w", id, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	minOff, maxOff := s.MinPhysicalOffset(), s.MaxPhysicalOffset()
	if err := s.WaitDispatched(ctx, maxOff); err != nil {
		_ = s.Close()
		return rl, fmt.Errorf("replica %s: dispatch to %d: %w", id, maxOff, err)
	}
	for _, tq := range s.Topics() {
		if tq.Topic != topic {
			continue
		}
		ids, err := readQueue(s, tq.Topic, tq.QueueID)
		if err != nil {
			_ = s.Close()
			return rl, fmt.Errorf("replica %s: queue %d: %w", id, tq.QueueID, err)
		}
		rl.Queues[QueueKey{Topic: tq.Topic, QueueID: tq.QueueID}] = ids
	}
	if err := s.Close(); err != nil {
		return rl, fmt.Errorf("replica %s: close store: %w", id, err)
	}
	rl.CommitLogMin = int64(minOff)
	if rl.CommitLog, err = readCommitLog(filepath.Join(storeDir, "commitlog"), int64(minOff), int64(maxOff)); err != nil {
		return rl, fmt.Errorf("replica %s: %w", id, err)
	}
	return rl, nil
}

// inprocWorkload is producers sending unique ids, one message per Propose and
// no retries: an id that failed is then a clean test of "refused means not
// stored".
type inprocWorkload struct {
	c      *testcluster.Cluster
	h      *History
	topic  string
	queues int32

	stop chan struct{}
	// gate, when set, paces the producers instead of their interval: each send
	// waits for a token (the disk-at-load scenarios' open-loop rate).
	gate <-chan struct{}
	wg   sync.WaitGroup
	// unexpected counts errors outside node.Propose's contract.
	unexpected atomic.Int64
	lastErr    atomic.Value
}

func (w *inprocWorkload) produce(p int, interval time.Duration) {
	client := fmt.Sprintf("p%d", p)
	for k := 0; ; k++ {
		if w.gate != nil {
			select {
			case <-w.stop:
				return
			case <-w.gate:
			}
		} else {
			select {
			case <-w.stop:
				return
			case <-time.After(interval):
			}
		}
		l := w.c.Leader()
		var n *node.Node
		if l != nil {
			n = l.Node()
		}
		if n == nil {
			k-- // nobody to send to: no attempt
			continue
		}
		id := fmt.Sprintf("%s-%06d", client, k)
		q := int32(k) % w.queues
		op := SendOp{Client: client, ID: id, Attempt: 1, Queue: QueueKey{Topic: w.topic, QueueID: q}, Offset: -1, Addr: string(l.ID), Call: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		res, err := n.Propose(ctx, [][]byte{testcluster.Message(w.topic, q, []byte(id))})
		cancel()
		op.Return = time.Now()
		switch {
		case err == nil && len(res) == 1 && res[0].Err == nil:
			op.Outcome, op.Offset = OK, int64(res[0].QueueOffset)
		case err == nil:
			op.Outcome, op.Err = Fail, fmt.Sprintf("result %+v", res)
		case errors.Is(err, node.ErrNotLeader), errors.Is(err, node.ErrBusy), errors.Is(err, node.ErrClosed):
			op.Outcome, op.Err = Fail, err.Error()
		default:
			op.Outcome, op.Err = Unknown, err.Error()
			if !errors.Is(err, node.ErrUnknownOutcome) && !errors.Is(err, context.DeadlineExceeded) {
				w.unexpected.Add(1)
				w.lastErr.Store(err.Error())
			}
		}
		w.h.AddSend(op)
	}
}

// Stop ends the producers and waits for them.
func (w *inprocWorkload) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.wg.Wait()
}

// waitAcks waits until n sends called after since were acknowledged.
func (w *inprocWorkload) waitAcks(since time.Time, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		got := 0
		for _, s := range w.h.Sends() {
			if s.Outcome == OK && !s.Call.Before(since) {
				got++
			}
		}
		if got >= n {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// inprocFinish stops the workload, checks the live replicas with testcluster's
// byte comparison, stops every node, reads each replica offline and runs the
// checker; it prints the report block and fails t when it is not OK.
func inprocFinish(t *testing.T, c *testcluster.Cluster, w *inprocWorkload, rep *Report, start time.Time) {
	t.Helper()
	w.Stop()
	if n := w.unexpected.Load(); n > 0 {
		rep.Fail("%d Propose errors outside the contract (last: %v)", n, w.lastErr.Load())
	}
	c.AssertReplicasIdentical() // waits for convergence; t.Errorf on differences
	log := hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: os.Stderr})
	var logs []ReplicaLog
	for _, m := range c.Members() {
		if m.Node() != nil {
			c.StopNode(m.ID)
		}
		rl, err := readInprocReplica(string(m.ID), filepath.Join(m.Dir, node.StoreDirName), w.topic, log)
		if err != nil {
			rep.Fail("read replica %s: %v", m.ID, err)
			continue
		}
		logs = append(logs, rl)
	}
	got := Check(w.h, logs, nil)
	got.Replicas = len(c.Members())
	got.Scenario, got.Seed, got.Faults = rep.Scenario, rep.Seed, rep.Faults
	got.Failover, got.Notes = rep.Failover, rep.Notes
	got.Failures = append(got.Failures, rep.Failures...)
	got.Duration = time.Since(start)
	block := got.String()
	t.Logf("\n%s", block)
	if path := os.Getenv(envReport); path != "" {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
			fmt.Fprintf(f, "%s\n\n", block)
			_ = f.Close()
		}
	}
	if !got.OK() {
		t.Errorf("%s failed its checks (details above)", rep.Scenario)
	}
}

// envInprocLog set to a level name ("warn", "debug") logs the in-process
// group to stderr. Off by default: an injected fault makes raft log an error
// on every attempt, which would drown the report.
const envInprocLog = "ROCKETRAFT_CHAOS_INPROC_LOG"

func inprocLogger() hclog.Logger {
	level := hclog.Off
	if l := os.Getenv(envInprocLog); l != "" {
		level = hclog.LevelFromString(l)
	}
	return hclog.New(&hclog.LoggerOptions{Name: "tc", Level: level, Output: os.Stderr})
}
