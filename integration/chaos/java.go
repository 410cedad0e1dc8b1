package chaos

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// The Java producers of a background load: one JVM running
// integration/java/chaosload (the unmodified rocketmq-client 4.9.8, a few
// paced sender threads) as a child process. It prints one line per event and
// this file turns them into the History; the line format is documented in the
// module's Lines.java. The JVM only reports what its client saw (status name,
// broker code, exception); what that means for the checker is decided here,
// by the same rules as for the Go clients (classifyCode).

// ErrJavaUnavailable says why Java producers cannot run on this machine
// (no java on PATH, the module not built); a scenario then runs without them
// and says so.
var ErrJavaUnavailable = errors.New("java producers unavailable")

// JavaMain is the producer's main class in the built module.
const JavaMain = "com.github.rocketraft.chaosload.ChaosProducer"

// JavaOptions configures one JVM of Java producers.
type JavaOptions struct {
	// Dir holds the built module: Dir/chaosload.jar and Dir/lib/*.jar.
	Dir string
	// Java is the java binary; default the one on PATH.
	Java string
	// Producers is the number of sender threads (default 4).
	Producers int
	// Topic, Queues, Interval, SendTimeout as for a Workload; set by Load.
	Topic       string
	Queues      int
	Interval    time.Duration
	SendTimeout time.Duration
	// LogDir gets the JVM's stderr and the client's own log files.
	LogDir string
}

// JavaAvailable checks that a JVM and the built module are there, so a
// scenario can skip its Java producers with the reason instead of failing.
func JavaAvailable(o JavaOptions) (java string, err error) {
	java = o.Java
	if java == "" {
		if java, err = exec.LookPath("java"); err != nil {
			return "", fmt.Errorf("%w: no java on PATH (install a JDK 17)", ErrJavaUnavailable)
		}
	}
	jar := filepath.Join(o.Dir, "chaosload.jar")
	if _, err := os.Stat(jar); err != nil {
		return "", fmt.Errorf("%w: %s not built (mvn -f integration/java/chaosload/pom.xml package; make chaos does it)", ErrJavaUnavailable, jar)
	}
	if libs, _ := filepath.Glob(filepath.Join(o.Dir, "lib", "rocketmq-client-*.jar")); len(libs) == 0 {
		return "", fmt.Errorf("%w: no rocketmq-client jar in %s", ErrJavaUnavailable, filepath.Join(o.Dir, "lib"))
	}
	return java, nil
}

// JavaProducer is one running JVM of Java producers recording into a History.
type JavaProducer struct {
	opts  JavaOptions
	h     *History
	cmd   *exec.Cmd
	stdin io.WriteCloser
	acks  atomic.Int64

	ready  chan struct{} // closed at the "ready" line
	exited chan struct{} // closed once stdout is read to its end and the process waited for

	mu      sync.Mutex
	pending map[javaKey]SendOp // calls printed, results not yet
	isReady bool
	version string
	badLine error    // the first line that broke the protocol
	other   []string // the last lines that were not protocol lines, and "error" lines
	stopped bool
	waitErr error
}

type javaKey struct {
	client, id string
	attempt    int
}

// StartJavaProducer starts the JVM; its senders begin at once, paced at
// o.Interval. With the cluster's Credentials set it signs with ACL 1.0.
func StartJavaProducer(c *Cluster, h *History, o JavaOptions) (*JavaProducer, error) {
	java, err := JavaAvailable(o)
	if err != nil {
		return nil, err
	}
	if o.Producers == 0 {
		o.Producers = 4
	}
	if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return nil, err
	}
	stderr, err := os.Create(filepath.Join(o.LogDir, "java-stderr.log"))
	if err != nil {
		return nil, err
	}
	args := []string{
		// Small and quick to start: the JVM shares two cores with three brokers.
		"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		// 4.9's client logs under ~/logs/rocketmqlogs unless told; keep it with the scenario.
		"-Drocketmq.client.logRoot=" + filepath.Join(o.LogDir, "java-client-logs"),
		"-Drocketmq.client.logLevel=WARN",
		"-cp", filepath.Join(o.Dir, "chaosload.jar") + string(os.PathListSeparator) + filepath.Join(o.Dir, "lib", "*"),
		JavaMain,
		"namesrv=" + c.NSAddr, "topic=" + o.Topic,
		"producers=" + strconv.Itoa(o.Producers), "queues=" + strconv.Itoa(o.Queues),
		"interval=" + strconv.FormatInt(int64(o.Interval), 10),
		"timeoutMs=" + strconv.FormatInt(o.SendTimeout.Milliseconds(), 10),
		"brokerName=" + GroupName, "group=chaos-java", "instance=chaos-" + o.Topic + "-java",
	}
	if cr := c.opts.Credentials; cr.AccessKey != "" {
		args = append(args, "accessKey="+cr.AccessKey, "secretKey="+cr.SecretKey)
	}
	cmd := exec.Command(java, args...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		_ = stderr.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = stderr.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		_ = stderr.Close()
		return nil, fmt.Errorf("start %s: %w", java, err)
	}
	p := &JavaProducer{opts: o, h: h, cmd: cmd, stdin: stdin, ready: make(chan struct{}), exited: make(chan struct{}), pending: map[javaKey]SendOp{}}
	go func() {
		defer close(p.exited)
		defer stderr.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.line(sc.Text())
		}
		err := cmd.Wait()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		p.abandonPending(time.Now())
	}()
	return p, nil
}

