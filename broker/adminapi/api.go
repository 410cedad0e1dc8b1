package adminapi

import (
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/auth"
	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
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
}

// API serves the admin request codes over Deps.
type API struct {
	d   Deps
	log hclog.Logger
	// aclMu serialises the ACL edits of this node: read the document in force,
	// edit it, replicate it (acl.go).
	aclMu sync.Mutex
}

// New is an API over d.
func New(d Deps) *API {
	log := d.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &API{d: d, log: log}
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
