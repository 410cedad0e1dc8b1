package nameserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode"

	jsoniter "github.com/json-iterator/go"
	"github.com/tidwall/gjson"
)

func sampleRoute() TopicRouteData {
	return TopicRouteData{
		QueueDatas: []QueueData{
			{BrokerName: "broker-a", ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6},
			{BrokerName: "broker-b", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7, TopicSysFlag: 1},
		},
		BrokerDatas: []BrokerData{
			{Cluster: "DefaultCluster", BrokerName: "broker-a",
				BrokerAddrs: BrokerAddrs{0: "127.0.0.1:10911", 1: "127.0.0.1:10921", 10: "127.0.0.1:10931"}},
			{Cluster: "DefaultCluster", BrokerName: "broker-b", BrokerAddrs: BrokerAddrs{2: "[::1]:10911"}},
		},
	}
}

func TestRouteJSONGolden(t *testing.T) {
	got, err := json.Marshal(sampleRoute())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"queueDatas":[` +
		`{"brokerName":"broker-a","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicSysFlag":0},` +
		`{"brokerName":"broker-b","readQueueNums":8,"writeQueueNums":8,"perm":7,"topicSysFlag":1}],` +
		`"brokerDatas":[` +
		`{"cluster":"DefaultCluster","brokerName":"broker-a","brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921","10":"127.0.0.1:10931"},"enableActingMaster":false},` +
		`{"cluster":"DefaultCluster","brokerName":"broker-b","brokerAddrs":{"2":"[::1]:10911"},"enableActingMaster":false}],` +
		`"filterServerTable":{}}`
	if string(got) != want {
		t.Fatalf("route JSON\n got %s\nwant %s", got, want)
	}
	if i := bytes.IndexFunc(got, unicode.IsSpace); i >= 0 {
		t.Fatalf("route JSON has whitespace at %d: %s", i, got)
	}
}

func TestEmptyRouteShapes(t *testing.T) {
	got, err := json.Marshal(TopicRouteData{BrokerDatas: []BrokerData{{BrokerName: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"queueDatas":[],"brokerDatas":[{"cluster":"","brokerName":"x","brokerAddrs":{},"enableActingMaster":false}],"filterServerTable":{}}`
	if string(got) != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	if got, _ := json.Marshal(TopicList{}); string(got) != `{"topicList":[]}` {
		t.Fatalf("empty topic list = %s", got)
	}
	if got, _ := json.Marshal(TopicList{TopicList: []string{"a", "b"}}); string(got) != `{"topicList":["a","b"]}` {
		t.Fatalf("topic list = %s", got)
	}
}

func TestBrokerAddrsRejectsUnsafeAddr(t *testing.T) {
	for _, addr := range []string{"a :1", "a:1,b:2", `a"1`, ""} {
		if _, err := json.Marshal(BrokerAddrs{0: addr}); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("addr %q: err = %v, want ErrInvalidRequest", addr, err)
		}
	}
}

func TestRouteJSONRoundTrip(t *testing.T) {
	in := sampleRoute()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out TopicRouteData
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	in.FilterServerTable = map[string][]string{}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip\n got %+v\nwant %+v", out, in)
	}
}

// goClientRoute replicates, step for step, how rocketmq-client-go v2
// (internal/route.go, TopicRouteData.decode) reads a route body: gjson to pick
// fields, jsoniter for queueDatas, and a hand split of the brokerAddrs object text
// on ',' then the first ':' with every '"' removed. The package is internal, so it
// cannot be imported; this copy lets the test show the traps bite.
type goClientBroker struct {
	name  string
	addrs map[int64]string
}

func goClientRoute(data string) (queues []map[string]any, brokers []goClientBroker, err error) {
	res := gjson.Parse(data)
	if err := jsoniter.Unmarshal([]byte(res.Get("queueDatas").String()), &queues); err != nil {
		return nil, nil, err
	}
	for _, v := range res.Get("brokerDatas").Array() {
		b := goClientBroker{name: v.Get("brokerName").String(), addrs: map[int64]string{}}
		text := v.Get("brokerAddrs").String()
		if len(text) < 2 {
			// The real client slices text[1:len-1] here and panics.
			return nil, nil, errors.New("brokerAddrs missing: the Go client would panic")
		}
		for _, part := range strings.Split(text[1:len(text)-1], ",") {
			i := strings.Index(part, ":")
			if i < 0 {
				continue
			}
			id, _ := strconv.ParseInt(strings.ReplaceAll(part[:i], `"`, ""), 10, 64)
			b.addrs[id] = strings.ReplaceAll(part[i+1:], `"`, "")
		}
		brokers = append(brokers, b)
	}
	return queues, brokers, nil
}

