package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// ErrNothingToSnapshot: raft has applied nothing since its last snapshot. The
// admin handler answers it as success: the state the operator asked for holds.
var ErrNothingToSnapshot = errors.New("nothing new to snapshot")

// ErrNoRaftAdmin: the Replica does not implement RaftAdmin (a test double).
var ErrNoRaftAdmin = errors.New("replica does not support raft administration")

// RaftPeer is one member of the group's raft configuration.
type RaftPeer struct {
	ID      string `json:"id"`
	Address string `json:"address"`
	// Suffrage is raft's name for it: Voter, Nonvoter or Staging.
	Suffrage string `json:"suffrage"`
	Leader   bool   `json:"leader"`
}

// RaftAdmin is the optional part of a Replica that the admin CLI drives:
// membership, snapshots and raft's own counters. nodeReplica implements it; the
// broker checks for it with a type assertion so test doubles need not.
type RaftAdmin interface {
	Peers() ([]RaftPeer, error)
	AddVoter(ctx context.Context, id, addr string) error
	AddNonvoter(ctx context.Context, id, addr string) error
	RemoveServer(ctx context.Context, id string) error
	// Snapshot snapshots this node (not the group) and compacts its log.
	Snapshot() error
	// RaftStats is hashicorp/raft's Stats() map (last_contact, num_peers, …).
	RaftStats() map[string]string
}

// membershipTimeout bounds one configuration change: raft commits it like any
// entry, plus catching a new member up for AddVoter.
const membershipTimeout = 10 * time.Second

func (b *Broker) raftAdmin() (RaftAdmin, error) {
	ra, ok := b.replica.(RaftAdmin)
	if !ok {
		return nil, ErrNoRaftAdmin
	}
	return ra, nil
}

// runtimeInfo is GET_BROKER_RUNTIME_INFO's table: RocketMQ's key names where the
// meaning is the same, raft's state under plain names.
func (b *Broker) runtimeInfo() map[string]string {
	st := b.replica.Status()
	t := map[string]string{
		"brokerVersionDesc":  "V4_9_4",
		"brokerVersion":      strconv.Itoa(int(transport.ProtocolVersion)),
		"brokerClusterName":  b.cfg.ClusterName,
		"brokerName":         b.cfg.BrokerName,
		"brokerAddr":         b.cfg.ClientAddr,
		"selfId":             st.SelfID,
		"role":               st.Role.String(),
		"term":               strconv.FormatUint(st.Term, 10),
		"leaderId":           st.LeaderID,
		"appliedIndex":       strconv.FormatUint(st.AppliedIndex, 10),
		"commitIndex":        strconv.FormatUint(st.CommitIndex, 10),
		"lastIndex":          strconv.FormatUint(st.LastIndex, 10),
		"commitLogMaxOffset": strconv.FormatInt(int64(b.store.MaxPhysicalOffset()), 10),
		"commitLogMinOffset": strconv.FormatInt(int64(b.store.MinPhysicalOffset()), 10),
		"longPollWaiters":    strconv.Itoa(b.pulls.count()),
	}
	if ratio, err := b.store.DiskUsedRatio(); err == nil {
		t["commitLogDiskRatio"] = strconv.FormatFloat(ratio, 'f', 4, 64)
	}
	if ra, ok := b.replica.(RaftAdmin); ok {
		s := ra.RaftStats()
		t["lastContact"] = s["last_contact"]
		t["numPeers"] = s["num_peers"]
		t["lastSnapshotIndex"] = s["last_snapshot_index"]
		// raft's applied index counts no-op and configuration entries, which never
		// reach the FSM; lag is measured with it so an idle group shows none.
		t["raftAppliedIndex"] = s["applied_index"]
	}
	return t
}

// handleRuntimeInfo serves GET_BROKER_RUNTIME_INFO (28) on the node addressed.
func (b *Broker) handleRuntimeInfo() *transport.Command {
	body, err := json.Marshal(map[string]any{"table": b.runtimeInfo()})
	if err != nil {
		return errorResponse(err)
	}
	return okResponse(nil, body)
}

// handleRaftPeers serves RaftPeers: the configuration as this node knows it.
func (b *Broker) handleRaftPeers() *transport.Command {
	ra, err := b.raftAdmin()
	if err != nil {
		return errorResponse(err)
	}
	peers, err := ra.Peers()
	if err != nil {
		return errorResponse(err)
	}
	leader := b.replica.Status().LeaderID
	for i := range peers {
		peers[i].Leader = peers[i].ID == leader
	}
	body, err := json.Marshal(map[string]any{"servers": peers})
	if err != nil {
		return errorResponse(err)
	}
	return okResponse(nil, body)
}

