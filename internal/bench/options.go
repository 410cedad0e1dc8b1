package bench

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rocketraft/rocketraft/transport"
	"github.com/rocketraft/rocketraft/transport/sign"
)

// Client selects the producer implementation.
type Client string

const (
	// ClientNative is the project's own client: remoting requests over
	// transport.Client, routed through the nameserver, with no client-side
	// retries or rebalancing. It measures the brokers more than a client.
	ClientNative Client = "native"
	// ClientRocketMQGo is the official github.com/apache/rocketmq-client-go/v2.
	ClientRocketMQGo Client = "rocketmq-go"
)

// Mode selects how each producer issues sends.
type Mode string

const (
	ModeSync  Mode = "sync"  // one send at a time per producer
	ModeAsync Mode = "async" // up to Window sends in flight per producer
)

// Errors of a run that never started. Each is wrapped with the flag, its value
// and the rule, e.g. "bench: bad option: --rate=-5: must be at least 0".
var (
	// ErrBadOption: a value out of range or a combination the broker refuses.
	ErrBadOption = errors.New("bench: bad option")
	// ErrUnsupported: the chosen client cannot do what was asked. The run is
	// refused rather than run without it.
	ErrUnsupported = errors.New("bench: not supported by this client")
	// ErrTLSVerifyUnsupported: the rocketmq-go client was asked to verify the
	// server's certificate, which it cannot do (it dials with InsecureSkipVerify).
	ErrTLSVerifyUnsupported = errors.New("bench: the rocketmq-go client cannot verify the server certificate")
	// ErrTLSClientCertUnsupported: the rocketmq-go client was given a client
	// certificate, which it has no setting to present.
	ErrTLSClientCertUnsupported = errors.New("bench: the rocketmq-go client cannot present a client certificate")
)

// Limits the options are checked against.
const (
	// maxDelayLevel is the highest level of broker.conf's default
	// messageDelayLevel (18 levels, 1s … 2h). A broker configured with fewer
	// clamps a higher level to its last one.
	maxDelayLevel = 18
	// maxPropertySize keeps the padding property inside the 16-bit length of a
	// message's properties (RocketMQ refuses 32767 bytes and more), with room
	// left for KEYS, TAGS, UNIQ_KEY and the transaction properties.
	maxPropertySize = 32000
)

// ProduceOptions configures a producer load.
type ProduceOptions struct {
	Namesrv     []string
	Topic       string
	Group       string
	Producers   int           // concurrent senders
	Count       int           // total messages; 0 = run for Duration
	Duration    time.Duration // used when Count is 0
	MessageSize int
	Batch       int // messages per send (1 = single sends)
	Client      Client
	Mode        Mode
	Window      int // sends in flight per producer in ModeAsync
	// Serialize is the header encoding of the native client's sends (JSON or
	// ROCKETMQ, which Apache's servers and this broker answer in kind). The
	// official Go client always speaks JSON.
	Serialize transport.SerializeType
	// Rate, when above 0, runs open loop: message n of the run is due at
	// start + n/Rate, whether or not earlier sends have come back, and its
	// latency is measured from that due time (coordinated-omission correction).
	// 0 runs closed loop: each producer sends as soon as its last send returned.
	Rate float64
	// Tag sets each message's TAGS; "" sends none.
	Tag string
	// KeyPrefix, when set, gives message n the key KeyPrefix+n (KEYS, indexed
	// by the broker's IndexFile); "" sends no keys.
	KeyPrefix string
	// KeyRandom makes the part after KeyPrefix 16 hex digits mixed from n
	// instead of n, spreading the keys over the IndexFile's hash slots.
	KeyRandom bool
	// DelayLevel, 1..18, stores every message as delayed (DELAY); 0 = none.
	DelayLevel int
	// PropertySize adds a user property of this many bytes to every message
	// (its name is PadProperty), to measure large headers.
	PropertySize int
	// Transaction sends every message as a transactional half message and then
	// commits it (END_TRANSACTION), so a send is two round trips.
	Transaction bool
	// Credentials sign every send (brokers with aclEnable=true); zero: unsigned.
	Credentials sign.Credentials
	// TLS, when set, dials the nameservers and brokers over TLS (clusters with
	// tlsMode=enforcing); transport.ClientTLS builds it. The native client uses
	// it as given. ClientRocketMQGo can only be told "TLS on" and never verifies
	// the server, so it refuses a config that asks to (see goClientTLS).
	TLS *tls.Config
	// Out gets the live line each second and the final summary; CSV and JSON,
	// when set, the same numbers as CSV rows and JSON lines (see Sinks).
	Out       io.Writer
	CSV, JSON io.Writer
}

// ParseSerialize reads --serialize: json or rocketmq (either case).
func ParseSerialize(v string) (transport.SerializeType, error) {
	switch strings.ToLower(v) {
	case "json":
		return transport.SerializeJSON, nil
	case "rocketmq":
		return transport.SerializeRocketMQ, nil
	}
	return 0, fmt.Errorf("%w: --serialize=%q: must be json or rocketmq", ErrBadOption, v)
}

// PadProperty is the user property that ProduceOptions.PropertySize fills.
const PadProperty = "BENCH_PAD"