func TestRouteParsedLikeGoClient(t *testing.T) {
	b, err := json.Marshal(sampleRoute())
	if err != nil {
		t.Fatal(err)
	}
	queues, brokers, err := goClientRoute(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(queues) != 2 || queues[1]["brokerName"] != "broker-b" {
		t.Fatalf("queues = %v", queues)
	}
	want := []goClientBroker{
		{"broker-a", map[int64]string{0: "127.0.0.1:10911", 1: "127.0.0.1:10921", 10: "127.0.0.1:10931"}},
		{"broker-b", map[int64]string{2: "[::1]:10911"}},
	}
	if !reflect.DeepEqual(brokers, want) {
		t.Fatalf("Go client would see %+v\nwant %+v", brokers, want)
	}

	// The replica really has the traps our encoder avoids: this guards the
	// replica itself, so the test above cannot pass vacuously.
	_, spaced, err := goClientRoute(`{"queueDatas":[],"brokerDatas":[{"brokerName":"x","brokerAddrs":{"0": "a:1", "1": "b:2"}}]}`)
	if err != nil || spaced[0].addrs[0] != " b:2" {
		t.Fatalf("replica lost the whitespace trap: %+v %v", spaced, err)
	}
	if _, _, err := goClientRoute(`{"queueDatas":[],"brokerDatas":[{"brokerName":"x"}]}`); err == nil {
		t.Fatal("replica lost the missing-brokerAddrs trap")
	}
	if _, _, err := goClientRoute(`{"brokerDatas":[]}`); err == nil {
		t.Fatal("replica lost the missing-queueDatas trap")
	}
}

func TestClusterInfoJSON(t *testing.T) {
	r := NewRegistry(0)
	mustRegister(t, r, reg("broker-a", "127.0.0.1:10911", 0, 1, 1, "T"), t0)
	mustRegister(t, r, reg("broker-a", "127.0.0.1:10921", 1, 1, 2), t0)
	got, err := json.Marshal(r.ClusterInfo())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"brokerAddrTable":{"broker-a":{"cluster":"DefaultCluster","brokerName":"broker-a",` +
		`"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},"enableActingMaster":false}},` +
		`"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
	if string(got) != want {
		t.Fatalf("cluster info\n got %s\nwant %s", got, want)
	}
}

func TestRegisterBodyDecode(t *testing.T) {
	// Shape a Java broker sends (§6.1), with fields we ignore.
	const body = `{"topicConfigSerializeWrapper":{"topicConfigTable":{"TopicTest":{"topicName":"TopicTest",` +
		`"readQueueNums":4,"writeQueueNums":4,"perm":6,"topicFilterType":"SINGLE_TAG","topicSysFlag":0,` +
		`"order":false,"attributes":{}},"TBW102":{"topicName":"TBW102","readQueueNums":8,"writeQueueNums":8,"perm":7}},` +
		`"dataVersion":{"stateVersion":5,"timestamp":1700000000000,"counter":12},` +
		`"topicQueueMappingInfoMap":{},"topicQueueMappingDetailMap":{},"mappingDataVersion":{"timestamp":1,"counter":0}},` +
		`"filterServerList":[]}`
	tops, dv, err := decodeRegisterBody([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if dv != (DataVersion{StateVersion: 5, Timestamp: 1700000000000, Counter: 12}) {
		t.Fatalf("dataVersion = %+v", dv)
	}
	if len(tops) != 2 || tops["TBW102"].Perm != 7 || tops["TopicTest"].WriteQueueNums != 4 {
		t.Fatalf("topics = %+v", tops)
	}

	for _, bad := range []string{`{`, `{"topicConfigSerializeWrapper":{"topicConfigTable":{"t":{"readQueueNums":-1}}}}`, `[1]`} {
		if _, _, err := decodeRegisterBody([]byte(bad)); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("body %s: err = %v, want ErrInvalidRequest", bad, err)
		}
	}
	if tops, dv, err := decodeRegisterBody(nil); err != nil || len(tops) != 0 || dv != (DataVersion{}) {
		t.Fatalf("empty body: %v %v %v", tops, dv, err)
	}

	// Our encoder round-trips through the decoder.
	enc, err := encodeRegisterBody(tops, DataVersion{StateVersion: 9})
	if err != nil {
		t.Fatal(err)
	}
	tops2, dv2, err := decodeRegisterBody(enc)
	if err != nil || dv2.StateVersion != 9 || !reflect.DeepEqual(tops2["TBW102"], tops["TBW102"]) {
		t.Fatalf("round trip: %v %+v %v", tops2, dv2, err)
	}
}

func TestBodyCRC32(t *testing.T) {
	// CRC32("123456789") = 0xCBF43926 (the IEEE check value); masked to 31 bits.
	if got := BodyCRC32([]byte("123456789")); got != 0x4BF43926 {
		t.Fatalf("BodyCRC32 = %#x, want 0x4bf43926", got)
	}
}
