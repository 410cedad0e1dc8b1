package config

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Match them with errors.Is; the messages carry the details.
var (
	// ErrInvalid is matched by every *ValidationError: the file parsed but one or
	// more keys are unknown or hold values that break a rule.
	ErrInvalid = errors.New("invalid configuration")
	// ErrSyntax means the file could not be read as its format at all (broken YAML).
	ErrSyntax = errors.New("configuration syntax error")
	// ErrUnknownPeer means an id is not among dLegerPeers.
	ErrUnknownPeer = errors.New("peer id not in dLegerPeers")
)

// Problem is one broken rule: the canonical key name, the value as written (or,
// for a value set in code, as it would be written) and the rule it breaks.
type Problem struct {
	Key   string
	Value string
	Rule  string
}

// String renders the problem as `key="value": rule`.
func (p Problem) String() string {
	return fmt.Sprintf("%s=%q: %s", p.Key, p.Value, p.Rule)
}

// ValidationError reports every problem found in one pass, so an operator fixes
// a file once instead of once per restart.
//
// Invariant: len(Problems) > 0.
type ValidationError struct {
	Problems []Problem
}

// Error lists each problem on its own line as `key="value": rule`.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrInvalid) true for every validation error.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Has reports whether some problem names key (canonical spelling).
func (e *ValidationError) Has(key string) bool { return hasKey(e.Problems, key) }

// problems collects Problems; its err is nil when nothing was added.
type problems []Problem

func (ps *problems) add(key, value, rule string) {
	*ps = append(*ps, Problem{Key: key, Value: value, Rule: rule})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}
