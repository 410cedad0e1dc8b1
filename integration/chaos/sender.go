package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketraft/rocketraft/transport/sign"

	"github.com/rocketraft/rocketraft/store"
	"github.com/rocketraft/rocketraft/transport"
)

// refusalCodes are answers by which the broker says it did not apply a send.
// SYSTEM_ERROR (1) is not among them: the broker also uses it for "outcome unknown".
var refusalCodes = map[transport.ResponseCode]bool{
	transport.SystemBusy:          true,
	transport.MessageIllegal:      true,
	transport.ServiceNotAvailable: true,
	transport.NoPermission:        true,
	transport.TopicNotExist:       true,
	transport.InvalidParameter:    true,
}

// classifyCode maps a non-success send answer to an Outcome.
func classifyCode(code transport.ResponseCode) Outcome {
	if refusalCodes[code] {
		return Fail
	}
	return Unknown
}

// classifyGoClientErr maps a rocketmq-client-go send error to an Outcome: a broker
// answer ("CODE: n, DESC: …") by its code, a missing route as Fail (nothing was
// sent), everything else (timeouts, broken connections) as Unknown.
func classifyGoClientErr(err error) Outcome {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "CODE: "); ok {
		if i := strings.IndexByte(rest, ','); i > 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(rest[:i])); err == nil {
				return classifyCode(transport.ResponseCode(n))
			}
		}
	}
	if strings.Contains(msg, "route info not found") {
		return Fail
	}
	return Unknown
}

// RawSender sends SEND_MESSAGE with the project's transport client to the node the
// nameserver lists as brokerId 0, and asks the nameserver again after any failure:
// a producer that re-resolves the leader at once, unlike the Go client's 30 s
// route refresh, so failover figures measure the broker rather than the client.
type RawSender struct {
	Name string
	// Creds, when set, sign this sender's sends instead of the cluster's
	// credentials (a client account of an ACL scenario).
	Creds *sign.Credentials
	// Pin, when set, is the only address this sender sends to: a client that
	// keeps writing to one node whatever the nameserver says (the stale-leader
	// scenario's client of the isolated leader).
	Pin     string
	c       *Cluster
	tc      *transport.Client
	timeout time.Duration

	mu     sync.Mutex
	leader string
}

// NewRawSender returns a sender with its own connections.
func NewRawSender(name string, c *Cluster, timeout time.Duration) *RawSender {
	return &RawSender{Name: name, c: c, tc: transport.NewClient(transport.ClientConfig{DialTimeout: 500 * time.Millisecond}), timeout: timeout}
}

// Close closes the sender's connections.
func (s *RawSender) Close() error { return s.tc.Close() }

func (s *RawSender) target(ctx context.Context) (string, error) {
	if s.Pin != "" {
		return s.Pin, nil
	}
	s.mu.Lock()
	addr := s.leader
	s.mu.Unlock()
	if addr != "" {
		return addr, nil
	}
	addrs, err := s.c.BrokerAddrs(ctx)
	if err != nil {
		return "", err
	}
	if addrs[0] == "" {
		return "", fmt.Errorf("%w: brokerAddrs %v", ErrNoLeader, addrs)
	}
	s.mu.Lock()
	s.leader = addrs[0]
	s.mu.Unlock()
	return addrs[0], nil
}

func (s *RawSender) forget() {
	s.mu.Lock()
	s.leader = ""
	s.mu.Unlock()
}

// Send sends one message with body id to q and returns the recorded attempt.
func (s *RawSender) Send(ctx context.Context, q QueueKey, id string, attempt int) SendOp {
	op := SendOp{Client: s.Name, ID: id, Attempt: attempt, Queue: q, Offset: -1, Call: time.Now()}
	addr, err := s.target(ctx)
	if err != nil {
		op.Outcome, op.Err, op.Return = Fail, err.Error(), time.Now()
		return op
	}
	op.Addr = addr
	resp, err := s.send(ctx, addr, q, id, nil)
	op.Return = time.Now()
	switch {
	case err != nil:
		op.Outcome, op.Err = Unknown, err.Error()
	case resp.ResponseCode() == transport.Success:
		op.Outcome = OK
		op.BrokerMsgID = resp.Field("msgId")
		op.Offset, err = strconv.ParseInt(resp.Field("queueOffset"), 10, 64)
		if err != nil || resp.Field("queueId") != strconv.Itoa(int(q.QueueID)) {
			op.Outcome, op.Offset = Unknown, -1
			op.Err = fmt.Sprintf("bad ack %v", resp.Fields())
		}
	default:
		op.Outcome = classifyCode(resp.ResponseCode())
		op.Err = fmt.Sprintf("%s %s", resp.ResponseCode(), resp.Remark)
	}
	if op.Outcome != OK {
		s.forget()
	}
	return op
}

