package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// parseProblems parses a properties snippet that must fail and returns its problems.
func parseProblems(t *testing.T, data string) []Problem {
	t.Helper()
	_, err := ParseBroker([]byte(data), FormatProperties)
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("ParseBroker(%q) err = %v, want *ValidationError", data, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(err, ErrInvalid) = false for %v", err)
	}
	return verr.Problems
}

// Each rule, named by key and value. The snippet holds exactly one mistake, so
// exactly one problem must come back.
func TestEachRule(t *testing.T) {
	cases := []struct {
		data, key, value, rule string
	}{
		{"brokerClusterName=", "brokerClusterName", "", "must not be empty"},
		{"brokerName=broker a", "brokerName", "broker a", "must contain only letters"},
		{"brokerIP1=0.0.0.0", "brokerIP1", "0.0.0.0", "not 0.0.0.0"},
		{"brokerIP1=bad_host!", "brokerIP1", "bad_host!", "IP address or host name"},
		{"listenPort=70000", "listenPort", "70000", "must be 1..65535"},
		{"listenPort=10911x", "listenPort", "10911x", "must be an integer in 1..65535"},
		{"namesrvAddr=127.0.0.1", "namesrvAddr", "127.0.0.1", `item "127.0.0.1" must be host:port`},
		{"namesrvAddr=a:1;b:99999", "namesrvAddr", "a:1;b:99999", "port must be 1..65535"},
		{"storePathRootDir=", "storePathRootDir", "", "must not be empty"},
		{"dLegerGroup=g/1", "dLegerGroup", "g/1", "must contain only letters"},
		{"dLegerPeers=", "dLegerPeers", "", "at least one peer"},
		{"dLegerPeers=n0:127.0.0.1:1", "dLegerPeers", "n0:127.0.0.1:1", "must be id-host:port"},
		{"dLegerPeers=n0-127.0.0.1", "dLegerPeers", "n0-127.0.0.1", "address must be host:port"},
		{"dLegerPeers=n0-h:1;n0-h:2", "dLegerPeers", "n0-h:1;n0-h:2", "duplicate peer id n0"},
		{"dLegerPeers=n0-h:1;n1-h:1", "dLegerPeers", "n0-h:1;n1-h:1", "peers n0 and n1 share address h:1"},
		{"dLegerSelfId=n3", "dLegerSelfId", "n3", "must be one of the dLegerPeers ids (n0)"},
		{"dLegerSelfId=", "dLegerSelfId", "", "must not be empty"},
		{"preferredLeaderId=n7", "preferredLeaderId", "n7", "must be empty or one of the dLegerPeers ids"},
		{"mappedFileSizeCommitLog=65535", "mappedFileSizeCommitLog", "65535", "must be 65536..4294967296"},
		{"mappedFileSizeCommitLog=1048576", "mappedFileSizeCommitLog", "1048576", "so one largest message fits in a segment"},
		{"mappedFileSizeConsumeQueue=1000001", "mappedFileSizeConsumeQueue", "1000001", "multiple of 20"},
		{"fileReservedTime=0", "fileReservedTime", "0", "must be positive"},
		{"fileReservedTime=3 days", "fileReservedTime", "3 days", "must be hours"},
		{"deleteWhen=24", "deleteWhen", "24", "00..23"},
		{"deleteWhen=04;16;04", "deleteWhen", "04;16;04", "hour 04 is listed twice"},
		{"diskMaxUsedSpaceRatio=96", "diskMaxUsedSpaceRatio", "96", "must be 10..95"},
		{"diskMaxUsedSpaceRatio=9", "diskMaxUsedSpaceRatio", "9", "must be 10..95"},
		{"flushDiskType=SYNC", "flushDiskType", "SYNC", "must be ASYNC_FLUSH or SYNC_FLUSH"},
		{"flushIntervalCommitLog=0", "flushIntervalCommitLog", "0", "must be positive"},
		{"flushIntervalCommitLog=fast", "flushIntervalCommitLog", "fast", "must be milliseconds"},
		{"maxMessageSize=16777217", "maxMessageSize", "16777217", "must be 1..16777216"},
		{"maxMessageSize=0", "maxMessageSize", "0", "must be 1..16777216"},
		{"autoCreateTopicEnable=ture", "autoCreateTopicEnable", "ture", "must be true or false"},
		{"defaultTopicQueueNums=0", "defaultTopicQueueNums", "0", "must be 1..1024"},
		{"defaultTopicQueueNums=1025", "defaultTopicQueueNums", "1025", "must be 1..1024"},
		{"messageDelayLevel=1s 5x", "messageDelayLevel", "1s 5x", `level 2 "5x"`},
		{"messageDelayLevel=", "messageDelayLevel", "", "at least one delay level"},
		{"longPollingEnable=1", "longPollingEnable", "1", "must be true or false"},
		{"maxIndexNum=0", "maxIndexNum", "0", "must be 1.."},
		{"maxIndexNum=100000000\nmaxHashSlotNum=50000000", "maxIndexNum", "100000000", "with maxHashSlotNum=50000000 makes an IndexFile of 2200000040 bytes"},
		{"maxHashSlotNum=-1", "maxHashSlotNum", "-1", "must be 1.."},
		{"tlsMode=strict", "tlsMode", "strict", "must be one of disabled|permissive|enforcing"},
		{"tlsMode=enforcing\ntlsServerKeyPath=" + tlsKey, "tlsServerCertPath", "", "required when tlsMode=enforcing"},
		{"tlsMode=permissive\ntlsServerCertPath=" + tlsCert, "tlsServerKeyPath", "", "required when tlsMode=permissive"},
		{"tlsServerKeyPath=" + tlsKey, "tlsServerCertPath", "", "required when tlsServerKeyPath is set"},
		{"tlsServerCertPath=testdata/tls/nope.pem\ntlsServerKeyPath=" + tlsKey, "tlsServerCertPath", "testdata/tls/nope.pem", "must name a readable file"},
		{"tlsServerTrustCertPath=testdata/tls/nope.pem", "tlsServerTrustCertPath", "testdata/tls/nope.pem", "must name a readable file"},
		{"tlsMode=enforcing\ntlsServerCertPath=" + tlsCert + "\ntlsServerKeyPath=" + tlsKey + "\ntlsServerNeedClientAuth=require",
			"tlsServerTrustCertPath", "", "required when tlsServerNeedClientAuth=require"},
		{"tlsServerNeedClientAuth=always", "tlsServerNeedClientAuth", "always", "must be one of none|optional|require"},
		{"tlsClientEnable=yes", "tlsClientEnable", "yes", "must be true or false"},
		{"raftTlsEnable=on", "raftTlsEnable", "on", "must be true or false"},
		{"raftTlsEnable=true\ntlsServerCertPath=" + tlsCert + "\ntlsServerKeyPath=" + tlsKey, "raftTlsEnable", "true",
			"needs tlsServerTrustCertPath (the node's pair and the group's CA)"},
		{"raftTlsEnable=true", "raftTlsEnable", "true", "needs tlsServerCertPath, tlsServerKeyPath, tlsServerTrustCertPath"},
		{"raftTlsMode=strict", "raftTlsMode", "strict", "must be one of permissive|enforcing"},
		{"raftTlsMode=permissive", "raftTlsMode", "permissive", "needs raftTlsEnable=true (without it the raft port is plaintext only)"},
		// The value of a secret is never shown, only its length.
		{"namesrvAuthSecret=short-secret", "namesrvAuthSecret", "(secret, 12 characters)", "must have at least 16 characters when set"},
		{"raftHeartbeatTimeout=1000", "raftHeartbeatTimeout", "1000", "must be a duration with a unit"},
		{"raftElectionTimeout=1ms", "raftElectionTimeout", "1ms", "must be at least 5ms"},
		{"raftElectionTimeout=500ms", "raftElectionTimeout", "500ms", "must be at least raftHeartbeatTimeout (1s)"},
		{"raftLeaderLeaseTimeout=2s", "raftLeaderLeaseTimeout", "2s", "must be at most raftHeartbeatTimeout (1s)"},
		{"raftCommitTimeout=0s", "raftCommitTimeout", "0s", "must be at least 1ms"},
		{"raftSnapshotInterval=1ms", "raftSnapshotInterval", "1ms", "must be at least 5ms"},
		{"raftSnapshotThreshold=0", "raftSnapshotThreshold", "0", "must be 1.."},
		{"raftTrailingLogs=-5", "raftTrailingLogs", "-5", "must be 0.."},
		{"raftLogStore=rocksdb", "raftLogStore", "rocksdb", "must be wal, boltdb, commitlog or auto"},
		{"raftMaxAppendEntries=1025", "raftMaxAppendEntries", "1025", "must be 1..1024"},
		{"raftDiskStallTimeout=100ms", "raftDiskStallTimeout", "100ms", "must be 0s (automatic), off, or at least 500ms"},
		{"raftDiskStallTimeout=never", "raftDiskStallTimeout", "never", `must be a duration with a unit ("0s", "3s") or off`},
		{"groupCommitMaxBytes=1048576", "groupCommitMaxBytes", "1048576", "must be at least maxMessageSize (4194304)"},
		{"groupCommitMaxMessages=0", "groupCommitMaxMessages", "0", "must be 1.."},
		{"groupCommitMaxInflight=0", "groupCommitMaxInflight", "0", "must be 1..64"},
		{"groupCommitPipelineMinBytes=-1", "groupCommitPipelineMinBytes", "-1", "must be 0..67108864"},
		{"groupCommitGatherMax=2s", "groupCommitGatherMax", "2s", "must be 0..1s"},
		{"groupCommitMaxPending=10", "groupCommitMaxPending", "10", "must be at least groupCommitMaxMessages (1024)"},
		{"consumerOffsetFlushInterval=soon", "consumerOffsetFlushInterval", "soon", "must be a duration"},
		{"adminListen=localhost", "adminListen", "localhost", "must be host:port"},
		{"adminListen=127.0.0.1:10911", "adminListen", "127.0.0.1:10911", "port must differ from listenPort (10911)"},
		{"dLegerPeers=n0-127.0.0.1:10911", "dLegerPeers", "n0-127.0.0.1:10911", "must not use listenPort (10911)"},
		{"dLegerPeers=n0-127.0.0.1:10913", "dLegerPeers", "n0-127.0.0.1:10913", "must not use the adminListen port (10913)"},
		// The VIP channel (listenPort-2) clashes with nothing and exists.
		{"adminListen=127.0.0.1:10909", "adminListen", "127.0.0.1:10909", "port must differ from the VIP channel's listenPort-2 (10909)"},
		{"dLegerPeers=n0-127.0.0.1:10909", "dLegerPeers", "n0-127.0.0.1:10909", "must not use the VIP channel's listenPort-2 (10909)"},
		{"listenPort=2\nadminListen=127.0.0.1:9000", "listenPort", "2", "must be at least 3: the VIP channel listens on listenPort-2"},
		{"logLevel=verbose", "logLevel", "verbose", "must be one of trace|debug|info|warn|error"},
		{"regionId=", "regionId", "", "must not be empty"},
		{"regionId=a\x02b", "regionId", "a\x02b", "must not contain the property separators"},
		{"traceOn=yes", "traceOn", "yes", "must be true or false"},
		{"listenPrt=10911", "listenPrt", "10911", "unknown key (did you mean listenPort?)"},
		{"totallyDifferent=1", "totallyDifferent", "1", "unknown key"},
		{"listenPort=10921\nlistenPort=10931", "listenPort", "10931", "set more than once (lines 1 and 2)"},
	}
	for _, tc := range cases {
		t.Run(strings.SplitN(tc.data, "=", 2)[0], func(t *testing.T) {
			ps := parseProblems(t, tc.data)
			if len(ps) != 1 {
				t.Fatalf("%q: %d problems, want 1:\n%v", tc.data, len(ps), (&ValidationError{ps}).Error())
			}
			p := ps[0]
			if p.Key != tc.key || p.Value != tc.value || !strings.Contains(p.Rule, tc.rule) {
				t.Errorf("%q: got %s\nwant key=%s value=%q rule containing %q", tc.data, p, tc.key, tc.value, tc.rule)
			}
		})
	}
}

