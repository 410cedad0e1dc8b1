package node

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// refusingFollower is a raft transport that answers every AppendEntries with
// Success=false, as a follower whose log does not match does.
func refusingFollower(t *testing.T) *raft.NetworkTransport {
	t.Helper()
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	go func() {
		for rpc := range tr.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: false}, nil)
		}
	}()
	return tr
}

// replicateLikeRaft drives p as raft v1.7.3's pipelineReplicate does once a
// follower refuses: its decoder (pipelineDecode) takes the first response and
// returns, while the send loop sends a few more requests before it notices. It
// reports whether a send blocked for 2 s (the deadlock).
func replicateLikeRaft(t *testing.T, p raft.AppendPipeline) (deadlocked bool) {
	t.Helper()
	decoderGone := make(chan struct{})
	go func() {
		defer close(decoderGone)
		f := <-p.Consumer()
		_ = f.Error() // Success=false: raft's decoder returns here
	}()
	for i := range 5 {
		sent := make(chan error, 1)
		go func() {
			_, err := p.AppendEntries(&raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}, Term: 1}, &raft.AppendEntriesResponse{})
			sent <- err
		}()
		select {
		case err := <-sent:
			if err != nil {
				t.Fatalf("send %d: %v", i, err)
			}
		case <-time.After(2 * time.Second):
			return true
		}
		if i == 0 {
			<-decoderGone
		}
	}
	return false
}

// TestRawRaftPipelineDeadlocksAfterARefusedAppend pins the hashicorp/raft
// v1.7.3 behaviour drainedTransport fixes. If this fails after an upgrade,
// raft no longer deadlocks and the wrapper can go.
func TestRawRaftPipelineDeadlocksAfterARefusedAppend(t *testing.T) {
	follower := refusingFollower(t)
	leader, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer leader.Close()
	p, err := leader.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() // releases the blocked send
	if !replicateLikeRaft(t, p) {
		t.Fatal("raft's own pipeline did not block after its decoder returned: upstream fixed the deadlock")
	}
}

// TestD9PipelineKeepsSendingAfterARefusedAppend: chaos D9 (a follower's disk
// full for 4 s) left the leader's replication to it deadlocked for good, the
// follower never sent another entry. Through drainedTransport every send
// returns, so raft's send loop reaches its check of the decoder and falls
// back to plain replication; Close then ends the pipeline.
func TestD9PipelineKeepsSendingAfterARefusedAppend(t *testing.T) {
	follower := refusingFollower(t)
	inner, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	leader := drainedTransport{Transport: inner}
	defer leader.Close()
	p, err := leader.AppendEntriesPipeline("f", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	if replicateLikeRaft(t, p) {
		t.Fatal("a send blocked for 2 s after the decoder returned: the pipeline deadlocked")
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close blocked")
	}
}