// send issues one SEND_MESSAGE; extra overrides header fields (bad-input tests).
func (s *RawSender) send(ctx context.Context, addr string, q QueueKey, body string, extra map[string]string) (*transport.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ext := map[string]string{
		"producerGroup":         "chaos-raw-" + s.Name,
		"topic":                 q.Topic,
		"defaultTopic":          "TBW102",
		"defaultTopicQueueNums": "4",
		"queueId":               strconv.Itoa(int(q.QueueID)),
		"sysFlag":               "0",
		"bornTimestamp":         strconv.FormatInt(time.Now().UnixMilli(), 10),
		"flag":                  "0",
		"properties":            "KEYS\x01" + body + "\x02",
		"reconsumeTimes":        "0",
		"unitMode":              "false",
		"batch":                 "false",
	}
	for k, v := range extra {
		ext[k] = v
	}
	signed := s.c.Sign(ext, []byte(body))
	if s.Creds != nil {
		signed = s.Creds.SignExt(ext, []byte(body))
	}
	return s.tc.Invoke(ctx, addr, transport.NewRequest(transport.SendMessage, signed, []byte(body)))
}

// ErrPull is returned when a pull answer cannot be used.
var ErrPull = errors.New("pull failed")

// Pull reads up to 32 messages of q from offset at addr with an in-band
// subscription "*". It returns the (offset, body) pairs and the next offset.
func Pull(ctx context.Context, c *Cluster, tc *transport.Client, addr string, q QueueKey, offset int64) ([]int64, []string, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ext := map[string]string{
		"consumerGroup":        "chaos-reader",
		"topic":                q.Topic,
		"queueId":              strconv.Itoa(int(q.QueueID)),
		"queueOffset":          strconv.FormatInt(offset, 10),
		"maxMsgNums":           "32",
		"sysFlag":              "4", // subscription in the request, no commit, no suspend
		"commitOffset":         "0",
		"suspendTimeoutMillis": "0",
		"subscription":         "*",
		"subVersion":           "0",
		"expressionType":       "TAG",
	}
	resp, err := tc.Invoke(ctx, addr, transport.NewRequest(transport.PullMessage, c.Sign(ext, nil), nil))
	if err != nil {
		return nil, nil, offset, err
	}
	next := offset
	if v, ok := resp.LookupField("nextBeginOffset"); ok {
		next, _ = strconv.ParseInt(v, 10, 64)
	}
	switch resp.ResponseCode() {
	case transport.Success:
	case transport.PullNotFound, transport.PullRetryImmediately:
		return nil, nil, offset, nil
	default:
		return nil, nil, offset, fmt.Errorf("%w: %s %s (next %d)", ErrPull, resp.ResponseCode(), resp.Remark, next)
	}
	var offs []int64
	var ids []string
	b := resp.Body
	for len(b) > 0 {
		size, _, err := store.RecordSize(b)
		if err != nil || int(size) > len(b) || size <= 0 {
			return nil, nil, offset, fmt.Errorf("%w: record size at body byte %d: %v", ErrPull, len(resp.Body)-len(b), err)
		}
		m, err := store.DecodeMessage(b[:size], true)
		if err != nil {
			return nil, nil, offset, fmt.Errorf("%w: decode: %w", ErrPull, err)
		}
		offs = append(offs, int64(m.QueueOffset))
		ids = append(ids, string(m.Body))
		b = b[size:]
	}
	return offs, ids, next, nil
}
