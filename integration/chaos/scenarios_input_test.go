package chaos

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// TestB2InvalidInput: each oversize or invalid request gets its specific answer,
// an oversize frame is cut before the server reads it, and the processes live on.
func TestB2InvalidInput(t *testing.T) {
	requireChaos(t, inShort)
	s := begin(t, "B2", Options{}, nil)
	leader := s.leader()
	addr := s.c.Nodes[leader].ClientAddr
	snd := NewRawSender("b2", s.c, 10*time.Second)
	defer snd.Close()
	ctx := context.Background()
	q := QueueKey{"ChaosB2", 0}
	// Create the topic so later refusals are about the input, not the topic.
	op := snd.Send(ctx, q, "ok-seed", 0)
	s.h.AddSend(op)
	if op.Outcome != OK {
		t.Fatalf("seed send: %s", op.Err)
	}
	cases := []struct {
		name  string
		topic string
		body  string
		extra map[string]string
		want  transport.ResponseCode
	}{
		{"body 4 MiB + 1", q.Topic, strings.Repeat("x", 4<<20+1), nil, transport.MessageIllegal},
		{"properties 32768 bytes", q.Topic, "b", map[string]string{"properties": "K\x01" + strings.Repeat("p", 32768-3) + "\x02"}, transport.MessageIllegal},
		{"topic of 128 chars", strings.Repeat("t", 128), "b", nil, transport.InvalidParameter},
		{"topic with illegal chars", "bad topic!", "b", nil, transport.InvalidParameter},
		{"system topic SCHEDULE_TOPIC_XXXX", "SCHEDULE_TOPIC_XXXX", "b", nil, transport.NoPermission},
		{"system topic RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC", "b", nil, transport.NoPermission},
	}
	for _, tc := range cases {
		resp, err := snd.send(ctx, addr, QueueKey{tc.topic, 0}, tc.body, tc.extra)
		switch {
		case err != nil:
			s.rep.Fail("%s: transport error %v, want %s", tc.name, err, tc.want)
		case resp.ResponseCode() != tc.want:
			s.rep.Fail("%s: answered %s %q, want %s", tc.name, resp.ResponseCode(), resp.Remark, tc.want)
		default:
			s.rep.Note("%s → %s", tc.name, resp.ResponseCode())
		}
	}
	for _, target := range []struct{ name, addr string }{{"broker", addr}, {"nameserver", s.c.NSAddr}} {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := s.c.TC.Invoke(rctx, target.addr, transport.NewRequest(transport.RequestCode(9999), nil, nil))
		cancel()
		if err != nil || resp.ResponseCode() != transport.RequestCodeNotSupported {
			s.rep.Fail("%s: unknown request code 9999 answered %v %v, want REQUEST_CODE_NOT_SUPPORTED", target.name, resp, err)
		} else {
			s.rep.Note("%s: unknown request code → %s", target.name, resp.ResponseCode())
		}
		if err := oversizeFrameCut(target.addr); err != nil {
			s.rep.Fail("%s: frame of 16 MiB + 1: %v", target.name, err)
		} else {
			s.rep.Note("%s: frame of 16 MiB + 1 announced → connection closed before the body was sent", target.name)
		}
	}
	op = snd.Send(ctx, q, "ok-after", 0)
	s.h.AddSend(op)
	if op.Outcome != OK {
		s.rep.Fail("valid send after the bad input: %s", op.Err)
	}
	s.rep.Faults = fmt.Sprintf("bad requests %d", len(cases)+4)
	s.finish()
}

// oversizeFrameCut announces a 16 MiB + 1 frame, sends only the prefix and expects
// the server to close the connection without waiting for the rest.
func oversizeFrameCut(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	var prefix [8]byte
	binary.BigEndian.PutUint32(prefix[0:], uint32(transport.DefaultMaxFrameSize+1))
	binary.BigEndian.PutUint32(prefix[4:], 64) // JSON header of 64 bytes, never sent
	if _, err := conn.Write(prefix[:]); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return fmt.Errorf("connection still open after 5 s (%d bytes answered)", n)
	}
	return nil
}

// TestB1MalformedFrames: ≥ 100,000 malformed frames to the leader and the
// nameserver. 0 panics, both alive, broker goroutines back to baseline, memory
// bounded.
func TestB1MalformedFrames(t *testing.T) {
	requireChaos(t, fullOnly)
	s := begin(t, "B1", Options{}, defaultWorkload())
	leader := s.leader()
	ctx := context.Background()
	baseG, err := s.c.Goroutines(ctx, leader)
	if err != nil {
		t.Fatalf("baseline goroutines: %v", err)
	}
	baseRSS, nsRSS := s.c.Nodes[leader].Proc.RSSBytes(), s.c.NS.RSSBytes()
	valid := ValidFrames()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	const perWorker = 25_000
	for w, addr := range []string{s.c.Nodes[leader].ClientAddr, s.c.Nodes[leader].ClientAddr, s.c.NSAddr, s.c.NSAddr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := SendMalformed(addr, perWorker, rand.New(rand.NewPCG(uint64(s.rep.Seed), uint64(w))), valid)
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.rep.Faults = fmt.Sprintf("malformed frames %d", total)
	if !s.c.Nodes[leader].Proc.Running() || !s.c.NS.Running() {
		s.rep.Fail("a process died: broker alive %v, nameserver alive %v", s.c.Nodes[leader].Proc.Running(), s.c.NS.Running())
	}
	for _, p := range append([]*Proc{s.c.NS}, s.c.procs()...) {
		if p.LogContains("panic") {
			s.rep.Fail("%s logged a panic", p.Name)
		}
	}
	var g int
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if g, err = s.c.Goroutines(ctx, leader); err == nil && g <= baseG+20 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if g > baseG+20 {
		s.rep.Fail("broker goroutines %d, baseline %d (+20 allowed for the workload)", g, baseG)
	}
	rss, nrss := s.c.Nodes[leader].Proc.RSSBytes(), s.c.NS.RSSBytes()
	s.rep.Note("goroutines %d → %d; broker RSS %d → %d MiB; nameserver RSS %d → %d MiB", baseG, g, baseRSS>>20, rss>>20, nsRSS>>20, nrss>>20)
	if rss > 2*baseRSS+256<<20 || nrss > 2*nsRSS+256<<20 {
		s.rep.Fail("memory grew beyond bound (2× baseline + 256 MiB)")
	}
	s.finish()
}
