package nameserver

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFastjsonBareKeys(t *testing.T) {
	// A Java nameserver's GET_BROKER_CLUSTER_INFO body: brokerAddrs with bare ids,
	// and strings that merely look like keys must stay untouched.
	const body = `{"brokerAddrTable":{"b":{"brokerAddrs":{0:"127.0.0.1:10911", 1 :"[::1]:10921"},` +
		`"brokerName":"b","cluster":"c,{2:\\\"x\\\""}},"clusterAddrTable":{"c":["b"]}}`
	var ci ClusterInfo
	if err := json.Unmarshal([]byte(body), &ci); err == nil {
		t.Fatal("encoding/json accepted bare keys; the fallback is untested")
	}
	if err := unmarshalLenient([]byte(body), &ci); err != nil {
		t.Fatal(err)
	}
	bd := ci.BrokerAddrTable["b"]
	if want := (BrokerAddrs{0: "127.0.0.1:10911", 1: "[::1]:10921"}); !reflect.DeepEqual(bd.BrokerAddrs, want) {
		t.Fatalf("brokerAddrs = %v, want %v", bd.BrokerAddrs, want)
	}
	if bd.Cluster != `c,{2:\"x\"` {
		t.Fatalf("string content changed: %q", bd.Cluster)
	}
	var m map[string]any
	if err := unmarshalLenient([]byte(`{x:1}`), &m); err == nil {
		t.Fatal("non-numeric bare key accepted")
	}
}

// FuzzDecodeRegister: any header/body a peer can send must yield a request or an
// error, never a panic, and an accepted request must survive the registry.
func FuzzDecodeRegister(f *testing.F) {
	ext, body, err := encodeRegister(reg("g", "127.0.0.1:1", 0, 1, 0, "T"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ext[extBrokerID], ext[extBodyCRC32], ext[extHeartbeatTimeout], body)
	f.Add("1", "0", "-5", []byte(`{"topicConfigSerializeWrapper":null}`))
	f.Add("x", "0", "", []byte(`{"topicConfigSerializeWrapper":{"topicConfigTable":{"":{}}}}`))
	f.Fuzz(func(t *testing.T, id, crc, hb string, body []byte) {
		e := map[string]string{}
		for k, v := range ext {
			e[k] = v
		}
		e[extBrokerID], e[extBodyCRC32], e[extHeartbeatTimeout] = id, crc, hb
		req, err := decodeRegister(e, body)
		if err != nil {
			return
		}
		r := NewRegistry(0)
		if _, err := r.Register(req, t0); err != nil {
			return
		}
		if b, err := json.Marshal(r.ClusterInfo()); err != nil {
			t.Fatalf("cluster info of an accepted registration does not encode: %v", err)
		} else if !json.Valid(b) {
			t.Fatalf("invalid JSON: %s", b)
		}
	})
}

func FuzzBrokerAddrsUnmarshal(f *testing.F) {
	f.Add([]byte(`{"0":"a:1","1":"b:2"}`))
	f.Add([]byte(`{0:"a:1"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var a BrokerAddrs
		_ = a.UnmarshalJSON(data)
		q := quoteBareKeys(data)
		if json.Valid(data) && string(q) != string(data) {
			t.Fatalf("valid JSON rewritten: %q → %q", data, q)
		}
	})
}
