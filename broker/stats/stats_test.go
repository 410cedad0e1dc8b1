package stats

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/broker/route"
	"github.com/rocketraft/rocketraft/transport"
)

var t0 = time.Date(2025, 3, 1, 23, 59, 0, 0, time.UTC)

// tpsFields parses "a b c" into three floats.
func tpsFields(t *testing.T, s string) [3]float64 {
	t.Helper()
	f := strings.Fields(s)
	if len(f) != 3 {
		t.Fatalf("%q: want three numbers", s)
	}
	var out [3]float64
	for i, x := range f {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil || !strings.Contains(x, ".") {
			t.Fatalf("%q: %q is not a Java double: %v", s, x, err)
		}
		out[i] = v
	}
	return out
}

// TestPutTpsOverWindows: 10 messages a second for 30 s; the 10 s and 1 min
// windows see 10/s (the 1 min window counts from the first sample, 30 s ago),
// then 20 quiet seconds halve the 1 min rate and zero the 10 s one.
func TestPutTpsOverWindows(t *testing.T) {
	s := New("c", t0)
	now := t0
	for range 30 {
		now = now.Add(time.Second)
		for range 10 {
			s.ObservePut(now, "T", 1, 100)
		}
		s.Tick(now)
	}
	got := tpsFields(t, s.Runtime(now)["putTps"])
	if got != [3]float64{10, 10, 10} {
		t.Errorf("after 30 s at 10/s: putTps %v", got)
	}
	for range 30 {
		now = now.Add(time.Second)
		s.Tick(now)
	}
	got = tpsFields(t, s.Runtime(now)["putTps"])
	if got[0] != 0 || got[1] != 5 || got[2] != 5 {
		t.Errorf("after 30 quiet s: putTps %v, want 0 5 5", got)
	}
	rt := s.Runtime(now)
	for k, want := range map[string]string{"putMessageTimesTotal": "300", "putMessageSizeTotal": "30000",
		"putMessageAverageSize": "100.0", "msgPutTotalTodayNow": "300", "runtime": "[ 0 days, 0 hours, 1 minutes, 0 seconds ]",
		"bootTimestamp": strconv.FormatInt(t0.UnixMilli(), 10)} {
		if rt[k] != want {
			t.Errorf("%s = %q, want %q", k, rt[k], want)
		}
	}
}

func TestGetsFoundMissTransferred(t *testing.T) {
	s := New("c", t0)
	now := t0.Add(2 * time.Second)
	s.ObserveGet(now, "g", "T", 32, 3200)
	s.ObserveGet(now, "g", "T", 8, 800)
	s.ObserveGet(now, "g", "T", 0, 0)
	rt := s.Runtime(now)
	if f := tpsFields(t, rt["getTransferredTps"]); f[0] != 20 { // 40 messages over 2 s
		t.Errorf("getTransferredTps %v", f)
	}
	if rt["getTransferedTps"] != rt["getTransferredTps"] {
		t.Errorf("4.9's spelling %q differs from 5.x's %q", rt["getTransferedTps"], rt["getTransferredTps"])
	}
	if f := tpsFields(t, rt["getFoundTps"]); f[0] != 1 {
		t.Errorf("getFoundTps %v", f)
	}
	if f := tpsFields(t, rt["getTotalTps"]); f[0] != 1.5 {
		t.Errorf("getTotalTps %v", f)
	}
	if rt["msgGetTotalTodayNow"] != "40" {
		t.Errorf("msgGetTotalTodayNow %q", rt["msgGetTotalTodayNow"])
	}
	d, ok := s.Item(GroupGetNums, "T@g", now)
	if !ok || d.Minute.Sum != 40 || d.Minute.Avgpt != 20 {
		t.Errorf("GROUP_GET_NUMS T@g = %+v %v", d, ok)
	}
	if _, ok := s.Item(GroupGetNums, "T@other", now); ok {
		t.Error("an item nothing counted exists")
	}
}

// TestItemViews: an item's minute view covers about the last minute (Apache's
// 7 snapshots 10 s apart), its hour and day views everything since it began.
func TestItemViews(t *testing.T) {
	s := New("c", t0)
	now := t0
	for range 120 { // two minutes, 1 message a second
		now = now.Add(time.Second)
		s.ObservePut(now, "T", 1, 10)
		s.Tick(now)
	}
	d, ok := s.Item(TopicPutNums, "T", now)
	if !ok {
		t.Fatal("no TOPIC_PUT_NUMS T")
	}
	if d.Minute.Sum < 60 || d.Minute.Sum > 70 || math.Abs(d.Minute.TPS-1) > 0.01 || d.Minute.Avgpt != 1 {
		t.Errorf("minute view %+v, want about 60 at 1/s", d.Minute)
	}
	if d.Hour.Sum != 120 || d.Day.Sum != 120 {
		t.Errorf("hour %+v day %+v, want all 120", d.Hour, d.Day)
	}
	// The hour view began 10 min before the item (Apache's zero snapshot).
	if want := 120.0 / (10*60 + 119); math.Abs(d.Hour.TPS-want) > 1e-9 {
		t.Errorf("hour tps %v, want %v", d.Hour.TPS, want)
	}
	if b, _ := s.Item(BrokerPutNums, "c", now); b.Day.Sum != 120 {
		t.Errorf("BROKER_PUT_NUMS c: %+v", b)
	}
	if sz, _ := s.Item(TopicPutSize, "T", now); sz.Day.Sum != 1200 {
		t.Errorf("TOPIC_PUT_SIZE T: %+v", sz)
	}
}

