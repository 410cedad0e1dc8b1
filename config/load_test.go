package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// testdataBroker is what testdata/broker-n0.{conf,yaml} say: every key differs
// from its default.
func testdataBroker() Broker {
	return Broker{
		ClusterName:      "ProdCluster",
		BrokerName:       "broker-b",
		BrokerIP1:        "10.0.0.5",
		ListenPort:       20911,
		NamesrvAddrs:     []string{"10.0.0.1:9876", "10.0.0.2:9876"},
		StorePathRootDir: "/data/rocketraft/broker-b",
		DLegerGroup:      "group-b",
		Peers: []Peer{
			{ID: "n0", Addr: "10.0.0.5:40911"},
			{ID: "n1", Addr: "10.0.0.6:40911"},
			{ID: "n2", Addr: "10.0.0.7:40911"},
		},
		PeerClientAddrs: []Peer{
			{ID: "n0", Addr: "10.0.0.5:10911"},
			{ID: "n1", Addr: "10.0.0.6:10911"},
			{ID: "n2", Addr: "10.0.0.7:10911"},
		},
		SelfID:                     "n0",
		Join:                       true,
		PreferredLeaderID:          "n1",
		MappedFileSizeCommitLog:    512 << 20,
		MappedFileSizeConsumeQueue: 120000,
		WarmMappedFile:             true,
		CommitLogWarmAhead:         8 << 20,
		CommitLogScrubRate:         64 << 20,
		CommitLogCacheTailFollower: 128 << 20,
		CommitLogCacheTailLeader:   2 << 30,
		FileReservedTime:           48 * time.Hour,
		DeleteWhen:                 []int{3, 15},
		DiskMaxUsedSpaceRatio:      85,
		FlushDiskType:              SyncFlush,
		FlushInterval:              250 * time.Millisecond,
		MaxMessageSize:             1 << 20,
		AutoCreateTopicEnable:      false,
		DefaultTopicQueueNums:      8,
		MessageDelayLevel:          []time.Duration{time.Second, 10 * time.Second, time.Minute, time.Hour, 24 * time.Hour},
		TransactionTimeOut:         3 * time.Second,
		TransactionCheckInterval:   10 * time.Second,
		TransactionCheckMax:        5,
		LongPollingEnable:          false,
		ACLEnable:                  true,
		ACLFile:                    "testdata/plain_acl.yml",
		NamesrvAuthSecret:          "group-b-secret-0123456789",
		MaxIndexNum:                1000000,
		MaxHashSlotNum:             250000,
		IndexFlushInterval:         30 * time.Second,
		TraceTopicEnable:           true,
		MsgTraceTopicName:          "TRACE_B",
		RegisterNameServerPeriod:   20 * time.Second,
		RegionID:                   "eu-central",
		TraceOn:                    false,
		Raft: RaftConfig{
			HeartbeatTimeout:   2 * time.Second,
			ElectionTimeout:    3 * time.Second,
			LeaderLeaseTimeout: time.Second,
			CommitTimeout:      20 * time.Millisecond,
			SnapshotInterval:   5 * time.Minute,
			SnapshotThreshold:  4096,
			TrailingLogs:       2048,
			LogStore:           LogStoreBoltDB,
			MaxAppendEntries:   128,
			DiskStallTimeout:   3 * time.Second,
			SerialLeaderFsync:  true,
		},
		GroupCommit: GroupCommitConfig{MaxBytes: 2 << 20, MaxMessages: 512, MaxPending: 4096, MaxInflight: 3, PipelineMinBytes: 0, GatherMax: 2 * time.Millisecond},
		// The tls files are real (a CA and a leaf for 10.0.0.5 valid until 2125), but
		// config only checks that they exist, relative to the test's directory.
		TLS: TLSServer{
			Mode: "permissive", CertPath: "testdata/tls/server.pem", KeyPath: "testdata/tls/server.key",
			TrustCertPath: "testdata/tls/ca.pem", NeedClientAuth: "optional",
		},
		TLSClientEnable:             true,
		RaftTLSEnable:               true,
		RaftTLSMode:                 "permissive",
		ConsumerOffsetFlushInterval: 5 * time.Second,
		AdminListen:                 "0.0.0.0:20913",
		LogLevel:                    "debug",
		MaxProcs:                    2,
	}
}

