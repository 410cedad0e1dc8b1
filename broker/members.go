package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
)

// memberAnnounceTimeout bounds the one raft entry of announceSelf; like the
// system topics, a new leader that cannot commit it retries on its next role
// event (and at worst followers fall back to answering SERVICE_NOT_AVAILABLE).
const memberAnnounceTimeout = 5 * time.Second

// self is what this node tells the group about itself when it leads.
func (b *Broker) self() fsm.MemberInfo {
	return fsm.MemberInfo{ID: b.cfg.SelfID, ClientAddr: b.cfg.ClientAddr, Group: b.cfg.DLegerGroup}
}

// announceSelf replicates this node's client address and dLegerGroup when the
// group's entry for it differs (first leadership, a moved brokerIP1 or
// listenPort), so followers can relay writes here by raft id without
// dLegerPeerClientAddrs. Called by a new leader, after its barrier.
func (b *Broker) announceSelf() {
	self := b.self()
	if have, ok := b.replica.Member(self.ID); ok && have == self {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, memberAnnounceTimeout)
	defer cancel()
	if err := b.replica.AnnounceMember(ctx, self); err != nil && !errors.Is(err, context.Canceled) {
		b.log.Warn("announcing this node's client address to the group failed; followers cannot relay writes here "+
			"unless dLegerPeerClientAddrs lists it", "clientAddr", self.ClientAddr, "error", err)
		return
	}
	b.log.Info("announced this node's client address to the group", "id", self.ID, "clientAddr", self.ClientAddr, "dLegerGroup", self.Group)
}

// peerClientAddr is the client address of a group member, by raft id, for the
// forwarding stage. dLegerPeerClientAddrs wins when it names the member (an
// operator's explicit choice, e.g. an internal address); otherwise what the
// member announced through raft. ("", nil) means not known yet. A member that
// announced another dLegerGroup is refused: its group is not this node's
// (DLedger refuses requests across groups too), so the configs disagree.
func (b *Broker) peerClientAddr(id string) (string, error) {
	for _, p := range b.cfg.Peers {
		if p.ID == id && p.ClientAddr != "" {
			return p.ClientAddr, nil
		}
	}
	info, ok := b.replica.Member(id)
	if !ok {
		return "", nil
	}
	if info.Group != "" && info.Group != b.cfg.DLegerGroup {
		return "", fmt.Errorf("%w: leader %s announced dLegerGroup %q, this node has dLegerGroup %q: every member of a group must use the same one",
			replica.ErrNoLeader, id, info.Group, b.cfg.DLegerGroup)
	}
	return info.ClientAddr, nil
}
