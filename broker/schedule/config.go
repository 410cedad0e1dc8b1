package schedule

import (
	"net/netip"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/rocketraft/rocketraft/store"
)

// Reader is the store side the Service scans (*store.Store).
type Reader interface {
	GetMessages(topic string, queueID int32, offset store.QueueOffset, maxMsgs int, maxBytes int, filter store.MessageFilter) (*store.GetResult, error)
}

// Config configures the leader-only Service. Zero fields take the defaults of
// withDefaults.
type Config struct {
	// Levels is the delay ladder (default DefaultMessageDelayLevel).
	Levels []time.Duration
	// StoreHost is written into every re-put record.
	StoreHost netip.AddrPort
	// Now is the clock the due check uses (default time.Now; tests inject one).
	Now func() time.Time
	// Interval between scans when nothing more is due (default 100 ms).
	Interval time.Duration
	// MaxBatchMsgs and MaxBatchBytes bound one DeliverScheduled entry (default
	// 2048 messages, 4 MiB).
	MaxBatchMsgs  int
	MaxBatchBytes int
	// Logger is named "schedule" (default: discard).
	Logger hclog.Logger
}

func (c Config) withDefaults() Config {
	if len(c.Levels) == 0 {
		c.Levels = DefaultMessageDelayLevel
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Interval == 0 {
		c.Interval = 100 * time.Millisecond
	}
	if c.MaxBatchMsgs == 0 {
		c.MaxBatchMsgs = 2048
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = 4 << 20
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}
