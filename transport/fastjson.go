package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Apache's brokers and tools write a map keyed by a bean (Map<MessageQueue,…>
// in TopicStatsTable, ConsumeStats, ResetOffsetBody) with fastjson, which puts
// the bean object itself in the key's place:
//
//	{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:5}}
//
// That is not JSON. fastjson 1 (Java 4.9 to 5.3) also reads a string key
// holding the object, but fastjson2 (the 5.5 remoting client and tools) reads
// only the bare form, so bodies for Java carry it. BareObjectKeys writes it from
// encoding/json output; QuoteObjectKeys reads it back into JSON.

// BareObjectKeys rewrites compact JSON (encoding/json's output) so that each
// object key whose text is itself a JSON object stands bare in the key's place.
// Other keys and all values are left as they are. In compact JSON a string
// followed by ':' is a key; input that is not compact JSON is copied unchanged
// from where it stops making sense.
func BareObjectKeys(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			out = append(out, b[i])
			continue
		}
		end := i + 1
		for ; end < len(b) && b[end] != '"'; end++ {
			if b[end] == '\\' {
				end++
			}
		}
		if end >= len(b) { // an unterminated string: nothing more to rewrite
			return append(out, b[i:]...)
		}
		str := b[i : end+1]
		var key string
		if end+1 < len(b) && b[end+1] == ':' && len(str) > 2 && str[1] == '{' &&
			json.Unmarshal(str, &key) == nil && json.Valid([]byte(key)) {
			out = append(out, key...)
		} else {
			out = append(out, str...)
		}
		i = end
	}
	return out
}

// errFastjson marks text that is neither JSON nor fastjson's bare-key form.
var errFastjson = errors.New("not fastjson text")

// QuoteObjectKeys reads fastjson text, where an object key may be a bare
// object, and returns JSON in which each such key is a string holding that
// object. JSON comes back unchanged (but for spaces between tokens); anything
// else is an error saying where it stopped.
func QuoteObjectKeys(b []byte) ([]byte, error) {
	out, rest, err := fastjsonValue(bytes.TrimSpace(b), 0)
	if err != nil {
		return nil, err
	}
	if rest = bytes.TrimSpace(rest); len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the value", errFastjson, len(rest))
	}
	return out, nil
}

// maxFastjsonDepth bounds the nesting QuoteObjectKeys follows, so that hostile
// input cannot exhaust the stack.
const maxFastjsonDepth = 64

// fastjsonValue converts the value at the start of b and returns what follows.
func fastjsonValue(b []byte, depth int) (out, rest []byte, err error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		dec := json.NewDecoder(bytes.NewReader(b))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errFastjson, err)
		}
		return v, b[dec.InputOffset():], nil
	}
	if depth >= maxFastjsonDepth {
		return nil, nil, fmt.Errorf("%w: nested deeper than %d", errFastjson, maxFastjsonDepth)
	}
	out = []byte{'{'}
	b = bytes.TrimSpace(b[1:])
	for len(b) > 0 && b[0] != '}' {
		var key []byte
		if key, b, err = fastjsonValue(b, depth+1); err != nil {
			return nil, nil, err
		}
		switch key[0] {
		case '{':
			key, _ = json.Marshal(string(key)) // a string: cannot fail
		case '"':
		default:
			return nil, nil, fmt.Errorf("%w: object key %s is neither a string nor an object", errFastjson, key)
		}
		if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != ':' {
			return nil, nil, fmt.Errorf("%w: no ':' after key %s", errFastjson, key)
		}
		var val []byte
		if val, b, err = fastjsonValue(b[1:], depth+1); err != nil {
			return nil, nil, err
		}
		out = append(append(append(out, key...), ':'), val...)
		switch b = bytes.TrimSpace(b); {
		case len(b) > 0 && b[0] == ',':
			out = append(out, ',')
			if b = bytes.TrimSpace(b[1:]); len(b) > 0 && b[0] == '}' {
				return nil, nil, fmt.Errorf("%w: ',' before '}'", errFastjson)
			}
		case len(b) > 0 && b[0] != '}':
			return nil, nil, fmt.Errorf("%w: %q after the value of key %s, want ',' or '}'", errFastjson, b[0], key)
		}
	}
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("%w: object not closed", errFastjson)
	}
	return append(out, '}'), b[1:], nil
}
