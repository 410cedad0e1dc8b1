package clients

import (
	"sort"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

type consumerClient struct {
	clientID   string
	conn       *transport.Conn
	lastUpdate time.Time
}

type consumerGroupState struct {
	consumeType      string
	messageModel     string
	consumeFromWhere string
	subscriptions    map[string]Subscription    // topic → latest subscription
	clients          map[uint64]*consumerClient // conn id → client
}

type producerClient struct {
	clientID   string
	conn       *transport.Conn
	lastUpdate time.Time
}

// Registry is the soft state of connected clients: who is in which consumer
// group with which subscriptions, which connections belong to which producer
// group, the leader's queue locks and the compiled SQL92 subscriptions. Time is
// passed in.
type Registry struct {
	mu        sync.Mutex
	consumers map[string]*consumerGroupState
	producers map[string]map[uint64]*producerClient
	// seen is group → clientID → last heartbeat, kept after the connection closes
	// so a new leader knows who may still hold a queue lock (locks.go).
	seen map[string]map[string]time.Time
	// since is when this node started collecting heartbeats.
	since time.Time
	// requests is clientID → the connection its last request message
	// (request/reply) came on; replies are pushed there.
	requests map[string]*producerClient

	locks   *lockManager
	filters *sqlFilterCache
}

// NewRegistry is an empty registry that started collecting heartbeats at since.
func NewRegistry(since time.Time) *Registry {
	return &Registry{
		consumers: make(map[string]*consumerGroupState),
		producers: make(map[string]map[uint64]*producerClient),
		seen:      make(map[string]map[string]time.Time),
		since:     since,
		locks:     newLockManager(),
		filters:   newSQLFilterCache(),
		requests:  make(map[string]*producerClient),
	}
}

// Heartbeat records a client's groups and returns the consumer groups whose
// membership changed (their members get NOTIFY_CONSUMER_IDS_CHANGED).
func (r *Registry) Heartbeat(conn *transport.Conn, hb Heartbeat, now time.Time) (changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range hb.ProducerDataSet {
		m := r.producers[p.GroupName]
		if m == nil {
			m = make(map[uint64]*producerClient)
			r.producers[p.GroupName] = m
		}
		m[conn.ID()] = &producerClient{clientID: hb.ClientID, conn: conn, lastUpdate: now}
	}
	for _, c := range hb.ConsumerDataSet {
		g := r.consumers[c.GroupName]
		if g == nil {
			g = &consumerGroupState{subscriptions: make(map[string]Subscription), clients: make(map[uint64]*consumerClient)}
			r.consumers[c.GroupName] = g
		}
		g.consumeType, g.messageModel, g.consumeFromWhere = c.ConsumeType, c.MessageModel, c.ConsumeFromWhere
		for _, s := range c.SubscriptionDataSet {
			g.subscriptions[s.Topic] = s
		}
		if r.seen[c.GroupName] == nil {
			r.seen[c.GroupName] = make(map[string]time.Time)
		}
		r.seen[c.GroupName][hb.ClientID] = now
		if old, ok := g.clients[conn.ID()]; !ok || old.clientID != hb.ClientID {
			changed = append(changed, c.GroupName)
		}
		g.clients[conn.ID()] = &consumerClient{clientID: hb.ClientID, conn: conn, lastUpdate: now}
	}
	return changed
}

// RemoveConn drops every registration of a closed connection and returns the
// consumer groups that lost a member.
func (r *Registry) RemoveConn(connID uint64) (changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, g := range r.consumers {
		if _, ok := g.clients[connID]; ok {
			delete(g.clients, connID)
			changed = append(changed, name)
		}
	}
	for _, m := range r.producers {
		delete(m, connID)
	}
	for id, p := range r.requests {
		if p.conn.ID() == connID {
			delete(r.requests, id)
		}
	}
	sort.Strings(changed)
	return changed
}

// ExpireBefore drops clients whose last heartbeat is older than deadline.
func (r *Registry) ExpireBefore(deadline time.Time) (changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, g := range r.consumers {
		for id, c := range g.clients {
			if c.lastUpdate.Before(deadline) {
				delete(g.clients, id)
				changed = append(changed, name)
			}
		}
	}
	for _, m := range r.producers {
		for id, p := range m {
			if p.lastUpdate.Before(deadline) {
				delete(m, id)
			}
		}
	}
	for group, m := range r.seen {
		for id, at := range m {
			if at.Before(deadline) {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(r.seen, group)
		}
	}
	sort.Strings(changed)
	return changed
}

// NotifyConsumerIDsChanged tells a group's members to rebalance now.
func (r *Registry) NotifyConsumerIDsChanged(group string) {
	for _, c := range r.ConsumerConns(group) {
		req := transport.NewRequest(transport.NotifyConsumerIDsChanged, map[string]string{"consumerGroup": group}, nil)
		_ = c.InvokeOneway(req)
	}
}

// lockView lists the clients that heartbeated for group within LockExpiry of now.
func (r *Registry) lockView(group string, now time.Time) LockView {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := LockView{Since: r.since}
	for id, at := range r.seen[group] {
		if now.Sub(at) <= LockExpiry {
			v.Members = append(v.Members, id)
		}
	}
	sort.Strings(v.Members)
	return v
}

// LeaderSince tells the lock table that this node leads term from now: the
// term's grace window opens here rather than at its first lock request. Clients
// whose route still names the old leader reach this node up to a route refresh
// (30 s) later, and an orderly group waited that much longer for its queues
// after every failover (chaos N3 ran out of time once for it).
func (r *Registry) LeaderSince(term uint64, now time.Time) {
	r.locks.startTerm(term, now)
}

// Lock grants clientID, in the leader's term, every queue of mqs that is free,
// expired or already its own, and returns the granted ones in request order.
func (r *Registry) Lock(term uint64, group, clientID string, mqs []MessageQueue, now time.Time) []MessageQueue {
	return r.locks.lock(term, group, clientID, mqs, r.lockView(group, now), now)
}

// Unlock releases the queues of mqs that clientID holds.
func (r *Registry) Unlock(term uint64, group, clientID string, mqs []MessageQueue, now time.Time) {
	r.locks.unlock(term, group, clientID, mqs, now)
}

// LockedBy reports whether mq of group is locked by a live lock, and by whom.
func (r *Registry) LockedBy(group string, mq MessageQueue, now time.Time) (string, bool) {
	return r.locks.isLocked(group, mq, now)
}

// ConsumerIDs returns the sorted client ids of a group's live members.
func (r *Registry) ConsumerIDs(group string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return nil
	}
	seen := make(map[string]bool)
	var ids []string
	for _, c := range g.clients {
		if !seen[c.clientID] {
			seen[c.clientID] = true
			ids = append(ids, c.clientID)
		}
	}
	sort.Strings(ids)
	return ids
}

// HasConsumers reports whether any client of group heartbeats this node.
func (r *Registry) HasConsumers(group string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hasConsumersLocked(group)
}

func (r *Registry) hasConsumersLocked(group string) bool {
	g := r.consumers[group]
	return g != nil && len(g.clients) > 0
}

// ConsumerCoverage is how long a node must have collected heartbeats before a
// group missing from its registry is taken to have no consumer online. A
// client whose route had dropped a restarted node learns its address on the
// next route refresh (every 30 s) and heartbeats it on the next tick after
// that (every 30 s): two intervals and slack. Longer than HeartbeatCoverage,
// which assumes the client still knew the address, because a wrong guess
// here lowers a running group's offset.
const ConsumerCoverage = 70 * time.Second

// MayHaveConsumers reports whether group may have consumers online: one
// heartbeats this node, or the node has collected heartbeats for less than
// ConsumerCoverage, so a running group's clients may not have reached it yet.
// After every node restarts (chaos K3) the registries are empty for up to a
// heartbeat interval or two while the group's consumers keep committing.
func (r *Registry) MayHaveConsumers(group string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return now.Sub(r.since) < ConsumerCoverage || r.hasConsumersLocked(group)
}

// ConsumerConns returns the connections of a group's members.
func (r *Registry) ConsumerConns(group string) []*transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return nil
	}
	conns := make([]*transport.Conn, 0, len(g.clients))
	for _, c := range g.clients {
		conns = append(conns, c.conn)
	}
	return conns
}