func TestLoadTestdataPropertiesAndYAMLAgree(t *testing.T) {
	want := testdataBroker()
	for _, name := range []string{"broker-n0.conf", "broker-n0.yaml"} {
		got, err := LoadBroker(filepath.Join("testdata", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// The testdata file is only a good check if it sets every key to a
// non-default value; this fails when a key is added without extending it.
func TestTestdataCoversEveryKey(t *testing.T) {
	def, got := DefaultBroker(), testdataBroker()
	for _, k := range brokerKeys {
		// The file is node n0 of its group, and n0 is also the default self id.
		if k.name != "dLegerSelfId" && k.get(&def) == k.get(&got) {
			t.Errorf("testdata leaves %s at its default %q", k.name, k.get(&def))
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "broker-n0.conf"))
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := parseProperties("", data)
	if len(entries) != len(brokerKeys) {
		t.Errorf("testdata sets %d keys, table has %d", len(entries), len(brokerKeys))
	}
}

func TestExamplesLoad(t *testing.T) {
	var ports, admins []int
	for i, name := range []string{"broker-n0.conf", "broker-n1.conf", "broker-n2.conf"} {
		b, err := LoadBroker(filepath.Join("examples", name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		self, idx, err := b.Self()
		if err != nil || idx != i {
			t.Fatalf("%s: Self() = %v, %d, %v", name, self, idx, err)
		}
		if len(b.Peers) != 3 || b.BrokerName != "broker-a" || b.DLegerGroup != "broker-a" {
			t.Errorf("%s: group = %s/%s peers %v", name, b.BrokerName, b.DLegerGroup, b.Peers)
		}
		wantPeers := "n0-127.0.0.1:40911;n1-127.0.0.1:40921;n2-127.0.0.1:40931"
		if got := formatPeers(b.Peers); got != wantPeers {
			t.Errorf("%s: peers %q, want %q", name, got, wantPeers)
		}
		ports = append(ports, b.ListenPort)
		admins = append(admins, portOf(b.AdminListen))
	}
	if !reflect.DeepEqual(ports, []int{10911, 10921, 10931}) || !reflect.DeepEqual(admins, []int{10913, 10923, 10933}) {
		t.Errorf("listen ports %v admin ports %v", ports, admins)
	}
	n, err := LoadNamesrv(filepath.Join("examples", "namesrv.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if n.Addr() != "127.0.0.1:9876" || n.AdminListen != "127.0.0.1:9878" {
		t.Errorf("namesrv = %+v", n)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := LoadBroker(filepath.Join(t.TempDir(), "nope.conf"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want os.ErrNotExist", err)
	}
}

func TestLoadNamesHasPathAndProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(path, []byte("listenPort=0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadBroker(path)
	var verr *ValidationError
	if !errors.As(err, &verr) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want *ValidationError", err)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `listenPort="0": must be 1..65535`) {
		t.Errorf("err = %q, want path and problem", err)
	}
}

func TestFormatFromPath(t *testing.T) {
	for path, want := range map[string]Format{
		"broker.conf": FormatProperties, "b.properties": FormatProperties, "noext": FormatProperties,
		"b.yaml": FormatYAML, "dir.d/b.YML": FormatYAML,
	} {
		if got := FormatFromPath(path); got != want {
			t.Errorf("FormatFromPath(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestYAMLSyntaxError(t *testing.T) {
	_, err := ParseBroker([]byte("listenPort: [1,\n"), FormatYAML)
	if !errors.Is(err, ErrSyntax) {
		t.Errorf("err = %v, want ErrSyntax", err)
	}
}

// Both formats keep the key as written and match it in any case; problems
// quote an unknown key as written and name known ones canonically.
func TestKeysMatchCaseInsensitively(t *testing.T) {
	for _, tc := range []struct {
		data   string
		format Format
	}{
		{"LISTENPORT=10921\nbrokerip1=10.0.0.9\nlistenport2=1\n", FormatProperties},
		{"LISTENPORT: 10921\nbrokerip1: 10.0.0.9\nlistenport2: 1\n", FormatYAML},
	} {
		_, err := ParseBroker([]byte(tc.data), tc.format)
		var verr *ValidationError
		if !errors.As(err, &verr) || len(verr.Problems) != 1 {
			t.Fatalf("%v: err = %v, want exactly the unknown key", tc.format, err)
		}
		if p := verr.Problems[0]; p.Key != "listenport2" || !strings.HasPrefix(p.Rule, "unknown key (did you mean listenPort?)") {
			t.Errorf("%v: problem = %+v", tc.format, p)
		}
		b, err := ParseBroker([]byte(strings.ReplaceAll(tc.data, "listenport2", "#")), tc.format)
		if tc.format == FormatYAML {
			b, err = ParseBroker([]byte("LISTENPORT: 10921\nbrokerip1: 10.0.0.9\n"), tc.format)
		}
		if err != nil || b.ListenPort != 10921 || b.BrokerIP1 != "10.0.0.9" {
			t.Errorf("%v: %+v, %v", tc.format, b, err)
		}
	}
}

// An empty YAML value (null) means empty, as "key=" does in properties.
func TestYAMLNullIsEmpty(t *testing.T) {
	b, err := ParseBroker([]byte("namesrvAddr:\nadminListen: \"\"\ndeleteWhen: 04\n"), FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.NamesrvAddrs) != 0 || b.AdminListen != "" || !slices.Equal(b.DeleteWhen, []int{4}) {
		t.Errorf("got namesrv %v admin %q deleteWhen %v", b.NamesrvAddrs, b.AdminListen, b.DeleteWhen)
	}
	_, err = ParseBroker([]byte("raft:\n  heartbeatTimeout: 1s\n"), FormatYAML)
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 1 {
		t.Fatalf("nested key: err = %v, want one problem", err)
	}
	// Nested keys flatten with their case and line; the hint names the flat key.
	p := verr.Problems[0]
	if p.Key != "raft.heartbeatTimeout" || p.Origin.Line != 2 || p.Rule != "unknown key (did you mean raftHeartbeatTimeout?)" {
		t.Errorf("nested key: problem = %+v", p)
	}
}
