package chaos

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseJavaLine(t *testing.T) {
	ev, err := parseJavaLine("result\tjava1\tT-java1-5\t1\tSEND_OK\t2\t41\tUNIQ\tOFFSETID\t10.0.0.2:10911\t1700000000000000\t1700000000002500\t-1\t")
	if err != nil {
		t.Fatal(err)
	}
	if ev.kind != "result" || ev.op.Client != "java1" || ev.op.ID != "T-java1-5" || ev.op.Attempt != 1 || ev.status != "SEND_OK" ||
		ev.gotQ != 2 || ev.offset != 41 || ev.op.BrokerMsgID != "OFFSETID" || ev.op.Addr != "10.0.0.2:10911" {
		t.Fatalf("parsed %+v", ev)
	}
	if d := ev.op.Return.Sub(ev.op.Call); d != 2500*time.Microsecond {
		t.Fatalf("call → return %v, want 2.5ms", d)
	}
	if ev, err := parseJavaLine("a JVM warning on stdout"); err != nil || ev.kind != "other" {
		t.Fatalf("non-protocol line: %+v %v", ev, err)
	}
	for _, tc := range []struct{ line, want string }{
		{"call\tjava0\tid\t0\t1", "5 tab-separated fields, want 6"},
		{"call\tjava0\tid\tzero\t1\t17", `field attempt="zero": not an integer`},
		{"result\tjava0\tid\t0\tSEND_OK\t1\tx\tu\to\ta\t1\t2\t-1\t", `field queueOffset="x"`},
		{"result\tjava0\tid\t0\tSEND_OK\t1\t3\tu\to\ta\t9\t2\t-1\t", "returnMicros 2 before callMicros 9"},
		{"ready", "1 tab-separated fields, want 2"},
	} {
		_, err := parseJavaLine(tc.line)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.line, err, tc.want)
		}
	}
}

func TestJavaOutcome(t *testing.T) {
	call := SendOp{Client: "java0", ID: "x", Queue: QueueKey{"T", 1}, Offset: -1, Call: time.Unix(1, 0)}
	res := func(status string, q int, off int64, code int, msg string) javaEvent {
		return javaEvent{kind: "result", status: status, gotQ: q, offset: off, code: code, err: msg,
			op: SendOp{BrokerMsgID: "OFF", Addr: "a:1", Return: time.Unix(2, 0)}}
	}
	for _, tc := range []struct {
		name string
		r    javaEvent
		want Outcome
		off  int64
	}{
		{"acked on its queue", res("SEND_OK", 1, 7, -1, ""), OK, 7},
		{"acked on another queue", res("SEND_OK", 2, 7, -1, ""), Unknown, -1},
		{"flush timeout status", res("FLUSH_DISK_TIMEOUT", 1, 7, -1, ""), Unknown, -1},
		{"broker refusal NO_PERMISSION", res("EXCEPTION", 1, -1, 16, "MQBrokerException: CODE: 16"), Fail, -1},
		{"broker SYSTEM_ERROR (outcome unknown)", res("EXCEPTION", 1, -1, 1, "MQBrokerException: CODE: 1"), Unknown, -1},
		{"no route", res("EXCEPTION", 1, -1, -1, "MQClientException: No route info of this topic: T"), Fail, -1},
		{"broker not in the route", res("EXCEPTION", 1, -1, -1, "MQClientException: The broker[broker-a] not exist"), Fail, -1},
		{"timeout", res("EXCEPTION", 1, -1, -1, "RemotingTimeoutException: wait response on the channel timeout"), Unknown, -1},
	} {
		op := javaOutcome(call, tc.r)
		if op.Outcome != tc.want || op.Offset != tc.off || op.Addr != "a:1" || !op.Return.Equal(time.Unix(2, 0)) {
			t.Errorf("%s: got %v offset %d addr %q return %v, want %v offset %d", tc.name, op.Outcome, op.Offset, op.Addr, op.Return, tc.want, tc.off)
		}
		if op.Outcome == OK && op.BrokerMsgID != "OFF" {
			t.Errorf("%s: offset msgId %q, want OFF", tc.name, op.BrokerMsgID)
		}
	}
}

// fakeJava is a directory that passes JavaAvailable and a shell script that
// stands in for the JVM, printing lines of the protocol.
func fakeJava(t *testing.T, script string) JavaOptions {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"chaosload.jar", filepath.Join("lib", "rocketmq-client-4.9.8.jar")} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "java")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return JavaOptions{Dir: dir, Java: bin, Producers: 1, Topic: "T", Queues: 4, SendTimeout: time.Second, LogDir: filepath.Join(dir, "logs")}
}

