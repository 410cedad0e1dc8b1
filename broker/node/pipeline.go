package node

import (
	"fmt"
	"sync"

	"github.com/hashicorp/raft"
)

// drainedTransport gives raft pipelines whose responses are always taken off
// the transport at once (drainedPipeline), fixing a deadlock of hashicorp/raft
// v1.7.3's pipeline replication that chaos D9 found: a follower that was never
// sent another entry after its disk had been full for 4 s.
//
// The deadlock: NetworkTransport sizes a pipeline's two hand-off channels at
// MaxRPCsInFlight-2, so with the default of 2 both are unbuffered. When a
// follower answers an AppendEntries with Success=false (or the read times out),
// raft's pipelineDecode returns and nobody reads the pipeline's Consumer any
// more. The transport's decoder, holding the next response, blocks handing it
// over; raft's send loop, picking its trigger channel before noticing the
// decoder is gone, sends one more request and blocks handing that to the
// blocked decoder. The send loop never returns, so the pipeline is never
// closed, the replication goroutine never ends, and its heartbeats keep going:
// the follower looks healthy, never times out, never gets another entry, and
// raft.Shutdown on the leader waits forever.
//
// drainedPipeline moves every response from the transport into a buffer of its
// own as soon as it is decoded, so the transport's decoder never blocks on
// raft, so the send loop's next send is handed over, and the loop sees that the
// decoder has finished and falls back to plain replication as raft intends.
// The buffer only holds what is sent between the decoder's exit and the loop
// noticing it (one or two requests: the loop's select picks among ready
// channels at random). Production and tests both get it: Open wraps every
// transport.
type drainedTransport struct {
	raft.Transport
}

var (
	_ raft.WithPreVote = drainedTransport{}
	_ raft.WithClose   = drainedTransport{}
)

func (t drainedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := t.Transport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return drainPipeline(p), nil
}

// RequestPreVote forwards raft.WithPreVote (raft turns pre-vote off without it).
func (t drainedTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	pv, ok := t.Transport.(raft.WithPreVote)
	if !ok {
		return fmt.Errorf("node: transport %T has no pre-vote", t.Transport)
	}
	return pv.RequestPreVote(id, target, args, resp)
}

// Close forwards raft.WithClose (raft closes its transport on Shutdown).
func (t drainedTransport) Close() error {
	if c, ok := t.Transport.(raft.WithClose); ok {
		return c.Close()
	}
	return nil
}

// pipelineSpill bounds the responses a drainedPipeline holds for raft. In
// steady state raft takes each at once; after its decoder has gone only the
// few sends before the send loop notices are left. A full buffer blocks the
// transport's decoder again, as without the wrapper.
const pipelineSpill = 256

// drainedPipeline is an AppendPipeline whose responses are forwarded from the
// transport into a buffered channel by a goroutine of its own (see
// drainedTransport).
type drainedPipeline struct {
	raft.AppendPipeline
	out      chan raft.AppendFuture
	stop     chan struct{}
	stopOnce sync.Once
}

func drainPipeline(p raft.AppendPipeline) *drainedPipeline {
	d := &drainedPipeline{AppendPipeline: p, out: make(chan raft.AppendFuture, pipelineSpill), stop: make(chan struct{})}
	go d.forward(p.Consumer())
	return d
}

func (d *drainedPipeline) forward(in <-chan raft.AppendFuture) {
	for {
		select {
		case f := <-in:
			select {
			case d.out <- f:
			case <-d.stop:
				return
			}
		case <-d.stop:
			return
		}
	}
}

// Consumer is the buffered channel of responses, in the order sent.
func (d *drainedPipeline) Consumer() <-chan raft.AppendFuture { return d.out }

// Close closes the transport's pipeline and ends the forwarding goroutine.
func (d *drainedPipeline) Close() error {
	err := d.AppendPipeline.Close()
	d.stopOnce.Do(func() { close(d.stop) })
	return err
}
