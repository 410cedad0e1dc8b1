package admin

import (
	"errors"
	"strings"
	"testing"

	"github.com/rocketraft/rocketraft/config"
)

func TestParseSettings(t *testing.T) {
	got, err := ParseSettings([]string{"maxMessageSize=1024", " deleteWhen =04;16", "empty="})
	want := []config.Property{{Key: "maxMessageSize", Value: "1024"}, {Key: "deleteWhen", Value: "04;16"}, {Key: "empty", Value: ""}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range [][]string{nil, {"maxMessageSize"}, {"=1"}} {
		if _, err := ParseSettings(bad); !errors.Is(err, ErrBadSetting) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestBrokerNodeTables(t *testing.T) {
	n := Node{Cluster: "c", Group: "broker-a", BrokerID: 0, Addr: "127.0.0.1:10911"}
	status := BrokerStatusTable([]NodeRuntime{{Node: n, Table: map[string]string{"putTps": "1.0 0.5 0.1", "bootTimestamp": "1"}},
		{Node: Node{Group: "broker-a", Addr: "127.0.0.1:10921"}, Err: errors.New("refused")}}).String()
	if !strings.Contains(status, "bootTimestamp") || strings.Index(status, "bootTimestamp") > strings.Index(status, "putTps") ||
		!strings.Contains(status, "UNREACHABLE") || !strings.Contains(status, "127.0.0.1:10921: refused") {
		t.Errorf("status table:\n%s", status)
	}
	ok := UpdateTable([]NodeUpdate{{Node: n, Changes: []ConfigChange{{"maxMessageSize", "4194304", "1024"}}}}).String()
	if !strings.Contains(ok, "maxMessageSize  4194304  1024  OK") || !strings.Contains(ok, "broker.conf is not rewritten") {
		t.Errorf("update table:\n%s", ok)
	}
	failed := UpdateTable([]NodeUpdate{{Node: n, Err: errors.New("no permission")}})
	if s := failed.String(); !strings.Contains(s, "FAILED: no permission") || strings.Contains(s, "Changed on") {
		t.Errorf("a refused update claims a change:\n%s", s)
	}
	if UpdateError([]NodeUpdate{{Node: n}, {Node: n, Err: errors.New("x")}}) == nil {
		t.Error("UpdateError missed the failed node")
	}
}
