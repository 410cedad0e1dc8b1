package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// decodeJSONHeaderLenient decodes a JSON header the way Apache's broker does
// (fastjson 1.2.69/1.2.83 parsing RemotingCommand), for the headers the fast
// path refuses. It is the authority on what a JSON header may hold:
//
//	header key                 accepted values (anything else is an error naming key and value)
//	code version opaque flag   integer; string holding one ("10", "1,000", "10.00"; "" "null" "NULL" = absent);
//	                           a fraction or exponent, truncated toward zero (BigDecimal.intValue);
//	                           true = 1, false = 0; null = absent. Out of the field's range: an error.
//	language                   enum name (kept as sent), ordinal 0..255, null
//	remark                     string; number (its text), true/false, object/array (compact JSON text); null
//	extFields                  object or null; each value as remark, but null = the key is absent
//	anything else              ignored, whatever its value (serializeTypeCurrentRPC, unknown keys)
//
// Key names match case-insensitively (encoding/json's and fastjson's rule);
// fastjson's further "smart match" (ignoring '_' and '-') and its non-standard
// syntax (single quotes, unquoted names) are not taken: no client sends them.
// A repeated key keeps the last value, except that null leaves a top-level
// field as it was and a repeated extFields object merges into the earlier one:
// encoding/json's rules, kept so that every header the all-strings reference
// decoder accepts decodes the same here (fastjson would keep the last value).
// No client repeats a key.
//
// fastjson turns an ext value null into a missing entry (the header decoders
// then treat the field as absent, or fail a @CFNotNull one), and a number into
// its text: integers exactly as written, other numbers through BigDecimal
// (1e3 becomes "1E+3" there; here the text is kept as written, "1e3").
func decodeJSONHeaderLenient(header []byte) (*Command, error) {
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, headerSyntaxError(header, err)
	}
	cmd := &Command{}
	switch tok {
	case nil: // the literal null: fastjson yields no command; encoding/json an empty one
		if err := checkHeaderEnd(header, dec); err != nil {
			return nil, err
		}
		return cmd, nil
	case json.Delim('{'):
	default:
		return nil, headerError(header, "the header is %s, not a JSON object", describeToken(tok))
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, headerSyntaxError(header, err)
		}
		key, _ := kt.(string) // an object key is always a string token
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, headerSyntaxError(header, err)
		}
		if err := cmd.setHeaderField(key, raw); err != nil {
			return nil, headerError(header, "%v", err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, headerSyntaxError(header, err)
	}
	if err := checkHeaderEnd(header, dec); err != nil {
		return nil, err
	}
	return cmd, nil
}

// headerField names the RemotingCommand fields a header may set.
type headerField int

const (
	fieldUnknown headerField = iota
	fieldCode
	fieldLanguage
	fieldVersion
	fieldOpaque
	fieldFlag
	fieldRemark
	fieldExtFields
)

var headerFieldNames = [...]struct {
	name  string
	field headerField
}{
	{"code", fieldCode}, {"language", fieldLanguage}, {"version", fieldVersion}, {"opaque", fieldOpaque},
	{"flag", fieldFlag}, {"remark", fieldRemark}, {"extFields", fieldExtFields},
}

// matchHeaderField finds the field a key names: exactly, else by Unicode case
// folding (bytes.EqualFold, the rule encoding/json matches struct fields by).
func matchHeaderField(key string) headerField {
	for _, f := range headerFieldNames {
		if key == f.name {
			return f.field
		}
	}
	for _, f := range headerFieldNames {
		if strings.EqualFold(key, f.name) {
			return f.field
		}
	}
	return fieldUnknown
}

func (c *Command) setHeaderField(key string, raw json.RawMessage) error {
	var err error
	switch matchHeaderField(key) {
	case fieldCode:
		c.Code, err = headerInt16(key, raw, c.Code)
	case fieldVersion:
		c.Version, err = headerInt16(key, raw, c.Version)
	case fieldOpaque:
		c.Opaque, err = headerInt32(key, raw, c.Opaque)
	case fieldFlag:
		c.Flag, err = headerInt32(key, raw, c.Flag)
	case fieldLanguage:
		c.Language, err = headerLanguage(key, raw, c.Language)
	case fieldRemark:
		var s string
		var present bool
		if s, present, err = lenientString(raw); present {
			c.Remark = s
		}
	case fieldExtFields:
		c.ExtFields, err = lenientExtFields(raw, c.ExtFields)
	}
	return err
}

// lenientString is fastjson's StringCodec: a string as is, a number as written,
// true/false, an object or array as its compact JSON text; present is false for
// null.
func lenientString(raw json.RawMessage) (s string, present bool, err error) {
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, err
		}
		return s, true, nil
	case 'n':
		return "", false, nil
	case '{', '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return "", false, err
		}
		return buf.String(), true, nil
	}
	return string(raw), true, nil // a number or true/false, validated by the decoder
}

// lenientExtFields decodes extFields into m (nil: a new map); null yields nil.
func lenientExtFields(raw json.RawMessage, m map[string]string) (map[string]string, error) {
	if raw[0] == 'n' {
		return nil, nil
	}
	if raw[0] != '{' {
		return m, fmt.Errorf("extFields is %s, must be an object or null", abbreviateJSON(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return m, err
	}
	if m == nil {
		m = make(map[string]string, 16)
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return m, err
		}
		key, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return m, err
		}
		s, present, err := lenientString(v)
		if err != nil {
			return m, fmt.Errorf("extFields %q: %w", key, err)
		}
		if present {
			m[key] = s
		} else {
			delete(m, key) // fastjson stores null, and every reader takes it for absent
		}
	}
	return m, nil
}

