package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/replica"
	"github.com/rocketraft/rocketraft/transport"
)

// A pull of a queue's newest messages runs on the connection's reader
// goroutine; one further back than pullInlineSpan (a consumer catching up,
// which may read from the disk) and one whose fields do not parse go to a
// handler goroutine.
func TestPullsNearTheQueueEndRunInline(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	heartbeat(t, tb, "g", "TI")
	for i := range 300 {
		if r := tb.call(t, transport.SendMessage, sendExt("TI", 0, ""), []byte("m"+strconv.Itoa(i))); r.ResponseCode() != transport.Success {
			t.Fatal(r.Remark)
		}
	}
	// The decision reads the ConsumeQueue, which the reput fills after the
	// sends are answered.
	if err := tb.st.WaitDispatched(context.Background(), tb.st.MaxPhysicalOffset()); err != nil {
		t.Fatal(err)
	}
	inline := func(ext map[string]string) bool {
		return tb.b.serve.Inline(transport.NewRequest(transport.PullMessage, ext, nil))
	}
	cases := []struct {
		name string
		ext  map[string]string
		want bool
	}{
		{"at the end", pullExt("g", "TI", 0, 300, 0), true},
		{"256 behind", pullExt("g", "TI", 0, 44, 0), true},
		{"257 behind", pullExt("g", "TI", 0, 43, 0), false},
		{"from the start", pullExt("g", "TI", 0, 0, 0), false},
		{"another queue, empty", pullExt("g", "TI", 1, 0, 0), true},
		{"bad queueOffset", map[string]string{"consumerGroup": "g", "topic": "TI", "queueId": "0", "queueOffset": "x"}, false},
		{"no topic", map[string]string{"consumerGroup": "g", "queueId": "0", "queueOffset": "0"}, false},
	}
	for _, c := range cases {
		if got := inline(c.ext); got != c.want {
			t.Errorf("%s: inline %v, want %v", c.name, got, c.want)
		}
	}
	// Both kinds are served: a pull from the start and one at the end.
	if r := tb.call(t, transport.PullMessage, pullExt("g", "TI", 0, 0, 0), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("pull from the start: code %d %s", r.Code, r.Remark)
	}
	if r := tb.call(t, transport.PullMessage, pullExt("g", "TI", 0, 299, 0), nil); r.ResponseCode() != transport.Success {
		t.Fatalf("pull of the last message: code %d %s", r.Code, r.Remark)
	}
}

// A held pull that no message wakes is answered PULL_NOT_FOUND when its
// suspend time passes, and no waiter is left behind.
func TestHeldPullAnsweredNotFoundAfterItsSuspend(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	if r := tb.call(t, transport.SendMessage, sendExt("TS", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatal(r.Remark)
	}
	heartbeat(t, tb, "g", "TS")
	start := time.Now()
	r := tb.call(t, transport.PullMessage, pullExt("g", "TS", 0, 1, 400), nil)
	if waited := time.Since(start); waited < 400*time.Millisecond {
		t.Fatalf("answered after %s, before its 400ms suspend", waited)
	}
	if r.ResponseCode() != transport.PullNotFound || r.Field("nextBeginOffset") != "1" {
		t.Fatalf("code %d next %s, want PULL_NOT_FOUND at 1", r.Code, r.Field("nextBeginOffset"))
	}
	if n := tb.b.pulls.Count(); n != 0 {
		t.Fatalf("%d pulls still held", n)
	}
}

// A held pull whose connection closes lets go at once: its waiter is gone
// and the broker's Close does not wait out its 20 s suspend.
func TestHeldPullLetsGoWhenItsConnectionCloses(t *testing.T) {
	tb := startTestBroker(t, replica.RoleLeader, nil)
	if r := tb.call(t, transport.SendMessage, sendExt("TC", 0, ""), []byte("x")); r.ResponseCode() != transport.Success {
		t.Fatal(r.Remark)
	}
	heartbeat(t, tb, "g", "TC")
	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = c.Invoke(ctx, tb.b.Addr(), transport.NewRequest(transport.PullMessage, pullExt("g", "TC", 0, 1, 20000), nil))
	}()
	waitFor(t, "the pull to be held", func() bool { return tb.b.pulls.Count() == 1 })
	c.Close()
	waitFor(t, "the held pull to let go", func() bool { return tb.b.pulls.Count() == 0 })
	closed := make(chan struct{})
	go func() {
		tb.b.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the broker's Close waited for a pull held on a closed connection")
	}
}
