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
	_, a := raft.NewInmemTransport("a")
	_, b := raft.NewInmemTransport("b")
	a.Connect("b", b)
	go func() { // b answers every RPC
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
	tr := fencedTransport{Transport: a, g: g}
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
