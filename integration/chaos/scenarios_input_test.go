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

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/transport"
)

// TestB2InvalidInput: each oversize or invalid request gets its specific answer,
// an oversize frame is cut before the server reads it, and the processes live on.
func TestB2InvalidInput(t *testing.T) {
	requireChaos(t, inShort)
	runB2(t, "B2", Options{}, nil)
}

// b2ACL: the harness signs as an admin; a client account may publish only to
// AclClientTopic.
const b2ACL = `
accounts:
  - accessKey: chaosAdmin
    secretKey: chaos-admin-secret
    admin: true
  - accessKey: chaosClient
    secretKey: chaos-client-secret
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms: [AclClientTopic=PUB|SUB]
`

// TestB2InvalidInputWithACL is B2 with aclEnable=true on every node: the same bad
// input, signed, gets the same answers; unsigned, badly signed, denied-topic and
// non-admin requests get NO_PERMISSION and store nothing; the processes live on.
func TestB2InvalidInputWithACL(t *testing.T) {
	requireChaos(t, inShort)
	admin := sign.Credentials{AccessKey: "chaosAdmin", SecretKey: "chaos-admin-secret"}
	client := sign.Credentials{AccessKey: "chaosClient", SecretKey: "chaos-client-secret"}
	runB2(t, "B2ACL", Options{ACL: b2ACL, Credentials: admin}, func(s *scenario, addr string) int {
		ctx := context.Background()
		send := func(creds sign.Credentials, topic string, mutate func(map[string]string)) (*transport.Command, error) {
			ext := map[string]string{"producerGroup": "chaos-acl", "topic": topic, "defaultTopic": "TBW102",
				"defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0", "bornTimestamp": "1", "flag": "0",
				"properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}
			body := []byte("acl")
			ext = creds.SignExt(ext, body)
			if mutate != nil {
				mutate(ext)
			}
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return s.c.TC.Invoke(rctx, addr, transport.NewRequest(transport.SendMessage, ext, body))
		}
		cases := []struct {
			name string
			do   func() (*transport.Command, error)
		}{
			{"unsigned send", func() (*transport.Command, error) { return send(sign.Credentials{}, "AclClientTopic", nil) }},
			{"wrong secret", func() (*transport.Command, error) {
				return send(sign.Credentials{AccessKey: "chaosClient", SecretKey: "not-the-secret"}, "AclClientTopic", nil)
			}},
			{"tampered after signing", func() (*transport.Command, error) {
				return send(client, "AclClientTopic", func(ext map[string]string) { ext["queueId"] = "1" })
			}},
			{"denied topic", func() (*transport.Command, error) { return send(client, "ChaosB2Other", nil) }},
			{"non-admin creates a topic", func() (*transport.Command, error) {
				rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				return s.c.TC.Invoke(rctx, addr, transport.NewRequest(transport.UpdateAndCreateTopic,
					client.SignExt(map[string]string{"topic": "ChaosB2Evil", "readQueueNums": "4", "writeQueueNums": "4"}, nil), nil))
			}},
		}
		for _, tc := range cases {
			resp, err := tc.do()
			switch {
			case err != nil:
				s.rep.Fail("%s: transport error %v, want NO_PERMISSION", tc.name, err)
			case resp.ResponseCode() != transport.NoPermission:
				s.rep.Fail("%s: answered %s %q, want NO_PERMISSION", tc.name, resp.ResponseCode(), resp.Remark)
			case strings.Contains(resp.Remark, client.SecretKey) || strings.Contains(resp.Remark, admin.SecretKey):
				s.rep.Fail("%s: remark leaks a secret: %q", tc.name, resp.Remark)
			default:
				s.rep.Note("%s → %s (%s)", tc.name, resp.ResponseCode(), resp.Remark)
			}
		}
		// The client account's allowed send is acknowledged (and recorded, so the
		// checker accounts for it); none of the refused ones may have stored
		// anything (the checker would report it as a phantom).
		cs := NewRawSender("b2client", s.c, 10*time.Second)
		defer cs.Close()
		cs.Creds = &client
		op := cs.Send(ctx, QueueKey{"AclClientTopic", 0}, "client-ok", 0)
		s.h.AddSend(op)
		if op.Outcome != OK {
			s.rep.Fail("the client account's allowed send: %s", op.Err)
		}
		return len(cases)
	})
}

// runB2 runs the bad-input scenario on a cluster started with opts; more, when
// set, adds checks of its own and returns how many bad requests it sent.
func runB2(t *testing.T, id string, opts Options, more func(s *scenario, addr string) int) {
	t.Helper()
	s := begin(t, id, opts, nil)
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
	s.fault()
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
		resp, err := s.c.TC.Invoke(rctx, target.addr, transport.NewRequest(transport.RequestCode(9999), s.c.Sign(nil, nil), nil))
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
	bad := len(cases) + 4
	if more != nil {
		bad += more(s, addr)
	}
	s.healed()
	sleep(2 * time.Second) // the load's throughput after the bad input
	s.rep.Faults = fmt.Sprintf("bad requests %d", bad)
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
	s.fault()
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
	s.healed()
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
	sleep(2 * time.Second) // the load's throughput after the frames
	s.finish()
}
