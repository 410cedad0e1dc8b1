//go:build consolebrowser

package console

// The browser tests (make console-test, make console-test-short): a real nameserver, three
// real broker processes and a real `rocketraft console`, driven by headless Chromium through
// playwright-core (console/web/test/browser/run.mjs). This file only starts the processes and
// hands their addresses and pids to the script; the script kills the leader itself, so it can
// time how long the page takes to show the new one.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

func TestBrowser(t *testing.T) {
	runBrowser(t, nil, nil, nil)
}

// TestBrowserACL runs the group with aclEnable and the console with an admin account of its
// own: the page asks for a log-in, refuses a wrong secret, and hides every operation from an
// account that is not an admin.
func TestBrowserACL(t *testing.T) {
	dir := t.TempDir()
	acl := filepath.Join(dir, "plain_acl.yml")
	doc := "accounts:\n" +
		"  - accessKey: consoleAdmin\n    secretKey: console-admin-secret\n    admin: true\n" +
		"  - accessKey: consoleReader\n    secretKey: console-reader-secret\n    admin: false\n" +
		"    defaultTopicPerm: PUB|SUB\n    defaultGroupPerm: SUB\n"
	if err := os.WriteFile(acl, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	runBrowser(t, []string{"aclEnable=true", "aclFile=" + acl},
		[]string{"--access-key", "consoleAdmin", "--secret-key", "console-admin-secret"},
		[]string{"ACL_ADMIN=consoleAdmin:console-admin-secret", "ACL_READER=consoleReader:console-reader-secret"})
}

// runBrowser starts the group (each broker.conf ending with brokerExtra), the console (with
// consoleArgs) and run.mjs (with env; --acl when the group runs with ACL).
func runBrowser(t *testing.T, brokerExtra, consoleArgs, env []string) {
	bin, err := proctest.Binary("..", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not on PATH: the browser tests run under node (console/web/README.md)")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("chromium: %v (Debian's chromium; .ci/deps.sh installs it, $CHROMIUM overrides the path)", err)
	}
	if _, err := os.Stat(filepath.Join("web", "node_modules", "playwright-core")); err != nil {
		t.Fatalf("web/node_modules/playwright-core is missing: run make console-deps (npm ci)")
	}

	dir := t.TempDir()
	g := proctest.StartGroup(t, bin, dir, brokerExtra...)
	ports, err := proctest.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
	con := &proctest.Proc{Name: "console", Bin: bin, Args: append([]string{"console", "--namesrv", g.Namesrv, "--listen", listen}, consoleArgs...),
		LogPath: filepath.Join(dir, "console.log")}
	if err := con.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		con.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("--- console log (tail) ---\n%s", con.Tail(3000))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := proctest.WaitListening(ctx, listen); err != nil {
		t.Fatalf("console did not listen on %s: %v\n%s", listen, err, con.Tail(2000))
	}

	pids := map[string]int{}
	for id := range g.ClientAddr {
		pids[id] = g.Procs[id].Pid()
	}
	pidJSON, _ := json.Marshal(pids)
	shots := os.Getenv("CONSOLE_SCREENSHOTS")
	if shots != "" {
		if shots, err = filepath.Abs(shots); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join("test", "browser", "run.mjs")}
	if os.Getenv("CONSOLE_BROWSER") == "short" {
		args = append(args, "--short")
	}
	if brokerExtra != nil {
		args = append(args, "--acl")
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = "web"
	cmd.Env = append(os.Environ(),
		"CONSOLE_URL=http://"+listen,
		"ROCKETRAFT_BIN="+bin,
		"NAMESRV="+g.Namesrv,
		"BROKER_PIDS="+string(pidJSON),
		fmt.Sprintf("NAMESRV_PID=%d", g.Procs["namesrv"].Pid()),
		"CHROMIUM="+chromium,
		"SCREENSHOT_DIR="+shots,
	)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	t.Logf("run.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("browser tests failed: %v", err)
	}
}
