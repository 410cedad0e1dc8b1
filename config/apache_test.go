package config

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// apacheKeyList reads testdata/apache/keys.tsv: every key Apache's broker reads.
func apacheKeyList(t *testing.T) []string { return readKeyList(t, "keys.tsv", 400) }

// readKeyList reads the first column of a key list in testdata/apache, each
// key once, and fails when it holds fewer than atLeast (a truncated file).
func readKeyList(t *testing.T, name string, atLeast int) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "apache", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, _, _ := strings.Cut(line, "\t")
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(keys) < atLeast {
		t.Fatalf("%s has %d keys; Apache 4.9 + 5.x have at least %d", name, len(keys), atLeast)
	}
	return keys
}

// Every key of Apache 4.9 and 5.x is either one rocketraft implements (a row of
// brokerKeys) or one that loads with exactly one warning naming it: none is
// unknown, none is silently ignored.
func TestEveryApacheKeyIsUsedOrWarned(t *testing.T) {
	used, warned := 0, 0
	for _, key := range apacheKeyList(t) {
		if _, ok := lookupKey(brokerKeys, key); ok {
			used++
			continue
		}
		value := "1"
		if key == "authenticationEnabled" || key == "authorizationEnabled" {
			value = "false" // true is refused (TestApacheAuthEnabledIsRefused)
		}
		b, err := ParseBroker([]byte(key+"="+value+"\n"), FormatProperties)
		if err != nil {
			t.Errorf("%s=%s: %v", key, value, err)
			continue
		}
		if len(b.Warnings) != 1 || b.Warnings[0].Key != key || b.Warnings[0].Value != value || b.Warnings[0].Reason == "" {
			t.Errorf("%s=%s: warnings %+v, want one naming the key with a reason", key, value, b.Warnings)
			continue
		}
		if got := b.Warnings[0].String(); got != "line 1: "+key+`="1": no effect: `+b.Warnings[0].Reason && value == "1" {
			t.Errorf("%s: warning renders as %q", key, got)
		}
		warned++
	}
	t.Logf("Apache keys: %d used, %d accepted with a warning", used, warned)
	if used < 25 {
		t.Errorf("only %d Apache keys are used; brokerClusterName, dLegerPeers, deleteWhen, ... are", used)
	}
}

// The table of keys without effect names only real Apache keys, each once, and
// none that rocketraft implements: a key moves from one table to the other.
func TestApacheGroupsAreApacheKeysOnce(t *testing.T) {
	apache := apacheKeyList(t)
	seen := map[string]string{}
	for _, s := range brokerLoadKeys {
		lower := strings.ToLower(s.name)
		if first, dup := seen[lower]; dup {
			t.Errorf("key %s is in the loading table twice (also as %s)", s.name, first)
		}
		seen[lower] = s.name
	}
	for _, g := range apacheGroups {
		if g.reason == "" || len(g.keys) == 0 {
			t.Errorf("group %+v: needs a reason and keys", g)
		}
		for _, k := range g.keys {
			if !slices.Contains(apache, k) {
				t.Errorf("%s (%q) is not an Apache key in keys.tsv", k, g.reason)
			}
		}
	}
}

