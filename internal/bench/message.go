package bench

import (
	"slices"
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
	keyRandom   bool
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
	return shape{topic: o.Topic, body: body, tag: o.Tag, keyPrefix: o.KeyPrefix, keyRandom: o.KeyRandom, delayLevel: o.DelayLevel,
		pad: strings.Repeat("p", o.PropertySize), transaction: o.Transaction, group: o.Group,
		runID: uint64(now.UnixNano())}
}

// uniqKey is the UNIQ_KEY (client message id) of message n.
func (s shape) uniqKey(n int64) string { return string(s.appendUniqKey(nil, n)) }

// appendUniqKey appends uniqKey(n): 32 upper-case hex digits, without fmt
// (a send's header is built per message, so its cost is the client's).
func (s shape) appendUniqKey(b []byte, n int64) []byte {
	const hex = "0123456789ABCDEF"
	for _, v := range [2]uint64{s.runID, uint64(n)} {
		for shift := 60; shift >= 0; shift -= 4 {
			b = append(b, hex[v>>uint(shift)&0xF])
		}
	}
	return b
}

// appendKey appends message n's KEYS: the prefix and n, or with keyRandom the
// prefix and 16 hex digits mixed from n and the run, so that keys land on hash
// slots all over the IndexFile as business keys such as UUIDs do (prefix+n
// keys hash to neighbouring slots: Java's String.hashCode of "k1000" and
// "k1001" differ by one).
func (s shape) appendKey(b []byte, n int64) []byte {
	b = append(b, s.keyPrefix...)
	if !s.keyRandom {
		return strconv.AppendInt(b, n, 10)
	}
	const hex = "0123456789ABCDEF"
	v := splitmix64(s.runID + uint64(n))
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, hex[v>>uint(shift)&0xF])
	}
	return b
}

// splitmix64 is a bijective 64-bit mixer (Steele, Lea and Flood's SplitMix64
// finaliser): consecutive inputs give unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// encodedProperties is store.EncodeProperties(s.properties(n)) built directly,
// names in the same (sorted) order, without the map and the sort.
func (s shape) encodedProperties(n int64) string {
	b := make([]byte, 0, 96+len(s.pad)+len(s.tag)+len(s.keyPrefix)+len(s.group))
	prop := func(name string, value func([]byte) []byte) {
		b = append(b, name...)
		b = append(b, '\x01')
		b = value(b)
		b = append(b, '\x02')
	}
	str := func(v string) func([]byte) []byte { return func(b []byte) []byte { return append(b, v...) } }
	for _, name := range sortedPropertyNames {
		switch name {
		case PadProperty:
			if s.pad != "" {
				prop(name, str(s.pad))
			}
		case store.PropertyDelayLevel:
			if s.delayLevel > 0 {
				prop(name, func(b []byte) []byte { return strconv.AppendInt(b, int64(s.delayLevel), 10) })
			}
		case store.PropertyKeys:
			if s.keyPrefix != "" {
				prop(name, func(b []byte) []byte { return s.appendKey(b, n) })
			}
		case store.PropertyProducerGroup:
			if s.transaction {
				prop(name, str(s.group))
			}
		case store.PropertyTags:
			if s.tag != "" {
				prop(name, str(s.tag))
			}
		case store.PropertyTransaction:
			if s.transaction {
				prop(name, str("true"))
			}
		case store.PropertyUniqKey:
			prop(name, func(b []byte) []byte { return s.appendUniqKey(b, n) })
		}
	}
	return string(b)
}

// sortedPropertyNames are the names properties can set, in EncodeProperties' order.
var sortedPropertyNames = func() []string {
	names := []string{PadProperty, store.PropertyDelayLevel, store.PropertyKeys, store.PropertyProducerGroup,
		store.PropertyTags, store.PropertyTransaction, store.PropertyUniqKey}
	slices.Sort(names)
	return names
}()

// properties are message n's properties as the native client sends them.
func (s shape) properties(n int64) map[string]string {
	p := map[string]string{store.PropertyUniqKey: s.uniqKey(n)}
	if s.keyPrefix != "" {
		p[store.PropertyKeys] = string(s.appendKey(nil, n))
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
		m.WithKeys([]string{string(s.appendKey(nil, n))})
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
