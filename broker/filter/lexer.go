package filter

import (
	"errors"
	"fmt"
	"strings"
)

// ErrSyntax reports a malformed expression; the message names the position and
// what was expected.
var ErrSyntax = errors.New("sql92 syntax error")

type tokenKind int

const (
	tokEOF tokenKind = iota
	tokIdent
	tokString
	tokNumber
	tokOp     // = <> < <= > >=
	tokLParen // (
	tokRParen // )
	tokComma
	tokKeyword // AND OR NOT IS NULL BETWEEN IN TRUE FALSE, upper-cased
)

var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IS": true, "NULL": true,
	"BETWEEN": true, "IN": true, "TRUE": true, "FALSE": true,
}

type token struct {
	kind tokenKind
	text string // keywords upper-cased; strings unquoted
	pos  int    // byte offset in the source
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokString:
		return fmt.Sprintf("string '%s'", t.text)
	default:
		return fmt.Sprintf("%q", t.text)
	}
}

// lex splits src into tokens, ending with tokEOF.
func lex(src string) ([]token, error) {
	var out []token
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			out = append(out, token{tokLParen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tokRParen, ")", i})
			i++
		case c == ',':
			out = append(out, token{tokComma, ",", i})
			i++
		case c == '=':
			out = append(out, token{tokOp, "=", i})
			i++
		case c == '<' || c == '>':
			op := string(c)
			if i+1 < len(src) && (src[i+1] == '=' || (c == '<' && src[i+1] == '>')) {
				op += string(src[i+1])
			}
			out = append(out, token{tokOp, op, i})
			i += len(op)
		case c == '\'':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokString, s, i})
			i += n
		case isDigit(c) || (c == '-' || c == '.') && i+1 < len(src) && (isDigit(src[i+1]) || src[i+1] == '.'):
			j := i + 1
			for j < len(src) && (isDigit(src[j]) || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				(src[j] == '-' || src[j] == '+') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			// A trailing L (Java long literal) is accepted and dropped.
			text := src[i:j]
			if j < len(src) && (src[j] == 'L' || src[j] == 'l') {
				j++
			}
			out = append(out, token{tokNumber, text, i})
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			word := src[i:j]
			if up := strings.ToUpper(word); keywords[up] {
				out = append(out, token{tokKeyword, up, i})
			} else {
				out = append(out, token{tokIdent, word, i})
			}
			i = j
		default:
			return nil, fmt.Errorf("%w at offset %d: unexpected character %q", ErrSyntax, i, c)
		}
	}
	return append(out, token{tokEOF, "", len(src)}), nil
}

// lexString reads a quoted string at src[start] and returns its value and length.
func lexString(src string, start int) (string, int, error) {
	var sb strings.Builder
	i := start + 1
	for i < len(src) {
		if src[i] == '\'' {
			if i+1 < len(src) && src[i+1] == '\'' {
				sb.WriteByte('\'')
				i += 2
				continue
			}
			return sb.String(), i + 1 - start, nil
		}
		sb.WriteByte(src[i])
		i++
	}
	return "", 0, fmt.Errorf("%w at offset %d: unterminated string literal", ErrSyntax, start)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '.' }
