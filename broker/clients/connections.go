package clients

import (
	"fmt"
	"sort"

	"github.com/rocketraft/rocketraft/broker/filter"
	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Connection is one client connection as RocketMQ's connection lists report
// it (Connection.java): the heartbeat's clientID, the socket's remote address,
// and the language and version of the client's latest request header.
type Connection struct {
	ClientID   string `json:"clientId"`
	ClientAddr string `json:"clientAddr"`
	Language   string `json:"language"`
	Version    int32  `json:"version"`
}

func connectionOf(clientID string, conn *transport.Conn) Connection {
	c := Connection{ClientID: clientID}
	if conn == nil {
		return c
	}
	c.ClientAddr = conn.RemoteAddr()
	if lang, version, ok := conn.Peer(); ok {
		c.Language, c.Version = lang, int32(version)
	}
	return c
}

// sortConnections orders a list by client id, then address: the answer is
// stable although it comes out of maps.
func sortConnections(cs []Connection) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].ClientID != cs[j].ClientID {
			return cs[i].ClientID < cs[j].ClientID
		}
		return cs[i].ClientAddr < cs[j].ClientAddr
	})
}

// ConsumerGroupInfo is what the heartbeats of a consumer group's connected
// members said (Apache's ConsumerGroupInfo): the latest consume type, model and
// start position, every topic's latest subscription, and the connections.
type ConsumerGroupInfo struct {
	ConsumeType      string
	MessageModel     string
	ConsumeFromWhere string
	Subscriptions    []Subscription // sorted by topic
	Connections      []Connection   // sorted by client id
}

// ConsumerGroup returns the group's heartbeat state; ok is false when no member
// is connected (Apache then answers CONSUMER_NOT_ONLINE).
func (r *Registry) ConsumerGroup(group string) (info ConsumerGroupInfo, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil || len(g.clients) == 0 {
		return ConsumerGroupInfo{}, false
	}
	info = ConsumerGroupInfo{ConsumeType: g.consumeType, MessageModel: g.messageModel, ConsumeFromWhere: g.consumeFromWhere}
	for _, s := range g.subscriptions {
		info.Subscriptions = append(info.Subscriptions, s)
	}
	sort.Slice(info.Subscriptions, func(i, j int) bool { return info.Subscriptions[i].Topic < info.Subscriptions[j].Topic })
	for _, c := range g.clients {
		info.Connections = append(info.Connections, connectionOf(c.clientID, c.conn))
	}
	sortConnections(info.Connections)
	return info, true
}

// SubscribedTopics lists the topics a consumer group subscribed to in its
// heartbeats, sorted; nil for a group that never heartbeated.
func (r *Registry) SubscribedTopics(group string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.consumers[group]
	if g == nil {
		return nil
	}
	topics := make([]string, 0, len(g.subscriptions))
	for t := range g.subscriptions {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	return topics
}

// ProducerConnections lists the connections of a producer group; ok is false
// for a group this node has never seen (Apache: "the producer group not exist").
func (r *Registry) ProducerConnections(group string) (conns []Connection, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.producers[group]
	if !ok {
		return nil, false
	}
	conns = make([]Connection, 0, len(m))
	for _, p := range m {
		conns = append(conns, connectionOf(p.clientID, p.conn))
	}
	sortConnections(conns)
	return conns, true
}

// CodeSet is SubscriptionData.codeSet: each tag's Java String.hashCode, the
// numbers Java clients send and tools print.
func (s Subscription) CodeSet() []int32 {
	codes := make([]int32, 0, len(s.TagsSet))
	for _, t := range s.TagsSet {
		codes = append(codes, int32(store.TagsCode(t)))
	}
	return codes
}

// CheckSubscription is CHECK_CLIENT_CONFIG's rule (Apache's
// ClientManageProcessor.checkClientConfig): a TAG subscription (or none) is
// fine; any other must compile as SQL92, else ErrSubscriptionParse (answered
// SUBSCRIPTION_PARSE_FAILED, as Apache answers an expression its filter factory
// cannot compile or an expression type it has no filter for).
func CheckSubscription(s Subscription) error {
	switch s.ExpressionType {
	case "", ExpressionTag:
		return nil
	case ExpressionSQL92:
		if _, err := filter.Compile(s.SubString); err != nil {
			return fmt.Errorf("%w: topic=%s expression %q: %w", route.ErrSubscriptionParse, s.Topic, s.SubString, err)
		}
		return nil
	}
	return fmt.Errorf("%w: topic=%s: expression type %q, supported are TAG and SQL92", route.ErrSubscriptionParse, s.Topic, s.ExpressionType)
}

// ProducerInfo is one producer connection as GET_ALL_PRODUCER_INFO (328)
// reports it (Apache's ProducerInfo): a Connection and when the producer was
// last heard from, unix ms.
type ProducerInfo struct {
	Connection
	RemoteIP            string `json:"remoteIP"`
	LastUpdateTimestamp int64  `json:"lastUpdateTimestamp"`
}

// AllProducers is every producer group this node knows with its connections,
// each group's list sorted like ProducerConnections (Apache's
// ProducerManager.getProducerTable, which the exporter counts per group).
func (r *Registry) AllProducers() map[string][]ProducerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]ProducerInfo, len(r.producers))
	for group, m := range r.producers {
		if len(m) == 0 {
			continue
		}
		list := make([]ProducerInfo, 0, len(m))
		for _, p := range m {
			c := connectionOf(p.clientID, p.conn)
			list = append(list, ProducerInfo{Connection: c, RemoteIP: c.ClientAddr, LastUpdateTimestamp: p.lastUpdate.UnixMilli()})
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].ClientID != list[j].ClientID {
				return list[i].ClientID < list[j].ClientID
			}
			return list[i].ClientAddr < list[j].ClientAddr
		})
		out[group] = list
	}
	return out
}
