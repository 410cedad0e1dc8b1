package transport

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
)

// goSendV2Header is the JSON header rocketmq-client-go sends for a
// SEND_MESSAGE_V2 (key order and escapes as it writes them).
const goSendV2Header = `{"code":310,"language":"GO","version":317,"opaque":7,"flag":0,"remark":"",` +
	`"extFields":{"a":"BenchGroup","b":"BenchTopic","c":"TBW102","d":"4","e":"1","f":"0","g":"1764000000000",` +
	`"h":"0","i":"UNIQ_KEY\u00017F00000100002A9F2B6A5D8E00000001\u0002WAIT\u0001true\u0002","j":"0","k":"false",` +
	`"l":"0","m":"false","n":"broker-a"}}`

// TestDecodedFieldsReadAsPairs: a decoded command keeps its extFields as
// pairs, in arrival order, and every reader (Field, LookupField, FieldCount,
// FieldPairs, Fields) sees the same fields; Fields gives the caller a map of
// its own.
func TestDecodedFieldsReadAsPairs(t *testing.T) {
	cmd, err := DecodeHeader(SerializeJSON, []byte(goSendV2Header))
	if err != nil {
		t.Fatal(err)
	}
	if cmd.ExtFields != nil {
		t.Fatalf("decoded into a map: %v", cmd.ExtFields)
	}
	want := map[string]string{"a": "BenchGroup", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "1", "f": "0",
		"g": "1764000000000", "h": "0", "i": "UNIQ_KEY\x017F00000100002A9F2B6A5D8E00000001\x02WAIT\x01true\x02",
		"j": "0", "k": "false", "l": "0", "m": "false", "n": "broker-a"}
	if got := cmd.Fields(); !maps.Equal(got, want) {
		t.Fatalf("Fields = %q", got)
	}
	if cmd.FieldCount() != len(want) {
		t.Fatalf("FieldCount = %d", cmd.FieldCount())
	}
	var order []string
	for _, f := range cmd.FieldPairs() {
		order = append(order, f.Key)
		if want[f.Key] != f.Value {
			t.Fatalf("pair %q=%q", f.Key, f.Value)
		}
	}
	if strings.Join(order, "") != "abcdefghijklmn" {
		t.Fatalf("pairs out of arrival order: %v", order)
	}
	if v, ok := cmd.LookupField("i"); !ok || v != want["i"] {
		t.Fatalf("LookupField(i) = %q, %v", v, ok)
	}
	if v, ok := cmd.LookupField("topic"); ok || v != "" || cmd.Field("topic") != "" {
		t.Fatal("an absent key was found")
	}
	m := cmd.Fields()
	m["b"] = "changed"
	if cmd.Field("b") != "BenchTopic" {
		t.Fatal("changing the map Fields returned changed the command")
	}
	// ExtFields, once set, is the command's extFields.
	cmd.ExtFields = map[string]string{"x": "1"}
	if cmd.Field("b") != "" || cmd.Field("x") != "1" || cmd.FieldCount() != 1 || len(cmd.FieldPairs()) != 1 {
		t.Fatalf("ExtFields set, yet the pairs are read: %v", cmd.FieldPairs())
	}
}

