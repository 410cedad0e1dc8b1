package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketraft/rocketraft/store"
)

// shape is what every message of a produce run carries, built once from the
// options so that a send only adds its numbered parts (key, unique key).
type shape struct {
	topic       string
	body        []byte
	tag         string
	keyPrefix   string
	delayLevel  int
	pad         string
	transaction bool
	group       string
	// runID makes UNIQ_KEY unique across runs: message n of a run is
	// runID followed by n, 32 hex digits like the clients' message ids.
	runID uint64
}

func newShape(o ProduceOptions, now time.Time) shape {
	body := make([]byte, o.MessageSize)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	return shape{topic: o.Topic, body: body, tag: o.Tag, keyPrefix: o.KeyPrefix, delayLevel: o.DelayLevel,
		pad: strings.Repeat("p", o.PropertySize), transaction: o.Transaction, group: o.Group,
		runID: uint64(now.UnixNano())}
}

// uniqKey is the UNIQ_KEY (client message id) of message n.
func (s shape) uniqKey(n int64) string { return fmt.Sprintf("%016X%016X", s.runID, uint64(n)) }

// properties are message n's properties as the native client sends them.
func (s shape) properties(n int64) map[string]string {
	p := map[string]string{store.PropertyUniqKey: s.uniqKey(n)}
	if s.keyPrefix != "" {
		p[store.PropertyKeys] = s.keyPrefix + strconv.FormatInt(n, 10)
	}
	if s.tag != "" {
		p[store.PropertyTags] = s.tag
	}
	if s.delayLevel > 0 {
		p[store.PropertyDelayLevel] = strconv.Itoa(s.delayLevel)
	}
	if s.pad != "" {
		p[PadProperty] = s.pad
	}
	if s.transaction {
		p[store.PropertyTransaction] = "true"
		p[store.PropertyProducerGroup] = s.group
	}
	return p
}

// goMessage is message n for the rocketmq-go client, which adds UNIQ_KEY
// itself and, in a TransactionProducer, the transaction properties.
func (s shape) goMessage(n int64) *primitive.Message {
	m := primitive.NewMessage(s.topic, s.body)
	if s.keyPrefix != "" {
		m.WithKeys([]string{s.keyPrefix + strconv.FormatInt(n, 10)})
	}
	if s.tag != "" {
		m.WithTag(s.tag)
	}
	if s.delayLevel > 0 {
		m.WithDelayTimeLevel(s.delayLevel)
	}
	if s.pad != "" {
		m.WithProperty(PadProperty, s.pad)
	}
	return m
}
