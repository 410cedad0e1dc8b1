package config

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// The defaults are written out literally (not taken from the key table) so a
// changed default fails here and is a conscious decision.
func TestDefaultBroker(t *testing.T) {
	want := Broker{
		ClusterName:                "DefaultCluster",
		BrokerName:                 "broker-a",
		BrokerIP1:                  "127.0.0.1",
		ListenPort:                 10911,
		NamesrvAddrs:               []string{"127.0.0.1:9876"},
		StorePathRootDir:           "store",
		DLegerGroup:                "broker-a",
		Peers:                      []Peer{{ID: "n0", Addr: "127.0.0.1:40911"}},
		SelfID:                     "n0",
		MappedFileSizeCommitLog:    1 << 30,
		MappedFileSizeConsumeQueue: 300000 * 20,
		WarmMappedFile:             false,
		CommitLogWarmAhead:         4 << 20,
		CommitLogScrubRate:         8 << 20,
		CommitLogCacheTailFollower: 64 << 20,
		FileReservedTime:           72 * time.Hour,
		DeleteWhen:                 []int{4},
		MsgTraceTopicName:          "RMQ_SYS_TRACE_TOPIC",
		RegisterNameServerPeriod:   30 * time.Second,
		RegionID:                   "DefaultRegion", // Apache BrokerConfig
		TraceOn:                    true,
		DiskMaxUsedSpaceRatio:      75,
		FlushDiskType:              AsyncFlush,
		FlushInterval:              500 * time.Millisecond,
		MaxMessageSize:             4194304,
		AutoCreateTopicEnable:      true,
		DefaultTopicQueueNums:      4,
		MessageDelayLevel: []time.Duration{
			time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
			time.Minute, 2 * time.Minute, 3 * time.Minute, 4 * time.Minute, 5 * time.Minute,
			6 * time.Minute, 7 * time.Minute, 8 * time.Minute, 9 * time.Minute, 10 * time.Minute,
			20 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
		},
		TransactionTimeOut:       6 * time.Second,
		TransactionCheckInterval: 30 * time.Second,
		TransactionCheckMax:      15,
		LongPollingEnable:        true,
		MaxIndexNum:              20000000,
		MaxHashSlotNum:           5000000,
		IndexFlushInterval:       time.Minute,
		Raft: RaftConfig{
			HeartbeatTimeout:   time.Second,
			ElectionTimeout:    time.Second,
			LeaderLeaseTimeout: 500 * time.Millisecond,
			CommitTimeout:      50 * time.Millisecond,
			SnapshotInterval:   30 * time.Second,
			SnapshotThreshold:  2048,
			TrailingLogs:       10240,
			LogStore:           LogStoreAuto,
			MaxAppendEntries:   64,
		},
		GroupCommit:                 GroupCommitConfig{MaxBytes: 4 << 20, MaxMessages: 1024, MaxPending: 65536, MaxInflight: 4, PipelineMinBytes: 128 << 10, GatherMax: time.Millisecond},
		TLS:                         TLSServer{Mode: "disabled", NeedClientAuth: "none"},
		RaftTLSMode:                 "enforcing",
		ConsumerOffsetFlushInterval: time.Second,
		AdminListen:                 "127.0.0.1:10913",
		LogLevel:                    "info",
	}
	got := DefaultBroker()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultBroker():\n got %+v\nwant %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("DefaultBroker().Validate() = %v", err)
	}
}

func TestEmptyFileGivesDefaults(t *testing.T) {
	for _, f := range []Format{FormatProperties, FormatYAML} {
		b, err := ParseBroker([]byte("# nothing\n"), f)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if !reflect.DeepEqual(b, DefaultBroker()) {
			t.Errorf("%v: empty file = %+v, want defaults", f, b)
		}
		n, err := ParseNamesrv(nil, f)
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if !reflect.DeepEqual(n, DefaultNamesrv()) {
			t.Errorf("%v: empty namesrv file = %+v, want defaults", f, n)
		}
	}
}

func TestDefaultNamesrv(t *testing.T) {
	want := Namesrv{
		ListenPort:          9876,
		ListenAddr:          "127.0.0.1",
		BrokerExpireTimeout: 120 * time.Second,
		ScanInterval:        5 * time.Second,
		LogLevel:            "info",
		AdminListen:         "127.0.0.1:9878",
		TLS:                 TLSServer{Mode: "disabled", NeedClientAuth: "none"},
	}
	got := DefaultNamesrv()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DefaultNamesrv() = %+v, want %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	if got.Addr() != "127.0.0.1:9876" {
		t.Errorf("Addr() = %q", got.Addr())
	}
}

// Derived defaults follow the keys they derive from.
func TestDerivedDefaults(t *testing.T) {
	b, err := ParseBroker([]byte("brokerName=broker-z\nlistenPort=10921\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if b.DLegerGroup != "broker-z" {
		t.Errorf("DLegerGroup = %q, want brokerName", b.DLegerGroup)
	}
	if b.AdminListen != "127.0.0.1:10923" {
		t.Errorf("AdminListen = %q, want listenPort+2", b.AdminListen)
	}
	b, err = ParseBroker([]byte("adminListen=\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if b.AdminListen != "" {
		t.Errorf("explicit empty adminListen = %q, want disabled", b.AdminListen)
	}
	_, err = ParseBroker([]byte("listenPort=65535\n"), FormatProperties)
	var verr *ValidationError
	if !errors.As(err, &verr) || !verr.Has("adminListen") {
		t.Errorf("listenPort=65535 without adminListen: err = %v, want an adminListen problem", err)
	}
}

func TestClientAddrAndSelf(t *testing.T) {
	b := DefaultBroker()
	b.BrokerIP1, b.ListenPort = "10.1.2.3", 10921
	if got := b.ClientAddr(); got != "10.1.2.3:10921" {
		t.Errorf("ClientAddr() = %q", got)
	}
	b.BrokerIP1 = "::1"
	if got := b.ClientAddr(); got != "[::1]:10921" {
		t.Errorf("ClientAddr() IPv6 = %q", got)
	}
	b.Peers = []Peer{{"n0", "h:1"}, {"n1", "h:2"}, {"n2", "h:3"}}
	b.SelfID = "n2"
	p, i, err := b.Self()
	if err != nil || i != 2 || p != (Peer{"n2", "h:3"}) {
		t.Errorf("Self() = %v, %d, %v", p, i, err)
	}
	b.SelfID = "n9"
	if _, i, err := b.Self(); !errors.Is(err, ErrUnknownPeer) || i != -1 {
		t.Errorf("Self() for unknown id = %d, %v; want -1, ErrUnknownPeer", i, err)
	}
}
