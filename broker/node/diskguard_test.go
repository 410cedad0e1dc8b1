package node

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestD8DiskGuardFencesWhileAWriteHangs is the regression test of chaos
// scenario D8 on the leader: a leader whose disk hung kept heartbeating from
// raft's replication goroutines while its leader loop waited on the disk, so
// the followers never elected another and the group acknowledged nothing for
// the whole stall. While a timed write runs past the threshold, every
// outgoing RPC must fail (heartbeats included); once it returns they pass.
func TestD8DiskGuardFencesWhileAWriteHangs(t *testing.T) {
	g := newDiskGuard(50*time.Millisecond, hclog.NewNullLogger())
	tr := fencedTransport{Transport: answeredTransport(), g: g}
	heartbeat := func() error {
		return tr.AppendEntries("b", "b", &raft.AppendEntriesRequest{}, &raft.AppendEntriesResponse{})
	}
	if err := heartbeat(); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- g.time(&g.logStart, func() error { <-release; return nil }) }()
	time.Sleep(20 * time.Millisecond)
	if err := heartbeat(); err != nil {
		t.Fatalf("a write of 20 ms (under the threshold) fenced: %v", err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := heartbeat(); !errors.Is(err, ErrDiskStalled) {
		t.Fatalf("heartbeat while a write hangs past the threshold: %v, want ErrDiskStalled", err)
	}
	if err := tr.RequestPreVote("b", "b", &raft.RequestPreVoteRequest{}, &raft.RequestPreVoteResponse{}); !errors.Is(err, ErrDiskStalled) {
		t.Fatalf("pre-vote while fenced: %v", err)
	}
	if _, err := tr.AppendEntriesPipeline("b", "b"); !errors.Is(err, ErrDiskStalled) && err != raft.ErrPipelineReplicationNotSupported {
		t.Fatalf("pipeline while fenced: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := heartbeat(); err != nil {
		t.Fatalf("after the write returned: %v", err)
	}
	if n := g.fences.Load(); n != 1 {
		t.Fatalf("%d fences counted, want 1", n)
	}
	if newDiskGuard(-1, hclog.NewNullLogger()).stalled() {
		t.Fatal("a disabled guard fenced")
	}
}

// TestD9FailedLogWriteStopsCampaigning is the regression test of chaos D9 on
// the leader (and D1's re-elections): a node whose raft log write failed steps
// down but, its log as long as anyone's, could win the next election and fail
// again, round after round, while nobody acknowledged anything. After a failed
// write it asks nobody for a vote until a write succeeds or campaignHold ends;
// heartbeats and answers are untouched.
func TestD9FailedLogWriteStopsCampaigning(t *testing.T) {
	g := newDiskGuard(50*time.Millisecond, hclog.NewNullLogger()) // hold 100 ms
	tr := fencedTransport{Transport: answeredTransport(), g: g}
	vote := func() error { return tr.RequestVote("b", "b", &raft.RequestVoteRequest{}, &raft.RequestVoteResponse{}) }
	preVote := func() error {
		return tr.RequestPreVote("b", "b", &raft.RequestPreVoteRequest{}, &raft.RequestPreVoteResponse{})
	}
	logs := guardedLogStore{LogStore: &failingLog{err: errors.New("no space left on device")}, g: g}
	if err := vote(); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	if err := logs.StoreLogs([]*raft.Log{{Index: 1}}); err == nil {
		t.Fatal("the failing log stored")
	}
	if err := vote(); !errors.Is(err, ErrLogFailing) {
		t.Fatalf("vote right after a failed log write: %v, want ErrLogFailing", err)
	}
	if err := preVote(); !errors.Is(err, ErrLogFailing) {
		t.Fatalf("pre-vote right after a failed log write: %v, want ErrLogFailing", err)
	}
	if err := tr.AppendEntries("b", "b", &raft.AppendEntriesRequest{}, &raft.AppendEntriesResponse{}); err != nil {
		t.Fatalf("append entries after a failed log write: %v, want it untouched", err)
	}
	time.Sleep(g.campaignHold() + 20*time.Millisecond)
	if err := vote(); err != nil {
		t.Fatalf("vote after the hold: %v", err)
	}
	// A write that succeeds ends the hold at once.
	_ = logs.StoreLogs([]*raft.Log{{Index: 1}})
	logs.LogStore.(*failingLog).err = nil
	if err := logs.StoreLogs([]*raft.Log{{Index: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := vote(); err != nil {
		t.Fatalf("vote after a successful write: %v", err)
	}
}

// failingLog is a raft.LogStore whose writes return err (nil: succeed).
type failingLog struct {
	raft.LogStore
	err error
}

func (f *failingLog) StoreLogs([]*raft.Log) error { return f.err }

// answeredTransport is an in-memory transport to a peer "b" that answers
// every RPC with success.
func answeredTransport() *raft.InmemTransport {
	_, a := raft.NewInmemTransport("a")
	_, b := raft.NewInmemTransport("b")
	a.Connect("b", b)
	go func() {
		for rpc := range b.Consumer() {
			switch rpc.Command.(type) {
			case *raft.AppendEntriesRequest:
				rpc.Respond(&raft.AppendEntriesResponse{Success: true}, nil)
			case *raft.RequestVoteRequest:
				rpc.Respond(&raft.RequestVoteResponse{}, nil)
			case *raft.RequestPreVoteRequest:
				rpc.Respond(&raft.RequestPreVoteResponse{}, nil)
			default:
				rpc.Respond(nil, nil)
			}
		}
	}()
	return a
}
