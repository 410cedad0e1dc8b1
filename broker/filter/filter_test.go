package filter

import (
	"errors"
	"strings"
	"testing"
)

func lookup(props map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := props[name]
		return v, ok
	}
}

func TestMatch(t *testing.T) {
	msg := map[string]string{"a": "7", "b": "x", "c": "true", "d": "2.5", "s": "it's", "neg": "-3", "txt": "abc"}
	cases := []struct {
		expr string
		want bool
	}{
		{"a > 5 AND b = 'x'", true},
		{"a > 7 AND b = 'x'", false},
		{"a >= 7", true},
		{"a < 7", false},
		{"a <= 7", true},
		{"a <> 7", false},
		{"a = 7", true},
		{"a = 7.0", true},
		{"d > 2", true},
		{"d < 2.6", true},
		{"neg < -2", true},
		{"neg = -3", true},
		{"b = 'y' OR a = 7", true},
		{"b = 'y' OR a = 8", false},
		{"NOT (b = 'y')", true},
		{"not b = 'x'", false},
		{"(a > 5 OR b = 'y') AND c = TRUE", true},
		{"c = true", true},
		{"c = FALSE", false},
		{"s = 'it''s'", true},
		{"a BETWEEN 5 AND 7", true},
		{"a BETWEEN 8 AND 9", false},
		{"a NOT BETWEEN 8 AND 9", true},
		{"a NOT BETWEEN 5 AND 9", false},
		{"b IN ('x', 'y')", true},
		{"b IN ('y', 'z')", false},
		{"b NOT IN ('y', 'z')", true},
		{"a IN (1, 7)", true},
		{"b IS NOT NULL", true},
		{"b IS NULL", false},
		{"missing IS NULL", true},
		{"missing IS NOT NULL", false},
		// A missing property makes every comparison unknown: neither it nor its
		// negation matches (Java semantics).
		{"missing = 'x'", false},
		{"missing <> 'x'", false},
		{"NOT (missing = 'x')", false},
		{"missing > 1", false},
		{"missing BETWEEN 1 AND 2", false},
		{"missing IN ('x')", false},
		{"missing NOT IN ('x')", false},
		{"missing = 'x' OR a = 7", true},
		{"a = 7 OR missing = 'x'", true},
		{"missing = 'x' AND a = 7", false},
		// A property that is not a number compared with a number is unknown, too.
		{"txt > 1", false},
		{"NOT (txt > 1)", false},
		{"txt = 'abc'", true},
		{"TRUE", true},
		{"FALSE OR a = 7", true},
		{"A = 7", false}, // property names are case-sensitive
		{"a = 7 and B is null", true},
	}
	for _, c := range cases {
		e, err := Compile(c.expr)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.expr, err)
			continue
		}
		if got := e.Match(lookup(msg)); got != c.want {
			t.Errorf("%q on %v = %v, want %v", c.expr, msg, got, c.want)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr string
		want string // a fragment the message must contain
	}{
		{"", "empty expression"},
		{"   ", "empty expression"},
		{"a >", "offset 3: expected a property, string, number or boolean, found end of expression"},
		{"a > 5 AND", "found end of expression"},
		{"a", "expected a comparison operator, IS, BETWEEN or IN"},
		{"a = 'x", "unterminated string literal"},
		{"(a = 1", "expected ')'"},
		{"a = 1)", "expected operator AND or OR"},
		{"a = 1 b = 2", "expected operator AND or OR"},
		{"a IS 5", "expected NULL"},
		{"a BETWEEN 1 OR 2", "expected AND"},
		{"a IN 1", "expected '(' after IN"},
		{"a IN ('x' 'y')", "expected ',' or ')' in the IN list"},
		{"a IN (b)", "expected a literal in the IN list"},
		{"a NOT = 1", "expected BETWEEN or IN after NOT"},
		{"a # 1", "unexpected character '#'"},
		{"a = 1.2.3", "malformed number"},
		{"AND a = 1", "expected a property"},
	}
	for _, c := range cases {
		_, err := Compile(c.expr)
		if err == nil {
			t.Errorf("Compile(%q) succeeded, want an error containing %q", c.expr, c.want)
			continue
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Compile(%q) error %v does not wrap ErrSyntax", c.expr, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%q) error %q does not contain %q", c.expr, err, c.want)
		}
	}
}

func TestString(t *testing.T) {
	e, err := Compile("a > 5")
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != "a > 5" {
		t.Fatalf("String() = %q", e.String())
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"a > 5 AND b = 'x'", "a NOT IN ('1', '2')", "(x IS NULL) OR NOT y BETWEEN -1 AND 2.5", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Compile(%q): error %v does not wrap ErrSyntax", src, err)
			}
			return
		}
		e.Match(lookup(map[string]string{"a": "1", "b": "x"}))
	})
}
