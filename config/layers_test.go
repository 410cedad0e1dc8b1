package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFile writes a config file named name into a fresh directory and
// returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadBrokerErr loads l and returns its problems; the load must fail.
func loadBrokerErr(t *testing.T, l Layers) []Problem {
	t.Helper()
	_, _, err := l.Broker()
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Layers%+v.Broker() err = %v, want *ValidationError", l, err)
	}
	return verr.Problems
}

// Precedence, key by key: default < file < env < --set, in both file formats,
// with the origin --print-config shows.
func TestLayerPrecedence(t *testing.T) {
	files := map[string]string{
		"broker.conf": "# comment\nbrokerName=broker-f\nlistenPort=20911\n",
		"broker.yaml": "# comment\nbrokerName: broker-f\nlistenPort: 20911\n",
	}
	cases := []struct {
		name             string
		file             bool
		env, set         string // listenPort from the variable / the flag; "" = not given
		wantPort         int
		wantOrigin       string // of listenPort; FILE stands for the file's path
		wantBrokerOrigin string
	}{
		{"defaults", false, "", "", 10911, "default", "default"},
		{"file", true, "", "", 20911, "FILE:3", "FILE:2"},
		{"env over default", false, "30911", "", 30911, "env ROCKETRAFT_LISTENPORT", "default"},
		{"env over file", true, "30911", "", 30911, "env ROCKETRAFT_LISTENPORT", "FILE:2"},
		{"set over default", false, "", "40001", 40001, "--set", "default"},
		{"set over file", true, "", "40001", 40001, "--set", "FILE:2"},
		{"set over env over file", true, "30911", "40001", 40001, "--set", "FILE:2"},
	}
	for fileName, text := range files {
		for _, tc := range cases {
			t.Run(fileName+"/"+tc.name, func(t *testing.T) {
				l := Layers{Env: true}
				if tc.file {
					l.File = writeFile(t, fileName, text)
				}
				if tc.env != "" {
					t.Setenv("ROCKETRAFT_LISTENPORT", tc.env)
				}
				if tc.set != "" {
					l.Set = []string{"listenPort=" + tc.set}
				}
				b, eff, err := l.Broker()
				if err != nil {
					t.Fatal(err)
				}
				if b.ListenPort != tc.wantPort {
					t.Errorf("listenPort = %d, want %d", b.ListenPort, tc.wantPort)
				}
				want := func(s string) string { return strings.Replace(s, "FILE", l.File, 1) }
				for key, origin := range map[string]string{"listenPort": want(tc.wantOrigin), "brokerName": want(tc.wantBrokerOrigin)} {
					k, ok := eff.Lookup(key)
					if !ok || k.Origin.String() != origin {
						t.Errorf("origin of %s = %q, want %q", key, k.Origin, origin)
					}
				}
				// Derived defaults follow the layered value they derive from.
				if b.AdminListen != "127.0.0.1:"+itoa(tc.wantPort+2) {
					t.Errorf("adminListen = %q, want listenPort+2 of %d", b.AdminListen, tc.wantPort)
				}
				if k, _ := eff.Lookup("adminListen"); k.Origin.String() != "default (127.0.0.1:<listenPort+2>)" {
					t.Errorf("adminListen origin = %q", k.Origin)
				}
			})
		}
	}
}

// Every key goes through every layer: the environment sets each key to its
// default text over a file that sets each to something else, then --set puts
// the file's values back. viper resolves each key and the loader checks the
// answer against the layer it names (a mismatch is an error), so this covers the
// agreement for all keys, not just listenPort.
func TestEveryKeyThroughEveryLayer(t *testing.T) {
	file := filepath.Join("testdata", "broker-n0.conf")
	def, want := DefaultBroker(), testdataBroker()
	text := func(s keySpec[Broker], b *Broker) string {
		if s.name == "namesrvAuthSecret" { // get masks it; the layers need the text
			return b.NamesrvAuthSecret
		}
		return s.get(b)
	}
	for _, s := range brokerKeys {
		t.Setenv(EnvPrefix+strings.ToUpper(s.name), text(s, &def))
	}
	b, eff, err := Layers{File: file, Env: true}.Broker()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, def) {
		t.Errorf("env over file:\n got %+v\nwant %+v", b, def)
	}
	for _, k := range eff.Keys {
		if want := "env ROCKETRAFT_" + strings.ToUpper(k.Name); k.Origin.String() != want {
			t.Errorf("%s: origin %q, want %q", k.Name, k.Origin, want)
		}
	}
	var sets []string
	for _, s := range brokerKeys {
		sets = append(sets, s.name+"="+text(s, &want))
	}
	b, eff, err = Layers{File: file, Env: true, Set: sets}.Broker()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("set over env:\n got %+v\nwant %+v", b, want)
	}
	for _, k := range eff.Keys {
		if k.Origin.Kind != OriginFlag {
			t.Errorf("%s: origin %q, want --set", k.Name, k.Origin)
		}
	}
}

