package transport

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestBareObjectKeys: keys holding a JSON object are written bare; string keys,
// values that look like objects, keys that only start like one, and an
// unterminated string are left as they were.
func TestBareObjectKeys(t *testing.T) {
	cases := map[string]string{
		`{"offsetTable":{"{\"brokerName\":\"b\",\"queueId\":1,\"topic\":\"T\\\"q\"}":{"maxOffset":5}},"tps":0}`: `{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T\"q"}:{"maxOffset":5}},"tps":0}`,
		`{"a":"{\"x\":1}"}`:                    `{"a":"{\"x\":1}"}`,
		`{"{not json":1}`:                      `{"{not json":1}`,
		`{"plain":{"{\"k\":2}":3},"s":"\\"}`:   `{"plain":{{"k":2}:3},"s":"\\"}`,
		`{"offsetTable":{}}`:                   `{"offsetTable":{}}`,
		`[{"{\"q\":[1,2]}":true},"{\"q\":0}"]`: `[{{"q":[1,2]}:true},"{\"q\":0}"]`,
		`{"unterminated`:                       `{"unterminated`,
	}
	for in, want := range cases {
		if got := string(BareObjectKeys([]byte(in))); got != want {
			t.Errorf("BareObjectKeys(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestQuoteObjectKeysReadsBothForms: the bare form comes back as the JSON it was
// made from, JSON passes through, and malformed text is an error, never a panic.
func TestQuoteObjectKeysReadsBothForms(t *testing.T) {
	for _, in := range []string{
		`{"offsetTable":{"{\"brokerName\":\"b\",\"queueId\":1,\"topic\":\"T\"}":7,"{\"brokerName\":\"b\",\"queueId\":2,\"topic\":\"T\"}":9},"consumeTps":1.5}`,
		`{"a":[1,{"b":null}],"c":"{\"x\":1}"}`,
		`{}`, `[]`, `3`, `"s"`,
	} {
		got, err := QuoteObjectKeys(BareObjectKeys([]byte(in)))
		if err != nil || string(got) != in {
			t.Errorf("QuoteObjectKeys(BareObjectKeys(%s)) = %s, %v", in, got, err)
		}
		if got, err := QuoteObjectKeys([]byte(in)); err != nil || string(got) != in {
			t.Errorf("QuoteObjectKeys(%s) = %s, %v (JSON must pass through)", in, got, err)
		}
	}
	spaced, err := QuoteObjectKeys([]byte(` { {"q" : 1} : 2 , "k" : { } } `))
	if err != nil || !json.Valid(spaced) || string(spaced) != `{"{\"q\":1}":2,"k":{}}` {
		t.Errorf("spaced input: %s, %v", spaced, err)
	}
	deep := make([]byte, 0, 200)
	for range 100 {
		deep = append(deep, `{"k":`...)
	}
	for _, bad := range []string{``, `{`, `{{"q":1}}`, `{{"q":1}:}`, `{"a":1,}`, `{1:2}`, `{"a":1} x`, `{"a" 1}`, `{"":"""":"0"}`, string(deep)} {
		if got, err := QuoteObjectKeys([]byte(bad)); !errors.Is(err, errFastjson) {
			t.Errorf("QuoteObjectKeys(%.40q) = %s, %v; want an errFastjson error", bad, got, err)
		}
	}
}

// FuzzQuoteObjectKeys: whatever the input, QuoteObjectKeys returns JSON or an
// error, never a panic, and BareObjectKeys of that JSON reads back as JSON
// (equal up to the spacing inside keys that held objects).
func FuzzQuoteObjectKeys(f *testing.F) {
	f.Add([]byte(`{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:7}}`))
	f.Add([]byte(`{"a":"{\"x\":1}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := QuoteObjectKeys(b)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("QuoteObjectKeys(%q) = %q: not JSON", b, out)
		}
		var compact []byte
		if c, err := json.Marshal(json.RawMessage(out)); err == nil {
			compact = c
		}
		if back, err := QuoteObjectKeys(BareObjectKeys(compact)); err != nil || !json.Valid(back) {
			t.Fatalf("round trip of %q: %q, %v", compact, back, err)
		}
	})
}
