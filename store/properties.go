package store

import (
	"iter"
	"sort"
	"strings"
	"unicode/utf16"
)

// Property names with a meaning to the store (rocketmq-protocol.md §4.3).
const (
	PropertyUniqKey        = "UNIQ_KEY"
	PropertyTags           = "TAGS"
	PropertyKeys           = "KEYS"
	PropertyDelayLevel     = "DELAY"
	PropertyTimerDeliverMS = "TIMER_DELIVER_MS"
	PropertyRealTopic      = "REAL_TOPIC"
	PropertyRealQueueID    = "REAL_QID"
	PropertyTransaction    = "TRAN_MSG"
	PropertyProducerGroup  = "PGROUP"
	PropertyRetryTopic     = "RETRY_TOPIC"
	PropertyOriginMsgID    = "ORIGIN_MESSAGE_ID"
)

const (
	nameValueSeparator = '\x01'
	propertySeparator  = '\x02'
)

// EncodeProperties encodes a property map as name 0x01 value 0x02, repeated, in sorted
// name order so that the same map always gives the same bytes (determinism).
func EncodeProperties(props map[string]string) string {
	if len(props) == 0 {
		return ""
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		sb.WriteString(k)
		sb.WriteByte(nameValueSeparator)
		sb.WriteString(props[k])
		sb.WriteByte(propertySeparator)
	}
	return sb.String()
}

// ParseProperties decodes an encoded property string. Items without exactly one
// separator are skipped, as the Go client does.
func ParseProperties(s string) map[string]string {
	props := make(map[string]string)
	for name, value := range PropertyPairs(s) {
		if strings.IndexByte(value, nameValueSeparator) < 0 {
			props[name] = value
		}
	}
	return props
}

// Property returns the value of one property without building a map; the hot paths
// (dispatch, tag filtering) use it.
func Property(props, name string) (string, bool) {
	for len(props) > 0 {
		var item string
		item, props, _ = strings.Cut(props, string(propertySeparator))
		if len(item) > len(name) && item[len(name)] == nameValueSeparator && item[:len(name)] == name {
			return item[len(name)+1:], true
		}
	}
	return "", false
}

// PropertyPairs yields the name and value of each property in order, without
// building a map. The name ends at an item's first name/value separator and
// the value is the rest, as Property reads it; an item without a separator is
// skipped. (ParseProperties also skips an item whose value holds a second
// separator.)
func PropertyPairs(props string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for len(props) > 0 {
			var item string
			item, props, _ = strings.Cut(props, string(propertySeparator))
			name, value, ok := strings.Cut(item, string(nameValueSeparator))
			if ok && !yield(name, value) {
				return
			}
		}
	}
}

// TagsCode is the value stored in a ConsumeQueue entry's tag field: Java's
// String.hashCode of the tag (over UTF-16 code units), sign-extended to 64 bits.
// An empty tag has code 0.
func TagsCode(tag string) int64 {
	var h int32
	for _, r := range tag {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		r1, r2 := utf16.EncodeRune(r)
		h = 31*h + int32(r1)
		h = 31*h + int32(r2)
	}
	return int64(h)
}

// Keys splits the KEYS property (space-separated) into its keys.
func Keys(props string) []string {
	v, ok := Property(props, PropertyKeys)
	if !ok {
		return nil
	}
	return strings.Fields(v)
}
