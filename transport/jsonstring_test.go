package transport

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceJSONString is appendJSONString one byte at a time, the way it was
// written before its eight-byte skip: the skip must not change a byte.
func referenceJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == '\t':
				b.WriteString(`\t`)
			case c < 0x20:
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[c>>4])
				b.WriteByte(hexDigits[c&0xF])
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\ufffd`)
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// checkJSONString: appendJSONString(s) is the reference's bytes, and it is
// valid JSON that decodes to s (with each invalid byte as U+FFFD).
func checkJSONString(t *testing.T, s string) {
	t.Helper()
	got := string(appendJSONString(nil, s))
	if want := referenceJSONString(s); got != want {
		t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
	}
	var back string
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("appendJSONString(%q) = %s, not JSON: %v", s, got, err)
	}
	if utf8.ValidString(s) && back != s {
		t.Fatalf("appendJSONString(%q) decodes to %q", s, back)
	}
}

// TestAppendJSONStringEveryPosition puts each byte that needs escaping, and
// each multi-byte or invalid sequence, at every offset of strings up to three
// words long, so every word boundary of the eight-byte skip is crossed.
func TestAppendJSONStringEveryPosition(t *testing.T) {
	specials := []string{`"`, `\`, "\n", "\r", "\t", "\x00", "\x01", "\x02", "\x1f", "\x7f",
		"é", "€", "😀", "\xff", "\xc3", "\xe2\x82", "\u2028"}
	for n := 0; n <= 24; n++ {
		for at := 0; at <= n; at++ {
			for _, sp := range specials {
				s := strings.Repeat("a", at) + sp + strings.Repeat("Z", n-at)
				checkJSONString(t, s)
			}
		}
		checkJSONString(t, strings.Repeat(" ~!#", n))
	}
	// Every single byte value inside a plain word.
	for c := range 256 {
		checkJSONString(t, "abcdefg"+string([]byte{byte(c)})+"hijklmnop")
	}
}

// TestAppendJSONStringRandom compares random mixes of plain and special bytes.
func TestAppendJSONStringRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 5))
	alphabet := []byte("abcXYZ019 _-\"\\\n\x01\x1f\x20\x21\x5b\x5d\x7e\x7f\x80\xbf\xc3\xa9\xe2\x82\xac\xff")
	for range 20000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = 'a' + byte(rng.IntN(26))
			}
		}
		checkJSONString(t, string(b))
	}
}

// FuzzAppendJSONString: any input gives the reference's bytes and valid JSON.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("UNIQ_KEY\x01ABCDEF0123456789\x02TAGS\x01t")
	f.Add("plain ascii header value")
	f.Add("é\"\\\xff")
	f.Fuzz(checkJSONString)
}

// BenchmarkAppendJSONString encodes the bench's properties value, the longest
// string of its SEND_MESSAGE header, a key and a plain value.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"properties", "KEYS\x01k123456\x02UNIQ_KEY\x01" + strings.Repeat("0123456789ABCDEF", 2) + "\x02"},
		{"key", "bornTimestamp"},
		{"plain", "benchmark_producer_group_0123456789"},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 256)
			for b.Loop() {
				buf = appendJSONString(buf[:0], c.s)
			}
		})
	}
}