// headerLanguage takes an enum name (kept as sent: fastjson matches names in
// any case and maps unknown ones to null, and this package keeps Language as
// text), an ordinal, or null.
func headerLanguage(key string, raw json.RawMessage, old string) (string, error) {
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return old, err
		}
		return s, nil
	case 'n':
		return old, nil
	}
	name, ok := languageOrdinal(string(raw))
	if !ok {
		return old, fmt.Errorf("%s=%s: must be a LanguageCode name or ordinal 0..255", key, abbreviateJSON(raw))
	}
	return name, nil
}

func headerInt16(key string, raw json.RawMessage, old int16) (int16, error) {
	v, present, err := lenientInt(key, raw, -1<<15, 1<<15-1)
	if err != nil || !present {
		return old, err
	}
	return int16(v), nil
}

func headerInt32(key string, raw json.RawMessage, old int32) (int32, error) {
	v, present, err := lenientInt(key, raw, -1<<31, 1<<31-1)
	if err != nil || !present {
		return old, err
	}
	return int32(v), nil
}

// lenientInt is fastjson's IntegerCodec and TypeUtils.castToInt, limited to
// [lo, hi]; present is false for the values fastjson leaves the field unset by.
func lenientInt(key string, raw json.RawMessage, lo, hi int64) (v int64, present bool, err error) {
	bad := func(rule string) (int64, bool, error) {
		return 0, false, fmt.Errorf("%s=%s: %s", key, abbreviateJSON(raw), rule)
	}
	switch raw[0] {
	case 'n':
		return 0, false, nil
	case 't':
		return 1, true, nil
	case 'f':
		return 0, true, nil
	case '{', '[':
		return bad("must be an integer")
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, false, err
		}
		n, present, ok := castStringToInt(s)
		if !ok {
			return bad("must be a decimal integer")
		}
		if !present {
			return 0, false, nil
		}
		v = n
	default: // a number
		n, ok := truncateJSONNumber(string(raw))
		if !ok {
			return bad(fmt.Sprintf("must be within [%d, %d]", lo, hi))
		}
		v = n
	}
	if v < lo || v > hi {
		return bad(fmt.Sprintf("must be within [%d, %d]", lo, hi))
	}
	return v, true, nil
}

// castStringToInt is fastjson's TypeUtils.castToInt for a string: "", "null"
// and "NULL" leave the field unset (present false); commas go, a trailing
// ".0*" goes, and the rest must be an Integer.parseInt integer (ok false).
func castStringToInt(s string) (v int64, present, ok bool) {
	if s == "" || s == "null" || s == "NULL" {
		return 0, false, true
	}
	s = strings.ReplaceAll(s, ",", "")
	if i := strings.LastIndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		s = s[:i]
	}
	n, ok := parseJavaInt(s)
	return n, ok, ok
}

// languageOrdinal reads a LanguageCode ordinal written as a JSON number.
func languageOrdinal(num string) (string, bool) {
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > 255 {
		return "", false
	}
	return languageName(byte(n)), true
}

// parseJavaInt is Integer.parseInt for ASCII digits: an optional sign, then at
// least one digit, leading zeros allowed, within 32 bits.
func parseJavaInt(s string) (int64, bool) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return n, err == nil
}

// truncateJSONNumber returns the integer part of a valid JSON number (toward
// zero), or false when it does not fit 18 digits. It works on the digits, so
// an exponent like 1e999999999 costs nothing.
func truncateJSONNumber(num string) (int64, bool) {
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		return n, true
	}
	neg := strings.HasPrefix(num, "-")
	mant, expText, hasExp := strings.Cut(strings.TrimPrefix(num, "-"), "e")
	if !hasExp {
		mant, expText, hasExp = strings.Cut(mant, "E")
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return 0, true // zero, whatever the exponent
	}
	exp := int64(0)
	if hasExp {
		e, err := strconv.ParseInt(expText, 10, 64)
		switch {
		case (err != nil || e < -1<<40) && strings.HasPrefix(expText, "-"):
			return 0, true // far below 1
		case err != nil || e > 1<<40:
			return 0, false
		}
		exp = e
	}
	// point: how many of digits stand before the decimal point.
	point := int64(len(intPart)) - int64(len(intPart)+len(frac)-len(digits)) + exp
	if point <= 0 {
		return 0, true
	}
	if point > 18 {
		return 0, false
	}
	if point < int64(len(digits)) {
		digits = digits[:point]
	} else {
		digits += strings.Repeat("0", int(point)-len(digits))
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func checkHeaderEnd(header []byte, dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return headerError(header, "data after the header object at byte %d", dec.InputOffset())
		}
		return headerSyntaxError(header, err)
	}
	return nil
}

func headerSyntaxError(header []byte, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return headerError(header, "unexpected end of JSON input")
	}
	return headerError(header, "%v", err)
}

func headerError(header []byte, format string, args ...any) error {
	return fmt.Errorf("decode JSON header (%d bytes): %s: %w", len(header), fmt.Sprintf(format, args...), ErrMalformedFrame)
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return "a JSON array"
	case string:
		return "a string"
	case json.Number:
		return "the number " + abbreviateJSON([]byte(t))
	case bool:
		return "a boolean"
	}
	return "not an object"
}

// abbreviateJSON quotes at most 64 bytes of a value for an error message.
func abbreviateJSON(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
