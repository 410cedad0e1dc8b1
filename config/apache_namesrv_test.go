package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// apacheNamesrvKeyList reads testdata/apache/namesrv-keys.tsv: every key
// Apache's nameserver reads.
func apacheNamesrvKeyList(t *testing.T) []string { return readKeyList(t, "namesrv-keys.tsv", 80) }

// Every key of Apache's nameserver is one rocketraft implements or one that
// loads with exactly one warning naming it, its value and why.
func TestEveryApacheNamesrvKeyIsUsedOrWarned(t *testing.T) {
	used := 0
	for _, key := range apacheNamesrvKeyList(t) {
		if _, ok := lookupKey(namesrvKeys, key); ok {
			used++
			continue
		}
		n, err := ParseNamesrv([]byte(key+"=1\n"), FormatProperties)
		if err != nil {
			t.Errorf("%s=1: %v", key, err)
			continue
		}
		if len(n.Warnings) != 1 || n.Warnings[0].Key != key || n.Warnings[0].Value != "1" || n.Warnings[0].Reason == "" {
			t.Errorf("%s=1: warnings %+v, want one naming the key with a reason", key, n.Warnings)
			continue
		}
		if got, want := n.Warnings[0].String(), "line 1: "+key+`="1": no effect: `+n.Warnings[0].Reason; got != want {
			t.Errorf("%s: warning renders as %q, want %q", key, got, want)
		}
	}
	if used != 3 {
		t.Errorf("%d Apache nameserver keys are used; want 3 (listenPort, bindAddress, scanNotActiveBrokerInterval)", used)
	}
}

// The groups name only Apache nameserver keys, and the loading table has each
// name once ignoring case; an unknown key is still an error with a suggestion.
func TestApacheNamesrvGroupsAreApacheKeysOnce(t *testing.T) {
	apache := apacheNamesrvKeyList(t)
	seen := map[string]string{}
	for _, s := range namesrvLoadKeys {
		lower := strings.ToLower(s.name)
		if first, dup := seen[lower]; dup {
			t.Errorf("key %s is in the loading table twice (also as %s)", s.name, first)
		}
		seen[lower] = s.name
	}
	for _, g := range apacheNamesrvGroups {
		if g.reason == "" || len(g.keys) == 0 {
			t.Errorf("group %+v: needs a reason and keys", g)
		}
		for _, k := range g.keys {
			if !slices.Contains(apache, k) {
				t.Errorf("%s (%q) is not an Apache nameserver key in namesrv-keys.tsv", k, g.reason)
			}
		}
	}
	_, err := ParseNamesrv([]byte("scanNotActiveBrokerIntervall=3000\n"), FormatProperties)
	if err == nil || !strings.Contains(err.Error(), "unknown key") || !strings.Contains(err.Error(), "scanNotActiveBrokerInterval") {
		t.Errorf("misspelt key: %v, want unknown key with a suggestion", err)
	}
}

func TestApacheNamesrvConfigLoads(t *testing.T) {
	path := filepath.Join("testdata", "apache", "namesrv.conf")
	n, err := LoadNamesrv(path)
	if err != nil {
		t.Fatalf("%s does not load: %v", path, err)
	}
	if n.ListenPort != 9876 || n.ListenAddr != "0.0.0.0" || n.ScanInterval != 3*time.Second {
		t.Errorf("loaded listenPort %d, listen address %q, scan interval %v; want 9876, 0.0.0.0 (bindAddress), 3s",
			n.ListenPort, n.ListenAddr, n.ScanInterval)
	}
	var got []string
	for _, w := range n.Warnings {
		if w.Origin.Kind != OriginFile || w.Origin.File != path {
			t.Errorf("%s: origin %v, want %s", w.Key, w.Origin, path)
		}
		got = append(got, w.Key)
	}
	want := []string{"rocketmqHome", "kvConfigPath", "orderMessageEnable", "serverWorkerThreads",
		"clientRequestThreadPoolNums", "enableControllerInNamesrv", "useTLS"}
	if !slices.Equal(got, want) {
		t.Errorf("warnings for %v, want %v in file order", got, want)
	}
}

func TestNamesrvBindAddressAndScanInterval(t *testing.T) {
	for _, tc := range []struct {
		file     string
		addr     string
		scan     time.Duration
		errKey   string
		errMatch string
	}{
		{file: "bindAddress=10.1.2.3\n", addr: "10.1.2.3", scan: 5 * time.Second},
		{file: "listenAddr=10.1.2.3\nbindAddress=10.1.2.3\n", addr: "10.1.2.3", scan: 5 * time.Second},
		{file: "listenAddr=10.1.2.3\nbindAddress=0.0.0.0\n", errKey: "bindAddress", errMatch: "same setting as listenAddr"},
		{file: "scanNotActiveBrokerInterval=2s\n", addr: "127.0.0.1", scan: 2 * time.Second},
		{file: "scanNotActiveBrokerInterval=0\n", errKey: "scanNotActiveBrokerInterval", errMatch: "between 100ms and 1m"},
		{file: "scanNotActiveBrokerInterval=soon\n", errKey: "scanNotActiveBrokerInterval", errMatch: "milliseconds"},
	} {
		n, err := ParseNamesrv([]byte(tc.file), FormatProperties)
		if tc.errKey != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errKey) || !strings.Contains(err.Error(), tc.errMatch) {
				t.Errorf("%q: error %v, want one on %s containing %q", tc.file, err, tc.errKey, tc.errMatch)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.file, err)
			continue
		}
		if n.ListenAddr != tc.addr || n.ScanInterval != tc.scan {
			t.Errorf("%q: listen address %q, scan %v; want %q, %v", tc.file, n.ListenAddr, n.ScanInterval, tc.addr, tc.scan)
		}
	}
}
