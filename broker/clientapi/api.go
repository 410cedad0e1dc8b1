package clientapi

import (
	"context"
	"errors"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/broker/clients"
	"github.com/rocketraft/rocketraft/broker/offsets"
	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/fsm"
	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Topic name rules of the send path (RocketMQ MixAll).
const (
	// AutoCreateTopic is the template topic clients name as defaultTopic.
	AutoCreateTopic = "TBW102"
	RetryPrefix     = "%RETRY%"
	DLQPrefix       = "%DLQ%"
)

// sendTimeout bounds a transaction's end (END_TRANSACTION), which is a raft
// command of its own rather than a proposer call; past it the outcome is
// unknown. Sends and send-backs go through the proposer, which bounds them
// with the same 10 s (node.DefaultMaxWait).
const sendTimeout = 10 * time.Second

// topicChangeTimeout bounds creating a system topic (%RETRY%, %DLQ%,
// SCHEDULE_TOPIC_XXXX) on the send path: one config entry through raft.
const topicChangeTimeout = 5 * time.Second

// Config is the part of the broker's settings the client handlers read.
type Config struct {
	ClusterName           string
	BrokerName            string
	ClientAddr            string
	SelfID                string
	MaxMessageSize        int
	AutoCreateTopicEnable bool
	DefaultTopicQueueNums int32
	LongPollingEnable     bool
	// MaxPullSuspend caps suspendTimeoutMillis.
	MaxPullSuspend time.Duration
	// MessageDelayLevel is the delay of each level 1..N.
	MessageDelayLevel []time.Duration
	// RegionID and TraceOff are stamped on stored messages and send answers as
	// MSG_REGION (DefaultRegionID when "") and TRACE_ON (send.go, stamp). TraceOff is
	// traceOn=false, so the zero Config has Apache's default TRACE_ON=true.
	RegionID string
	TraceOff bool
}

// Deps are the client handlers' collaborators.
type Deps struct {
	Config
	// StoreHost is this node's advertised address, encoded in every record.
	StoreHost netip.AddrPort
	Store     *store.Store
	Replica   replica.Replica
	Clients   *clients.Registry
	Pulls     *clients.PullWaiters
	Offsets   *offsets.Buffer
	// Monotonic is the clock of soft-state leases (queue locks, heartbeats,
	// producer channels): intervals on this node only, never stored, so a
	// wall-clock jump must not move it (broker.Config.Monotonic); nil means
	// time.Now.
	Monotonic func() time.Time
	// Status is the broker's view of its role (LEADER only after the barrier).
	Status func() replica.Status
	// DiskFull is nil while sends may be accepted, else the error to answer.
	DiskFull func() error
	// TopicsChanged re-registers with the nameservers in the background after a
	// topic was created.
	TopicsChanged func()
	Logger        hclog.Logger
	// Sent, when set, is told about every message a send stored, after the
	// quorum write: the topic and properties the producer sent, whether it is a
	// prepared transaction message, and the stored size (broker/metrics).
	Sent func(topic, props string, prepared bool, storedBytes int)
	// Pulled, when set, is told about every pull answered with a next offset:
	// the group's next offset of the queue and the messages and bytes returned.
	Pulled func(group, topic string, queueID int32, next store.QueueOffset, msgs, bytes int)
}

// API serves the client request codes.
type API struct {
	d Deps
	// async writes a send's records and answers through a callback: d.Replica
	// itself when it can (replica.AsyncMessages: no goroutine waits per send),
	// else a goroutine per write around its PutMessages.
	async replica.AsyncMessages
	// maxMessageSize is Config.MaxMessageSize, or what SetMaxMessageSize made it.
	maxMessageSize atomic.Int64
}

// New builds the client handlers; Register puts them in a route table.
func New(d Deps) *API {
	a := &API{d: d}
	if am, ok := d.Replica.(replica.AsyncMessages); ok {
		a.async = am
	} else {
		a.async = goroutineWrites{d.Replica}
	}
	a.maxMessageSize.Store(int64(d.MaxMessageSize))
	return a
}

// SetMaxMessageSize changes maxMessageSize while the broker runs
// (UPDATE_BROKER_CONFIG): the next send is checked against n bytes.
func (a *API) SetMaxMessageSize(n int) { a.maxMessageSize.Store(int64(n)) }

// MaxMessageSize is the largest message body a send may carry now.
func (a *API) MaxMessageSize() int { return int(a.maxMessageSize.Load()) }

// errWouldBlock is what a metadata write answers on a connection's reader
// goroutine (transport.IsInline): waiting for raft there would stop the
// connection's reads. The handler then starts over on a goroutine.
var errWouldBlock = errors.New("clientapi: a metadata write would block the connection's reader")

// metadataFor is the replica's metadata for a handler running with ctx: one
// whose writes answer errWouldBlock when ctx is an inline request's.
func (a *API) metadataFor(ctx context.Context) replica.Metadata {
	if transport.IsInline(ctx) {
		return readOnlyMetadata{a.d.Replica}
	}
	return a.d.Replica
}

// goroutineWrites is AsyncMessages for a replica that only blocks
// (internal/fakereplica): each write waits on a goroutine of its own.
type goroutineWrites struct{ replica.Messages }

func (g goroutineWrites) PutMessagesAsync(ctx context.Context, recs [][]byte, done func([]fsm.MessageResult, error)) {
	go func() { done(g.PutMessages(transport.Blocking(ctx), recs)) }()
}

// readOnlyMetadata refuses the writes a send may make (creating its topic, a
// system topic or a retry group) with errWouldBlock.
type readOnlyMetadata struct{ replica.Metadata }

func (readOnlyMetadata) UpsertTopic(context.Context, fsm.TopicConfig) error { return errWouldBlock }

func (readOnlyMetadata) UpsertSubscriptionGroup(context.Context, fsm.SubscriptionGroupConfig) error {
	return errWouldBlock
}

// now is the leader's wall clock: for what is stored or compared with other
// nodes' and clients' times (timer delivery, reply timestamps).
func (a *API) now() time.Time { return a.d.Replica.Now() }

// mono is the clock of the client registry's leases (Deps.Monotonic).
func (a *API) mono() time.Time {
	if a.d.Monotonic != nil {
		return a.d.Monotonic()
	}
	return time.Now()
}

func (a *API) leading() bool { return a.d.Status().Role == replica.RoleLeader }