// One file with several mistakes yields one error naming all of them, one per
// line, in file order, each with its line.
func TestAllProblemsReportedAtOnce(t *testing.T) {
	data := "listenPort=70000\n" +
		"diskMaxUsedSpaceRatio=99\n" +
		"flushDiskType=FAST\n" +
		"dLegerSelfId=n5\n" +
		"bogusKey=1\n"
	_, err := ParseBroker([]byte(data), FormatProperties)
	want := `line 1: listenPort="70000": must be 1..65535` + "\n" +
		`line 2: diskMaxUsedSpaceRatio="99": must be 10..95` + "\n" +
		`line 3: flushDiskType="FAST": must be ASYNC_FLUSH or SYNC_FLUSH` + "\n" +
		`line 4: dLegerSelfId="n5": must be one of the dLegerPeers ids (n0)` + "\n" +
		`line 5: bogusKey="1": unknown key`
	if err == nil || err.Error() != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
}

// The same mistakes in YAML give the same problems.
func TestYAMLProblemsMatchProperties(t *testing.T) {
	_, err := ParseBroker([]byte("listenPort: 70000\ndiskMaxUsedSpaceRatio: 99\nautoCreateTopicEnable: [true]\n"), FormatYAML)
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatal(err)
	}
	got := verr.Error()
	for _, want := range []string{
		`listenPort="70000": must be 1..65535`,
		`diskMaxUsedSpaceRatio="99": must be 10..95`,
		`autoCreateTopicEnable="true": must be a single value, not a list`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if len(verr.Problems) != 3 {
		t.Errorf("%d problems, want 3:\n%s", len(verr.Problems), got)
	}
}

