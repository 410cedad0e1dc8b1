package config

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
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
// for a value set in code, as it would be written), the rule it breaks and
// where that value came from.
type Problem struct {
	Key   string
	Value string
	Rule  string
	// Origin is the layer of Value: the file and line, the ROCKETRAFT_ variable,
	// --set, or the default. A rule between keys is reported on one key, with
	// that key's origin. Zero for a struct validated in code.
	Origin Origin
}

// String renders the problem with its origin first, the way compilers name
// file and line: `broker.conf:3: listenPort="abc": rule`,
// `env ROCKETRAFT_LISTENPORT: listenPort="abc": rule`, and for a flag the
// command line as typed, `--set listenPort="abc": rule`. A value set in code
// has no origin and renders as `key="value": rule`.
func (p Problem) String() string {
	kv := fmt.Sprintf("%s=%q: %s", p.Key, p.Value, p.Rule)
	switch p.Origin.Kind {
	case OriginCode:
		return kv
	case OriginFlag:
		return "--set " + kv
	default:
		return p.Origin.String() + ": " + kv
	}
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

func (ps *problems) addAt(o Origin, key, value, rule string) {
	*ps = append(*ps, Problem{Key: key, Value: value, Rule: rule, Origin: o})
}

// attribute gives every problem without an origin the origin of its key's
// value, so a rule checked on the final struct still names the file line,
// variable or flag to change.
func (ps problems) attribute(origins map[string]Origin) {
	for i := range ps {
		if ps[i].Origin.Kind == OriginCode {
			ps[i].Origin = origins[ps[i].Key]
		}
	}
}

// sortByOrigin orders problems the way an operator works through them: the
// file top to bottom, then the variables by name, then the flags, then
// defaults; stable otherwise.
func (ps problems) sortByOrigin() {
	rank := map[OriginKind]int{OriginFile: 0, OriginEnv: 1, OriginFlag: 2, OriginDefault: 3, OriginCode: 4}
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := cmp.Compare(rank[a.Origin.Kind], rank[b.Origin.Kind]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Origin.Line, b.Origin.Line); c != 0 {
			return c
		}
		return strings.Compare(a.Origin.Name, b.Origin.Name)
	})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps}
}
