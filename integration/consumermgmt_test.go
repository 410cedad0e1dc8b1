package integration

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
)

// runAdmin runs `rocketraft admin -n <nameserver> args...` and returns its stdout;
// a non-zero exit fails the test with both streams.
func runAdmin(t *testing.T, c *cluster, args ...string) string {
	t.Helper()
	if buildErr != nil {
		t.Fatalf("no binary: %v", buildErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	full := append([]string{"admin", "-n", c.nsAddr}, args...)
	cmd := exec.CommandContext(ctx, binPath, full...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("rocketraft %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(full, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// runningInfoRows runs `admin group running-info` and counts the output rows of
// the client whose instance name is instance, and of those the rows showing its
// subscription to topic with expression "*".
func runningInfoRows(t *testing.T, c *cluster, group, topic, instance string) (out string, clientRows, subRows int) {
	t.Helper()
	out = runAdmin(t, c, "group", "running-info", "--group", group)
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "@"+instance+" ") {
			continue
		}
		clientRows++
		if f := strings.Fields(line); len(f) == 5 && f[1] == "subscription" && f[2] == topic && f[3] == "TAG" && f[4] == "*" {
			subRows++
		}
	}
	return out, clientRows, subRows
}

// emptyAnswer reports whether running-info printed a client whose answer had no body.
func emptyAnswer(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "answer" && f[2] == "bytes" && f[3] == "0" {
			return true
		}
	}
	return false
}

// checkRunningInfo asserts that running-info names the client and its one
// subscription. The pinned Go client cannot always answer: between its first and
// second stats sample (10 s and 20 s after a stats item appears) its per-minute
// TPS is 0/0, json.Marshal rejects the NaN, and it answers SUCCESS with an empty
// body and the remark "json marshal error: json: unsupported value: NaN". So
// the test asks right after the consumer started and, if the answer is empty,
// asks again until that window has passed.
func checkRunningInfo(t *testing.T, c *cluster, group, topic, instance string) {
	t.Helper()
	deadline := time.Now().Add(25 * time.Second)
	for {
		out, clientRows, subRows := runningInfoRows(t, c, group, topic, instance)
		if subRows > 0 || !emptyAnswer(out) || time.Now().After(deadline) {
			t.Logf("running-info output:\n%s", out)
			if clientRows == 0 {
				t.Errorf("running-info does not name the client (…@%s)", instance)
			}
			if subRows != 1 {
				t.Errorf("running-info shows %d subscription rows for %s with expression *, want 1", subRows, topic)
			}
			if !strings.Contains(out, "1 clients") {
				t.Errorf("running-info footer does not count exactly one client")
			}
			return
		}
		t.Logf("running-info: the client answered an empty body (its NaN stats window); asking again")
		time.Sleep(time.Second)
	}
}

// TestAdminResetOffsetAndRunningInfo drives the consumer-management CLI against the
// three-node group with a live push consumer. `admin group reset-offset
// --timestamp` rewinds the group to the first message stored at or after the
// time; the broker tells the connected client (RESET_CONSUMER_CLIENT_OFFSET), which
// consumes exactly the later messages a second time and nothing earlier. Before
// that, `admin group running-info` relays GET_CONSUMER_RUNNING_INFO to the client
// and prints its client id and subscription.
func TestAdminResetOffsetAndRunningInfo(t *testing.T) {
	c := shared(t)
	topic := unique(t, "TR")
	group := unique(t, "CG")
	instance := unique(t, "ci")
	p := newProducer(t, c)
	sendBodies(t, p, topic, []string{"seed"})
	col := newCollector()
	newPushConsumer(t, c, group, topic, selectAll, col,
		consumer.WithInstance(instance), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))

	col.expectExactly(t, "seed", []string{"seed"}, deliverTimeout, 0)
	checkRunningInfo(t, c, group, topic, instance)

	early := bodies("early", 8)
	sendBodies(t, p, topic, early)
	// Store timestamps have millisecond resolution on the same clock: keep the
	// reset time strictly between the two batches.
	time.Sleep(50 * time.Millisecond)
	resetAt := time.Now().UnixMilli()
	time.Sleep(50 * time.Millisecond)
	lateBodies := bodies("late", 8)
	sendBodies(t, p, topic, lateBodies)
	all := append(append([]string{"seed"}, early...), lateBodies...)
	col.expectExactly(t, "first pass", all, deliverTimeout, settle)
	if t.Failed() {
		return
	}

	out := runAdmin(t, c, "group", "reset-offset", "--group", group, "--topic", topic, "--timestamp", strconv.FormatInt(resetAt, 10))
	t.Logf("reset-offset output:\n%s", out)
	if !strings.Contains(out, topic) || !strings.Contains(out, "queues reset") {
		t.Errorf("reset-offset output names neither the topic nor the reset queues:\n%s", out)
	}

	// The late batch comes a second time; nothing stored before resetAt does.
	deadline := time.Now().Add(deliverTimeout)
	for {
		_, counts := col.snapshot()
		done := true
		for _, b := range lateBodies {
			if counts[b] < 2 {
				done = false
			}
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(settle)
	_, counts := col.snapshot()
	want := map[string]int{"seed": 1}
	for _, b := range early {
		want[b] = 1
	}
	for _, b := range lateBodies {
		want[b] = 2
	}
	for b, n := range want {
		if counts[b] != n {
			t.Errorf("%s consumed %d times, want %d (reset to %d)", b, counts[b], n, resetAt)
		}
	}
	for b, n := range counts {
		if _, ok := want[b]; !ok {
			t.Errorf("unexpected message %q ×%d", b, n)
		}
	}
}