// ConsumerConn returns the connection a client of group heartbeats on.
func (r *Registry) ConsumerConn(group, clientID string) *transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return nil
	}
	for _, c := range g.clients {
		if c.clientID == clientID {
			return c.conn
		}
	}
	return nil
}

// Subscription returns the (group, topic) subscription registered by heartbeats.
func (r *Registry) Subscription(group, topic string) (Subscription, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return Subscription{}, false
	}
	s, ok := g.subscriptions[topic]
	return s, ok
}

// SubscriptionFilter builds the store filter of a subscription of group: TAG
// (nil for all) or SQL92, compiled once per subscription version.
func (r *Registry) SubscriptionFilter(group string, sub Subscription) (store.MessageFilter, error) {
	return subscriptionFilter(r.filters, group, sub)
}

// CompiledFilters is the number of cached SQL92 expressions.
func (r *Registry) CompiledFilters() int { return r.filters.len() }

// Groups lists the consumer groups known from heartbeats.
func (r *Registry) Groups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.consumers))
	for n := range r.consumers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Subscriptions lists, for every consumer group known from heartbeats, the
// topics it subscribes to, sorted (the consumer gauges of broker/metrics).
func (r *Registry) Subscriptions() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]string, len(r.consumers))
	for name, g := range r.consumers {
		topics := make([]string, 0, len(g.subscriptions))
		for t := range g.subscriptions {
			topics = append(topics, t)
		}
		sort.Strings(topics)
		out[name] = topics
	}
	return out
}

