package filter

import (
	"fmt"
	"strings"
)

// Compile parses src. Errors wrap ErrSyntax and name the offset and the problem.
func Compile(src string) (*Expression, error) {
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("%w: empty expression", ErrSyntax)
	}
	toks, err := lex(src)
	if err != nil {
		return nil, fmt.Errorf("%w (expression %q)", err, src)
	}
	p := &parser{toks: toks}
	root, err := p.parseOr()
	if err == nil && p.peek().kind != tokEOF {
		err = p.fail("operator AND or OR", p.peek())
	}
	if err != nil {
		return nil, fmt.Errorf("%w (expression %q)", err, src)
	}
	return &Expression{src: src, root: root}, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) isKeyword(word string) bool {
	t := p.peek()
	return t.kind == tokKeyword && t.text == word
}

func (p *parser) fail(want string, got token) error {
	return fmt.Errorf("%w at offset %d: expected %s, found %s", ErrSyntax, got.pos, want, got)
}

func (p *parser) expectKeyword(word string) error {
	if !p.isKeyword(word) {
		return p.fail(word, p.peek())
	}
	p.next()
	return nil
}

func (p *parser) parseOr() (boolNode, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("OR") {
		p.next()
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = orNode{left, right}
	}
	return left, nil
}

func (p *parser) parseAnd() (boolNode, error) {
	left, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("AND") {
		p.next()
		right, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		left = andNode{left, right}
	}
	return left, nil
}

func (p *parser) parseNot() (boolNode, error) {
	if p.isKeyword("NOT") {
		p.next()
		inner, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return notNode{inner}, nil
	}
	return p.parsePredicate()
}

// startsComparison reports whether t continues an operand into a predicate.
func startsComparison(t token) bool {
	if t.kind == tokOp {
		return true
	}
	return t.kind == tokKeyword && (t.text == "IS" || t.text == "BETWEEN" || t.text == "IN" || t.text == "NOT")
}

func (p *parser) parsePredicate() (boolNode, error) {
	t := p.peek()
	if t.kind == tokLParen {
		p.next()
		inner, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if p.peek().kind != tokRParen {
			return nil, p.fail("')'", p.peek())
		}
		p.next()
		return inner, nil
	}
	if t.kind == tokKeyword && (t.text == "TRUE" || t.text == "FALSE") && !startsComparison(p.peekAt(1)) {
		p.next()
		return constNode(t.text == "TRUE"), nil
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	switch {
	case op.kind == tokOp:
		p.next()
		right, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		return compareNode{op: op.text, left: left, right: right}, nil
	case op.kind == tokKeyword && op.text == "IS":
		p.next()
		negate := false
		if p.isKeyword("NOT") {
			p.next()
			negate = true
		}
		if err := p.expectKeyword("NULL"); err != nil {
			return nil, err
		}
		return isNullNode{operand: left, negate: negate}, nil
	}
	negate := false
	if op.kind == tokKeyword && op.text == "NOT" {
		p.next()
		negate = true
		op = p.peek()
	}
	switch {
	case op.kind == tokKeyword && op.text == "BETWEEN":
		p.next()
		lo, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		if err := p.expectKeyword("AND"); err != nil {
			return nil, err
		}
		hi, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		return betweenNode{operand: left, lo: lo, hi: hi, negate: negate}, nil
	case op.kind == tokKeyword && op.text == "IN":
		p.next()
		set, err := p.parseInList()
		if err != nil {
			return nil, err
		}
		return inNode{operand: left, set: set, negate: negate}, nil
	}
	if negate {
		return nil, p.fail("BETWEEN or IN after NOT", op)
	}
	return nil, p.fail("a comparison operator, IS, BETWEEN or IN", op)
}

func (p *parser) parseInList() ([]value, error) {
	if p.peek().kind != tokLParen {
		return nil, p.fail("'(' after IN", p.peek())
	}
	p.next()
	var set []value
	for {
		t := p.peek()
		o, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		if o.isProperty() {
			return nil, p.fail("a literal in the IN list", t)
		}
		set = append(set, o.lit)
		switch sep := p.next(); sep.kind {
		case tokComma:
		case tokRParen:
			return set, nil
		default:
			return nil, p.fail("',' or ')' in the IN list", sep)
		}
	}
}

func (p *parser) parseOperand() (operand, error) {
	t := p.peek()
	switch t.kind {
	case tokIdent:
		p.next()
		return operand{property: t.text}, nil
	case tokString:
		p.next()
		return operand{lit: value{kind: kindString, s: t.text}}, nil
	case tokNumber:
		p.next()
		v, ok := parseNumber(t.text)
		if !ok {
			return operand{}, fmt.Errorf("%w at offset %d: malformed number %q", ErrSyntax, t.pos, t.text)
		}
		return operand{lit: v}, nil
	case tokKeyword:
		switch t.text {
		case "TRUE", "FALSE":
			p.next()
			return operand{lit: value{kind: kindBool, b: t.text == "TRUE"}}, nil
		case "NULL":
			p.next()
			return operand{lit: value{kind: kindNull}}, nil
		}
	}
	return operand{}, p.fail("a property, string, number or boolean", t)
}
