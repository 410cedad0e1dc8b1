package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestRaftRestartWithNoSnapshotRestoreOnStart runs the FSM under a real single-node
// hashicorp/raft: apply, snapshot (the log is compacted behind it), apply more, stop
// without a final checkpoint, restart with NoSnapshotRestoreOnStart. The CommitLog must
// end byte-identical to a straight application of the same commands: nothing lost
// below the compacted snapshot, nothing duplicated by the replay.
func TestRaftRestartWithNoSnapshotRestoreOnStart(t *testing.T) {
	cmds := workload(t, 80)
	var datas [][]byte
	for _, l := range cmds {
		if l.Type == raft.LogCommand {
			datas = append(datas, l.Data)
		}
	}
	refDir := t.TempDir()
	ref := openStore(t, refDir)
	defer ref.Close()
	rf := newRealFSM(t, ref, refDir)
	for i, d := range datas {
		rf.Apply(cmdLog(uint64(i+1), d))
	}
	want := bytesOf(t, ref)

	dir, snapDir := t.TempDir(), t.TempDir()
	logs, stable := raft.NewInmemStore(), raft.NewInmemStore()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(snapDir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	_, trans := raft.NewInmemTransport("n1")
	conf := raft.DefaultConfig()
	conf.LocalID = "n1"
	conf.Logger = hclog.NewNullLogger()
	conf.HeartbeatTimeout, conf.ElectionTimeout, conf.LeaderLeaseTimeout = 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond
	conf.TrailingLogs, conf.SnapshotThreshold, conf.SnapshotInterval = 2, 1<<30, time.Hour
	conf.NoSnapshotRestoreOnStart = true
	if err := raft.BootstrapCluster(conf, logs, stable, snaps, trans, raft.Configuration{
		Servers: []raft.Server{{ID: "n1", Address: trans.LocalAddr()}}}); err != nil {
		t.Fatal(err)
	}
	start := func() (*raft.Raft, *FSM, func()) {
		st := openStore(t, dir)
		f := newRealFSM(t, st, dir)
		r, err := raft.NewRaft(conf, f, logs, stable, snaps, trans)
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for r.State() != raft.Leader {
			if time.Now().After(deadline) {
				t.Fatal("no leader")
			}
			time.Sleep(10 * time.Millisecond)
		}
		return r, f, func() {
			if err := r.Shutdown().Error(); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	apply := func(r *raft.Raft, ds [][]byte) {
		for _, d := range ds {
			fut := r.Apply(d, 5*time.Second)
			if err := fut.Error(); err != nil {
				t.Fatal(err)
			}
			if p, ok := fut.Response().(*PutResult); ok && p.Err != nil {
				t.Fatal(p.Err)
			}
		}
	}

	r, f, stop := start()
	apply(r, datas[:60])
	if err := r.Snapshot().Error(); err != nil {
		t.Fatal(err)
	}
	snapIndex := f.AppliedIndex()
	if first, _ := logs.FirstIndex(); first <= 3 {
		t.Fatalf("log not compacted (first index %d)", first)
	}
	apply(r, datas[60:])
	stop() // no Checkpoint: the CommitLog is ahead of the checkpoint Persist wrote

	r, f, stop = start()
	defer stop()
	if f.AppliedIndex() < snapIndex {
		t.Fatalf("checkpoint at %d, behind raft's snapshot at %d", f.AppliedIndex(), snapIndex)
	}
	if err := r.Barrier(5 * time.Second).Error(); err != nil {
		t.Fatal(err)
	}
	if got := bytesOf(t, f.st); !bytes.Equal(got, want) {
		t.Fatalf("CommitLog after raft restart: %d bytes, want %d (first diff at %d)", len(got), len(want), firstDiff(got, want))
	}
}