func TestApacheSampleConfigsLoad(t *testing.T) {
	type warned struct {
		key  string
		line int
	}
	for _, tc := range []struct {
		file  string
		warns []warned
		check func(t *testing.T, b Broker)
	}{
		{
			file:  "broker.conf",
			warns: []warned{{"brokerId", 5}, {"brokerRole", 8}},
			check: func(t *testing.T, b Broker) {
				if b.ClusterName != "DefaultCluster" || b.BrokerName != "broker-a" || !slices.Equal(b.DeleteWhen, []int{4}) ||
					b.FileReservedTime != 48*time.Hour || b.FlushDiskType != AsyncFlush {
					t.Errorf("broker.conf loaded as %+v", b)
				}
			},
		},
		{
			file:  "2m-2s-sync/broker-a-s.properties",
			warns: []warned{{"brokerId", 4}, {"brokerRole", 7}},
		},
		{
			file:  "dledger/broker-n1.conf",
			warns: []warned{{"storePathCommitLog", 11}, {"enableDLegerCommitLog", 12}, {"sendMessageThreadPoolNums", 16}},
			check: func(t *testing.T, b Broker) {
				want := []Peer{{"n0", "127.0.0.1:40911"}, {"n1", "127.0.0.1:40912"}, {"n2", "127.0.0.1:40913"}}
				if b.ClusterName != "RaftCluster" || b.BrokerName != "RaftNode00" || b.DLegerGroup != "RaftNode00" ||
					b.ListenPort != 30921 || b.SelfID != "n1" || !slices.Equal(b.Peers, want) ||
					b.StorePathRootDir != "rmqstore/node01" || !slices.Equal(b.NamesrvAddrs, []string{"127.0.0.1:9876"}) {
					t.Errorf("dledger n1 loaded as %+v", b)
				}
				if len(b.PeerClientAddrs) != 0 {
					t.Errorf("PeerClientAddrs = %v; Apache's files have none (the group replicates them)", b.PeerClientAddrs)
				}
				if r := b.Warnings[0].Reason; !strings.Contains(r, "which this value names") {
					t.Errorf("storePathCommitLog under storePathRootDir: reason %q", r)
				}
			},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "apache", tc.file)
			b, err := LoadBroker(path)
			if err != nil {
				t.Fatalf("Apache's %s does not load: %v", tc.file, err)
			}
			var got []warned
			for _, w := range b.Warnings {
				if w.Origin.Kind != OriginFile || w.Origin.File != path {
					t.Errorf("%s: origin %v, want %s", w.Key, w.Origin, path)
				}
				got = append(got, warned{w.Key, w.Origin.Line})
			}
			if !slices.Equal(got, tc.warns) {
				t.Errorf("warnings %v, want %v", got, tc.warns)
			}
			if tc.check != nil {
				tc.check(t, b)
			}
		})
	}
}

// A key without effect goes through every layer like any other: the highest
// layer's value is the one warned about, once, and the environment and --set
// name themselves as its origin.
func TestApacheKeysThroughLayers(t *testing.T) {
	file := filepath.Join("testdata", "apache", "broker.conf")
	t.Setenv("ROCKETRAFT_HAListenPort", "10912")
	b, eff, err := Layers{File: file, Env: true, Set: []string{"brokerRole=SLAVE"}}.Broker()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range b.Warnings {
		got = append(got, w.Origin.String()+" "+w.Key+"="+w.Value)
	}
	want := []string{file + ":5 brokerId=0", "env ROCKETRAFT_HAListenPort haListenPort=10912", "--set brokerRole=SLAVE"}
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
	text := eff.Text()
	for _, line := range []string{"# Accepted without effect", "# brokerRole=SLAVE", "# --set: raft elects the leader", "# haListenPort=10912"} {
		if !strings.Contains(text, line) {
			t.Errorf("--print-config text lacks %q:\n%s", line, text)
		}
	}
	if _, ok := eff.Lookup("brokerId"); ok {
		t.Error("Effective lists brokerId as a key; keys without effect are warnings only")
	}

	// A nameserver started from the same environment leaves broker keys alone,
	// Apache's included.
	if _, _, err := (Layers{Env: true}).Namesrv(); err != nil {
		t.Errorf("namesrv with ROCKETRAFT_HAListenPort set: %v", err)
	}
}

// A key nobody knows is still an error, with a suggestion that now includes
// Apache's names and keys whose words are in another order.
func TestUnknownKeysStillRefused(t *testing.T) {
	for _, tc := range []struct{ line, rule string }{
		{"enableAcl=true", "unknown key (did you mean aclEnable?)"},
		{"brokerRol=SLAVE", "unknown key (did you mean brokerRole?)"},
		{"sendMessageThreadPoolNum=16", "unknown key (did you mean sendMessageThreadPoolNums?)"},
		{"frobnicateEverything=1", "unknown key"},
	} {
		_, err := ParseBroker([]byte(tc.line+"\n"), FormatProperties)
		var verr *ValidationError
		if !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Rule != tc.rule {
			t.Errorf("%s: %v, want one problem %q", tc.line, err, tc.rule)
		}
	}
}

