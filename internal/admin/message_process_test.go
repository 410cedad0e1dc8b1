package admin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/internal/proctest"
)

// msgCluster runs `rocketraft admin` against a proctest group.
type msgCluster struct{ *proctest.Group }

func (mc msgCluster) run(args ...string) (string, error) {
	out, err := exec.Command(mc.Bin, append([]string{"admin", "-n", mc.Namesrv, "--timeout", "5s"}, args...)...).CombinedOutput()
	return string(out), err
}

func (mc msgCluster) json(t *testing.T, v any, args ...string) {
	t.Helper()
	out, err := mc.run(append(args, "-o", "json")...)
	if err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestMessageCommandsAgainstProcesses drives message send, offset, print,
// consume and trace through the CLI against a real three-node group with
// traceTopicEnable=true, and checks the parsed JSON against what was sent.
func TestMessageCommandsAgainstProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the process-level admin test")
	}
	dir := t.TempDir()
	bin := os.Getenv("ROCKETRAFT_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "rocketraft")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/rocketraft/rocketraft/cmd/rocketraft").CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	mc := msgCluster{proctest.StartGroup(t, bin, dir, "traceTopicEnable=true")}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := mc.run("topic", "create", "MsgT", "-r", "2", "-w", "2")
		if err == nil && strings.Contains(out, "OK") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic create never succeeded: %v\n%s", err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}

	// Three sends to queue 1, the third after a time mark.
	var sent []SendResult
	var mark int64
	for i := range 3 {
		if i == 2 {
			time.Sleep(50 * time.Millisecond)
			mark = time.Now().UnixMilli()
			time.Sleep(50 * time.Millisecond)
		}
		var r SendResult
		deadline := time.Now().Add(20 * time.Second)
		for { // the route reaches the nameserver a moment after the create
			out, err := mc.run("message", "send", "MsgT", "--body", "hello-"+strconv.Itoa(i), "--tags", "tg", "--keys", "k"+strconv.Itoa(i)+",shared",
				"--property", "color=red", "-B", "broker-a", "--queue", "1", "-o", "json")
			if err == nil {
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					t.Fatalf("send: %v\n%s", err, out)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("message send: %v\n%s", err, out)
			}
			time.Sleep(300 * time.Millisecond)
		}
		if r.QueueID != 1 || r.QueueOffset != int64(i) || r.BrokerName != "broker-a" || len(r.MsgID) != 32 || r.OffsetMsgID == "" {
			t.Fatalf("send %d: %+v, want queue 1 offset %d", i, r, i)
		}
		sent = append(sent, r)
	}

	var one BodyMessage
	mc.json(t, &one, "message", "offset", "MsgT", "-B", "broker-a", "--queue", "1", "--offset", "1")
	if one.Body != "hello-1" || one.MsgID != sent[1].MsgID || one.OffsetMsgID != sent[1].OffsetMsgID || one.Tags != "tg" ||
		strings.Join(one.Keys, ",") != "k1,shared" || one.Properties["color"] != "red" || one.QueueOffset != 1 {
		t.Errorf("message offset 1: %+v", one)
	}
	if out, err := mc.run("message", "offset", "MsgT", "-B", "broker-a", "--queue", "1", "--offset", "7"); err == nil || !strings.Contains(out, "offset=7") {
		t.Errorf("an offset past the end: %v\n%s", err, out)
	}

	bodies := func(ms []BodyMessage) string {
		var b []string
		for _, m := range ms {
			b = append(b, m.Body)
		}
		return strings.Join(b, ",")
	}
	var ms []BodyMessage
	mc.json(t, &ms, "message", "print", "MsgT")
	if got := bodies(ms); got != "hello-0,hello-1,hello-2" {
		t.Errorf("print all: %s", got)
	}
	mc.json(t, &ms, "message", "print", "MsgT", "-B", "broker-a", "--queue", "1", "--from", "1", "--to", "2")
	if got := bodies(ms); got != "hello-1" {
		t.Errorf("print --from 1 --to 2: %s", got)
	}
	mc.json(t, &ms, "message", "print", "MsgT", "--begin", strconv.FormatInt(mark, 10))
	if got := bodies(ms); got != "hello-2" {
		t.Errorf("print --begin mark: %s", got)
	}
	mc.json(t, &ms, "message", "print", "MsgT", "--end", time.UnixMilli(mark).UTC().Format(time.RFC3339Nano))
	if got := bodies(ms); got != "hello-0,hello-1" {
		t.Errorf("print --end mark (RFC 3339): %s", got)
	}
	if out, err := mc.run("message", "print", "MsgT", "--queue", "1"); err == nil || !strings.Contains(out, "--broker-name") {
		t.Errorf("--queue without --broker-name: %v\n%s", err, out)
	}

	mc.json(t, &ms, "message", "consume", "MsgT", "--count", "2")
	if got := bodies(ms); got != "hello-0,hello-1" {
		t.Errorf("consume 2: %s", got)
	}
	mc.json(t, &ms, "message", "consume", "MsgT", "-g", "cg", "--count", "2", "--commit")
	if got := bodies(ms); got != "hello-0,hello-1" {
		t.Errorf("consume as cg: %s", got)
	}
	mc.json(t, &ms, "message", "consume", "MsgT", "-g", "cg", "--count", "5")
	if got := bodies(ms); got != "hello-2" {
		t.Errorf("cg after committing 2: %s", got)
	}
	if out, err := mc.run("message", "consume", "MsgT", "--commit"); err == nil || !strings.Contains(out, "--group") {
		t.Errorf("--commit without --group: %v\n%s", err, out)
	}

	// A trace message as a Java client writes one: KEYS = the traced msgIds,
	// records Pub (14 fields), SubBefore (8) and SubAfter (9).
	id := sent[0].MsgID
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	rec := func(fields ...string) string { return strings.Join(fields, "\x01") + "\x02" }
	body := rec("Pub", ts, "DefaultRegion", "pg-trace", "MsgT", id, "tg", "k0 shared", "127.0.0.1:10911", "7", "3", "0", sent[0].OffsetMsgID, "true") +
		rec("SubBefore", ts, "DefaultRegion", "cg-trace", "req-1", id, "0", "k0 shared") +
		rec("SubAfter", "req-1", id, "12", "true", "k0 shared", "0", ts, "cg-trace") +
		rec("Pub", ts, "DefaultRegion", "pg-trace", "MsgT", sent[1].MsgID, "tg", "k1", "127.0.0.1:10911", "7", "3", "0", sent[1].OffsetMsgID, "true")
	deadline = time.Now().Add(20 * time.Second)
	for {
		out, err := mc.run("message", "send", DefaultTraceTopic, "--body", body, "--keys", id+","+sent[1].MsgID)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("send the trace message: %v\n%s", err, out)
		}
		time.Sleep(300 * time.Millisecond)
	}
	var tr struct {
		MsgID   string        `json:"msgId"`
		Records []TraceRecord `json:"records"`
	}
	// The index that trace queries is built by the store's dispatch after the
	// send is acknowledged (as in Apache), so the first query may run ahead of it.
	deadline = time.Now().Add(10 * time.Second)
	for {
		out, err := mc.run("message", "trace", id, "-o", "json")
		if err == nil {
			if err := json.Unmarshal([]byte(out), &tr); err != nil {
				t.Fatalf("admin message trace: %v\n%s", err, out)
			}
			break
		}
		if !strings.Contains(out, "no trace of") || time.Now().After(deadline) {
			t.Fatalf("admin message trace %s: %v\n%s", id, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tr.MsgID != id || len(tr.Records) != 3 {
		t.Fatalf("trace of %s: %+v", id, tr)
	}
	pub, before, after := tr.Records[0], tr.Records[1], tr.Records[2]
	if pub.Type != "Pub" || pub.Group != "pg-trace" || pub.Topic != "MsgT" || pub.OffsetMsgID != sent[0].OffsetMsgID || !pub.Success ||
		pub.CostMillis != 3 || pub.MsgType != "Normal_Msg" || pub.ClientHost != "127.0.0.1" || pub.Time.UnixMilli() <= 0 {
		t.Errorf("Pub: %+v", pub)
	}
	if before.Type != "SubBefore" || before.Group != "cg-trace" || before.RequestID != "req-1" {
		t.Errorf("SubBefore: %+v", before)
	}
	if after.Type != "SubAfter" || after.Group != "cg-trace" || after.CostMillis != 12 || !after.Success {
		t.Errorf("SubAfter: %+v", after)
	}
	text, err := mc.run("message", "trace", id)
	if err != nil || !strings.Contains(text, "pg-trace") || !strings.Contains(text, "3 trace records") {
		t.Errorf("trace text: %v\n%s", err, text)
	}
	if out, err := mc.run("message", "trace", "00000000000000000000000000000000"); err == nil || !strings.Contains(out, "no trace") {
		t.Errorf("trace of an untraced id: %v\n%s", err, out)
	}
}
