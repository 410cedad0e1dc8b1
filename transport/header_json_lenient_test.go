package transport

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestLenientHeaderLikeFastjson: what Apache's broker (fastjson parsing
// RemotingCommand) takes, taken the same way, through DecodeHeader (fast path or
// not) and through a whole frame.
func TestLenientHeaderLikeFastjson(t *testing.T) {
	cases := []struct {
		name, header string
		want         *Command
	}{
		{"ext numbers keep their text, big ints exact",
			`{"code":11,"extFields":{"queueId":1,"queueOffset":12345678901234567890123,"maxMsgNums":32.0,"ratio":1.5,"neg":-0,"exp":1e3}}`,
			&Command{Code: 11, ExtFields: map[string]string{"queueId": "1", "queueOffset": "12345678901234567890123",
				"maxMsgNums": "32.0", "ratio": "1.5", "neg": "-0", "exp": "1e3"}}},
		{"ext booleans become true/false",
			`{"code":11,"extFields":{"unitMode":false,"batch":true}}`,
			&Command{Code: 11, ExtFields: map[string]string{"unitMode": "false", "batch": "true"}}},
		{"ext null is an absent key",
			`{"code":11,"extFields":{"subscription":null,"topic":"T"}}`,
			&Command{Code: 11, ExtFields: map[string]string{"topic": "T"}}},
		{"ext null after a value removes it",
			`{"code":11,"extFields":{"topic":"T","topic":null}}`,
			&Command{Code: 11, ExtFields: map[string]string{}}},
		{"ext objects and arrays become compact JSON text",
			`{"code":11,"extFields":{"o":{ "a" : [1, "b", null] },"a":[ ]}}`,
			&Command{Code: 11, ExtFields: map[string]string{"o": `{"a":[1,"b",null]}`, "a": `[]`}}},
		{"integer fields from strings, commas and trailing zeros as castToInt",
			`{"code":"310","opaque":"1,000","version":"401.00","flag":"+2"}`,
			&Command{Code: 310, Opaque: 1000, Version: 401, Flag: 2}},
		{"integer fields: fractions truncate toward zero, exponents apply",
			`{"code":1.9,"opaque":-2.9,"version":4.01e2,"flag":0.5e1}`,
			&Command{Code: 1, Opaque: -2, Version: 401, Flag: 5}},
		{"integer fields: booleans are 1 and 0",
			`{"code":true,"flag":false}`,
			&Command{Code: 1}},
		{"integer fields: empty and null strings leave the field unset",
			`{"code":"","opaque":"null","flag":"NULL","version":null}`,
			&Command{}},
		{"tiny and huge exponents of zero",
			`{"code":1e-999999999999999999999,"opaque":0e999999999999}`,
			&Command{}},
		{"remark from a number, a boolean, an object",
			`{"remark":12.50}`, &Command{Remark: "12.50"}},
		{"remark true", `{"remark":true}`, &Command{Remark: "true"}},
		{"remark object", `{"remark":{"x" : 1}}`, &Command{Remark: `{"x":1}`}},
		{"language: ordinal, any-case name kept as sent, null",
			`{"language":9}`, &Command{Language: "GO"}},
		{"language name in lower case", `{"language":"java"}`, &Command{Language: "java"}},
		{"language null", `{"language":null}`, &Command{}},
		{"keys match case-insensitively",
			`{"CODE":17,"Opaque":3,"EXTFIELDS":{"topic":"T"}}`,
			&Command{Code: 17, Opaque: 3, ExtFields: map[string]string{"topic": "T"}}},
		{"unknown keys with any value are ignored",
			`{"code":1,"serializeTypeCurrentRPC":"ROCKETMQ","x":{"y":[1,{"z":null}]},"n":1e400}`,
			&Command{Code: 1}},
		{"a repeated key keeps the last value", `{"code":1,"code":"2"}`, &Command{Code: 2}},
		{"null keeps a field as it was", `{"remark":"r","remark":null,"code":3,"code":null}`, &Command{Code: 3, Remark: "r"}},
		{"extFields null", `{"code":1,"extFields":null}`, &Command{Code: 1}},
		{"the literal null is an empty command", ` null `, &Command{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeHeader(SerializeJSON, []byte(c.header))
			if err != nil {
				t.Fatalf("%s: %v", c.header, err)
			}
			assertCommand(t, got, c.want)
			checkJSONDecodersAgree(t, []byte(c.header))
			frame, err := DecodeFrame(bytes.NewReader(rawFrame(SerializeJSON, []byte(c.header), []byte("b"))), 0)
			if err != nil {
				t.Fatalf("frame: %v", err)
			}
			want := *c.want
			want.Body = []byte("b")
			assertCommand(t, frame, &want)
		})
	}
}