// TestDecodedFieldsAbsentEmptyAndMany: no extFields (or null) decodes to no
// fields at all (Fields is nil, as the lenient decoder's map), {} to an empty
// map, and more fields than the inline room still decode, in both encodings.
func TestDecodedFieldsAbsentEmptyAndMany(t *testing.T) {
	for _, h := range []string{`{"code":0}`, `{"code":0,"extFields":null}`} {
		cmd, err := DecodeHeader(SerializeJSON, []byte(h))
		if err != nil || cmd.Fields() != nil || cmd.FieldCount() != 0 {
			t.Fatalf("%s: %v %v", h, cmd, err)
		}
	}
	cmd, err := DecodeHeader(SerializeJSON, []byte(`{"code":0,"extFields":{}}`))
	if err != nil || cmd.Fields() == nil || len(cmd.Fields()) != 0 {
		t.Fatalf("{}: %v %v", cmd, err)
	}
	if cmd, err := DecodeHeader(SerializeRocketMQ, binaryHeader(0, 0, 0, 0, 0, "", nil)); err != nil || cmd.Fields() != nil {
		t.Fatalf("binary, no fields: %v %v", cmd, err)
	}
	many := map[string]string{}
	var kv [][2]string
	for i := range 3 * inlinePairs {
		k, v := fmt.Sprintf("key%02d", i), fmt.Sprint(i)
		many[k] = v
		kv = append(kv, [2]string{k, v})
	}
	frame, err := AppendFrame(nil, &Command{Code: 10, ExtFields: many})
	if err != nil {
		t.Fatal(err)
	}
	jsonCmd, err := DecodeHeader(SerializeJSON, frame[framePrefixSize:])
	if err != nil {
		t.Fatal(err)
	}
	binCmd, err := DecodeHeader(SerializeRocketMQ, binaryHeader(10, 0, 0, 0, 0, "", kv))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Command{"JSON": jsonCmd, "ROCKETMQ": binCmd} {
		if !maps.Equal(c.Fields(), many) || c.Field("key47") != "47" {
			t.Fatalf("%s: %d fields, key47=%q", name, c.FieldCount(), c.Field("key47"))
		}
	}
}

