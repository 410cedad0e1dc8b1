package nameserver

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"
)

// DefaultBrokerExpireTimeout is RocketMQ's broker channel expiry: a broker that has
// not re-registered for this long (it registers every 30 s) is dropped.
const DefaultBrokerExpireTimeout = 120 * time.Second

// ConnID identifies the transport connection a registration arrived on, so the
// broker can be dropped as soon as that connection closes. 0 means "none" (the
// registration is then removed only by expiry or UNREGISTER_BROKER).
type ConnID uint64

// RegisterRequest is one REGISTER_BROKER: the header fields plus the decoded body.
type RegisterRequest struct {
	ClusterName  string
	BrokerName   string
	BrokerAddr   string // client-facing ip:port
	HAServerAddr string
	BrokerID     BrokerID
	// HeartbeatTimeout overrides the registry default when > 0
	// (ext heartbeatTimeoutMillis).
	HeartbeatTimeout   time.Duration
	EnableActingMaster bool
	ZoneName           string
	Topics             map[string]TopicConfig
	DataVersion        DataVersion
	// ConnID is filled by the server from the connection; it is not on the wire.
	ConnID ConnID
}

// RegisterResult is the REGISTER_BROKER answer: for a slave, the current master's
// address and HA address; empty for the master itself or when there is no master.
type RegisterResult struct {
	HAServerAddr string
	MasterAddr   string
}

// UnregisterRequest is one UNREGISTER_BROKER.
type UnregisterRequest struct {
	ClusterName string
	BrokerName  string
	BrokerAddr  string
	BrokerID    BrokerID
}

// RemovedBroker reports a live registration dropped by expiry or connection close.
type RemovedBroker struct {
	BrokerName string
	BrokerAddr string
}

type brokerGroup struct {
	cluster            string
	zoneName           string
	enableActingMaster bool
	// Invariant: never empty; the group is deleted with its last address.
	// Invariant: an address appears under at most one id.
	addrs map[BrokerID]string
}

type liveBroker struct {
	cluster      string
	brokerName   string
	lastUpdate   time.Time
	timeout      time.Duration
	dataVersion  DataVersion
	connID       ConnID
	haServerAddr string
}

// Registry is the route table. It holds no clock: every time-dependent call takes
// now. All methods are safe for concurrent use.
type Registry struct {
	defaultTimeout time.Duration

	mu sync.RWMutex
	// brokerName → group.
	brokers map[string]*brokerGroup
	// clusterName → set of brokerName. Invariant: sets are never empty.
	clusters map[string]map[string]struct{}
	// topic → brokerName → queues. Invariant: inner maps are never empty, and every
	// brokerName in them is in brokers.
	topics map[string]map[string]QueueData
	// brokerAddr → liveness. An entry may outlive its place in brokers (a master
	// whose id 0 was taken over by a newer leader) until expiry or conn close.
	live map[string]*liveBroker
}

// NewRegistry returns an empty registry. defaultTimeout ≤ 0 means
// DefaultBrokerExpireTimeout.
func NewRegistry(defaultTimeout time.Duration) *Registry {
	if defaultTimeout <= 0 {
		defaultTimeout = DefaultBrokerExpireTimeout
	}
	return &Registry{
		defaultTimeout: defaultTimeout,
		brokers:        map[string]*brokerGroup{},
		clusters:       map[string]map[string]struct{}{},
		topics:         map[string]map[string]QueueData{},
		live:           map[string]*liveBroker{},
	}
}

func validateRegister(req RegisterRequest) error {
	if req.ClusterName == "" || req.BrokerName == "" {
		return fmt.Errorf("register broker=%q cluster=%q: clusterName and brokerName required: %w",
			req.BrokerName, req.ClusterName, ErrInvalidRequest)
	}
	if req.BrokerID < 0 {
		return fmt.Errorf("register broker=%s brokerId=%d: negative id: %w", req.BrokerName, req.BrokerID, ErrInvalidRequest)
	}
	if err := checkAddr(req.BrokerAddr); err != nil {
		return fmt.Errorf("register broker=%s: %w", req.BrokerName, err)
	}
	return nil
}