// TestLenientHeaderErrorsNameKeyAndValue: what fastjson refuses is refused, with
// ErrMalformedFrame and a message that says which key and value broke which rule.
func TestLenientHeaderErrorsNameKeyAndValue(t *testing.T) {
	cases := map[string][]string{
		`{"code":40000}`:                   {"code=40000", "[-32768, 32767]"},
		`{"code":"abc"}`:                   {`code="abc"`, "decimal integer"},
		`{"opaque":"1.5"}`:                 {`opaque="1.5"`, "decimal integer"},
		`{"opaque":2147483648}`:            {"opaque=2147483648", "[-2147483648, 2147483647]"},
		`{"flag":1e19}`:                    {"flag=1e19"},
		`{"version":99999999999999999999}`: {"version=99999999999999999999"},
		`{"code":{"a":1}}`:                 {`code={"a":1}`, "must be an integer"},
		`{"code":[1]}`:                     {"code=[1]"},
		`{"language":{}}`:                  {"language={}", "LanguageCode"},
		`{"language":256}`:                 {"language=256"},
		`{"language":true}`:                {"language=true"},
		`{"extFields":"topic=T"}`:          {"extFields is \"topic=T\"", "object or null"},
		`{"extFields":[{"topic":"T"}]}`:    {"extFields is [{"},
		`{"code":1`:                        {"unexpected end"},
		`{"code":1}x`:                      {"invalid character"},
		`{"code":1} {}`:                    {"data after the header"},
		`[{"code":1}]`:                     {"a JSON array, not a JSON object"},
		`"code"`:                           {"a string, not a JSON object"},
		`7`:                                {"the number 7"},
		`{code:1}`:                         {"invalid character"},
		``:                                 {"unexpected end"},
		`{"code":"` + strings.Repeat("9", 100) + `"}`: {"…", "decimal integer"},
	}
	for header, wants := range cases {
		cmd, err := DecodeHeader(SerializeJSON, []byte(header))
		if err == nil {
			t.Errorf("%s: decoded to %v, want an error", header, cmd)
			continue
		}
		if !errors.Is(err, ErrMalformedFrame) {
			t.Errorf("%s: %v does not wrap ErrMalformedFrame", header, err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", header, err, w)
			}
		}
		checkJSONDecodersAgree(t, []byte(header))
	}
}

func TestTruncateJSONNumber(t *testing.T) {
	cases := []struct {
		num  string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"12", 12, true}, {"1.999", 1, true}, {"-1.999", -1, true},
		{"0.5", 0, true}, {"0.05e2", 5, true}, {"100e-2", 1, true}, {"1E2", 100, true}, {"1e+2", 100, true},
		{"123.456e1", 1234, true}, {"1e18", 0, false}, {"9.99e17", 999000000000000000, true},
		{"1e-400", 0, true}, {"0e400", 0, true}, {"1e400", 0, false}, {"12345678901234567890", 0, false},
		{"-9223372036854775808", -9223372036854775808, true}, {"0.000e99999999999999999999", 0, true},
	}
	for _, c := range cases {
		got, ok := truncateJSONNumber(c.num)
		if got != c.want || ok != c.ok {
			t.Errorf("truncateJSONNumber(%s) = %d %v, want %d %v", c.num, got, ok, c.want, c.ok)
		}
	}
}

// TestBinaryHeaderEmptyValuesAreAbsent: in a ROCKETMQ header a zero length is
// Java's null (RocketMQSerializable.readStr), so an empty value or key leaves the
// entry out, also when it repeats an earlier key; unknown keys stay.
func TestBinaryHeaderEmptyValuesAreAbsent(t *testing.T) {
	h := binaryHeader(11, 0, 479, 5, 0, "", [][2]string{{"topic", "T"}, {"subscription", ""}, {"", "x"},
		{"queueId", "1"}, {"queueId", ""}, {"unknownKey", "u"}})
	cmd, err := DecodeHeader(SerializeRocketMQ, h)
	if err != nil {
		t.Fatal(err)
	}
	assertCommand(t, cmd, &Command{Code: 11, Language: "JAVA", Version: 479, Opaque: 5,
		ExtFields: map[string]string{"topic": "T", "unknownKey": "u"}})
}
