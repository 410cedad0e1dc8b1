package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/transport"
)

// Bad values and combinations the broker or a client would refuse or drop are
// refused before anything is sent, with the flag and the rule in the message.
func TestProduceRefusesBadOptions(t *testing.T) {
	ok := ProduceOptions{Namesrv: []string{"127.0.0.1:1"}, Topic: "T", Count: 1}
	for _, c := range []struct {
		name string
		edit func(*ProduceOptions)
		is   error
		says string
	}{
		{"negative rate", func(o *ProduceOptions) { o.Rate = -5 }, ErrBadOption, "--rate=-5"},
		{"delay level 19", func(o *ProduceOptions) { o.DelayLevel = 19 }, ErrBadOption, "--delay-level=19: must be 0 (none) to 18"},
		{"huge property", func(o *ProduceOptions) { o.PropertySize = 40000 }, ErrBadOption, "--property-size=40000"},
		{"delayed batch", func(o *ProduceOptions) { o.Batch, o.DelayLevel = 4, 2 }, ErrBadOption, "refuses delayed batch"},
		{"transactional batch", func(o *ProduceOptions) { o.Batch, o.Transaction = 4, true }, ErrBadOption, "refuses transactional batch"},
		{"delayed transaction", func(o *ProduceOptions) { o.Transaction, o.DelayLevel = true, 3 }, ErrBadOption, "drops DELAY"},
		{"no count, no duration", func(o *ProduceOptions) { o.Count = 0 }, ErrBadOption, "--duration=0s"},
		{"unknown client", func(o *ProduceOptions) { o.Client = "java" }, ErrBadOption, `--client="java"`},
		{"unknown mode", func(o *ProduceOptions) { o.Mode = "burst" }, ErrBadOption, `--mode="burst"`},
		{"go client async", func(o *ProduceOptions) { o.Client, o.Mode = ClientRocketMQGo, ModeAsync }, ErrUnsupported, "--client=rocketmq-go: --mode=async"},
		{"go client rocketmq headers", func(o *ProduceOptions) { o.Client, o.Serialize = ClientRocketMQGo, transport.SerializeRocketMQ }, ErrUnsupported, "--serialize=rocketmq: the official Go client sends JSON"},
		{"unknown serialize type", func(o *ProduceOptions) { o.Serialize = 5 }, ErrBadOption, "--serialize=SerializeType(5): must be json or rocketmq"},
	} {
		o := ok
		c.edit(&o)
		_, err := Produce(context.Background(), o)
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want %v saying %q", c.name, err, c.is, c.says)
		}
	}
}

func TestParseSerialize(t *testing.T) {
	for in, want := range map[string]transport.SerializeType{"json": transport.SerializeJSON, "ROCKETMQ": transport.SerializeRocketMQ} {
		if got, err := ParseSerialize(in); err != nil || got != want {
			t.Fatalf("ParseSerialize(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseSerialize("xml"); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), `--serialize="xml": must be json or rocketmq`) {
		t.Fatalf("xml: %v", err)
	}
}

func TestConsumeRefusesBadOptions(t *testing.T) {
	ok := ConsumeOptions{Namesrv: []string{"127.0.0.1:1"}, Topic: "T", Count: 1, Timeout: time.Second}
	for _, c := range []struct {
		name string
		edit func(*ConsumeOptions)
		says string
	}{
		{"no count, no duration", func(o *ConsumeOptions) { o.Count = 0 }, "--duration=0s: must be above 0 when --count is 0"},
		{"count without timeout", func(o *ConsumeOptions) { o.Timeout = 0 }, "--timeout=0s"},
		{"negative count", func(o *ConsumeOptions) { o.Count = -1 }, "--count=-1"},
		{"batch above the client's range", func(o *ConsumeOptions) { o.Batch = 1025 }, "--batch=1025: must be 1-1024"},
		{"negative batch", func(o *ConsumeOptions) { o.Batch = -1 }, "--batch=-1"},
	} {
		o := ok
		c.edit(&o)
		_, err := Consume(context.Background(), o)
		if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: err = %v, want ErrBadOption saying %q", c.name, err, c.says)
		}
	}
}
