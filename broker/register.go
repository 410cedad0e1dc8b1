package broker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/nameserver"
)

// Bounds on nameserver calls: a registration that takes longer fails and is
// retried after registerRetry (a nameserver that was unreachable learns of a
// new leader within about a second of the network healing, not at the next
// RegisterInterval, which is 30 s); an unregistration at shutdown must not hold
// the shutdown up.
const (
	registerTimeout   = 3 * time.Second
	registerRetry     = time.Second
	unregisterTimeout = time.Second
)

// requestRegister asks the register loop for a registration now (role and
// topic changes). It never blocks: requests coalesce, and the registration
// sent is built from the state at the time it is sent, so the last one always
// carries the latest role. (Registering inline from the role watcher held its
// next role change up for registerTimeout whenever a nameserver was
// unreachable: chaos scenario R4.)
func (b *Broker) requestRegister() {
	select {
	case b.registerKick <- struct{}{}:
	default:
	}
}

// registerAllAsync registers in the background (after topic changes).
func (b *Broker) registerAllAsync() { b.requestRegister() }

// registerLoop is the one goroutine that registers: at start, on every
// request, every RegisterInterval, and registerRetry after a failed attempt.
// One goroutine, so registrations reach a nameserver in the order they were
// built and an older role never overwrites a newer one.
func (b *Broker) registerLoop() {
	wait := time.Duration(0)
	retry := registerRetry // doubles while attempts keep failing, up to RegisterInterval
	for {
		timer := time.NewTimer(wait)
		select {
		case <-b.ctx.Done():
			timer.Stop()
			return
		case <-b.registerKick:
		case <-timer.C:
		}
		timer.Stop()
		wait = b.cfg.RegisterInterval
		if b.registerAll() {
			retry = registerRetry
		} else {
			// A nameserver that is down for good (one of several) is not
			// asked every second forever: 1 s, 2 s, 4 s ... RegisterInterval.
			wait = min(retry, b.cfg.RegisterInterval)
			retry = min(2*retry, b.cfg.RegisterInterval)
		}
	}
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

// registerAll registers with every nameserver in parallel and reports whether
// every one accepted.
func (b *Broker) registerAll() bool {
	if b.ctx.Err() != nil {
		return true
	}
	req := b.registration()
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, addr := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(b.ctx, registerTimeout)
			defer cancel()
			if _, err := b.nsrv.RegisterBroker(ctx, addr, req); err != nil && !errors.Is(err, context.Canceled) {
				failed.Store(true)
				b.log.Warn("register with nameserver failed", "nameserver", addr, "brokerId", req.BrokerID, "error", err)
			}
		}(addr)
	}
	wg.Wait()
	return !failed.Load()
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
