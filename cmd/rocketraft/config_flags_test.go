package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/config"
	"github.com/rocketraft/rocketraft/internal/proctest"
	"github.com/rocketraft/rocketraft/transport"
)

const repoRoot = "../.."

// printed parses --print-config output into key → {value, origin}.
func printed(t *testing.T, out string) map[string][2]string {
	t.Helper()
	line := regexp.MustCompile(`^([A-Za-z0-9]+)=(.*?) +# (.+)$`)
	got := map[string][2]string{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a --print-config line: %q\n%s", l, out)
		}
		got[m[1]] = [2]string{m[2], m[3]}
	}
	return got
}

// The real binary with a file, variables and --set: it prints every key with
// its source, masks the secret, exits 0 and does not start (no store
// directory appears).
func TestBrokerPrintConfigBinary(t *testing.T) {
	bin, err := proctest.Binary(repoRoot, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte("brokerName=broker-p\nlistenPort=20911\nstorePathRootDir="+store+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "broker", "-c", conf, "--print-config",
		"--set", "logLevel=debug", "--set", "namesrvAuthSecret=set-secret-0123456789", "--set", "messageDelayLevel=1s 5s 10s")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"ROCKETRAFT_LISTENPORT=30911", "ROCKETRAFT_raftLogStore=boltdb", // keys
		"ROCKETRAFT_BIN=" + bin, "ROCKETRAFT_CHAOS_REPORT=r.txt", "ROCKETRAFT_SECRET_KEY=x"} // tools' own, ignored
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("broker --print-config: %v\n%s", err, stderr.String())
	}
	got := printed(t, stdout.String())
	if n := len(config.BrokerKeys()); len(got) != n {
		t.Errorf("%d keys printed, want %d", len(got), n)
	}
	for key, want := range map[string][2]string{
		"brokerName":        {"broker-p", conf + ":1"},
		"listenPort":        {"30911", "env ROCKETRAFT_LISTENPORT"},
		"raftLogStore":      {"boltdb", "env ROCKETRAFT_raftLogStore"},
		"logLevel":          {"debug", "--set"},
		"messageDelayLevel": {"1s 5s 10s", "--set"},
		"namesrvAuthSecret": {config.Mask, "--set (masked)"},
		"adminListen":       {"127.0.0.1:30913", "default (127.0.0.1:<listenPort+2>)"},
		"maxMessageSize":    {"4194304", "default"},
	} {
		if got[key] != want {
			t.Errorf("%s: printed %q, want %q", key, got[key], want)
		}
	}
	if strings.Contains(stdout.String(), "set-secret") {
		t.Error("the secret was printed")
	}
	if _, err := os.Stat(store); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--print-config started the broker: %s exists (%v)", store, err)
	}
}

// run executes the cobra command in process and returns stdout and the error.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestSetBadValueNamesKeyValueRuleAndFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"broker", "--set", "listenPort=abc", "--print-config"}, `--set listenPort="abc": must be an integer in 1..65535`},
		{[]string{"broker", "--set", "listenPrt=1", "--print-config"}, `--set listenPrt="1": unknown key (did you mean listenPort?)`},
		{[]string{"namesrv", "--set", "brokerExpireTimeout=5", "--print-config"}, `--set brokerExpireTimeout="5": must be a duration with a unit`},
		{[]string{"namesrv", "--set", "logLevel", "--print-config"}, `--set logLevel="": must be key=value`},
		// One flag is one value, commas and all (a StringSlice flag would split it).
		{[]string{"broker", "--set", "brokerClusterName=a,b", "--print-config"}, `--set brokerClusterName="a,b": must contain only letters`},
	} {
		_, err := run(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %s", tc.args, err, tc.want)
		}
	}
	t.Setenv("ROCKETRAFT_LISTENPROT", "1")
	if _, err := run(t, "broker", "--print-config"); err == nil ||
		!strings.Contains(err.Error(), `env ROCKETRAFT_LISTENPROT: LISTENPROT="1": unknown key (did you mean listenPort, as ROCKETRAFT_LISTENPORT?)`) {
		t.Errorf("err = %v", err)
	}
}

func TestNamesrvPrintConfig(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "namesrv.yaml")
	if err := os.WriteFile(conf, []byte("# ns\nlistenPort: 9877\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROCKETRAFT_LOGLEVEL", "warn")
	t.Setenv("ROCKETRAFT_DLEGERSELFID", "n1") // a broker key: the nameserver leaves it alone
	out, err := run(t, "namesrv", "-c", conf, "--set", "brokerExpireTimeout=30s", "--print-config")
	if err != nil {
		t.Fatal(err)
	}
	got := printed(t, out)
	for key, want := range map[string][2]string{
		"listenPort":          {"9877", conf + ":2"},
		"logLevel":            {"warn", "env ROCKETRAFT_LOGLEVEL"},
		"brokerExpireTimeout": {"30s", "--set"},
		"listenAddr":          {"127.0.0.1", "default"},
	} {
		if got[key] != want {
			t.Errorf("%s: printed %q, want %q", key, got[key], want)
		}
	}
	if len(got) != len(config.NamesrvKeys()) {
		t.Errorf("%d keys printed, want %d", len(got), len(config.NamesrvKeys()))
	}
}

// Every ROCKETRAFT_ name the repository mentions (tests, docs, make targets,
// the Java suite) is a key variable, one of config's tool variables, or a
// request code name. A new tool variable that is none of these would be read
// as an unknown key by every broker started in its environment; this fails
// first and says to add it to config's list.
func TestRepositoryEnvNamesAreKeysOrTools(t *testing.T) {
	keys := map[string]bool{}
	for _, k := range append(config.BrokerKeys(), config.NamesrvKeys()...) {
		keys[strings.ToUpper(k.Name)] = true
	}
	codes := map[string]bool{}
	for c := transport.RequestCode(9100); c < 9200; c++ {
		name, _, _ := strings.Cut(c.String(), "(")
		codes[name] = true
	}
	token := regexp.MustCompile(config.EnvPrefix + `[A-Za-z0-9_]+`)
	self, _ := filepath.Abs("config_flags_test.go")
	seen := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "data", "target", "node_modules", "testdata":
				return filepath.SkipDir
			}
			// config's own tests spell unknown variables on purpose.
			if rel, _ := filepath.Rel(repoRoot, path); rel == "config" {
				return filepath.SkipDir
			}
			return nil
		}
		if abs, _ := filepath.Abs(path); abs == self {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 1<<20 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(data, 0) >= 0 { // binaries
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "did you mean") { // a documented example of the error itself
				continue
			}
			for _, name := range token.FindAllString(line, -1) {
				seen++
				rest := strings.TrimPrefix(name, config.EnvPrefix)
				if config.IsToolEnv(name) || keys[strings.ToUpper(rest)] || codes[name] {
					continue
				}
				t.Errorf("%s:%d mentions %s: neither a config key nor in config's tool variables (config/env.go); "+
					"a broker started beside it would refuse it as an unknown key", path, i+1, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("found no ROCKETRAFT_ names at all; is repoRoot right?")
	}
}
