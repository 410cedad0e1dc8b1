package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/nameserver"
)

// registrationLoop registers with every nameserver at start and every
// RegisterInterval (role changes register at once from watchRoles).
func (b *Broker) registrationLoop() {
	b.registerAll()
	t := time.NewTicker(b.cfg.RegisterInterval)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
			b.registerAll()
		}
	}
}

// registerAllAsync registers in the background (after topic changes).
func (b *Broker) registerAllAsync() {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.registerAll()
	}()
}

// brokerID is 0 for the leader (after its barrier) and index+1 for the others
// (design.md §7).
func (b *Broker) registration() nameserver.RegisterRequest {
	st := b.currentStatus()
	id := nameserver.BrokerID(b.cfg.SelfIndex + 1)
	if st.Role == RoleLeader {
		id = 0
	}
	topics := make(map[string]nameserver.TopicConfig)
	for _, t := range b.replica.Topics() {
		topics[t.Name] = nameserver.TopicConfig{
			TopicName: t.Name, ReadQueueNums: t.ReadQueueNums, WriteQueueNums: t.WriteQueueNums,
			Perm: nameserver.Perm(t.Perm), TopicFilterType: "SINGLE_TAG", TopicSysFlag: t.TopicSysFlag, Order: t.Order,
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
		DataVersion: nameserver.DataVersion{StateVersion: int64(st.Term), Timestamp: time.Now().UnixMilli(), Counter: b.replica.DataVersion()},
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
			ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
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
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = b.nsrv.UnregisterBroker(ctx, addr, nameserver.UnregisterRequest{
			ClusterName: req.ClusterName, BrokerName: req.BrokerName, BrokerAddr: req.BrokerAddr, BrokerID: req.BrokerID,
		})
		cancel()
	}
}