// A real child process: its acked send is recorded at its offset, a call it
// never answered (it exited) is recorded as unknown, the pace command reaches
// it, and Stop returns once it exited.
func TestJavaProducerRecordsCallsAndResults(t *testing.T) {
	o := fakeJava(t, `printf 'ready\tV4_9_8\n'
read cmd
[ "$cmd" = "interval 5000000" ] || { printf 'error\tgot %s\n' "$cmd"; exit 3; }
printf 'call\tjava0\tT-java0-0\t0\t1\t1700000000000000\n'
printf 'result\tjava0\tT-java0-0\t0\tSEND_OK\t1\t7\tUNIQ\tOFFID\t10.0.0.1:10911\t1700000000000000\t1700000000001000\t-1\t\n'
printf 'call\tjava0\tT-java0-1\t0\t2\t1700000000002000\n'
read cmd
printf 'done\t2\t1\n'
`)
	h := &History{}
	p, err := StartJavaProducer(&Cluster{NSAddr: "127.0.0.1:1"}, h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WaitReady(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Version() != "V4_9_8" {
		t.Fatalf("version %q", p.Version())
	}
	if err := p.SetInterval(5 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); p.Acks() == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	sends := h.Sends()
	if len(sends) != 2 {
		t.Fatalf("recorded %d sends, want 2: %+v", len(sends), sends)
	}
	byID := map[string]SendOp{}
	for _, op := range sends {
		byID[op.ID] = op
	}
	ok, lost := byID["T-java0-0"], byID["T-java0-1"]
	if ok.Outcome != OK || ok.Queue != (QueueKey{"T", 1}) || ok.Offset != 7 || ok.BrokerMsgID != "OFFID" || ok.Addr != "10.0.0.1:10911" {
		t.Errorf("acked send recorded as %+v", ok)
	}
	if lost.Outcome != Unknown || lost.Queue != (QueueKey{"T", 2}) || !strings.Contains(lost.Err, "exited before answering") {
		t.Errorf("unanswered call recorded as %+v", lost)
	}
	if p.Acks() != 1 {
		t.Errorf("acks %d, want 1", p.Acks())
	}
}

// A line that breaks the protocol (a send may be missing from the history)
// is an error of Stop naming the line and the field.
func TestJavaProducerBadLineFailsStop(t *testing.T) {
	o := fakeJava(t, `printf 'ready\tV4_9_8\n'
printf 'call\tjava0\tT-java0-0\t0\t1\t1700000000000000\n'
printf 'result\tjava0\tT-java0-0\t0\tSEND_OK\t1\tseven\tU\tO\ta\t1700000000000000\t1700000000001000\t-1\t\n'
read cmd
`)
	p, err := StartJavaProducer(&Cluster{NSAddr: "127.0.0.1:1"}, &History{}, o)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Stop()
	if err == nil || !strings.Contains(err.Error(), `field queueOffset="seven"`) {
		t.Fatalf("Stop: %v, want the bad queueOffset named", err)
	}
}

func TestJavaAvailableSaysWhy(t *testing.T) {
	dir := t.TempDir()
	_, err := JavaAvailable(JavaOptions{Dir: dir, Java: "/bin/true"})
	if err == nil || !strings.Contains(err.Error(), "chaosload.jar not built") {
		t.Fatalf("missing jar: %v", err)
	}
}

// The real JVM, when the module is built: a bad argument is an error line
// naming it and exit status 2, before any client starts.
func TestJavaProducerRejectsBadArgument(t *testing.T) {
	o := javaOptions(t.TempDir())
	java, err := JavaAvailable(*o)
	if err != nil {
		t.Skipf("real Java producer: %v", err)
	}
	out, err := exec.Command(java, "-cp", filepath.Join(o.Dir, "chaosload.jar")+":"+filepath.Join(o.Dir, "lib", "*"), JavaMain,
		"namesrv=127.0.0.1:1", "topic=T", "producers=many").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v (output %q), want status 2", err, out)
	}
	if got := string(out); !strings.HasPrefix(got, "error\t") || !strings.Contains(got, "producers=many: not an integer") {
		t.Fatalf("output %q, want an error line naming producers=many", got)
	}
}

func TestLoadLevelString(t *testing.T) {
	l := LoadLevel{Max: 900, Achieved: 400, Windows: 1, Bench: 3 * time.Second, Go: 4, Raw: 12, Java: 4, JavaVersion: "V4_9_8",
		Rounds: 2, Earlier: []string{"max 1200 run at 300 msgs/s"}}
	got := l.String()
	for _, want := range []string{"max durable rate 900 msgs/s", "4 Go + 12 raw + 4 Java (rocketmq-client 4.9.8)", "with the recorded workload",
		"run at 400 msgs/s (44% of max", "measured in round 2, earlier rounds: max 1200 run at 300 msgs/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if l.BelowFloor() || !(LoadLevel{Max: 900, Achieved: 299}).BelowFloor() {
		t.Errorf("floor: 400 of 900 is above a third, 299 of 900 below")
	}
	l.Alone, l.Java = true, 0
	if got := l.String(); strings.Contains(got, "recorded workload") || strings.Contains(got, "Java") {
		t.Errorf("alone, without Java: %q", got)
	}
}

// What a Java producer acknowledged is held to the checker's rules like any
// other send: present at its offset passes, missing is a lost ack.
func TestJavaAckIsCheckedAgainstReplicas(t *testing.T) {
	o := fakeJava(t, `printf 'ready\tV4_9_8\n'
printf 'call\tjava0\tT-java0-0\t0\t0\t1700000000000000\n'
printf 'result\tjava0\tT-java0-0\t0\tSEND_OK\t0\t0\tU\tO\ta\t1700000000000000\t1700000000001000\t-1\t\n'
read cmd
`)
	h := &History{}
	p, err := StartJavaProducer(&Cluster{NSAddr: "127.0.0.1:1"}, h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	q := QueueKey{"T", 0}
	kept := Check(h, []ReplicaLog{{Node: "n0", Queues: map[QueueKey][]string{q: {"T-java0-0"}}}}, nil)
	if kept.Acked != 1 || kept.LostAcked != 0 || kept.Phantom != 0 || !kept.OK() {
		t.Errorf("stored at its offset: %s", kept.String())
	}
	lost := Check(h, []ReplicaLog{{Node: "n0", Queues: map[QueueKey][]string{q: {}}}}, nil)
	if lost.LostAcked != 1 || lost.OK() {
		t.Errorf("missing from the replica: lost acked %d, want 1", lost.LostAcked)
	}
}
