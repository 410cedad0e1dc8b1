package transport

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// fastDecodeJSONHeader decodes a JSON header without reflection, following
// decodeJSONHeaderLenient's rules for what real clients send: the RemotingCommand
// keys (exact, or in another case), integer fields as integers, numbers, integer
// strings, booleans or null, language as a name or ordinal, remark and extFields
// values as strings, numbers or booleans (null: absent), and unknown keys with any
// value. encoding/json costs ~50 allocations and ~10 µs per header; this costs one
// per escaped string. It returns ok=false when the input strays further (a repeated
// key, nested extFields values, fractions or exponents in integer fields, surrogate
// escapes or invalid UTF-8 in a string it keeps, nesting deeper than
// maxSkipDepth, syntax errors...) and the caller falls back to
// decodeJSONHeaderLenient, which stays the single authority on what is accepted.
// Invariant: when ok is true the result equals what decodeJSONHeaderLenient returns
// and the header is valid JSON (checked by FuzzDecodeHeader).
func fastDecodeJSONHeader(b []byte) (cmd *Command, ok bool) {
	// One string copy of the whole header; unescaped keys and values are substrings of
	// it, so a typical header costs a handful of allocations instead of one per string.
	p := jsonScanner{b: b, s: string(b), printable: printableASCII(b)}
	p.ws()
	if !p.eat('{') {
		return nil, false
	}
	cmd = newDecoded()
	var seen uint8
	p.ws()
	if p.eat('}') {
		return finishDecoded(cmd, seen, &p)
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if !p.eat(':') {
			return nil, false
		}
		p.ws()
		field := exactHeaderField(key)
		if field == fieldUnknown {
			field = matchHeaderField(key)
		}
		if field == fieldUnknown {
			if !p.skipValue(0) {
				return nil, false
			}
		} else {
			bit := uint8(1) << field
			if seen&bit != 0 {
				return nil, false
			}
			seen |= bit
			if !p.field(cmd, field) {
				return nil, false
			}
		}
		p.ws()
		if p.eat('}') {
			return finishDecoded(cmd, seen, &p)
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// finishDecoded ends a decode at the header's closing brace. A header without
// extFields decodes to a command without pairs (nil), as the lenient decoder
// leaves its map nil.
func finishDecoded(cmd *Command, seen uint8, p *jsonScanner) (*Command, bool) {
	if seen&(1<<fieldExtFields) == 0 {
		cmd.pairs = nil
	}
	return cmd, p.end()
}

// exactHeaderField is matchHeaderField for the spellings clients use, without
// case folding.
func exactHeaderField(key string) headerField {
	switch key {
	case "code":
		return fieldCode
	case "language":
		return fieldLanguage
	case "version":
		return fieldVersion
	case "opaque":
		return fieldOpaque
	case "flag":
		return fieldFlag
	case "remark":
		return fieldRemark
	case "extFields":
		return fieldExtFields
	}
	return fieldUnknown
}

// field reads the value of one RemotingCommand field into cmd.
func (p *jsonScanner) field(cmd *Command, f headerField) bool {
	switch f {
	case fieldCode:
		v, ok := p.intField(-1<<15, 1<<15-1, int64(cmd.Code))
		cmd.Code = int16(v)
		return ok
	case fieldVersion:
		v, ok := p.intField(-1<<15, 1<<15-1, int64(cmd.Version))
		cmd.Version = int16(v)
		return ok
	case fieldOpaque:
		v, ok := p.intField(-1<<31, 1<<31-1, int64(cmd.Opaque))
		cmd.Opaque = int32(v)
		return ok
	case fieldFlag:
		v, ok := p.intField(-1<<31, 1<<31-1, int64(cmd.Flag))
		cmd.Flag = int32(v)
		return ok
	case fieldLanguage:
		if p.null() {
			return true
		}
		if p.i < len(p.b) && p.b[p.i] == '"' {
			var ok bool
			cmd.Language, ok = p.str()
			return ok
		}
		num, ok := p.number()
		if !ok {
			return false
		}
		cmd.Language, ok = languageOrdinal(num)
		return ok
	case fieldRemark:
		if p.null() {
			return true
		}
		var ok bool
		cmd.Remark, ok = p.scalar()
		return ok
	case fieldExtFields:
		if p.null() {
			cmd.pairs = nil
			return true
		}
		var ok bool
		cmd.pairs, ok = p.strPairs(cmd.pairs)
		return ok
	}
	return false
}

// intField reads an integer field as fastjson does (lenientInt): an integer, a
// number without fraction or exponent, true/false, an integer string, or null
// (old stays). Anything else, or a value outside [lo, hi], is refused.
func (p *jsonScanner) intField(lo, hi, old int64) (int64, bool) {
	if p.i >= len(p.b) {
		return old, false
	}
	var v int64
	switch c := p.b[p.i]; {
	case c == 'n':
		return old, p.null()
	case c == 't':
		_, ok := p.literal("true")
		return 1, ok
	case c == 'f':
		_, ok := p.literal("false")
		return 0, ok
	case c == '"':
		s, ok := p.str()
		if !ok {
			return old, false
		}
		n, present, ok := castStringToInt(s)
		if !ok {
			return old, false
		}
		if !present {
			return old, true
		}
		v = n
	default:
		n, ok := p.int(lo, hi)
		if !ok {
			return old, false
		}
		v = n
	}
	return v, v >= lo && v <= hi
}

// maxSkipDepth bounds the nesting of an ignored value this path walks; deeper
// ones go to encoding/json (whose own limit is 10000).
const maxSkipDepth = 64

// skipValue passes over any JSON value (an unknown key's), checking its syntax.
func (p *jsonScanner) skipValue(depth int) bool {
	if depth > maxSkipDepth || p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.skipString()
	case c == 't':
		_, ok := p.literal("true")
		return ok
	case c == 'f':
		_, ok := p.literal("false")
		return ok
	case c == 'n':
		return p.null()
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.number()
		return ok
	case c == '[':
		p.i++
		p.ws()
		if p.eat(']') {
			return true
		}
		for {
			p.ws()
			if !p.skipValue(depth + 1) {
				return false
			}
			p.ws()
			if p.eat(']') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	case c == '{':
		p.i++
		p.ws()
		if p.eat('}') {
			return true
		}
		for {
			p.ws()
			if !p.skipString() {
				return false
			}
			p.ws()
			if !p.eat(':') {
				return false
			}
			p.ws()
			if !p.skipValue(depth + 1) {
				return false
			}
			p.ws()
			if p.eat('}') {
				return true
			}
			if !p.eat(',') {
				return false
			}
		}
	}
	return false
}

// skipString passes over a string literal, checking only what JSON requires
// (escapes, no control characters); its bytes are never used.
func (p *jsonScanner) skipString() bool {
	if !p.eat('"') {
		return false
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i >= len(p.b) {
				return false
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if p.i+4 > len(p.b) {
					return false
				}
				for _, h := range p.b[p.i : p.i+4] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				p.i += 4
			default:
				return false
			}
		}
	}
	return false
}

type jsonScanner struct {
	b []byte
	s string // == string(b)
	i int
	// printable is set when every byte of b is printable ASCII (0x20–0x7E), as
	// the headers of every client we know are: a string then needs no UTF-8
	// or control-character check, only a search for its end.
	printable bool
}

func (p *jsonScanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end reports whether only whitespace follows.
func (p *jsonScanner) end() bool {
	p.ws()
	return p.i == len(p.b)
}

func (p *jsonScanner) null() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// int parses -?(0|[1-9][0-9]*) within [lo, hi]; fractions and exponents are refused.
func (p *jsonScanner) int(lo, hi int64) (int64, bool) {
	neg := p.eat('-')
	start := p.i
	var v int64
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		v = v*10 + int64(p.b[p.i]-'0')
		if v > 1<<32 {
			return 0, false
		}
		p.i++
	}
	n := p.i - start
	if n == 0 || (n > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, v >= lo && v <= hi
}

// str parses a JSON string. Raw invalid UTF-8 and surrogate escapes are refused (the
// standard decoder replaces them; not worth copying here).
func (p *jsonScanner) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	start := p.i
	if p.printable {
		// One pass finds the closing quote or the first backslash, eight bytes
		// at a time: a send answer's ids decoded ~8 % faster than with a byte
		// loop (docs/performance.md, thirtieth pass).
		i := quoteOrBackslash(p.b, start)
		switch {
		case i == len(p.b):
			return "", false
		case p.b[i] == '"':
			p.i = i + 1
			return p.s[start:i], true
		}
		p.i = i
		return p.strEscaped(start)
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.s[start:p.i]
			p.i++
			if !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			return p.strEscaped(start)
		case c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// strEscaped continues str from the first backslash, building the unescaped bytes.
func (p *jsonScanner) strEscaped(start int) (string, bool) {
	// The unescaped string is no longer than its escaped text (escapes only
	// shrink), so a buffer of that size, found by one pass to the closing
	// quote, is never regrown; the string is made over it, as nothing else
	// holds or changes buf.
	end := closingQuote(p.b, p.i)
	buf := make([]byte, 0, end-start)
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return "", false
			}
			return unsafe.String(unsafe.SliceData(buf), len(buf)), true
		case c < 0x20:
			return "", false
		case c != '\\':
			// Copy the run up to the next quote or backslash at once: RocketMQ's
			// properties escape their \u0001 and \u0002 separators, so a SEND
			// header's longest string is mostly such runs.
			n := p.i + 1
			if p.printable {
				// Up to end, a printable string has no control characters and
				// no quote a backslash does not come first: the run ends at the
				// next backslash, found at memchr speed.
				if k := bytes.IndexByte(p.b[n:end], '\\'); k >= 0 {
					n += k
				} else {
					n = end
				}
			} else {
				for n < len(p.b) && p.b[n] != '"' && p.b[n] != '\\' && p.b[n] >= 0x20 {
					n++
				}
			}
			buf = append(buf, p.b[p.i:n]...)
			p.i = n
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", false
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if p.i+4 > len(p.b) {
				return "", false
			}
			var r rune
			for _, h := range p.b[p.i : p.i+4] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			p.i += 4
			if utf16.IsSurrogate(r) {
				return "", false
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", false
		}
	}
	return "", false
}

// quoteOrBackslash is the index of the first '"' or '\\' at or after i in b,
// or len(b). It tests eight bytes at a time (a byte equal to c is one where
// w^c has a zero byte, and the lowest such byte is found exactly), so the
// values of a send answer (ids of 32 and 36 characters) take four or five
// steps instead of one per byte. For printable ASCII only: a byte with its
// high bit set could be taken for a match.
func quoteOrBackslash(b []byte, i int) int {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		quotes = '"' * ones
		slashs = '\\' * ones
	)
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q, s := w^quotes, w^slashs
		if m := ((q-ones)&^q | (s-ones)&^s) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return len(b)
}

// closingQuote is the index of the first quote at or after i that no
// backslash escapes, or len(b). The quote is found with IndexByte; one with an
// odd run of backslashes before it is escaped. The scan back stops at the
// string's opening quote, which is not a backslash.
func closingQuote(b []byte, i int) int {
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b)
		}
		q := i + k
		slashes := 0
		for j := q - 1; j >= 0 && b[j] == '\\'; j-- {
			slashes++
		}
		if slashes%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// printableASCII reports whether every byte of b is in 0x20–0x7E, eight bytes
