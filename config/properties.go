package config

import (
	"strconv"
	"strings"
)

// rawEntry is one key as written in a file, before it is matched to the key table.
type rawEntry struct {
	key   string // as written: case kept, so problems can quote it
	value string
	line  int // 1-based line of the key in the file
	// isList marks a YAML sequence; list holds its items, joined with the key's
	// separator before parsing so both formats share one parser.
	isList bool
	list   []string
	// isMap marks a YAML mapping with no entries (`raft: {}`), which no key takes.
	isMap bool
}

// parseProperties reads Java properties (java.util.Properties.load grammar): `#`
// and `!` comment lines, `key=value`, `key: value` and `key value`, backslash line
// continuation and the escapes \t \n \r \f \uXXXX. One deviation: trailing
// whitespace of a value is dropped, because an invisible trailing blank turning
// "10911 " into a bad port is a trap, not a feature. A malformed \u escape is a
// problem on that key rather than an abort, so the rest of the file is still
// checked. file names the file in problems ("" for bytes without a name).
func parseProperties(file string, data []byte) ([]rawEntry, problems) {
	var (
		out   []rawEntry
		probs problems
	)
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	text = strings.TrimPrefix(text, "\uFEFF")
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		startLine := i + 1
		first := strings.TrimLeft(lines[i], " \t\f")
		if first == "" || first[0] == '#' || first[0] == '!' {
			continue
		}
		// Join continuation lines: an odd number of trailing backslashes escapes the newline.
		logical := first
		for endsWithOddBackslashes(logical) && i+1 < len(lines) {
			i++
			logical = logical[:len(logical)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if endsWithOddBackslashes(logical) { // continuation at end of file: Java drops the backslash
			logical = logical[:len(logical)-1]
		}
		rawKey, rawValue := splitKeyValue(logical)
		key, kerr := unescapeProperties(rawKey)
		value, verr := unescapeProperties(rawValue)
		switch {
		case kerr != "":
			probs.addAt(fileOrigin(file, startLine), rawKey, rawValue, "key: "+kerr)
			continue
		case verr != "":
			probs.addAt(fileOrigin(file, startLine), key, rawValue, verr)
			continue
		}
		out = append(out, rawEntry{key: key, value: strings.TrimRight(value, " \t\f"), line: startLine})
	}
	return out, probs
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitKeyValue splits a logical line (leading whitespace already removed) at the
// first unescaped '=', ':' or whitespace; the separator and blanks around it are dropped.
func splitKeyValue(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // skip the escaped character
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	key = line[:end]
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescapeProperties resolves backslash escapes; a non-empty second result names a
// malformed escape.
func unescapeProperties(s string) (string, string) {
	if !strings.Contains(s, `\`) {
		return s, ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", `malformed \uXXXX escape`
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", `malformed \uXXXX escape`
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), ""
}