// ROCKETRAFT_<key> matches the key in any case; two spellings of one key are
// an error naming both variables.
func TestEnvSpellings(t *testing.T) {
	for _, name := range []string{"ROCKETRAFT_listenPort", "ROCKETRAFT_LISTENPORT", "ROCKETRAFT_ListenPort"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, "30911")
			b, eff, err := Layers{Env: true}.Broker()
			if err != nil {
				t.Fatal(err)
			}
			k, _ := eff.Lookup("listenPort")
			if b.ListenPort != 30911 || k.Origin.String() != "env "+name {
				t.Errorf("listenPort = %d from %q", b.ListenPort, k.Origin)
			}
		})
	}
	t.Run("two spellings", func(t *testing.T) {
		t.Setenv("ROCKETRAFT_LISTENPORT", "30911")
		t.Setenv("ROCKETRAFT_listenPort", "30921")
		ps := loadBrokerErr(t, Layers{Env: true})
		if len(ps) != 1 || ps[0].Key != "listenPort" ||
			ps[0].Rule != "set more than once (ROCKETRAFT_LISTENPORT and ROCKETRAFT_listenPort)" {
			t.Errorf("problems = %v", ps)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Setenv("ROCKETRAFT_LISTENPORT", "30911")
		t.Setenv("ROCKETRAFT_LISTENPROT", "30911")
		if b, _, err := (Layers{}).Broker(); err != nil || b.ListenPort != DefaultBrokerListenPort {
			t.Errorf("Env=false read the environment: %d, %v", b.ListenPort, err)
		}
		// LoadBroker (the docker test, tools) reads the file alone.
		if b, err := LoadBroker(filepath.Join("testdata", "broker-n0.conf")); err != nil || b.ListenPort != 20911 {
			t.Errorf("LoadBroker read the environment: %d, %v", b.ListenPort, err)
		}
	})
	t.Run("empty value", func(t *testing.T) {
		t.Setenv("ROCKETRAFT_ADMINLISTEN", "")
		b, eff, err := Layers{Env: true}.Broker()
		k, _ := eff.Lookup("adminListen")
		if err != nil || b.AdminListen != "" || k.Origin.Kind != OriginEnv {
			t.Errorf("adminListen = %q from %q, %v; want disabled by the variable", b.AdminListen, k.Origin, err)
		}
	})
}

