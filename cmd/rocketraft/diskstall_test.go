package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/broker/node"
	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/internal/proctest"
)

// nodeConfigOf is the node config a broker file with lines (properties, each
// ending in a newline) produces; its raft transport is closed at once. Its raft
// port is a free one, not the default 40911, so the tests pass beside a running
// `make run` group.
func nodeConfigOf(t *testing.T, lines string) node.Config {
	t.Helper()
	conf := fmt.Sprintf("storePathRootDir=%s\nadminListen=\ndLegerPeers=n0-127.0.0.1:%d\ndLegerSelfId=n0\n%s", t.TempDir(), proctest.TestPorts(t, 1)[0], lines)
	cfg, err := config.ParseBroker([]byte(conf), config.FormatProperties)
	if err != nil {
		t.Fatalf("%q: %v", lines, err)
	}
	ncfg, err := nodeConfig(cfg, newRaftPeers(cfg), hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("%q: nodeConfig: %v", lines, err)
	}
	_ = ncfg.Transport.(*raft.NetworkTransport).Close()
	return ncfg
}

// raftDiskStallTimeout reaches the node's disk guard: a duration as given,
// off as negative (disabled), 0s as 0 (the node's automatic default).
func TestRaftDiskStallTimeoutReachesTheNode(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"3s", 3 * time.Second}, {"off", -1}, {"0s", 0}} {
		ncfg := nodeConfigOf(t, "raftDiskStallTimeout="+tc.value+"\n")
		if ncfg.DiskStallTimeout != tc.want {
			t.Errorf("raftDiskStallTimeout=%s: node DiskStallTimeout %v, want %v", tc.value, ncfg.DiskStallTimeout, tc.want)
		}
	}
}

// groupCommitPipelineMinBytes reaches the proposer: a size as given, 0 (the
// key's "no threshold") as negative, which the proposer reads as off (its own
// zero would take the 128 KiB default); unset, the key's default.
func TestGroupCommitPipelineMinBytesReachesTheNode(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int
	}{{"groupCommitPipelineMinBytes=65536\n", 65536}, {"groupCommitPipelineMinBytes=0\n", -1}, {"", 128 << 10}} {
		ncfg := nodeConfigOf(t, tc.line)
		if got := ncfg.Proposer.PipelineMinBytes; got != tc.want {
			t.Errorf("%q: proposer PipelineMinBytes %d, want %d", tc.line, got, tc.want)
		}
	}
}

// groupCommitGatherMax reaches the proposer the same way: a duration as given,
// 0 ("no wait") as negative, unset as the key's default.
func TestGroupCommitGatherMaxReachesTheNode(t *testing.T) {
	for _, tc := range []struct {
		line string
		want time.Duration
	}{{"groupCommitGatherMax=3ms\n", 3 * time.Millisecond}, {"groupCommitGatherMax=0\n", -1}, {"", time.Millisecond}} {
		ncfg := nodeConfigOf(t, tc.line)
		if got := ncfg.Proposer.GatherMax; got != tc.want {
			t.Errorf("%q: proposer GatherMax %v, want %v", tc.line, got, tc.want)
		}
	}
}
