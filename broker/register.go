package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/nameserver"
)

// Bounds on nameserver calls: a registration that takes longer is retried by the
// next one (every RegisterInterval, and on every role change); an unregistration
// at shutdown must not hold the shutdown up.
const (
	registerTimeout   = 3 * time.Second
	unregisterTimeout = time.Second
)

// registerAllAsync registers in the background (after topic changes).
func (b *Broker) registerAllAsync() {
	b.goLoop(b.registerAll)
}

// registration is what this node registers: brokerId 0 for the leader (after
// its barrier) and index+1 for the others (design.md §7). The topic table is the
// nameserver's wire type: nameserver must not import fsm, so this is the one
// place a topic config crosses to it (docs/decisions/0007).
func (b *Broker) registration() nameserver.RegisterRequest {
	st := b.Status()
	id := nameserver.BrokerID(b.cfg.SelfIndex + 1)
	if st.Role == replica.RoleLeader {
		id = 0
	}
	topics := make(map[string]nameserver.TopicConfig)
	for _, t := range b.replica.Topics() {
		filterType := t.TopicFilterType
		if filterType == "" {
			filterType = fsm.TopicFilterSingleTag
		}
		topics[t.Name] = nameserver.TopicConfig{
			TopicName: t.Name, ReadQueueNums: t.ReadQueueNums, WriteQueueNums: t.WriteQueueNums,
			Perm: nameserver.Perm(t.Perm), TopicFilterType: filterType, TopicSysFlag: t.TopicSysFlag, Order: t.Order,
		}
	}
	return nameserver.RegisterRequest{
		ClusterName:  b.cfg.ClusterName,
		BrokerName:   b.cfg.BrokerName,
		BrokerAddr:   b.cfg.ClientAddr,
		HAServerAddr: b.cfg.ClientAddr,
		BrokerID:     id,
		Topics:       topics,
		// stateVersion = raft term fences a deposed leader at the nameserver.
		DataVersion: nameserver.DataVersion{StateVersion: int64(st.Term), Timestamp: b.replica.Now().UnixMilli(), Counter: b.replica.DataVersion()},
	}
}

// registerAll registers with every nameserver in parallel.
func (b *Broker) registerAll() {
	if b.ctx.Err() != nil {
		return
	}
	req := b.registration()
	var wg sync.WaitGroup
	for _, addr := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(b.ctx, registerTimeout)
			defer cancel()
			if _, err := b.nsrv.RegisterBroker(ctx, addr, req); err != nil && !errors.Is(err, context.Canceled) {
				b.log.Warn("register with nameserver failed", "nameserver", addr, "brokerId", req.BrokerID, "error", err)
			}
		}(addr)
	}
	wg.Wait()
}

// unregisterAll tells every nameserver this node is going away.
func (b *Broker) unregisterAll() {
	req := b.registration()
	for _, addr := range b.cfg.NamesrvAddrs {
		ctx, cancel := context.WithTimeout(context.Background(), unregisterTimeout)
		_ = b.nsrv.UnregisterBroker(ctx, addr, nameserver.UnregisterRequest{
			ClusterName: req.ClusterName, BrokerName: req.BrokerName, BrokerAddr: req.BrokerAddr, BrokerID: req.BrokerID,
		})
		cancel()
	}
}