// A ROCKETRAFT_ variable that is no key is an error with a suggestion; the
// tools' variables and the other process kind's keys are left alone.
func TestEnvUnknownAndIgnored(t *testing.T) {
	t.Setenv("ROCKETRAFT_BIN", "/nowhere/rocketraft")
	t.Setenv("ROCKETRAFT_INTEGRATION", "1")
	t.Setenv("ROCKETRAFT_CHAOS", "1")
	t.Setenv("ROCKETRAFT_CHAOS_REPORT", "out.json")
	t.Setenv("ROCKETRAFT_ACCESS_KEY", "rocketmq2")
	t.Setenv("ROCKETRAFT_SECRET_KEY", "12345678")
	t.Setenv("ROCKETRAFT_BROKEREXPIRETIMEOUT", "30s") // a nameserver key
	if _, _, err := (Layers{Env: true}).Broker(); err != nil {
		t.Fatalf("tool variables broke the broker: %v", err)
	}
	t.Setenv("ROCKETRAFT_DLEGERPEERS", "n0-127.0.0.1:40911") // a broker key, for the nameserver
	if _, _, err := (Layers{Env: true}).Namesrv(); err != nil {
		t.Fatalf("broker variables broke the nameserver: %v", err)
	}

	t.Setenv("ROCKETRAFT_LISTENPROT", "30911")
	t.Setenv("ROCKETRAFT_FROBNICATE", "1")
	ps := loadBrokerErr(t, Layers{Env: true})
	if len(ps) != 2 {
		t.Fatalf("problems = %v, want the two unknown variables", ps)
	}
	if got, want := ps[0].String(), `env ROCKETRAFT_FROBNICATE: FROBNICATE="1": unknown key: a ROCKETRAFT_ variable must name a key, or be one of ROCKETRAFT_BIN`; !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if got, want := ps[1].String(), `env ROCKETRAFT_LISTENPROT: LISTENPROT="30911": unknown key (did you mean listenPort, as ROCKETRAFT_LISTENPORT?)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The nameserver reports the same variables; it knows listenPort too.
	if _, _, err := (Layers{Env: true}).Namesrv(); err == nil || !strings.Contains(err.Error(), "ROCKETRAFT_LISTENPROT") {
		t.Errorf("namesrv err = %v", err)
	}
}

// --set: bad values, unknown keys, malformed flags and repeats all name --set,
// the key, the value and the rule.
func TestSetProblems(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"listenPort=abc"}, `--set listenPort="abc": must be an integer in 1..65535`},
		{[]string{"LISTENPORT=0"}, `--set listenPort="0": must be 1..65535`},
		{[]string{"listenPrt=1"}, `--set listenPrt="1": unknown key (did you mean listenPort?)`},
		{[]string{"listenPort"}, `--set listenPort="": must be key=value`},
		{[]string{"=1"}, `--set =1="": must be key=value`},
		{[]string{"listenPort=1", "listenPort=2"}, `--set listenPort="2": set more than once with --set`},
		{[]string{"brokerExpireTimeout=1s"}, `--set brokerExpireTimeout="1s": unknown key`}, // a namesrv key: flags are per command
		// A rule between keys names the flag that set the key it is reported on.
		{[]string{"raftLeaderLeaseTimeout=2s"}, `--set raftLeaderLeaseTimeout="2s": must be at most raftHeartbeatTimeout (1s)`},
		{[]string{"namesrvAuthSecret=short-secret"}, `--set namesrvAuthSecret="(secret, 12 characters)": must have at least 16 characters when set`},
	} {
		ps := loadBrokerErr(t, Layers{Set: tc.set})
		if len(ps) != 1 || ps[0].String() != tc.want {
			t.Errorf("--set %q:\n got %v\nwant %s", tc.set, (&ValidationError{ps}).Error(), tc.want)
		}
	}
}

// Validation problems name the layer of the value they are about, in file
// order, then variables, then flags, then defaults.
func TestProblemsNameTheirOrigin(t *testing.T) {
	path := writeFile(t, "broker.conf", "brokerName=broker-b\n\ndLegerSelfId=n7\nlistenPort=40911\n")
	t.Setenv("ROCKETRAFT_DISKMAXUSEDSPACERATIO", "99")
	ps := loadBrokerErr(t, Layers{File: path, Env: true, Set: []string{"flushDiskType=FAST"}})
	want := []string{
		path + `:3: dLegerSelfId="n7": must be one of the dLegerPeers ids (n0)`,
		`env ROCKETRAFT_DISKMAXUSEDSPACERATIO: diskMaxUsedSpaceRatio="99": must be 10..95`,
		`--set flushDiskType="FAST": must be ASYNC_FLUSH or SYNC_FLUSH`,
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The default raft address clashes with listenPort from the file: the
	// problem is on dLegerPeers, which nobody set.
	ps = loadBrokerErr(t, Layers{File: writeFile(t, "b.conf", "listenPort=40911\n")})
	if len(ps) != 1 || !strings.HasPrefix(ps[0].String(), `default: dLegerPeers="n0-127.0.0.1:40911": raft address of n0`) {
		t.Errorf("problems = %v", ps)
	}
}

// YAML keeps the key's case and its line, for values and for problems.
func TestYAMLKeepsCaseAndLines(t *testing.T) {
	path := writeFile(t, "broker.yaml", "# header\n"+
		"brokerName: broker-y\n"+
		"ListenPrt: 1\n"+
		"listenPort: 70000\n"+
		"namesrvAddr:\n"+
		"  - 10.0.0.1:9876\n"+
		"  - 10.0.0.2\n"+
		"brokerName: broker-z\n"+
		"namesrvAuthSecrt: hunter2-hunter2-hunter2\n")
	ps := loadBrokerErr(t, Layers{File: path})
	want := []string{
		path + `:3: ListenPrt="1": unknown key (did you mean listenPort?)`,
		path + `:4: listenPort="70000": must be 1..65535`,
		path + `:5: namesrvAddr="10.0.0.1:9876;10.0.0.2": item "10.0.0.2" must be host:port`,
		path + `:8: brokerName="broker-z": set more than once (lines 2 and 8)`,
		// A misspelt secret key is still a secret.
		path + `:9: namesrvAuthSecrt="(secret, 23 characters)": unknown key (did you mean namesrvAuthSecret?)`,
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	b, eff, err := Layers{File: writeFile(t, "ok.yml", "brokerName: broker-y\n\nlistenPort: 20911\n")}.Broker()
	if err != nil {
		t.Fatal(err)
	}
	k, _ := eff.Lookup("listenPort")
	if b.ListenPort != 20911 || k.Origin.Line != 3 {
		t.Errorf("listenPort = %d at line %d, want 20911 at 3", b.ListenPort, k.Origin.Line)
	}
}

func TestYAMLShapes(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"", ""},
		{"# only a comment\n", ""},
		{"~\n", ""},
		{"base: &p n0-127.0.0.1:40911\ndLegerPeers: *p\n", `line 1: base="n0-127.0.0.1:40911": unknown key`},
		{"listenPort: {}\n", `line 1: listenPort="{}": must be a single value, not a mapping`},
		{"namesrvAddr: [[a]]\n", `line 1: namesrvAddr="": list items must be plain values`},
		{"? [a]\n: 1\n", `line 1: ?="": a key must be a plain name`},
		{"listenPort: \"20911\"\n", ""},
		{"deleteWhen: 04\n", ""},
	} {
		_, err := ParseBroker([]byte(tc.data), FormatYAML)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.data, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%q:\n got %v\nwant %s", tc.data, err, tc.want)
		}
	}
	for _, data := range []string{"- a\n- b\n", "just text\n", "a: [1,\n"} {
		if _, err := ParseBroker([]byte(data), FormatYAML); !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: err = %v, want ErrSyntax", data, err)
		}
	}
}

// The nameserver layers the same way.
func TestNamesrvLayers(t *testing.T) {
	path := writeFile(t, "namesrv.conf", "listenPort=9877\nlogLevel=debug\n")
	t.Setenv("ROCKETRAFT_LOGLEVEL", "warn")
	n, eff, err := Layers{File: path, Env: true, Set: []string{"brokerExpireTimeout=30s"}}.Namesrv()
	if err != nil {
		t.Fatal(err)
	}
	if n.ListenPort != 9877 || n.LogLevel != "warn" || n.BrokerExpireTimeout.String() != "30s" || n.AdminListen != "127.0.0.1:9879" {
		t.Errorf("namesrv = %+v", n)
	}
	for key, want := range map[string]string{"listenPort": path + ":1", "logLevel": "env ROCKETRAFT_LOGLEVEL",
		"brokerExpireTimeout": "--set", "listenAddr": "default"} {
		if k, _ := eff.Lookup(key); k.Origin.String() != want {
			t.Errorf("%s from %q, want %q", key, k.Origin, want)
		}
	}
	_, _, err = Layers{Set: []string{"listenPort=abc"}}.Namesrv()
	if err == nil || !strings.Contains(err.Error(), `--set listenPort="abc": must be an integer in 1..65535`) {
		t.Errorf("err = %v", err)
	}
}

func TestLayersFileErrors(t *testing.T) {
	_, _, err := Layers{File: filepath.Join(t.TempDir(), "nope.conf")}.Broker()
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want os.ErrNotExist", err)
	}
	_, _, err = Layers{File: writeFile(t, "b.yaml", "a: [1,\n")}.Broker()
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("err = %v, want ErrSyntax", err)
	}
}