// Validate sees structs built in code too, with values printed as a file would hold them.
func TestValidateCodeBuiltBroker(t *testing.T) {
	b := DefaultBroker()
	b.Peers = append(b.Peers, Peer{ID: "n1", Addr: "127.0.0.1:40911"})
	b.FlushDiskType = "sometimes"
	b.MessageDelayLevel = nil
	b.LogLevel = "INFO"
	err := b.Validate()
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Validate() = %v", err)
	}
	for _, key := range []string{"dLegerPeers", "flushDiskType", "messageDelayLevel", "logLevel"} {
		if !verr.Has(key) {
			t.Errorf("no problem for %s in\n%v", key, err)
		}
	}
	if len(verr.Problems) != 4 {
		t.Errorf("%d problems, want 4:\n%v", len(verr.Problems), err)
	}
	if !strings.Contains(err.Error(), `dLegerPeers="n0-127.0.0.1:40911;n1-127.0.0.1:40911": peers n0 and n1 share address`) {
		t.Errorf("peers problem not rendered as file syntax:\n%v", err)
	}
}

func TestNamesrvRules(t *testing.T) {
	for _, tc := range []struct{ data, key, rule string }{
		{"listenPort=0", "listenPort", "must be 1..65535"},
		{"listenAddr=not a host", "listenAddr", "IP address or host name"},
		{"brokerExpireTimeout=120", "brokerExpireTimeout", "must be a duration with a unit"},
		{"brokerExpireTimeout=10ms", "brokerExpireTimeout", "must be at least 1s"},
		{"logLevel=loud", "logLevel", "must be one of"},
		{"adminListen=:9876", "adminListen", "port must differ from listenPort"},
		{"namesrvAddr=127.0.0.1:9876", "namesrvAddr", "unknown key"},
		{"tlsMode=on", "tlsMode", "must be one of disabled|permissive|enforcing"},
		{"tlsMode=enforcing\ntlsServerKeyPath=" + tlsKey, "tlsServerCertPath", "required when tlsMode=enforcing"},
		{"tlsClientEnable=true", "tlsClientEnable", "unknown key"}, // the nameserver dials nobody
		{"aclEnable=true", "aclFile", "required when aclEnable=true"},
		{"aclEnable=true\naclFile=testdata/none.yml", "aclFile", "must name a readable file"},
		{"brokerAuthFile=testdata/none.yml", "brokerAuthFile", "must name a readable file"},
	} {
		_, err := ParseNamesrv([]byte(tc.data), FormatProperties)
		var verr *ValidationError
		if !errors.As(err, &verr) || len(verr.Problems) != 1 {
			t.Errorf("%q: err = %v, want one problem", tc.data, err)
			continue
		}
		if p := verr.Problems[0]; p.Key != tc.key || !strings.Contains(p.Rule, tc.rule) {
			t.Errorf("%q: got %s, want %s: ...%s", tc.data, p, tc.key, tc.rule)
		}
	}
	n, err := ParseNamesrv([]byte("listenAddr=0.0.0.0\nlistenPort=9877\nbrokerExpireTimeout=30s\nlogLevel=WARN\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	want := Namesrv{ListenPort: 9877, ListenAddr: "0.0.0.0", BrokerExpireTimeout: 30e9, ScanInterval: 5e9, LogLevel: "warn",
		AdminListen: "127.0.0.1:9879", TLS: TLSServer{Mode: "disabled", NeedClientAuth: "none"}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("got %+v, want %+v", n, want)
	}
}

// The TLS files under testdata (config only checks that they exist).
const (
	tlsCert = "testdata/tls/server.pem"
	tlsKey  = "testdata/tls/server.key"
	tlsCA   = "testdata/tls/ca.pem"
)

// TLS values are matched case-insensitively and stored as the transport spells
// them; a full enforcing mTLS setup validates on both tables.
func TestTLSKeysParse(t *testing.T) {
	data := "tlsMode=ENFORCING\ntlsServerCertPath=" + tlsCert + "\ntlsServerKeyPath=" + tlsKey +
		"\ntlsServerTrustCertPath=" + tlsCA + "\ntlsServerNeedClientAuth=Require\n"
	want := TLSServer{Mode: "enforcing", CertPath: tlsCert, KeyPath: tlsKey, TrustCertPath: tlsCA, NeedClientAuth: "require"}
	b, err := ParseBroker([]byte(data+"tlsClientEnable=true\n"), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if b.TLS != want || !b.TLSClientEnable || !b.TLS.Enabled() {
		t.Errorf("broker TLS = %+v client=%v", b.TLS, b.TLSClientEnable)
	}
	n, err := ParseNamesrv([]byte(data), FormatProperties)
	if err != nil {
		t.Fatal(err)
	}
	if n.TLS != want {
		t.Errorf("namesrv TLS = %+v", n.TLS)
	}
	if DefaultBroker().TLS.Enabled() || DefaultNamesrv().TLS.Enabled() {
		t.Error("TLS is on by default")
	}
	// Raft TLS alone: the client port stays plaintext.
	rb, err := ParseBroker([]byte("raftTlsEnable=true\ntlsServerCertPath="+tlsCert+"\ntlsServerKeyPath="+tlsKey+"\ntlsServerTrustCertPath="+tlsCA+"\n"), FormatProperties)
	if err != nil || !rb.RaftTLSEnable || rb.TLS.Enabled() {
		t.Errorf("raft-only TLS: %+v %v", rb.TLS, err)
	}
	if DefaultBroker().RaftTLSEnable {
		t.Error("raft TLS is on by default")
	}
	// A client-only node: outbound TLS with a client certificate, no TLS port.
	if _, err := ParseBroker([]byte("tlsClientEnable=true\ntlsServerCertPath="+tlsCert+"\ntlsServerKeyPath="+tlsKey+"\n"), FormatProperties); err != nil {
		t.Errorf("client-only TLS: %v", err)
	}
}