// line handles one line of the JVM's stdout.
func (p *JavaProducer) line(s string) {
	ev, err := parseJavaLine(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.badLine == nil {
			p.badLine = err
		}
		return
	}
	switch ev.kind {
	case "ready":
		if !p.isReady {
			p.isReady, p.version = true, ev.version
			close(p.ready)
		}
	case "call":
		p.pending[javaKey{ev.op.Client, ev.op.ID, ev.op.Attempt}] = ev.op
	case "result":
		k := javaKey{ev.op.Client, ev.op.ID, ev.op.Attempt}
		call, ok := p.pending[k]
		if !ok {
			if p.badLine == nil {
				p.badLine = fmt.Errorf("java line %q: result of %s attempt %d without its call line", s, ev.op.ID, ev.op.Attempt)
			}
			return
		}
		delete(p.pending, k)
		op := javaOutcome(call, ev)
		op.Queue.Topic = p.opts.Topic
		p.h.AddSend(op)
		if op.Outcome == OK {
			p.acks.Add(1)
		}
	case "done":
	case "error", "other":
		p.other = append(p.other, s)
		if len(p.other) > 20 {
			p.other = p.other[1:]
		}
	}
}

// abandonPending records every call whose result never came (the JVM died or
// was killed) as an unknown outcome: it may have been stored.
func (p *JavaProducer) abandonPending(at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, op := range p.pending {
		op.Outcome, op.Return, op.Err = Unknown, at, "java producer exited before answering"
		op.Queue.Topic = p.opts.Topic
		p.h.AddSend(op)
		delete(p.pending, k)
	}
}

// WaitReady waits for the producer's start (route lookups still to come).
func (p *JavaProducer) WaitReady(timeout time.Duration) error {
	select {
	case <-p.ready:
		return nil
	case <-p.exited:
		return fmt.Errorf("java producer exited before it was ready: %s", p.describe())
	case <-time.After(timeout):
		return fmt.Errorf("java producer not ready after %v: %s", timeout, p.describe())
	}
}

// SetInterval changes every sender's pace from its next send on.
func (p *JavaProducer) SetInterval(d time.Duration) error {
	_, err := fmt.Fprintf(p.stdin, "interval %d\n", int64(d))
	return err
}

// Acks is the number of OK sends so far.
func (p *JavaProducer) Acks() int64 { return p.acks.Load() }

// Version is the client version the JVM reported ("" before ready).
func (p *JavaProducer) Version() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.version
}

// Stop asks the JVM to finish its sends in flight and exit, and kills it if
// it has not within 10 s. It returns the first protocol error, or how the
// process ended if it did not end as asked. Idempotent.
func (p *JavaProducer) Stop() error {
	p.mu.Lock()
	first := !p.stopped
	p.stopped = true
	p.mu.Unlock()
	if first {
		_, _ = io.WriteString(p.stdin, "stop\n")
		_ = p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	<-p.exited
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.badLine != nil {
		return p.badLine
	}
	if p.waitErr != nil {
		return fmt.Errorf("java producer: %v (last other output: %q)", p.waitErr, p.other)
	}
	return nil
}

func (p *JavaProducer) describe() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("wait %v, protocol %v, other output %q (stderr in %s)", p.waitErr, p.badLine, p.other, filepath.Join(p.opts.LogDir, "java-stderr.log"))
}