// SawProducer records conn as a producer of group before its first heartbeat
// (the Go producer heartbeats only every 30 s), so a check-back can reach it.
func (r *Registry) SawProducer(conn *transport.Conn, group string, now time.Time) {
	if conn == nil || group == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.producers[group]
	if m == nil {
		m = make(map[uint64]*producerClient)
		r.producers[group] = m
	}
	if p, ok := m[conn.ID()]; ok {
		p.lastUpdate = now
		return
	}
	m[conn.ID()] = &producerClient{clientID: conn.RemoteAddr(), conn: conn, lastUpdate: now}
}

// ProducerConn returns one live connection of a producer group (transaction
// check-back).
func (r *Registry) ProducerConn(group string) *transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.producers[group] {
		return p.conn
	}
	return nil
}

// SawRequester records the connection a request message (one carrying
// REPLY_TO_CLIENT) arrived on: a requester may ask before its first heartbeat
// (up to 30 s after it starts), and its reply must still find it.
func (r *Registry) SawRequester(conn *transport.Conn, clientID string, now time.Time) {
	if conn == nil || clientID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[clientID] = &producerClient{clientID: clientID, conn: conn, lastUpdate: now}
}

// ConnOfClient returns a live connection of a client id (requester, producer or
// consumer), for pushing replies to a requester.
func (r *Registry) ConnOfClient(clientID string) *transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.requests[clientID]; ok {
		return p.conn
	}
	for _, m := range r.producers {
		for _, p := range m {
			if p.clientID == clientID {
				return p.conn
			}
		}
	}
	for _, g := range r.consumers {
		for _, c := range g.clients {
			if c.clientID == clientID {
				return c.conn
			}
		}
	}
	return nil
}

// SetCollectingSince moves the start of heartbeat collection to since. A node
// that has heard every live client's heartbeat may grant locks during a new
// leader's grace window (locks.go); tests use it to skip waiting
// HeartbeatCoverage.
func (r *Registry) SetCollectingSince(since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.since = since
}
