package store

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// FlushMode chooses when appended CommitLog bytes are made durable by the store
// itself. In a raft group the raft log is the write-ahead log, so ASYNC is the normal
// choice; SYNC flushes before an append returns.
type FlushMode int

const (
	FlushAsync FlushMode = iota // ASYNC_FLUSH: background flush every FlushInterval
	FlushSync                   // SYNC_FLUSH: flush before AppendBatch returns
)

// Config configures a Store. Zero values take the defaults below.
type Config struct {
	// Dir is the store root (storePathRootDir): commitlog/, consumequeue/, index/,
	// checkpoint and abort live under it.
	Dir string
	// CommitLogSegmentSize is mappedFileSizeCommitLog (default 1 GiB). It shapes the
	// bytes (padding positions), so every replica of a group must use the same value.
	CommitLogSegmentSize int64
	// ConsumeQueueEntriesPerFile is mappedFileSizeConsumeQueue / 20 (default 300,000).
	ConsumeQueueEntriesPerFile int
	// IndexHashSlots and IndexMaxEntries size each IndexFile (default 5,000,000 and 20,000,000).
	IndexHashSlots  int
	IndexMaxEntries int
	// PreZeroSegments writes zeros through new CommitLog segments ahead of need.
	PreZeroSegments bool
	// WarmAhead is how many bytes ahead of the CommitLog's write position are kept
	// in the page cache, populated by a background goroutine so that appends do not
	// fault pages in themselves (warmer.go). 0 = DefaultWarmAhead; negative = off.
	WarmAhead     int64
	FlushMode     FlushMode
	FlushInterval time.Duration // default 500 ms
	// IndexFlushInterval is how often a flush also msyncs the IndexFiles and
	// moves their checkpoint (default 1 min; negative = with every flush). The
	// FSM's checkpoint does not wait for them: recovery rebuilds the entries
	// above their checkpoint from the CommitLog (decision 0017), so an index
	// under random keys does not rewrite its slot table to disk every second.
	IndexFlushInterval time.Duration
	// FileReservedTime is how long a CommitLog segment is kept after its last write (default 72 h).
	FileReservedTime time.Duration
	// DeleteWhenHour is the hour of day (0-23, local time of the injected clock) at which expired files are deleted (default 4).
	DeleteWhenHour int
	// DeleteWhenHours, when not empty, replaces DeleteWhenHour: retention
	// deletes expired files during each listed hour (RocketMQ's deleteWhen
	// "04;16").
	DeleteWhenHours []int
	// DiskMaxUsedSpaceRatio (0-1) above which expired-or-not segments are deleted at once (default 0.75).
	DiskMaxUsedSpaceRatio float64
	Logger                hclog.Logger
	// RaftEntryLog makes the CommitLog the raft log as well (decision 0016, the
	// single write): raft appends entries at its tail through Store.EntryLog, Apply
	// assigns queue offsets with ApplyEntry instead of copying, and records keep
	// QUEUEOFFSET 0 on disk. Every replica of a group must use the same value.
	RaftEntryLog bool
	// IOHook, when set, is asked before every CommitLog write, sync and segment
	// creation (iohook.go). Tests only.
	IOHook IOHook
	// ScrubRate is how many bytes a second the scrub reads to check the CommitLog
	// segments that open did not (scrub.go, decision 0019). 0 = DefaultScrubRate;
	// negative = no scrub.
	ScrubRate int64
}

// Defaults from RocketMQ's MessageStoreConfig.
// DefaultScrubRate reads 8 MiB a second, a terabyte in about 36 hours. Three nodes
// scrubbing at 32 MiB/s on one disk raised a paced workload's send p99 from 8-9 ms to
// 13-21 ms; at 8 MiB/s it did not move (docs/performance.md, twenty-fifth pass).
const DefaultScrubRate = 8 << 20

const (
	DefaultCommitLogSegmentSize       = 1 << 30
	DefaultConsumeQueueEntriesPerFile = 300_000
	DefaultIndexHashSlots             = 5_000_000
	DefaultIndexMaxEntries            = 20_000_000
	DefaultFlushInterval              = 500 * time.Millisecond
	DefaultIndexFlushInterval         = time.Minute
	DefaultFileReservedTime           = 72 * time.Hour
	DefaultDeleteWhenHour             = 4
	DefaultDiskMaxUsedSpaceRatio      = 0.75
	DefaultWarmAhead                  = 4 << 20
)

// deleteHours is DeleteWhenHours, or DeleteWhenHour alone when that is empty.
func (c Config) deleteHours() []int {
	if len(c.DeleteWhenHours) > 0 {
		return c.DeleteWhenHours
	}
	return []int{c.DeleteWhenHour}
}

// withDefaults returns c with zero values replaced by defaults.
func (c Config) withDefaults() Config {
	if c.CommitLogSegmentSize == 0 {
		c.CommitLogSegmentSize = DefaultCommitLogSegmentSize
	}
	if c.ConsumeQueueEntriesPerFile == 0 {
		c.ConsumeQueueEntriesPerFile = DefaultConsumeQueueEntriesPerFile
	}
	if c.IndexHashSlots == 0 {
		c.IndexHashSlots = DefaultIndexHashSlots
	}
	if c.IndexMaxEntries == 0 {
		c.IndexMaxEntries = DefaultIndexMaxEntries
	}
	if c.IndexFlushInterval == 0 {
		c.IndexFlushInterval = DefaultIndexFlushInterval
	}
	if c.FlushInterval == 0 {
		c.FlushInterval = DefaultFlushInterval
	}
	if c.FileReservedTime == 0 {
		c.FileReservedTime = DefaultFileReservedTime
	}
	if c.WarmAhead == 0 {
		c.WarmAhead = DefaultWarmAhead
	}
	if c.ScrubRate == 0 {
		c.ScrubRate = DefaultScrubRate
	}
	if c.DiskMaxUsedSpaceRatio == 0 {
		c.DiskMaxUsedSpaceRatio = DefaultDiskMaxUsedSpaceRatio
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}
