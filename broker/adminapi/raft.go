package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// membershipTimeout bounds one configuration change: raft commits it like any
// entry, plus catching a new member up for AddVoter.
const membershipTimeout = 10 * time.Second

// runtimeInfo is GET_BROKER_RUNTIME_INFO's table: RocketMQ's key names where the
// meaning is the same, raft's state under plain names.
func (a *API) runtimeInfo() map[string]string {
	st := a.d.Replica.Status()
	s := a.d.Store
	t := map[string]string{
		"brokerVersionDesc":  "V4_9_4",
		"brokerVersion":      strconv.Itoa(int(transport.ProtocolVersion)),
		"brokerClusterName":  a.d.ClusterName,
		"brokerName":         a.d.BrokerName,
		"brokerAddr":         a.d.ClientAddr,
		"selfId":             st.SelfID,
		"role":               st.Role.String(),
		"term":               strconv.FormatUint(st.Term, 10),
		"leaderId":           st.LeaderID,
		"appliedIndex":       strconv.FormatUint(st.AppliedIndex, 10),
		"commitIndex":        strconv.FormatUint(st.CommitIndex, 10),
		"lastIndex":          strconv.FormatUint(st.LastIndex, 10),
		"commitLogMaxOffset": strconv.FormatInt(int64(s.MaxPhysicalOffset()), 10),
		"commitLogMinOffset": strconv.FormatInt(int64(s.MinPhysicalOffset()), 10),
		"longPollWaiters":    strconv.Itoa(a.d.Pulls.Count()),
	}
	if ratio, err := s.DiskUsedRatio(); err == nil {
		t["commitLogDiskRatio"] = strconv.FormatFloat(ratio, 'f', 4, 64)
	}
	rs := a.d.Replica.RaftStats()
	t["lastContact"] = rs["last_contact"]
	t["numPeers"] = rs["num_peers"]
	t["lastSnapshotIndex"] = rs["last_snapshot_index"]
	// raft's applied index counts no-op and configuration entries, which never
	// reach the FSM; lag is measured with it so an idle group shows none.
	t["raftAppliedIndex"] = rs["applied_index"]
	return t
}

// runtimeInfoHandler serves GET_BROKER_RUNTIME_INFO (28) on the node addressed.
func (a *API) runtimeInfoHandler(context.Context, *route.Request) (*transport.Command, error) {
	body, err := json.Marshal(map[string]any{"table": a.runtimeInfo()})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// raftPeers serves RaftPeers: the configuration as this node knows it.
func (a *API) raftPeers(context.Context, *route.Request) (*transport.Command, error) {
	peers, err := a.d.Replica.Peers()
	if err != nil {
		return nil, err
	}
	leader := a.d.Replica.Status().LeaderID
	for i := range peers {
		peers[i].Leader = peers[i].ID == leader
	}
	body, err := json.Marshal(map[string]any{"servers": peers})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}

// raftChange serves the membership and leadership codes on the leader (raft
// refuses them elsewhere; the chain relays them from a follower).
func (a *API) raftChange(ctx context.Context, req *route.Request) (*transport.Command, error) {
	f := route.NewFields(req.ExtFields)
	code := req.RequestCode()
	id := f.Str("id", code != transport.RaftTransferLeader)
	var addr string
	if code == transport.RaftAddVoter || code == transport.RaftAddNonvoter {
		addr = f.Str("address", true)
	}
	if f.Err != nil {
		return nil, f.Err
	}
	cctx, cancel := context.WithTimeout(ctx, membershipTimeout)
	defer cancel()
	rep := a.d.Replica
	var err error
	switch code {
	case transport.RaftTransferLeader:
		if id != "" {
			if err := a.checkMember(id); err != nil {
				return nil, err
			}
		}
		err = rep.TransferLeadership(cctx, id)
	case transport.RaftAddVoter:
		err = rep.AddVoter(cctx, id, addr)
	case transport.RaftAddNonvoter:
		err = rep.AddNonvoter(cctx, id, addr)
	case transport.RaftRemoveServer:
		err = rep.RemoveServer(cctx, id)
	}
	if err != nil {
		return nil, fmt.Errorf("%s id=%q on %s: %w", code, id, a.d.SelfID, err)
	}
	a.log.Info("raft configuration change", "op", code, "id", id, "address", addr)
	return transport.NewResponse(transport.Success, ""), nil
}

// checkMember rejects a transfer to an id that is not a member, which raft would
// otherwise report as an unknown outcome.
func (a *API) checkMember(id string) error {
	peers, err := a.d.Replica.Peers()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(peers, func(p replica.Peer) bool { return p.ID == id }) {
		return fmt.Errorf("%w: id=%q: not a member of %s", route.ErrBadHeader, id, a.d.BrokerName)
	}
	return nil
}

// raftSnapshot serves RaftSnapshot on the node addressed. Nothing new to
// snapshot is success: the state the operator asked for holds.
func (a *API) raftSnapshot(context.Context, *route.Request) (*transport.Command, error) {
	remark := "snapshot taken"
	if err := a.d.Replica.Snapshot(); errors.Is(err, replica.ErrNothingToSnapshot) {
		remark = "nothing new to snapshot"
	} else if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]string{"id": a.d.SelfID, "lastIndex": a.d.Replica.RaftStats()["last_snapshot_index"], "result": remark})
	if err != nil {
		return nil, err
	}
	return route.OK(nil, body), nil
}
