package console

import (
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// TestDevStartsConsoleOverTLS runs `rocketraft dev --tls`: every client port
// enforces TLS, and the console dev starts (and whose URL it prints) reaches
// every node over TLS, verified against the dev CA.
func TestDevStartsConsoleOverTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level console test")
	}
	dir := t.TempDir()
	bin, err := proctest.Binary(filepath.Join(".."), dir)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := proctest.FreePortGroups(3, 22)
	if err != nil {
		t.Fatal(err)
	}
	web, err := proctest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	consoleAddr := fmt.Sprintf("127.0.0.1:%d", web[0])
	out := &proctest.SyncBuffer{}
	dev := exec.Command(bin, "dev", "--tls", "--data-dir", filepath.Join(dir, "dev"), "--namesrv-port", fmt.Sprint(ports[0]),
		"--broker-port", fmt.Sprint(ports[1]), "--raft-port", fmt.Sprint(ports[2]), "--console", consoleAddr)
	dev.Stdout, dev.Stderr = out, out
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dev.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = dev.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = dev.Process.Kill()
		}
		if t.Failed() {
			t.Logf("dev output:\n%s", out.String())
			logs, _ := filepath.Glob(filepath.Join(dir, "dev", "logs", "console.log"))
			for _, l := range logs {
				b, _ := exec.Command("tail", "-n", "30", l).Output()
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	eventually(t, 20*time.Second, "dev to print the console's URL", func() bool {
		return strings.Contains(out.String(), "console      http://"+consoleAddr)
	})
	f := &fixture{base: "http://" + consoleAddr, http: newHTTPClient(t)}
	eventually(t, 40*time.Second, "three TLS nodes and a leader through the console", func() bool {
		req, _ := http.NewRequest("GET", f.base+"/api/v1/session", nil)
		if resp, err := f.http.Do(req); err != nil {
			return false
		} else {
			resp.Body.Close()
		}
		code, doc := f.do(t, f.http, "GET", "/api/v1/cluster", nil)
		if code != http.StatusOK {
			return false
		}
		g, nodes := nodesOf(doc)
		if g == nil || len(nodes) != 3 || g["leader"] == "" {
			return false
		}
		for _, n := range nodes {
			if n["up"] != true {
				return false
			}
		}
		return true
	})
}
