package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDevRestartsAKilledLeader: under `make run`, kill -9 of the leader shows
// a failover, and dev starts the killed node again, which rejoins as a
// follower; it used to stop the whole cluster.
func TestDevRestartsAKilledLeader(t *testing.T) {
	d := startDev(t, "--console", "")
	env, produce := d.example("bench", "produce")
	_, cluster := d.example("admin", "cluster")
	if got := d.mustRun(env, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("produce example:\n%s", got)
	}
	old := d.clusterRow(env, cluster, func(node, role string) bool { return role == "LEADER" })
	name := "broker-a-" + old
	pid := pidOf(t, "-c "+filepath.Join(d.dir, "conf", name+".conf"))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.waitOutput(name + " exited (signal: killed)")
	if !strings.Contains(d.out.String(), "the others keep running") {
		t.Fatalf("dev output after the kill:\n%s", d.out.String())
	}
	d.clusterRow(env, cluster, func(node, role string) bool { return role == "LEADER" && node != old })
	d.waitOutput(name + " started again")
	d.clusterRow(env, cluster, func(node, role string) bool { return role == "FOLLOWER" && node == old })
	if got := d.mustRun(env, produce); !strings.Contains(got, "summary: 1000 ok, 0 failed") {
		t.Fatalf("produce after the failover:\n%s", got)
	}
	if pidOf(t, "-c "+filepath.Join(d.dir, "conf", name+".conf")) == pid {
		t.Fatal("the killed node's process is still the old one")
	}
}

// waitOutput waits up to a minute for dev to print want.
func (d *devRun) waitOutput(want string) {
	d.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(d.out.String(), want) {
		if time.Now().After(deadline) {
			d.t.Fatalf("dev did not print %q:\n%s", want, d.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterRow runs `admin cluster` until a row's NODE and ROLE satisfy ok,
// for up to a minute, and returns that row's node.
func (d *devRun) clusterRow(env, args []string, ok func(node, role string) bool) string {
	d.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var out string
	for time.Now().Before(deadline) {
		out, _ = d.run(env, args, false)
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) > 5 && f[1] == "broker-a" && ok(f[4], f[5]) {
				return f[4]
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	d.t.Fatalf("no admin cluster row as wanted within a minute; last output:\n%s", out)
	return ""
}

// pidOf returns the process whose command line contains arg.
func pidOf(t *testing.T, arg string) int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), arg) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			return pid
		}
	}
	t.Fatalf("no process with %q in its command line", arg)
	return 0
}