// TestDayCounters: t0 is one minute before midnight; the first tick of the
// next day makes today's totals this morning's, and the next midnight moves
// them to yesterday morning (clusterList -m subtracts them).
func TestDayCounters(t *testing.T) {
	s := New("c", t0)
	s.ObservePut(t0, "T", 5, 50)
	s.ObserveGet(t0, "g", "T", 3, 30)
	s.Tick(t0.Add(30 * time.Second))
	if rt := s.Runtime(t0); rt["msgPutTotalTodayMorning"] != "0" {
		t.Fatalf("rolled before midnight: %v", rt)
	}
	day2 := t0.Add(2 * time.Minute)
	s.Tick(day2)
	s.ObservePut(day2, "T", 7, 70)
	rt := s.Runtime(day2)
	if rt["msgPutTotalTodayMorning"] != "5" || rt["msgPutTotalYesterdayMorning"] != "0" || rt["msgPutTotalTodayNow"] != "12" ||
		rt["msgGetTotalTodayMorning"] != "3" {
		t.Errorf("day 2: %v", rt)
	}
	day3 := day2.Add(24 * time.Hour)
	s.Tick(day3)
	rt = s.Runtime(day3)
	if rt["msgPutTotalTodayMorning"] != "12" || rt["msgPutTotalYesterdayMorning"] != "5" || rt["msgGetTotalYesterdayMorning"] != "3" {
		t.Errorf("day 3: %v", rt)
	}
}

// TestLatencyDistribution: the last full minute's puts in Apache's ranges,
// its percentiles, and the largest put since boot.
func TestLatencyDistribution(t *testing.T) {
	s := New("c", t0)
	for range 997 {
		s.ObserveSendResult(3*time.Millisecond, true)
	}
	s.ObserveSendResult(0, true)
	s.ObserveSendResult(1500*time.Millisecond, true)
	s.ObserveSendResult(1500*time.Millisecond, true)
	s.ObserveSendResult(time.Second, false)
	rt := s.Runtime(t0) // first minute: what it has so far
	want := "[<=0ms]:1 [0~10ms]:997 [10~50ms]:0 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 [500ms~1s]:0 [1~2s]:2 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:0 "
	if got := rt["putMessageDistributeTime"]; got != want {
		t.Errorf("distribution\n got %q\nwant %q", got, want)
	}
	if rt["putMessageEntireTimeMax"] != "1500" || rt["putMessageFailedTimes"] != "1" {
		t.Errorf("max %q failed %q", rt["putMessageEntireTimeMax"], rt["putMessageFailedTimes"])
	}
	if p, _ := strconv.ParseFloat(rt["putLatency99"], 64); p < 2 || p > 3 {
		t.Errorf("putLatency99 %q, want in the 3 ms bucket (2..3]", rt["putLatency99"])
	}
	if rt["putLatency999"] != "1500.00" { // the 999th of 1000 is the first of two in (1000, 2000]
		t.Errorf("putLatency999 %q, want 1500.00, halfway into the 1..2 s bucket", rt["putLatency999"])
	}
	s.Tick(t0.Add(time.Minute)) // the minute rolls: its numbers stay until the next one
	s.ObserveSendResult(20*time.Millisecond, true)
	if got := s.Runtime(t0.Add(time.Minute))["putMessageDistributeTime"]; got != want {
		t.Errorf("after the roll: %q", got)
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 12: "12.0", 2.5: "2.5", 1.0 / 3: "0.3333333333333333"} {
		if got := JavaDouble(f); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestSendStage(t *testing.T) {
	s := New("c", t0)
	leading := true
	ok := func(context.Context, *route.Request) (*transport.Command, error) {
		return transport.NewResponse(transport.Success, ""), nil
	}
	refused := func(context.Context, *route.Request) (*transport.Command, error) {
		return nil, route.ErrNoPermission
	}
	send := &route.Request{Command: transport.NewRequest(transport.SendMessageV2, nil, nil)}
	pull := &route.Request{Command: transport.NewRequest(transport.PullMessage, nil, nil)}
	stage := s.SendStage(func() bool { return leading })
	for _, call := range []struct {
		h   route.Handler
		req *route.Request
	}{{ok, send}, {ok, send}, {refused, send}, {ok, pull}, {refused, pull}} {
		route.Call(context.Background(), stage(call.h), call.req)
	}
	leading = false
	route.Call(context.Background(), stage(refused), send) // a follower's relay: the leader counts it
	rt := s.Runtime(t0)
	timed := 0
	for _, f := range strings.Fields(rt["putMessageDistributeTime"]) {
		_, n, _ := strings.Cut(f, ":")
		v, _ := strconv.Atoi(n)
		timed += v
	}
	if timed != 2 || rt["putMessageFailedTimes"] != "1" {
		t.Errorf("distribution %q failed %q, want 2 timed sends and 1 failure", rt["putMessageDistributeTime"], rt["putMessageFailedTimes"])
	}
}