// TestJSONRepeatedKeyFallsBack: a repeated extFields key (a null's too) is
// not the fast path's: the lenient decoder, the authority, decides it.
func TestJSONRepeatedKeyFallsBack(t *testing.T) {
	for _, h := range []string{
		`{"code":0,"extFields":{"a":"1","b":"2","a":"3"}}`,
		`{"code":0,"extFields":{"a":null,"a":"3"}}`,
		`{"code":0,"extFields":{"a":"1","a":null}}`,
	} {
		if _, ok := fastDecodeJSONHeader([]byte(h)); ok {
			t.Errorf("fast path took %s", h)
		}
		checkJSONDecodersAgree(t, []byte(h))
	}
	// Keys that share a keySet bit are still told apart.
	var keys []string
	for a := 'a'; a <= 'z' && len(keys) < 2; a++ {
		for b := 'a'; b <= 'z' && len(keys) < 2; b++ {
			if k := string([]rune{a, 'x', b}); keyBit(k) == keyBit("axa") {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) < 2 {
		t.Fatal("no two keys share a bit")
	}
	h := fmt.Sprintf(`{"code":0,"extFields":{%q:"1",%q:"2"}}`, keys[0], keys[1])
	cmd, ok := fastDecodeJSONHeader([]byte(h))
	if !ok || cmd.Field(keys[0]) != "1" || cmd.Field(keys[1]) != "2" {
		t.Fatalf("%s: ok=%v %v", h, ok, cmd)
	}
}

// binaryExtReference decodes a ROCKETMQ ext table into a map by the rules of
// decodeBinaryExt (empty key or value: absent; a repeat keeps the last value;
// a null after a value removes it), the way the decoder did before it kept
// pairs. ok is false for a table the decoder must refuse.
func binaryExtReference(p []byte) (map[string]string, bool) {
	if len(p) == 0 {
		return nil, true
	}
	be := binary.BigEndian
	m := map[string]string{}
	for len(p) > 0 {
		if len(p) < 2 {
			return nil, false
		}
		kl := int(int16(be.Uint16(p)))
		p = p[2:]
		if kl < 0 || kl > len(p) {
			return nil, false
		}
		k := string(p[:kl])
		p = p[kl:]
		if len(p) < 4 {
			return nil, false
		}
		vl := int64(int32(be.Uint32(p)))
		p = p[4:]
		if vl < 0 || vl > int64(len(p)) {
			return nil, false
		}
		if kl > 0 && vl > 0 {
			m[k] = string(p[:vl])
		} else {
			delete(m, k)
		}
		p = p[vl:]
	}
	return m, true
}

// checkBinaryExtAgrees holds a decoded ROCKETMQ header's fields to the map
// reference, and the fields to each other: no key twice, Field finds each.
func checkBinaryExtAgrees(t *testing.T, header []byte) {
	t.Helper()
	if len(header) < binaryFixedLen {
		return
	}
	rl := int64(int32(binary.BigEndian.Uint32(header[13:])))
	if rl < 0 || 17+rl+4 > int64(len(header)) {
		return
	}
	table := header[17+rl+4:]
	want, ok := binaryExtReference(table)
	cmd, err := DecodeHeader(SerializeRocketMQ, header)
	if ok != (err == nil) {
		if int64(int32(binary.BigEndian.Uint32(header[17+rl:]))) != int64(len(table)) {
			return // the ext length itself is wrong: refused before the table
		}
		t.Fatalf("reference ok=%v, decoder err=%v", ok, err)
	}
	if err != nil {
		return
	}
	if !maps.Equal(cmd.Fields(), want) || (want == nil) != (cmd.Fields() == nil) || cmd.FieldCount() != len(want) {
		t.Fatalf("fields %q, reference %q", cmd.Fields(), want)
	}
	for k, v := range want {
		if cmd.Field(k) != v {
			t.Fatalf("Field(%q) = %q, want %q", k, cmd.Field(k), v)
		}
	}
}

// TestBinaryExtPairsMatchTheMapRules: random tables of few distinct keys
// (repeats, empty values and empty keys are frequent) decode to what the map
// reference gives.
func TestBinaryExtPairsMatchTheMapRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	keys := []string{"", "a", "b", "topic", "queueId", "k1", "k0"}
	vals := []string{"", "1", "x", "TAGS\x01a\x02"}
	for range 5000 {
		var kv [][2]string
		for range rng.IntN(12) {
			kv = append(kv, [2]string{keys[rng.IntN(len(keys))], vals[rng.IntN(len(vals))]})
		}
		checkBinaryExtAgrees(t, binaryHeader(10, 0, 0, 1, 0, "", kv))
	}
}

// TestGoSendHeaderDecodesInTwoAllocations guards the send path's header
// decode: one string for the header's text and one object for the command
// and its pairs (the properties, which the Go client escapes, are a third).
func TestGoSendHeaderDecodesInTwoAllocations(t *testing.T) {
	h := []byte(goSendV2Header)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := DecodeHeader(SerializeJSON, h); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Fatalf("%.0f allocations per decode, want at most 3", allocs)
	}
	bin := binaryHeader(310, 9, 317, 7, 0, "", [][2]string{{"a", "g"}, {"b", "T"}, {"e", "1"}, {"i", "UNIQ_KEY\x01x\x02"}})
	allocs = testing.AllocsPerRun(100, func() {
		if _, err := DecodeHeader(SerializeRocketMQ, bin); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Fatalf("ROCKETMQ: %.0f allocations per decode, want at most 2", allocs)
	}
}

// TestClientHeaderKeysTakeDistinctBits: the extFields keys of the headers a
// send path decodes each set their own bit in a keySet, so the duplicate
// check never searches the pairs for them. The V2 send header's one-letter
// keys shared two bits before.
func TestClientHeaderKeysTakeDistinctBits(t *testing.T) {
	for name, keys := range map[string][]string{
		"SEND_MESSAGE_V2": {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"},
		"one letter":      strings.Split("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", ""),
		"SEND_MESSAGE": {"batch", "bornTimestamp", "brokerName", "defaultTopic", "defaultTopicQueueNums", "flag",
			"maxReconsumeTimes", "producerGroup", "properties", "queueId", "reconsumeTimes", "sysFlag", "topic", "unitMode"},
		"send answer": {"MSG_REGION", "TRACE_ON", "msgId", "queueId", "queueOffset", "transactionId"},
	} {
		var seen keySet
		for _, k := range keys {
			if seen.mayHave(k) {
				t.Errorf("%s: key %q shares a bit with an earlier key", name, k)
			}
			seen.add(k)
		}
	}
}
