package integration

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// TestBadBrokerConfigFailsStartup: a broker.conf with several mistakes stops the
// binary at once with one message that names every key, value and rule.
func TestBadBrokerConfigFailsStartup(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	conf := filepath.Join(t.TempDir(), "broker.conf")
	text := "brokerName=broker-a\nlistenPort=70000\nflushDiskType=SOMETIMES\nbrokerNmae=typo\ndLegerPeers=n0-127.0.0.1:40911\ndLegerSelfId=n9\n"
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, binPath, "broker", "-c", conf).CombinedOutput()
	if err == nil {
		t.Fatalf("broker started with a bad config:\n%s", out)
	}
	for _, want := range []string{`listenPort="70000"`, `flushDiskType="SOMETIMES"`, "brokerNmae", "unknown key", "dLegerSelfId", "n9"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("start-up error lacks %q:\n%s", want, out)
		}
	}
}

// TestDevClusterPrintedExample runs `rocketraft dev` (what `make run` runs) on free
// ports and then the produce and consume commands it prints, as a newcomer would.
func TestDevClusterPrintedExample(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	ports, err := proctest.FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	// Node i uses base+10*i (+2 for its admin HTTP): pick bases with room around them.
	nsPort, brokerBase, raftBase := ports[0], 20000+ports[1]%20000, 40000+ports[2]%20000
	for _, p := range []int{brokerBase, brokerBase + 10, brokerBase + 20, raftBase, raftBase + 10, raftBase + 20} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Skipf("port %d busy, skipping: %v", p, err)
		}
		l.Close()
	}
	dir := t.TempDir()
	var out bytes.Buffer
	dev := exec.Command(binPath, "dev", "--data-dir", filepath.Join(dir, "dev"),
		"--namesrv-port", fmt.Sprint(nsPort), "--broker-port", fmt.Sprint(brokerBase), "--raft-port", fmt.Sprint(raftBase))
	dev.Stdout, dev.Stderr = &out, &out
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = dev.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = dev.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = dev.Process.Kill()
			t.Error("dev did not stop on Ctrl-C within 20 s")
		}
	}()
	// Wait for the printed example, then run it.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "bench consume") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	var produce, consume []string
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasSuffix(f[0], "rocketraft") && f[1] == "bench" {
			if f[2] == "produce" {
				produce = f[1:]
			} else if f[2] == "consume" {
				consume = f[1:]
			}
		}
	}
	if produce == nil || consume == nil {
		t.Fatalf("dev printed no example:\n%s", out.String())
	}
	run := func(args []string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var res []byte
		var err error
		// The group needs a moment to elect and register; retry the first command.
		for attempt := 0; attempt < 20; attempt++ {
			res, err = exec.CommandContext(ctx, binPath, args...).CombinedOutput()
			if err == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Fatalf("%v: %v\n%s\n--- dev output ---\n%s", args, err, res, out.String())
		}
		return string(res)
	}
	if got := run(produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("produce example:\n%s", got)
	}
	if got := run(consume); !strings.Contains(got, "summary: 1000 ok") {
		t.Fatalf("consume example:\n%s", got)
	}
}