// handleRaftChange serves the membership and leadership codes. They run on the
// leader (raft refuses them elsewhere); a follower forwards.
func (b *Broker) handleRaftChange(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	ra, err := b.raftAdmin()
	if err != nil {
		return errorResponse(err)
	}
	e := &ext{fields: req.ExtFields}
	code := req.RequestCode()
	id := e.str("id", code != transport.RaftTransferLeader)
	var addr string
	if code == transport.RaftAddVoter || code == transport.RaftAddNonvoter {
		addr = e.str("address", true)
	}
	if e.err != nil {
		return errorResponse(e.err)
	}
	cctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	switch code {
	case transport.RaftTransferLeader:
		if id != "" {
			if err := b.checkMember(ra, id); err != nil {
				return errorResponse(err)
			}
		}
		err = b.replica.TransferLeadership(cctx, id)
	case transport.RaftAddVoter:
		err = ra.AddVoter(cctx, id, addr)
	case transport.RaftAddNonvoter:
		err = ra.AddNonvoter(cctx, id, addr)
	case transport.RaftRemoveServer:
		err = ra.RemoveServer(cctx, id)
	}
	if err != nil {
		return errorResponse(fmt.Errorf("%s id=%q on %s: %w", code, id, b.cfg.SelfID, err))
	}
	b.log.Info("raft configuration change", "op", code, "id", id, "address", addr)
	return transport.NewResponse(transport.Success, "")
}

// checkMember rejects a transfer to an id that is not a member, which raft would
// otherwise report as an unknown outcome.
func (b *Broker) checkMember(ra RaftAdmin, id string) error {
	peers, err := ra.Peers()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(peers, func(p RaftPeer) bool { return p.ID == id }) {
		return fmt.Errorf("%w: id=%q: not a member of %s", ErrBadHeader, id, b.cfg.BrokerName)
	}
	return nil
}

// handleRaftSnapshot serves RaftSnapshot on the node addressed.
func (b *Broker) handleRaftSnapshot() *transport.Command {
	ra, err := b.raftAdmin()
	if err != nil {
		return errorResponse(err)
	}
	remark := "snapshot taken"
	if err := ra.Snapshot(); errors.Is(err, ErrNothingToSnapshot) {
		remark = "nothing new to snapshot"
	} else if err != nil {
		return errorResponse(err)
	}
	body, err := json.Marshal(map[string]string{"id": b.cfg.SelfID, "lastIndex": ra.RaftStats()["last_snapshot_index"], "result": remark})
	if err != nil {
		return errorResponse(err)
	}
	return okResponse(nil, body)
}

// QueueProgress is one queue of a consumer group's progress: the broker's max
// offset (next to be written), the group's committed offset and the difference.
type QueueProgress struct {
	Topic          string            `json:"topic"`
	QueueID        int32             `json:"queueId"`
	BrokerOffset   store.QueueOffset `json:"brokerOffset"`
	ConsumerOffset store.QueueOffset `json:"consumerOffset"` // -1: none committed
	Lag            int64             `json:"lag"`
}

// GroupProgress is the body of a ConsumerProgress answer.
type GroupProgress struct {
	Group      string          `json:"group"`
	BrokerName string          `json:"brokerName"`
	Queues     []QueueProgress `json:"queues"`
}

// groupProgress lists every queue of topic (every topic when empty) on which the
// group has committed an offset; a named topic lists all its queues. Offsets
// pending on the leader count as committed (they are what the group resumes from).
func (b *Broker) groupProgress(group, topic string) GroupProgress {
	gp := GroupProgress{Group: group, BrokerName: b.cfg.BrokerName, Queues: []QueueProgress{}}
	for _, t := range b.replica.Topics() {
		if topic != "" && t.Name != topic {
			continue
		}
		for q := range max(t.ReadQueueNums, t.WriteQueueNums) {
			off, ok := b.consumerOffset(group, t.Name, q)
			if !ok && topic == "" {
				continue
			}
			gp.Queues = append(gp.Queues, queueProgress(t.Name, q, off, ok,
				b.store.MinQueueOffset(t.Name, q), b.store.MaxQueueOffset(t.Name, q)))
		}
	}
	return gp
}

// queueProgress computes lag: a group without an offset would start at the
// queue's min, so everything readable counts.
func queueProgress(topic string, q int32, off store.QueueOffset, committed bool, minOff, maxOff store.QueueOffset) QueueProgress {
	p := QueueProgress{Topic: topic, QueueID: q, BrokerOffset: maxOff, ConsumerOffset: off}
	from := off
	if !committed {
		p.ConsumerOffset = -1
		from = minOff
	}
	p.Lag = max(int64(maxOff-from), 0)
	return p
}

// handleConsumerProgress serves ConsumerProgress on the leader, which holds the
// offsets not yet replicated; a follower forwards.
func (b *Broker) handleConsumerProgress(ctx context.Context, req *transport.Command) *transport.Command {
	if !b.isLeader() {
		return b.forwardToLeader(ctx, req)
	}
	e := &ext{fields: req.ExtFields}
	group, topic := e.str("consumerGroup", true), e.str("topic", false)
	if e.err != nil {
		return errorResponse(e.err)
	}
	if err := validateGroup(group); err != nil {
		return errorResponse(err)
	}
	body, err := json.Marshal(b.groupProgress(group, topic))
	if err != nil {
		return errorResponse(err)
	}
	return okResponse(nil, body)
}