// javaEvent is one parsed line.
type javaEvent struct {
	kind    string // ready, call, result, done, error, other
	version string
	op      SendOp // call and result: Client, ID, Attempt, Queue.QueueID, Call (and Return)
	status  string
	gotQ    int
	offset  int64
	msgID   string // the UNIQ_KEY msgId; offsetMsgId goes to op.BrokerMsgID
	code    int
	err     string
}

// parseJavaLine parses one line of the protocol in Lines.java. Lines that are
// not protocol lines (a JVM warning on stdout) are kind "other"; a protocol
// line with the wrong fields is an error naming the field and its value.
func parseJavaLine(s string) (javaEvent, error) {
	f := strings.Split(s, "\t")
	bad := func(what string, err error) (javaEvent, error) {
		return javaEvent{}, fmt.Errorf("java line %q: %s: %v", s, what, err)
	}
	want := func(n int) error {
		if len(f) != n {
			return fmt.Errorf("%d tab-separated fields, want %d", len(f), n)
		}
		return nil
	}
	num := func(i int, name string) (int64, error) {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("field %s=%q: not an integer", name, f[i])
		}
		return n, nil
	}
	switch f[0] {
	case "ready":
		if err := want(2); err != nil {
			return bad("ready", err)
		}
		return javaEvent{kind: "ready", version: f[1]}, nil
	case "call":
		if err := want(6); err != nil {
			return bad("call", err)
		}
		attempt, err1 := num(3, "attempt")
		q, err2 := num(4, "queueId")
		call, err3 := num(5, "callMicros")
		if err := errors.Join(err1, err2, err3); err != nil {
			return bad("call", err)
		}
		return javaEvent{kind: "call", op: SendOp{Client: f[1], ID: f[2], Attempt: int(attempt), Queue: QueueKey{QueueID: int32(q)},
			Offset: -1, Call: time.UnixMicro(call)}}, nil
	case "result":
		if err := want(14); err != nil {
			return bad("result", err)
		}
		attempt, err1 := num(3, "attempt")
		q, err2 := num(5, "queueId")
		off, err3 := num(6, "queueOffset")
		call, err4 := num(10, "callMicros")
		ret, err5 := num(11, "returnMicros")
		code, err6 := num(12, "code")
		if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
			return bad("result", err)
		}
		if ret < call {
			return bad("result", fmt.Errorf("returnMicros %d before callMicros %d", ret, call))
		}
		return javaEvent{kind: "result", status: f[4], gotQ: int(q), offset: off, msgID: f[7], code: int(code), err: f[13],
			op: SendOp{Client: f[1], ID: f[2], Attempt: int(attempt), BrokerMsgID: f[8], Addr: f[9],
				Call: time.UnixMicro(call), Return: time.UnixMicro(ret)}}, nil
	case "done":
		if err := want(3); err != nil {
			return bad("done", err)
		}
		return javaEvent{kind: "done"}, nil
	case "error":
		return javaEvent{kind: "error"}, nil
	}
	return javaEvent{kind: "other"}, nil
}

// javaOutcome is the recorded attempt of a result, judged like goSend judges
// the Go client's answers: SEND_OK on the queue asked for is OK; any other
// status, or an ack on another queue, is unknown; a broker's answer by its
// code (classifyCode); the client's own "no route"/"broker not exist" (nothing
// was sent) a refusal; every other exception (timeouts, closed channels)
// unknown.
func javaOutcome(call SendOp, r javaEvent) SendOp {
	op := call
	op.Return, op.Addr, op.Offset = r.op.Return, r.op.Addr, -1
	switch {
	case r.status == "SEND_OK" && r.gotQ == int(call.Queue.QueueID) && r.offset >= 0:
		op.Outcome, op.Offset, op.BrokerMsgID = OK, r.offset, r.op.BrokerMsgID
	case r.status == "SEND_OK":
		op.Outcome, op.Err = Unknown, fmt.Sprintf("acked on queue %d offset %d, sent to queue %d", r.gotQ, r.offset, call.Queue.QueueID)
	case r.status != "EXCEPTION":
		op.Outcome, op.Err = Unknown, "status "+r.status
	case r.code >= 0:
		op.Outcome, op.Err = classifyCode(transport.ResponseCode(r.code)), fmt.Sprintf("CODE %d: %s", r.code, r.err)
	case strings.Contains(r.err, "No route info") || strings.Contains(r.err, "] not exist"):
		op.Outcome, op.Err = Fail, r.err
	default:
		op.Outcome, op.Err = Unknown, r.err
	}
	return op
}