// Register applies one REGISTER_BROKER with RocketMQ's RouteInfoManager semantics:
//   - an id-0 registration is refused (ErrStaleStateVersion, nothing changes) when a
//     different, still-live address holds id 0 with a higher stateVersion;
//   - the same address under another id of the group is removed first (a follower
//     that became leader moves from id N to id 0);
//   - topic queue data are taken only from the master (id 0), and are added or
//     updated, never removed (removal is DELETE_TOPIC_IN_NAMESRV).
func (r *Registry) Register(req RegisterRequest, now time.Time) (RegisterResult, error) {
	if err := validateRegister(req); err != nil {
		return RegisterResult{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()

	g := r.brokers[req.BrokerName]
	if g != nil && req.BrokerID == MasterID {
		if old, ok := g.addrs[MasterID]; ok && old != req.BrokerAddr {
			if lb := r.live[old]; lb != nil && lb.dataVersion.StateVersion > req.DataVersion.StateVersion {
				return RegisterResult{}, fmt.Errorf(
					"register broker=%s addr=%s id=0 stateVersion=%d: live master addr=%s has stateVersion=%d: %w",
					req.BrokerName, req.BrokerAddr, req.DataVersion.StateVersion, old,
					lb.dataVersion.StateVersion, ErrStaleStateVersion)
			}
		}
	}

	// The same address re-registering under another brokerName (reconfigured
	// node) must leave its old group, or it would be routed under both.
	if lb := r.live[req.BrokerAddr]; lb != nil && lb.brokerName != req.BrokerName {
		r.dropAddrLocked(lb.brokerName, req.BrokerAddr)
	}

	if g == nil {
		g = &brokerGroup{addrs: map[BrokerID]string{}}
		r.brokers[req.BrokerName] = g
	}
	if g.cluster != "" && g.cluster != req.ClusterName {
		r.removeFromClusterLocked(g.cluster, req.BrokerName)
	}
	g.cluster = req.ClusterName
	g.zoneName = req.ZoneName
	g.enableActingMaster = req.EnableActingMaster
	if r.clusters[req.ClusterName] == nil {
		r.clusters[req.ClusterName] = map[string]struct{}{}
	}
	r.clusters[req.ClusterName][req.BrokerName] = struct{}{}

	for id, addr := range g.addrs {
		if addr == req.BrokerAddr && id != req.BrokerID {
			delete(g.addrs, id)
		}
	}
	g.addrs[req.BrokerID] = req.BrokerAddr

	if req.BrokerID == MasterID {
		for name, tc := range req.Topics {
			if name == "" {
				continue
			}
			qs := r.topics[name]
			if qs == nil {
				qs = map[string]QueueData{}
				r.topics[name] = qs
			}
			qs[req.BrokerName] = QueueData{
				BrokerName:     req.BrokerName,
				ReadQueueNums:  tc.ReadQueueNums,
				WriteQueueNums: tc.WriteQueueNums,
				Perm:           tc.Perm,
				TopicSysFlag:   tc.TopicSysFlag,
			}
		}
	}

	timeout := req.HeartbeatTimeout
	if timeout <= 0 {
		timeout = r.defaultTimeout
	}
	r.live[req.BrokerAddr] = &liveBroker{
		cluster:      req.ClusterName,
		brokerName:   req.BrokerName,
		lastUpdate:   now,
		timeout:      timeout,
		dataVersion:  req.DataVersion,
		connID:       req.ConnID,
		haServerAddr: req.HAServerAddr,
	}

	var res RegisterResult
	if req.BrokerID != MasterID {
		if master, ok := g.addrs[MasterID]; ok {
			res.MasterAddr = master
			if lb := r.live[master]; lb != nil {
				res.HAServerAddr = lb.haServerAddr
			}
		}
	}
	return res, nil
}

// Unregister applies one UNREGISTER_BROKER. The id is removed only if it still
// maps to the given address, so a late unregister from a deposed master cannot
// remove the new master that has since taken id 0. It reports whether anything
// was removed.
func (r *Registry) Unregister(req UnregisterRequest) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	removed := false
	if lb := r.live[req.BrokerAddr]; lb != nil && lb.brokerName == req.BrokerName {
		delete(r.live, req.BrokerAddr)
		removed = true
	}
	g := r.brokers[req.BrokerName]
	if g == nil || g.addrs[req.BrokerID] != req.BrokerAddr {
		return removed
	}
	delete(g.addrs, req.BrokerID)
	r.pruneGroupLocked(req.BrokerName)
	return true
}

// ExpireBefore drops every live registration whose lastUpdate + timeout is before
// now, and returns them sorted by address.
func (r *Registry) ExpireBefore(now time.Time) []RemovedBroker {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RemovedBroker
	for addr, lb := range r.live {
		if lb.lastUpdate.Add(lb.timeout).Before(now) {
			out = append(out, RemovedBroker{BrokerName: lb.brokerName, BrokerAddr: addr})
		}
	}
	return r.removeLiveLocked(out)
}

// RemoveByConn drops every registration that arrived (most recently) on connection
// id, as RocketMQ does when a broker channel closes. A broker that has since
// re-registered over a new connection is kept.
func (r *Registry) RemoveByConn(id ConnID) []RemovedBroker {
	if id == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RemovedBroker
	for addr, lb := range r.live {
		if lb.connID == id {
			out = append(out, RemovedBroker{BrokerName: lb.brokerName, BrokerAddr: addr})
		}
	}
	return r.removeLiveLocked(out)
}

func (r *Registry) removeLiveLocked(list []RemovedBroker) []RemovedBroker {
	sort.Slice(list, func(i, j int) bool { return list[i].BrokerAddr < list[j].BrokerAddr })
	for _, rb := range list {
		delete(r.live, rb.BrokerAddr)
		r.dropAddrLocked(rb.BrokerName, rb.BrokerAddr)
	}
	return list
}

// dropAddrLocked removes addr from group name (whatever id it holds) and prunes the
// group if it became empty. Only entries whose value is addr go: an orphaned live
// entry of a deposed master must not take the new master's id 0 with it.
func (r *Registry) dropAddrLocked(name, addr string) {
	g := r.brokers[name]
	if g == nil {
		return
	}
	for id, a := range g.addrs {
		if a == addr {
			delete(g.addrs, id)
		}
	}
	r.pruneGroupLocked(name)
}

// pruneGroupLocked deletes group name, its cluster membership and its queue data
// from every topic once it has no address left.
func (r *Registry) pruneGroupLocked(name string) {
	g := r.brokers[name]
	if g == nil || len(g.addrs) > 0 {
		return
	}
	delete(r.brokers, name)
	r.removeFromClusterLocked(g.cluster, name)
	for topic, qs := range r.topics {
		delete(qs, name)
		if len(qs) == 0 {
			delete(r.topics, topic)
		}
	}
}

func (r *Registry) removeFromClusterLocked(cluster, name string) {
	set := r.clusters[cluster]
	delete(set, name)
	if len(set) == 0 {
		delete(r.clusters, cluster)
	}
}

func (r *Registry) brokerDataLocked(name string) BrokerData {
	g := r.brokers[name]
	return BrokerData{
		Cluster:            g.cluster,
		BrokerName:         name,
		BrokerAddrs:        maps.Clone(BrokerAddrs(g.addrs)),
		ZoneName:           g.zoneName,
		EnableActingMaster: g.enableActingMaster,
	}
}

// Route returns the route of topic, or false when the topic has no queue data or
// none of its brokerNames is registered (the processor answers TOPIC_NOT_EXIST).
// Queue and broker data are sorted by brokerName.
func (r *Registry) Route(topic string) (TopicRouteData, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	qs := r.topics[topic]
	if len(qs) == 0 {
		return TopicRouteData{}, false
	}
	names := slices.Sorted(maps.Keys(qs))
	route := TopicRouteData{
		QueueDatas:        make([]QueueData, 0, len(names)),
		BrokerDatas:       make([]BrokerData, 0, len(names)),
		FilterServerTable: map[string][]string{},
	}
	for _, name := range names {
		route.QueueDatas = append(route.QueueDatas, qs[name])
		if r.brokers[name] != nil {
			route.BrokerDatas = append(route.BrokerDatas, r.brokerDataLocked(name))
		}
	}
	if len(route.BrokerDatas) == 0 {
		return TopicRouteData{}, false
	}
	return route, true
}

// ClusterInfo returns every registered group and each cluster's sorted brokerNames.
func (r *Registry) ClusterInfo() ClusterInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ci := ClusterInfo{
		BrokerAddrTable:  make(map[string]BrokerData, len(r.brokers)),
		ClusterAddrTable: make(map[string][]string, len(r.clusters)),
	}
	for name := range r.brokers {
		ci.BrokerAddrTable[name] = r.brokerDataLocked(name)
	}
	for cluster, set := range r.clusters {
		ci.ClusterAddrTable[cluster] = slices.Sorted(maps.Keys(set))
	}
	return ci
}

// TopicList returns every topic that has queue data, sorted.
func (r *Registry) TopicList() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.topics))
}

// DeleteTopic removes topic's queue data: all of it when cluster is "", otherwise
// only the queues of brokerNames in that cluster. It reports whether anything was
// removed. A master that still has the topic will register it again.
func (r *Registry) DeleteTopic(topic, cluster string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	qs := r.topics[topic]
	if qs == nil {
		return false
	}
	if cluster == "" {
		delete(r.topics, topic)
		return true
	}
	removed := false
	for name := range r.clusters[cluster] {
		if _, ok := qs[name]; ok {
			delete(qs, name)
			removed = true
		}
	}
	if len(qs) == 0 {
		delete(r.topics, topic)
	}
	return removed
}

// LiveCount returns the number of live broker registrations (for metrics and tests).
func (r *Registry) LiveCount() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.live)
}
