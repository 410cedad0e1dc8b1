package adminapi

import (
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/broker/stats"
	"github.com/rocketraft/rocketraft/store"
)

// Config is this node's identity as the admin codes report it.
type Config struct {
	ClusterName string
	BrokerName  string
	// ClientAddr is the address clients reach this node on (brokerAddr).
	ClientAddr string
	// SelfID is this node's raft server id.
	SelfID string
	// ACLFilePath names the group's replicated ACL document in the ACL codes'
	// answers (allAclFileVersion); empty: DefaultACLFilePath.
	ACLFilePath string
	// Version is the rocketraft binary's version (runtime info rocketraftVersion).
	Version string
}

// Settings is this node's broker.conf as GET_BROKER_CONFIG and
// UPDATE_BROKER_CONFIG read and change it. The broker package cannot read
// broker.conf (only config can), so cmd/rocketraft implements it over the
// loaded config.Broker and wires each live key to what re-reads it.
type Settings interface {
	// Properties is every key with the value in force, as Java properties
	// text (key=value lines); a set secret shows masked.
	Properties() string
	// Update applies the key=value lines of text, all or none, and returns the
	// keys it changed. Its error wraps route.ErrNoPermission when a key cannot
	// change while the broker runs and route.ErrBadHeader when a key is
	// unknown or a value breaks a rule, naming each key and the reason.
	Update(text string) ([]SettingChange, error)
}

// SettingChange is one key a live update changed, as a file writes the values.
type SettingChange struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// Deps is what the admin handlers read and change.
type Deps struct {
	Config
	Store   *store.Store
	Replica replica.Replica
	// Offsets holds the leader's consumer offsets not yet replicated; progress
	// and reset read through it, reset writes and flushes it.
	Offsets *offsets.Buffer
	Clients *clients.Registry
	Pulls   *clients.PullWaiters
	// TopicsChanged re-registers with the nameservers in the background after a
	// topic was created or deleted; nil: nothing to do.
	TopicsChanged func()
	// Logger records configuration changes and resets; nil: no logs.
	Logger hclog.Logger
	// ACL is the ACL in force (the aclFile, then the replicated document); nil
	// when aclEnable is false, and the ACL codes answer ErrACLDisabled.
	ACL *auth.Source
	// Settings is this node's broker.conf for the config codes 25 and 26; nil:
	// they answer that the node has none.
	Settings Settings
	// Stats are this node's traffic counters (runtime info, VIEW_BROKER_STATS_DATA);
	// nil: New starts an empty set.
	Stats *stats.Stats
}

// API serves the admin request codes over Deps.
type API struct {
	d   Deps
	log hclog.Logger
	// aclMu serialises the ACL edits of this node: read the document in force,
	// edit it, replicate it (acl.go).
	aclMu sync.Mutex
	// settingsMu serialises the config codes (Apache's updateBrokerConfig is
	// synchronized too) and guards the version of the settings: live updates
	// since start, and when the last one (or the start) was, unix ms.
	settingsMu      sync.Mutex
	settingsUpdates uint64
	settingsSince   int64
}

// New is an API over d.
func New(d Deps) *API {
	log := d.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	a := &API{d: d, log: log}
	if d.Replica != nil {
		a.settingsSince = d.Replica.Now().UnixMilli()
		if a.d.Stats == nil {
			a.d.Stats = stats.New(d.ClusterName, d.Replica.Now())
		}
	}
	return a
}

// consumerOffset is the latest committed offset: pending on this leader, else
// replicated.
func (a *API) consumerOffset(group, topic string, queueID int32) (store.QueueOffset, bool) {
	return a.d.Offsets.Committed(group, topic, queueID)
}

func (a *API) topicsChanged() {
	if a.d.TopicsChanged != nil {
		a.d.TopicsChanged()
	}
}