// at a time.
func printableASCII(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte is below 0x20 when w - 0x20 borrows into its high bit while
		// the byte's own high bit was clear; 0x7F when w + 1 carries into it.
		if (w-0x20*ones)&^w&highs != 0 || w&highs != 0 || (w+ones)&highs != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

// strPairs parses extFields into pairs appended to dst: an object whose values
// are strings, numbers (kept as written), true/false, or null (the key is left
// out, as fastjson's readers take a null for absent). Duplicate keys are
// refused, a null's included.
func (p *jsonScanner) strPairs(dst []ExtField) ([]ExtField, bool) {
	if !p.eat('{') {
		return nil, false
	}
	p.ws()
	if p.eat('}') {
		return dst, true
	}
	var seen keySet
	var nulls []string // keys whose value was null: allocated only if one is
	for {
		p.ws()
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.ws()
		if !p.eat(':') {
			return nil, false
		}
		p.ws()
		if seen.mayHave(k) && (indexPair(dst, k) >= 0 || slices.Contains(nulls, k)) {
			return nil, false
		}
		seen.add(k)
		if p.null() {
			nulls = append(nulls, k)
		} else {
			v, ok := p.scalar()
			if !ok {
				return nil, false
			}
			dst = append(dst, ExtField{k, v})
		}
		p.ws()
		if p.eat('}') {
			return dst, true
		}
		if !p.eat(',') {
			return nil, false
		}
	}
}

// scalar parses a string, a number (returned as written) or true/false.
func (p *jsonScanner) scalar() (string, bool) {
	if p.i >= len(p.b) {
		return "", false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.str()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return "", false
}

func (p *jsonScanner) literal(word string) (string, bool) {
	if len(p.b)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return word, true
	}
	return "", false
}

// number parses a JSON number, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and
// returns its text.
func (p *jsonScanner) number() (string, bool) {
	start := p.i
	p.eat('-')
	switch {
	case p.eat('0'):
	case p.digits() == 0:
		return "", false
	}
	if p.eat('.') && p.digits() == 0 {
		return "", false
	}
	if p.eat('e') || p.eat('E') {
		if !p.eat('+') {
			p.eat('-')
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return p.s[start:p.i], true
}

// digits skips [0-9]* and returns how many.
func (p *jsonScanner) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
