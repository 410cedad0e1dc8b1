package transaction

import (
	"context"
	"net/netip"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// Java defaults (BrokerConfig): transactionTimeOut, transactionCheckInterval,
// transactionCheckMax.
const (
	DefaultTimeout       = 6 * time.Second
	DefaultCheckInterval = 30 * time.Second
	DefaultCheckMax      = 15
)

// Reader is the store side the Checker scans (*store.Store).
type Reader interface {
	GetMessages(topic string, queueID int32, offset store.QueueOffset, maxMsgs int, maxBytes int, filter store.MessageFilter) (*store.GetResult, error)
}

// CheckConn is where a check-back goes (*transport.Conn).
type CheckConn interface {
	InvokeOneway(req *transport.Command) error
}

// Config configures the leader-only Checker. Zero fields take the defaults of
// withDefaults.
type Config struct {
	// Timeout is how old a half message must be before it is checked (default
	// DefaultTimeout).
	Timeout time.Duration
	// Interval is the time between check rounds (default DefaultCheckInterval).
	Interval time.Duration
	// CheckMax is how many check-backs a half message gets before it is moved to
	// CheckMaxTopic (default DefaultCheckMax).
	CheckMax int32
	// BrokerName is sent in every check-back ("bname").
	BrokerName string
	// StoreHost is written into every check-max record.
	StoreHost netip.AddrPort
	// Now is the clock the age check uses (default time.Now; tests inject one).
	Now func() time.Time
	// MaxOps bounds one TransactionOps entry (default 1024).
	MaxOps int
	// Producer returns a live connection of a producer group (default: none).
	Producer func(group string) (CheckConn, bool)
	// EnsureTopic creates a system topic through raft (CheckMaxTopic) before the
	// first record is stored there (default: a no-op).
	EnsureTopic func(ctx context.Context, name string, queues int32) error
	// Logger is named "transaction" (default: discard).
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Interval == 0 {
		c.Interval = DefaultCheckInterval
	}
	if c.CheckMax == 0 {
		c.CheckMax = DefaultCheckMax
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxOps == 0 {
		c.MaxOps = 1024
	}
	if c.Producer == nil {
		c.Producer = func(string) (CheckConn, bool) { return nil, false }
	}
	if c.EnsureTopic == nil {
		c.EnsureTopic = func(context.Context, string, int32) error { return nil }
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}