func TestApacheAuthEnabledIsRefused(t *testing.T) {
	_, err := ParseBroker([]byte("authenticationEnabled=true\nauthorizationEnabled=false\n"), FormatProperties)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Key != "authenticationEnabled" ||
		!strings.Contains(verr.Problems[0].Rule, "use aclEnable=true") {
		t.Fatalf("authenticationEnabled=true: %v, want one problem pointing at aclEnable", err)
	}
	b, err := ParseBroker([]byte("authenticationEnabled=false\n"), FormatProperties)
	if err != nil || len(b.Warnings) != 1 {
		t.Fatalf("authenticationEnabled=false: %v %+v", err, b.Warnings)
	}
}

func TestStorePathCommitLogElsewhereIsSaid(t *testing.T) {
	b, err := ParseBroker([]byte("storePathRootDir=/data/a\nstorePathCommitLog=/mnt/fast/commitlog\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings) != 1 || !strings.Contains(b.Warnings[0].Reason, "(/data/a/commitlog); this path is not used") {
		t.Errorf("warnings %+v", b.Warnings)
	}
}

func TestTraceAndRegisterKeys(t *testing.T) {
	b, err := ParseBroker([]byte("traceTopicEnable=true\nregisterNameServerPeriod=15000\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if !b.TraceTopicEnable || b.MsgTraceTopicName != DefaultTraceTopic || b.RegisterNameServerPeriod != 15*time.Second || b.Warnings != nil {
		t.Errorf("got trace %v %q register %v warnings %v", b.TraceTopicEnable, b.MsgTraceTopicName, b.RegisterNameServerPeriod, b.Warnings)
	}
	if b.RegionID != "DefaultRegion" || !b.TraceOn {
		t.Errorf("defaults regionId=%q traceOn=%v, want Apache's DefaultRegion and true", b.RegionID, b.TraceOn)
	}
	// Apache's keys regionId and traceOn are implemented now: set, not warned about.
	b, err = ParseBroker([]byte("regionId=eu-west\ntraceOn=false\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if b.RegionID != "eu-west" || b.TraceOn || b.Warnings != nil {
		t.Errorf("regionId=%q traceOn=%v warnings %v", b.RegionID, b.TraceOn, b.Warnings)
	}
	for _, tc := range []struct{ line, key, rule string }{
		{"msgTraceTopicName=bad topic", "msgTraceTopicName", "must contain only letters"},
		{"msgTraceTopicName=", "msgTraceTopicName", "must not be empty"},
		{"registerNameServerPeriod=5000", "registerNameServerPeriod", "10000..60000"},
		{"traceTopicEnable=yes", "traceTopicEnable", "true or false"},
	} {
		_, err := ParseBroker([]byte(tc.line+"\n"), FormatProperties)
		var verr *ValidationError
		if !errors.As(err, &verr) || !verr.Has(tc.key) || !strings.Contains(verr.Error(), tc.rule) {
			t.Errorf("%s: %v, want a problem on %s containing %q", tc.line, err, tc.key, tc.rule)
		}
	}
}

func TestApacheKeysDocs(t *testing.T) {
	groups := ApacheKeys()
	n := 0
	for _, g := range groups {
		if !slices.IsSortedFunc(g.Keys, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }) {
			t.Errorf("%q: keys not sorted", g.Reason)
		}
		n += len(g.Keys)
	}
	if n != len(brokerLoadKeys)-len(brokerKeys) {
		t.Errorf("docs list %d keys, the loading table has %d without effect", n, len(brokerLoadKeys)-len(brokerKeys))
	}
	md := ApacheKeysMarkdown(groups)
	if !strings.Contains(md, "| `brokerId` | raft assigns broker ids") {
		t.Errorf("markdown:\n%s", md)
	}
}
