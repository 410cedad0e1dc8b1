package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

// membershipTimeout bounds one configuration change: raft commits it like any
// entry, plus catching a new member up for AddVoter.
const membershipTimeout = 10 * time.Second

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
	f := route.FieldsOf(req.Command)
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
		// Pending consumer offsets would be dropped with the leadership;
		// replicate them first (the transfer still goes ahead if that fails).
		if ferr := a.d.Offsets.Flush(cctx); ferr != nil {
			a.log.Warn("consumer offset flush before leadership transfer failed", "error", ferr)
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
