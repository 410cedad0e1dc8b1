package transport

import (
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSONHeader appends c's JSON header. Written by hand rather than with
// encoding/json: it is on every response's path, the key order is fixed (stable golden
// bytes), and extFields keys are sorted. An empty Language is written as "GO" because
// Java parses the field as an enum name.
func appendJSONHeader(dst []byte, c *Command) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(c.Code), 10)
	dst = append(dst, `,"language":`...)
	lang := c.Language
	if lang == "" {
		lang = LanguageGo
	}
	dst = appendJSONString(dst, lang)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(c.Version), 10)
	dst = append(dst, `,"opaque":`...)
	dst = strconv.AppendInt(dst, int64(c.Opaque), 10)
	dst = append(dst, `,"flag":`...)
	dst = strconv.AppendInt(dst, int64(c.Flag), 10)
	dst = append(dst, `,"remark":`...)
	dst = appendJSONString(dst, c.Remark)
	if c.Ext.Data != nil {
		dst = append(dst, `,"extFields":`...)
		dst = append(dst, c.Ext.Data...)
		return append(dst, `,"serializeTypeCurrentRPC":"JSON"}`...)
	}
	dst = append(dst, `,"extFields":{`...)
	if ext := c.Fields(); len(ext) > 0 {
		var small [16]string
		for i, k := range sortedKeys(ext, small[:0]) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, ext[k])
		}
	}
	dst = append(dst, `},"serializeTypeCurrentRPC":"JSON"}`...)
	return dst
}

// sortedKeys appends m's keys to buf in sorted order: both header encoders
// write extFields sorted, so the same command always encodes to the same bytes.
func sortedKeys(m map[string]string, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	slices.Sort(buf)
	return buf
}

// AppendJSONString appends s as a JSON string (quoted and escaped).
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does, so the output is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	return append(appendJSONStringBody(dst, s), '"')
}

// appendJSONStringBody is appendJSONString without the quotes.
func appendJSONStringBody(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Header strings are mostly plain ASCII: skip eight such bytes at a
		// time (keys and values were a fifth of the bench client's CPU, byte
		// by byte), and walk only the words that hold something else.
		if i+8 <= len(s) && jsonPlain8(s[i:i+8]) {
			i += 8
			continue
		}
		for stop := min(i+8, len(s)); i < stop; {
			b := s[i]
			if b < utf8.RuneSelf {
				if b >= 0x20 && b != '"' && b != '\\' {
					i++
					continue
				}
				dst = append(dst, s[start:i]...)
				switch b {
				case '"', '\\':
					dst = append(dst, '\\', b)
				case '\n':
					dst = append(dst, '\\', 'n')
				case '\r':
					dst = append(dst, '\\', 'r')
				case '\t':
					dst = append(dst, '\\', 't')
				default:
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
				}
				i++
				start = i
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
		}
	}
	return append(dst, s[start:]...)
}

// jsonPlain8 reports whether none of the eight bytes of s needs more than
// itself in a JSON string: no control byte (below 0x20), no '"', no '\\' and
// no byte of a multi-byte sequence (0x80 and up, which the caller checks).
func jsonPlain8(s string) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// The byte loads combine into one 64-bit load.
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// (x - ones) &^ x & highs is non-zero exactly when x has a zero byte, and
	// (w - n*ones) &^ w & highs exactly when w has a byte below n (n <= 0x80).
	zero := func(x uint64) uint64 { return (x - ones) &^ x & highs }
	below := (w - 0x20*ones) &^ w & highs
	return (below | zero(w^('"'*ones)) | zero(w^('\\'*ones)) | w&highs) == 0
}

// decodeJSONHeader decodes a JSON header: the hand-written fast path for the
// shape real clients send, else the lenient decoder that takes what Apache's
// broker takes (header_json_lenient.go).
func decodeJSONHeader(header []byte) (*Command, error) {
	if cmd, ok := fastDecodeJSONHeader(header); ok {
		return cmd, nil
	}
	return decodeJSONHeaderLenient(header)
}

// languageNames maps LanguageCode.java ordinals to names.
var languageNames = [...]string{"JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
	"OTHER", "HTTP", "GO", "PHP", "OMS", "RUST", "NODE_JS"}

func languageName(b byte) string {
	if int(b) < len(languageNames) {
		return languageNames[b]
	}
	return "OTHER"
}
