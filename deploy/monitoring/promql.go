package monitoring

import (
	"fmt"
	"sort"
	"strings"
)

// keywords are PromQL words that are neither metrics nor functions: binary
// operators, vector matching, modifiers and literals.
var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"offset": true, "bool": true, "inf": true, "nan": true,
}

// aggregations may put their by/without clause before the parentheses
// ("sum by (le) (…)"), so they are not always followed by "(".
var aggregations = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// labelListKeywords are followed by a parenthesised list of label names, which
// must not be read as metrics.
var labelListKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

// MetricNames returns, sorted and without duplicates, the metric names a
// PromQL expression selects: bare identifiers that are not functions
// (followed by "("), keywords, label names of by/without/on/ignoring/group_*
// lists or Grafana variables ($x, ${x}), plus the values of __name__="…"
// matchers. Strings, label matchers, ranges, subqueries and numbers (durations
// included) are skipped. It is a scanner, not a parser: it reports unbalanced
// brackets and unterminated strings, not every syntax error.
func MetricNames(expr string) ([]string, error) {
	s := &scanner{src: expr}
	names := map[string]bool{}
	var stack []byte
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			s.pos++
		case c == '#': // a comment runs to the end of the line
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '"' || c == '\'' || c == '`':
			if _, err := s.str(); err != nil {
				return nil, err
			}
		case c == '{':
			matched, err := s.matchers()
			if err != nil {
				return nil, err
			}
			for _, n := range matched {
				names[n] = true
			}
		case c == '[':
			if err := s.skipTo(']'); err != nil {
				return nil, err
			}
		case c == '(':
			stack = append(stack, ')')
			s.pos++
		case c == ')':
			if len(stack) == 0 {
				return nil, fmt.Errorf("promql %q: unbalanced ')' at %d", expr, s.pos)
			}
			stack = stack[:len(stack)-1]
			s.pos++
		case c == '$':
			s.variable()
		case isDigit(c) || c == '.' && s.pos+1 < len(s.src) && isDigit(s.src[s.pos+1]):
			s.number()
		case isIdentStart(c):
			word := s.ident()
			next := s.peekNonSpace()
			switch {
			case labelListKeywords[strings.ToLower(word)]:
				if next == '(' {
					s.pos = s.skipSpace(s.pos)
					if err := s.skipTo(')'); err != nil {
						return nil, err
					}
				}
			case keywords[strings.ToLower(word)], aggregations[strings.ToLower(word)] && (next == '(' || s.nextWordIs("by", "without")):
			case next == '(': // a function
			default:
				names[word] = true
			}
		default: // operators, commas, '@'
			s.pos++
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("promql %q: %d unclosed '('", expr, len(stack))
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

type scanner struct {
	src string
	pos int
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}

func isIdent(c byte) bool { return isIdentStart(c) || isDigit(c) }

func (s *scanner) skipSpace(i int) int {
	for i < len(s.src) && strings.IndexByte(" \t\r\n", s.src[i]) >= 0 {
		i++
	}
	return i
}

func (s *scanner) peekNonSpace() byte {
	if i := s.skipSpace(s.pos); i < len(s.src) {
		return s.src[i]
	}
	return 0
}

// nextWordIs reports whether the next identifier (after spaces) is one of words.
func (s *scanner) nextWordIs(words ...string) bool {
	i := s.skipSpace(s.pos)
	j := i
	for j < len(s.src) && isIdent(s.src[j]) {
		j++
	}
	w := strings.ToLower(s.src[i:j])
	for _, x := range words {
		if w == x {
			return true
		}
	}
	return false
}

func (s *scanner) ident() string {
	start := s.pos
	for s.pos < len(s.src) && isIdent(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

// number skips a number or a duration (5m, 1h30m, 0.5, 1e3, 0x1f).
func (s *scanner) number() {
	for s.pos < len(s.src) && (isIdent(s.src[s.pos]) || s.src[s.pos] == '.') {
		if c := s.src[s.pos]; (c == 'e' || c == 'E') && s.pos+1 < len(s.src) && (s.src[s.pos+1] == '+' || s.src[s.pos+1] == '-') {
			s.pos++
		}
		s.pos++
	}
}

// variable skips a Grafana template variable: $name or ${name...}.
func (s *scanner) variable() {
	s.pos++
	if s.pos < len(s.src) && s.src[s.pos] == '{' {
		if i := strings.IndexByte(s.src[s.pos:], '}'); i >= 0 {
			s.pos += i + 1
			return
		}
	}
	s.ident()
}

// str consumes a quoted string and returns its contents.
func (s *scanner) str() (string, error) {
	q, start := s.src[s.pos], s.pos
	s.pos++
	var b strings.Builder
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == q:
			s.pos++
			return b.String(), nil
		case c == '\\' && q != '`' && s.pos+1 < len(s.src):
			b.WriteByte(s.src[s.pos+1])
			s.pos += 2
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
	return "", fmt.Errorf("promql %q: unterminated string at %d", s.src, start)
}

// skipTo consumes up to and including the closing byte, skipping strings.
func (s *scanner) skipTo(closing byte) error {
	start := s.pos
	s.pos++
	for s.pos < len(s.src) {
		switch c := s.src[s.pos]; {
		case c == closing:
			s.pos++
			return nil
		case c == '"' || c == '\'' || c == '`':
			if _, err := s.str(); err != nil {
				return err
			}
		default:
			s.pos++
		}
	}
	return fmt.Errorf("promql %q: %q at %d is never closed", s.src, s.src[start], start)
}

// matchers consumes a {…} label-matcher list and returns the metric names it
// selects with __name__="…" (regex matchers name no single metric).
func (s *scanner) matchers() ([]string, error) {
	start := s.pos
	s.pos++
	var names []string
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '}':
			s.pos++
			return names, nil
		case c == '"' || c == '\'' || c == '`':
			if _, err := s.str(); err != nil {
				return nil, err
			}
		case isIdentStart(c):
			label := s.ident()
			i := s.skipSpace(s.pos)
			if label == "__name__" && i < len(s.src) && s.src[i] == '=' && (i+1 >= len(s.src) || s.src[i+1] != '~') {
				s.pos = s.skipSpace(i + 1)
				if s.pos < len(s.src) && strings.IndexByte("\"'`", s.src[s.pos]) >= 0 {
					v, err := s.str()
					if err != nil {
						return nil, err
					}
					names = append(names, v)
				}
			}
		default:
			s.pos++
		}
	}
	return nil, fmt.Errorf("promql %q: '{' at %d is never closed", s.src, start)
}

// histogramSuffixes are the series a histogram (and, but for _bucket, a
// summary) exports beside its family name.
var histogramSuffixes = []string{"_bucket", "_sum", "_count"}

// Exported expands the families a registry gathered (name → type, as
// dto.MetricType's String) into every name a query may select: a counter or
// gauge by its name, a histogram by name_bucket, name_sum and name_count, a
// summary by its name, name_sum and name_count.
func Exported(families map[string]string) map[string]bool {
	out := map[string]bool{}
	for name, typ := range families {
		switch typ {
		case "HISTOGRAM", "GAUGE_HISTOGRAM":
			for _, s := range histogramSuffixes {
				out[name+s] = true
			}
		case "SUMMARY":
			out[name], out[name+"_sum"], out[name+"_count"] = true, true, true
		default:
			out[name] = true
		}
	}
	return out
}

// Unknown returns the metric names expr selects that exported lacks, with a
// hint for a histogram named without its suffix or a suffix on a non-histogram.
func Unknown(expr string, exported map[string]bool) ([]string, error) {
	names, err := MetricNames(expr)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, n := range names {
		if exported[n] {
			continue
		}
		hint := ""
		if exported[n+"_bucket"] {
			hint = " (a histogram: select " + n + "_bucket, _sum or _count)"
		}
		for _, suf := range histogramSuffixes {
			if base := strings.TrimSuffix(n, suf); base != n && exported[base] {
				hint = " (" + base + " is not a histogram)"
			}
		}
		unknown = append(unknown, n+hint)
	}
	return unknown, nil
}
