package config

import (
	"reflect"
	"strings"
	"testing"
)

// Every documented default, written back through its own key, reproduces the
// default struct: the docs cannot show a default the code does not use.
func TestKeyDocDefaultsRoundTrip(t *testing.T) {
	def := DefaultBroker()
	for _, k := range BrokerKeys() {
		spec, ok := lookupKey(brokerKeys, k.Name)
		if !ok {
			t.Fatalf("doc key %s not in table", k.Name)
		}
		if spec.derivedDefault != "" {
			continue
		}
		b := DefaultBroker()
		if err := spec.set(&b, k.Default); err != nil {
			t.Errorf("%s: documented default %q does not parse: %v", k.Name, k.Default, err)
			continue
		}
		if !reflect.DeepEqual(b, def) {
			t.Errorf("%s: documented default %q changes the config", k.Name, k.Default)
		}
	}
	defN := DefaultNamesrv()
	for _, k := range NamesrvKeys() {
		spec, _ := lookupKey(namesrvKeys, k.Name)
		if spec.derivedDefault != "" {
			continue
		}
		n := DefaultNamesrv()
		if err := spec.set(&n, k.Default); err != nil || !reflect.DeepEqual(n, defN) {
			t.Errorf("namesrv %s: default %q round trip: %+v, %v", k.Name, k.Default, n, err)
		}
	}
}

func TestKeyDocsComplete(t *testing.T) {
	// The key list; a key dropped from the table fails here.
	want := []string{
		"brokerClusterName", "brokerName", "brokerIP1", "listenPort", "namesrvAddr", "storePathRootDir",
		"dLegerGroup", "dLegerPeers", "dLegerPeerClientAddrs", "dLegerSelfId", "dLegerJoin", "preferredLeaderId",
		"mappedFileSizeCommitLog", "warmMapedFileEnable", "commitLogWarmAhead", "commitLogCacheTailFollower", "commitLogCacheTailLeader", "commitLogScrubRate", "mappedFileSizeConsumeQueue", "fileReservedTime", "deleteWhen",
		"diskMaxUsedSpaceRatio", "flushDiskType", "flushIntervalCommitLog", "maxMessageSize",
		"autoCreateTopicEnable", "defaultTopicQueueNums", "messageDelayLevel",
		"transactionTimeOut", "transactionCheckInterval", "transactionCheckMax", "longPollingEnable",
		"maxIndexNum", "maxHashSlotNum", "indexFlushInterval", "traceTopicEnable", "msgTraceTopicName", "registerNameServerPeriod", "regionId", "traceOn", "aclEnable", "aclFile", "namesrvAuthSecret",
		"tlsMode", "tlsServerCertPath", "tlsServerKeyPath", "tlsServerTrustCertPath", "tlsServerNeedClientAuth", "tlsClientEnable",
		"raftTlsEnable", "raftTlsMode",
		"raftHeartbeatTimeout", "raftElectionTimeout", "raftLeaderLeaseTimeout", "raftCommitTimeout",
		"raftSnapshotInterval", "raftSnapshotThreshold", "raftTrailingLogs", "raftLogStore", "raftMaxAppendEntries", "raftLeaderFsyncOverlap", "raftDiskStallTimeout",
		"groupCommitMaxBytes", "groupCommitMaxMessages", "groupCommitMaxPending", "groupCommitMaxInflight", "groupCommitPipelineMinBytes", "groupCommitGatherMax",
		"consumerOffsetFlushInterval", "adminListen", "logLevel", "maxProcs",
	}
	var got []string
	for _, k := range BrokerKeys() {
		got = append(got, k.Name)
		if k.Description == "" {
			t.Errorf("%s has no description", k.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("broker keys:\n got %v\nwant %v", got, want)
	}
	var names []string
	for _, k := range NamesrvKeys() {
		names = append(names, k.Name)
	}
	if want := []string{"listenPort", "listenAddr", "brokerExpireTimeout", "bindAddress", "scanNotActiveBrokerInterval", "logLevel", "adminListen",
		"tlsMode", "tlsServerCertPath", "tlsServerKeyPath", "tlsServerTrustCertPath", "tlsServerNeedClientAuth",
		"aclEnable", "aclFile", "brokerAuthFile"}; !reflect.DeepEqual(names, want) {
		t.Errorf("namesrv keys %v, want %v", names, want)
	}
}

func TestDocumentedDefaults(t *testing.T) {
	docs := map[string]string{}
	for _, k := range BrokerKeys() {
		docs[k.Name] = k.Default
	}
	for key, want := range map[string]string{
		"listenPort": "10911", "mappedFileSizeConsumeQueue": "6000000", "fileReservedTime": "72",
		"deleteWhen": "04", "flushIntervalCommitLog": "500", "raftLeaderLeaseTimeout": "500ms",
		"raftSnapshotInterval": "30s", "messageDelayLevel": DefaultMessageDelayLevel,
		"dLegerPeers": "n0-127.0.0.1:40911", "dLegerGroup": "brokerName",
		"adminListen": "127.0.0.1:<listenPort+2>", "preferredLeaderId": "",
		"transactionTimeOut": "6000", "transactionCheckInterval": "30000", "transactionCheckMax": "15",
	} {
		if docs[key] != want {
			t.Errorf("documented default of %s = %q, want %q", key, docs[key], want)
		}
	}
}

func TestKeysMarkdown(t *testing.T) {
	md := KeysMarkdown([]KeyDoc{
		{Name: "a", Default: "1|2", Description: "pipe | in text"},
		{Name: "b", Default: "", Description: "empty"},
	})
	want := "| key | default | description |\n|---|---|---|\n" +
		"| `a` | `1\\|2` | pipe \\| in text |\n" +
		"| `b` | (empty) | empty |\n"
	if md != want {
		t.Errorf("got\n%s\nwant\n%s", md, want)
	}
	if full := KeysMarkdown(BrokerKeys()); strings.Count(full, "\n") != len(brokerKeys)+2 {
		t.Errorf("broker table has %d lines", strings.Count(full, "\n"))
	}
}

// lookupKey returns the table row for a canonical or differently-cased name.
func lookupKey[T any](table []keySpec[T], name string) (keySpec[T], bool) {
	for _, s := range table {
		if strings.EqualFold(s.name, name) {
			return s, true
		}
	}
	return keySpec[T]{}, false
}
