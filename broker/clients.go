package broker

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// heartbeatData is HEART_BEAT's JSON body (rocketmq-protocol.md §3.2).
type heartbeatData struct {
	ClientID        string `json:"clientID"`
	ProducerDataSet []struct {
		GroupName string `json:"groupName"`
	} `json:"producerDataSet"`
	ConsumerDataSet []consumerData `json:"consumerDataSet"`
}

type consumerData struct {
	GroupName           string             `json:"groupName"`
	ConsumeType         string             `json:"consumeType"`
	MessageModel        string             `json:"messageModel"`
	ConsumeFromWhere    string             `json:"consumeFromWhere"`
	SubscriptionDataSet []subscriptionData `json:"subscriptionDataSet"`
	UnitMode            bool               `json:"unitMode"`
}

// subscriptionData is one (group, topic) subscription. codeSet is ignored: the Go
// client sends it as strings, Java as numbers, and we match on tag strings.
type subscriptionData struct {
	Topic          string   `json:"topic"`
	SubString      string   `json:"subString"`
	TagsSet        []string `json:"tagsSet"`
	SubVersion     int64    `json:"subVersion"`
	ExpressionType string   `json:"expressionType"`
}

func parseHeartbeat(body []byte) (heartbeatData, error) {
	var hb heartbeatData
	if err := json.Unmarshal(body, &hb); err != nil {
		return hb, fmt.Errorf("%w: heartbeat body: %v", ErrBadHeader, err)
	}
	if hb.ClientID == "" {
		return hb, fmt.Errorf("%w: heartbeat clientID is empty", ErrBadHeader)
	}
	return hb, nil
}

// matchAll reports whether a TAG subscription accepts every message.
func (s subscriptionData) matchAll() bool {
	return s.SubString == "" || s.SubString == "*" || len(s.TagsSet) == 0
}

// tagFilter builds the store filter of a TAG subscription: the tag hash must be
// one of the subscribed tags' codes, and then the TAGS property must match exactly
// (hash collisions never leak a foreign tag).
func (s subscriptionData) tagFilter() store.MessageFilter {
	if s.matchAll() {
		return nil
	}
	codes := make(map[int64]struct{}, len(s.TagsSet))
	tags := make(map[string]struct{}, len(s.TagsSet))
	for _, t := range s.TagsSet {
		codes[store.TagsCode(t)] = struct{}{}
		tags[t] = struct{}{}
	}
	return func(tagsCode int64, props func() string) bool {
		if _, ok := codes[tagsCode]; !ok {
			return false
		}
		tag, _ := store.Property(props(), store.PropertyTags)
		_, ok := tags[tag]
		return ok
	}
}

type consumerClient struct {
	clientID   string
	conn       *transport.Conn
	lastUpdate time.Time
}

type consumerGroupState struct {
	messageModel     string
	consumeFromWhere string
	subscriptions    map[string]subscriptionData // topic → latest subscription
	clients          map[uint64]*consumerClient  // conn id → client
}

type producerClient struct {
	clientID   string
	conn       *transport.Conn
	lastUpdate time.Time
}

// clientRegistry is the soft state of connected clients: who is in which consumer
// group with which subscriptions, and which connections belong to which producer
// group. Every node keeps it (clients heartbeat every address), so a new leader
// already knows the groups (lessons-from-dledger.md row 7). Time is passed in.
type clientRegistry struct {
	mu        sync.Mutex
	consumers map[string]*consumerGroupState
	producers map[string]map[uint64]*producerClient
	// seen is group → clientID → last heartbeat, kept after the connection closes
	// so a new leader knows who may still hold a queue lock (lock.go).
	seen map[string]map[string]time.Time
	// since is when this node started collecting heartbeats.
	since time.Time

	// locks and filters are soft state derived from the clients: the leader's
	// orderly-consumption queue locks (lock.go) and compiled SQL92 subscriptions
	// (sql92.go).
	locks   *lockManager
	filters *sqlFilterCache
	// requests is clientID → the connection its last request message (request/reply)
	// came on; replies are pushed there (reply.go).
	requests map[string]*producerClient
}

func newClientRegistry() *clientRegistry {
	return &clientRegistry{
		consumers: make(map[string]*consumerGroupState),
		producers: make(map[string]map[uint64]*producerClient),
		seen:      make(map[string]map[string]time.Time),
		since:     time.Now(),
		locks:     newLockManager(),
		filters:   newSQLFilterCache(),
		requests:  make(map[string]*producerClient),
	}
}

// heartbeat records a client's groups and returns the consumer groups whose
// membership changed (their members get NOTIFY_CONSUMER_IDS_CHANGED).
func (r *clientRegistry) heartbeat(conn *transport.Conn, hb heartbeatData, now time.Time) (changed []string) {
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
			g = &consumerGroupState{subscriptions: make(map[string]subscriptionData), clients: make(map[uint64]*consumerClient)}
			r.consumers[c.GroupName] = g
		}
		g.messageModel, g.consumeFromWhere = c.MessageModel, c.ConsumeFromWhere
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

// removeConn drops every registration of a closed connection and returns the
// consumer groups that lost a member.
func (r *clientRegistry) removeConn(connID uint64) (changed []string) {
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

// expireBefore drops clients whose last heartbeat is older than deadline.
func (r *clientRegistry) expireBefore(deadline time.Time) (changed []string) {
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

// lockView lists the clients that heartbeated for group within lockExpiry of now.
func (r *clientRegistry) lockView(group string, now time.Time) lockView {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := lockView{Since: r.since}
	for id, at := range r.seen[group] {
		if now.Sub(at) <= lockExpiry {
			v.Members = append(v.Members, id)
		}
	}
	sort.Strings(v.Members)
	return v
}

// consumerIDs returns the sorted client ids of a group's live members.
func (r *clientRegistry) consumerIDs(group string) []string {
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

// consumerConns returns the connections of a group's members.
func (r *clientRegistry) consumerConns(group string) []*transport.Conn {
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

// subscription returns the (group, topic) subscription registered by heartbeats.
func (r *clientRegistry) subscription(group, topic string) (subscriptionData, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return subscriptionData{}, false
	}
	s, ok := g.subscriptions[topic]
	return s, ok
}

// groups lists the consumer groups known from heartbeats.
func (r *clientRegistry) groups() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.consumers))
	for n := range r.consumers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// producerConn returns one live connection of a producer group (transaction check-back).
func (r *clientRegistry) producerConn(group string) *transport.Conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.producers[group] {
		return p.conn
	}
	return nil
}

// connOfClient returns a live connection of a client id (producer or consumer), for
// pushing replies to a requester.
func (r *clientRegistry) connOfClient(clientID string) *transport.Conn {
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

// sawRequester records the connection a request message (one carrying
// REPLY_TO_CLIENT) arrived on: a requester may ask before its first heartbeat (up to
// 30 s after it starts), and its reply must still find it.
func (r *clientRegistry) sawRequester(conn *transport.Conn, clientID string, now time.Time) {
	if conn == nil || clientID == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[clientID] = &producerClient{clientID: clientID, conn: conn, lastUpdate: now}
}