// withDefaults fills what a zero value leaves open.
func (o ProduceOptions) withDefaults() ProduceOptions {
	if o.Producers <= 0 {
		o.Producers = 1
	}
	if o.Batch <= 0 {
		o.Batch = 1
	}
	if o.Group == "" {
		o.Group = "rocketraft_bench_producer"
	}
	if o.Client == "" {
		o.Client = ClientNative
	}
	if o.Mode == "" {
		o.Mode = ModeSync
	}
	if o.Window <= 0 {
		o.Window = 1
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return o
}

// validate refuses values out of range and combinations that the broker or
// the client would refuse or silently drop, naming the flag and the rule.
func (o ProduceOptions) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
	}
	unsupported := func(format string, args ...any) error {
		return fmt.Errorf("%w: --client=%s: "+format, append([]any{ErrUnsupported, o.Client}, args...)...)
	}
	switch {
	case o.Topic == "":
		return bad("--topic is empty")
	case len(o.Namesrv) == 0 || o.Namesrv[0] == "":
		return bad("--namesrv is empty")
	case o.Client != ClientNative && o.Client != ClientRocketMQGo:
		return bad("--client=%q: must be native or rocketmq-go", o.Client)
	case o.Mode != ModeSync && o.Mode != ModeAsync:
		return bad("--mode=%q: must be sync or async", o.Mode)
	case o.Count < 0:
		return bad("--count=%d: must be at least 0", o.Count)
	case o.Count == 0 && o.Duration <= 0:
		return bad("--duration=%s: must be above 0 when --count is 0", o.Duration)
	case o.MessageSize < 0:
		return bad("--size=%d: must be at least 0", o.MessageSize)
	case o.Rate < 0:
		return bad("--rate=%g: must be at least 0 (0 = closed loop)", o.Rate)
	case o.DelayLevel < 0 || o.DelayLevel > maxDelayLevel:
		return bad("--delay-level=%d: must be 0 (none) to %d", o.DelayLevel, maxDelayLevel)
	case o.PropertySize < 0 || o.PropertySize > maxPropertySize:
		return bad("--property-size=%d: must be 0 to %d", o.PropertySize, maxPropertySize)
	case o.Batch > 1 && o.DelayLevel > 0:
		return bad("--batch=%d with --delay-level=%d: the broker refuses delayed batch messages", o.Batch, o.DelayLevel)
	case o.Batch > 1 && o.Transaction:
		return bad("--batch=%d with --transaction: the broker refuses transactional batch messages", o.Batch)
	case o.Transaction && o.DelayLevel > 0:
		return bad("--transaction with --delay-level=%d: the broker drops DELAY from transactional messages", o.DelayLevel)
	case o.Client == ClientRocketMQGo && o.Mode == ModeAsync:
		return unsupported("--mode=async is implemented for --client=native only")
	case o.Serialize != transport.SerializeJSON && o.Serialize != transport.SerializeRocketMQ:
		return bad("--serialize=%s: must be json or rocketmq", o.Serialize)
	case o.Client == ClientRocketMQGo && o.Serialize != transport.SerializeJSON:
		return unsupported("--serialize=rocketmq: the official Go client sends JSON headers")
	}
	return nil
}

// ConsumeOptions configures a consumer run (the rocketmq-go push consumer).
type ConsumeOptions struct {
	Namesrv []string
	Topic   string
	Group   string
	// Tag, when set, subscribes with this tag expression ("a || b"); "" takes
	// every message.
	Tag string
	// Batch is the client's ConsumeMessageBatchMaxSize: the most messages of one
	// pull handed to one listener call. The client starts a goroutine per call,
	// so 1 (its default) costs a goroutine per message. 0 means 1.
	Batch int
	// Count stops the run after this many messages, failing it if Timeout
	// passes first; 0 runs for Duration and counts what arrived.
	Count    int
	Duration time.Duration
	Timeout  time.Duration
	// Credentials sign every request (brokers with aclEnable=true).
	Credentials sign.Credentials
	// TLS, when set, dials over TLS. The consumer is the rocketmq-go client,
	// which cannot verify the server: a cfg that verifies is refused
	// (ErrTLSVerifyUnsupported; see goClientTLS).
	TLS       *tls.Config
	Out       io.Writer
	CSV, JSON io.Writer
}

func (o ConsumeOptions) withDefaults() ConsumeOptions {
	if o.Group == "" {
		o.Group = "rocketraft_bench_consumer"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Batch == 0 {
		o.Batch = 1
	}
	return o
}

func (o ConsumeOptions) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadOption}, args...)...)
	}
	switch {
	case o.Topic == "":
		return bad("--topic is empty")
	case len(o.Namesrv) == 0 || o.Namesrv[0] == "":
		return bad("--namesrv is empty")
	case o.Count < 0:
		return bad("--count=%d: must be at least 0", o.Count)
	case o.Batch < 1 || o.Batch > 1024:
		return bad("--batch=%d: must be 1-1024 (the client's ConsumeMessageBatchMaxSize range)", o.Batch)
	case o.Count == 0 && o.Duration <= 0:
		return bad("--duration=%s: must be above 0 when --count is 0", o.Duration)
	case o.Count > 0 && o.Timeout <= 0:
		return bad("--timeout=%s: must be above 0 when --count is set", o.Timeout)
	}
	return nil
}

// goClientTLS says whether the rocketmq-go client should dial TLS for cfg, and
// refuses a cfg that verifies the server: running unverified when the caller
// asked for verification would be a silent downgrade.
//
// The Go client's WithTls writes remote.DefaultRemotingClientConfig, one
// process-wide struct every producer and consumer of the process shares, so
// Produce and Consume always pass it explicitly, and two runs in one process
// with different TLS settings must not overlap.
func goClientTLS(cfg *tls.Config) (bool, error) {
	if cfg == nil {
		return false, nil
	}
	if !cfg.InsecureSkipVerify {
		return false, fmt.Errorf("%w: drop --tls-ca, or use --client native (producer only)", ErrTLSVerifyUnsupported)
	}
	if cfg.GetClientCertificate != nil || len(cfg.Certificates) > 0 {
		return false, fmt.Errorf("%w: drop --tls-cert/--tls-key, or use --client native (producer only)", ErrTLSClientCertUnsupported)
	}
	return true, nil
}
