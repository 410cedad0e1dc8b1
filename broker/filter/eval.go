package filter

import (
	"cmp"
	"strconv"
	"strings"
)

// Expression is a compiled SQL92 filter.
type Expression struct {
	src  string
	root boolNode
}

// String returns the source text.
func (e *Expression) String() string { return e.src }

// Lookup returns a message property; ok is false when the message lacks it.
type Lookup func(name string) (value string, ok bool)

// Match reports whether the message whose properties get returns is selected:
// only a true result matches (false and unknown do not).
func (e *Expression) Match(get Lookup) bool {
	return e.root.eval(get) == truthTrue
}

// truth is SQL's three-valued logic; the zero value is unknown.
type truth int8

const (
	truthUnknown truth = iota
	truthFalse
	truthTrue
)

func truthOf(b bool) truth {
	if b {
		return truthTrue
	}
	return truthFalse
}

type valueKind int8

const (
	kindNull valueKind = iota
	kindString
	kindInt
	kindFloat
	kindBool
)

type value struct {
	kind valueKind
	s    string
	i    int64
	f    float64
	b    bool
}

// operand is a property reference (property != "") or a literal.
type operand struct {
	property string
	lit      value
}

func (o operand) isProperty() bool { return o.property != "" }

func (o operand) resolve(get Lookup) value {
	if !o.isProperty() {
		return o.lit
	}
	v, ok := get(o.property)
	if !ok {
		return value{kind: kindNull}
	}
	return value{kind: kindString, s: v}
}

// coerce brings a property string to the literal's type: properties are strings on
// the wire, and "a > 5" must compare numerically. ok is false when they cannot be
// compared (a non-numeric string against a number, a number against a boolean).
func coerce(a, b value) (value, value, bool) {
	if a.kind == b.kind {
		return a, b, true
	}
	if a.kind == kindString {
		if conv, ok := convertString(a.s, b.kind); ok {
			return coerce(conv, b)
		}
		return a, b, false
	}
	if b.kind == kindString {
		if conv, ok := convertString(b.s, a.kind); ok {
			return coerce(a, conv)
		}
		return a, b, false
	}
	if a.kind == kindInt && b.kind == kindFloat {
		return value{kind: kindFloat, f: float64(a.i)}, b, true
	}
	if a.kind == kindFloat && b.kind == kindInt {
		return a, value{kind: kindFloat, f: float64(b.i)}, true
	}
	return a, b, false
}

func convertString(s string, to valueKind) (value, bool) {
	s = strings.TrimSpace(s)
	switch to {
	case kindInt, kindFloat:
		return parseNumber(s)
	case kindBool:
		switch strings.ToLower(s) {
		case "true":
			return value{kind: kindBool, b: true}, true
		case "false":
			return value{kind: kindBool, b: false}, true
		}
	}
	return value{}, false
}

// compareValues orders a and b; ok is false when either is NULL or they are not
// comparable. Booleans are only equal or not (ordered false < true for <>).
func compareValues(a, b value) (int, bool) {
	if a.kind == kindNull || b.kind == kindNull {
		return 0, false
	}
	a, b, ok := coerce(a, b)
	if !ok {
		return 0, false
	}
	switch a.kind {
	case kindString:
		return strings.Compare(a.s, b.s), true
	case kindInt:
		return cmp.Compare(a.i, b.i), true
	case kindFloat:
		return cmp.Compare(a.f, b.f), true
	case kindBool:
		if a.b == b.b {
			return 0, true
		}
		if !a.b {
			return -1, true
		}
		return 1, true
	}
	return 0, false
}

type boolNode interface {
	eval(get Lookup) truth
}

type constNode bool

func (c constNode) eval(Lookup) truth { return truthOf(bool(c)) }

// andNode and orNode follow ActiveMQ's selector (what RocketMQ runs): an unknown
// left side makes AND unknown without looking right, and OR returns the right
// side's value whenever the left is not true.
type andNode struct{ left, right boolNode }

func (n andNode) eval(get Lookup) truth {
	switch n.left.eval(get) {
	case truthUnknown:
		return truthUnknown
	case truthFalse:
		return truthFalse
	}
	return n.right.eval(get)
}

type orNode struct{ left, right boolNode }

func (n orNode) eval(get Lookup) truth {
	if n.left.eval(get) == truthTrue {
		return truthTrue
	}
	return n.right.eval(get)
}

type notNode struct{ inner boolNode }

func (n notNode) eval(get Lookup) truth {
	switch n.inner.eval(get) {
	case truthTrue:
		return truthFalse
	case truthFalse:
		return truthTrue
	}
	return truthUnknown
}

type compareNode struct {
	op          string
	left, right operand
}

func (n compareNode) eval(get Lookup) truth {
	c, ok := compareValues(n.left.resolve(get), n.right.resolve(get))
	if !ok {
		return truthUnknown
	}
	switch n.op {
	case "=":
		return truthOf(c == 0)
	case "<>":
		return truthOf(c != 0)
	case "<":
		return truthOf(c < 0)
	case "<=":
		return truthOf(c <= 0)
	case ">":
		return truthOf(c > 0)
	case ">=":
		return truthOf(c >= 0)
	}
	panic("filter: compareNode with operator " + n.op + " the lexer never produces")
}

type isNullNode struct {
	operand operand
	negate  bool
}

func (n isNullNode) eval(get Lookup) truth {
	isNull := n.operand.resolve(get).kind == kindNull
	return truthOf(isNull != n.negate)
}

// betweenNode is lo <= x AND x <= hi (NOT: x < lo OR x > hi).
type betweenNode struct {
	operand, lo, hi operand
	negate          bool
}

func (n betweenNode) eval(get Lookup) truth {
	x := n.operand.resolve(get)
	lo, okLo := compareValues(x, n.lo.resolve(get))
	hi, okHi := compareValues(x, n.hi.resolve(get))
	if !okLo || !okHi {
		return truthUnknown
	}
	in := lo >= 0 && hi <= 0
	return truthOf(in != n.negate)
}

type inNode struct {
	operand operand
	set     []value
	negate  bool
}

func (n inNode) eval(get Lookup) truth {
	x := n.operand.resolve(get)
	if x.kind == kindNull {
		return truthUnknown
	}
	for _, v := range n.set {
		if c, ok := compareValues(x, v); ok && c == 0 {
			return truthOf(!n.negate)
		}
	}
	return truthOf(n.negate)
}

// parseNumber reads an integer as int64 and anything else as float64.
func parseNumber(s string) (value, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return value{kind: kindInt, i: n}, true
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return value{kind: kindFloat, f: f}, true
	}
	return value{}, false
}
