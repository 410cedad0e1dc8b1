package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/store"
)

// In-process scenarios (D1, D2, D7–D9, C1–C5) run a testcluster group in the
// test process: the fault layers they need sit under raft's log and the
// node's files, or are the node's clock, where a separate process cannot be
// reached. Each node serves a real broker (inprocgroup_test.go), and the
// real-client load of pacedload_test.go records every attempt in the same
// History the process scenarios use, so the same checker judges them.

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

// inprocFinish ends an in-process scenario as finish ends a process one: it
// stops the load, drains the load's topic from offset 0 through brokerId 0,
// closes the brokers, checks the live replicas with testcluster's byte
// comparison, stops every node, reads each replica offline and runs the
// checker on the History and the drain; it prints the report block and
// fails t when it is not OK.
func inprocFinish(t *testing.T, g *inprocGroup, p *pacedLoad, rep *Report, start time.Time) {
	t.Helper()
	p.stop()
	drain := p.drain()
	g.closeBrokers() // a closing leader hands off leadership: converged below
	c := g.c
	c.AssertReplicasIdentical() // waits for convergence; t.Errorf on differences
	log := hclog.New(&hclog.LoggerOptions{Name: "chaos", Level: hclog.Warn, Output: os.Stderr})
	var logs []ReplicaLog
	for _, m := range c.Members() {
		if m.Node() != nil {
			c.StopNode(m.ID)
		}
		rl, err := readInprocReplica(string(m.ID), filepath.Join(m.Dir, node.StoreDirName), p.load.Topic(), log)
		if err != nil {
			rep.Fail("read replica %s: %v", m.ID, err)
			continue
		}
		logs = append(logs, rl)
	}
	got := Check(p.h, logs, drain)
	if n, example := g.unattributed(p.h.Sends()); n > 0 {
		// D1's, D8's and D9's checks of who acknowledged read the STOREHOST.
		rep.Fail("%d acks whose offset msgId names no node's STOREHOST (first: %s)", n, example)
	}
	got.Replicas = len(c.Members())
	got.Scenario, got.Seed, got.Faults = rep.Scenario, rep.Seed, rep.Faults
	got.Failover, got.Notes = rep.Failover, rep.Notes
	got.Failures = append(got.Failures, rep.Failures...)
	got.Duration = time.Since(start)
	block := got.String()
	t.Logf("\n%s", block)
	appendReport(block)
	if !got.OK() {
		t.Errorf("%s failed its checks (details above)", rep.Scenario)
	}
}

// drain reads the load's topic from offset 0 through brokerId 0 (nil and a
// failure noted if it cannot: the checker then has no drain to compare).
func (p *pacedLoad) drain() map[QueueKey][]string {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	d, err := p.load.Workload().Drain(ctx)
	if err != nil {
		p.rep.Fail("final drain of %s: %v", p.load.Topic(), err)
		return nil
	}
	return d
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
