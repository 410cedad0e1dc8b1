package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	dst = append(dst, `,"extFields":{`...)
	if len(c.ExtFields) > 0 {
		var small [16]string
		keys := small[:0]
		for k := range c.ExtFields {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			dst = appendJSONString(dst, c.ExtFields[k])
		}
	}
	dst = append(dst, `},"serializeTypeCurrentRPC":"JSON"}`...)
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does, so the output is always valid JSON.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
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
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonHeader is the decoding shape of a JSON header. Unknown keys (e.g.
// serializeTypeCurrentRPC) are ignored. Numbers out of their Go type's range are errors:
// the Go client fails on them the same way.
type jsonHeader struct {
	Code      int16             `json:"code"`
	Language  jsonLanguage      `json:"language"`
	Version   int16             `json:"version"`
	Opaque    int32             `json:"opaque"`
	Flag      int32             `json:"flag"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

// jsonLanguage accepts the enum name (what Java and Go send) or, leniently, its ordinal.
type jsonLanguage string

func (l *jsonLanguage) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = jsonLanguage(s)
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	n, err := strconv.ParseUint(string(b), 10, 8)
	if err != nil {
		return fmt.Errorf("language %s: not a name or ordinal", b)
	}
	*l = jsonLanguage(languageName(byte(n)))
	return nil
}

func decodeJSONHeader(header []byte) (*Command, error) {
	if cmd, ok := fastDecodeJSONHeader(header); ok {
		return cmd, nil
	}
	return decodeJSONHeaderStd(header)
}

// decodeJSONHeaderStd is the reference decoder (encoding/json).
func decodeJSONHeaderStd(header []byte) (*Command, error) {
	var h jsonHeader
	if err := json.Unmarshal(header, &h); err != nil {
		return nil, fmt.Errorf("decode JSON header (%d bytes): %v: %w", len(header), err, ErrMalformedFrame)
	}
	cmd := &Command{
		Code:      h.Code,
		Language:  string(h.Language),
		Version:   h.Version,
		Opaque:    h.Opaque,
		Flag:      h.Flag,
		Remark:    h.Remark,
		ExtFields: h.ExtFields,
	}
	return cmd, nil
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
