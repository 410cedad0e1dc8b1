// Package store is RocketMQ's storage engine, byte-compatible with the Java broker:
// the CommitLog on mmap'd segments, the stored-message codec, ConsumeQueues,
// IndexFiles, reput/dispatch, flush, recovery and retention.
//
// It imports no project package and never imports raft.
package store
