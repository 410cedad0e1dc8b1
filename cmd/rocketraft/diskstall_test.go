package main

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rocketraft/rocketraft/config"
)

// raftDiskStallTimeout reaches the node's disk guard: a duration as given,
// off as negative (disabled), 0s as 0 (the node's automatic default).
func TestRaftDiskStallTimeoutReachesTheNode(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{{"3s", 3 * time.Second}, {"off", -1}, {"0s", 0}} {
		conf := "storePathRootDir=" + t.TempDir() + "\nadminListen=\nraftDiskStallTimeout=" + tc.value + "\n"
		cfg, err := config.ParseBroker([]byte(conf), config.FormatProperties)
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		ncfg, err := nodeConfig(cfg, hclog.NewNullLogger())
		if err != nil {
			t.Fatalf("%s: nodeConfig: %v", tc.value, err)
		}
		_ = ncfg.Transport.(*raft.NetworkTransport).Close()
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
		conf := "storePathRootDir=" + t.TempDir() + "\nadminListen=\n" + tc.line
		cfg, err := config.ParseBroker([]byte(conf), config.FormatProperties)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		ncfg, err := nodeConfig(cfg, hclog.NewNullLogger())
		if err != nil {
			t.Fatalf("%q: nodeConfig: %v", tc.line, err)
		}
		_ = ncfg.Transport.(*raft.NetworkTransport).Close()
		if got := ncfg.Proposer.PipelineMinBytes; got != tc.want {
			t.Errorf("%q: proposer PipelineMinBytes %d, want %d", tc.line, got, tc.want)
		}
	}
}
