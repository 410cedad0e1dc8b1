package config

import (
	"slices"
	"strings"
)

// EnvPrefix starts every environment variable that sets a key:
// ROCKETRAFT_<key>, where <key> is the key's name in any case —
// ROCKETRAFT_listenPort and ROCKETRAFT_LISTENPORT both set listenPort (keys are
// unique ignoring case, so the match is never ambiguous). Values are the text a
// file would hold; lists are ';'-separated, as in broker.conf.
//
// One environment often serves several processes (rocketraft dev, a compose
// file, a test harness), so a variable naming a key of the other process kind
// only (brokerExpireTimeout, for a broker) is left alone, while a variable that
// names no key of either is an error with a suggestion, like an unknown file
// key. The project's own tools read some ROCKETRAFT_ variables too; IsToolEnv
// lists them.
const EnvPrefix = "ROCKETRAFT_"

// toolEnv are the ROCKETRAFT_ variables that are not keys: what the tests
// (ROCKETRAFT_BIN, ROCKETRAFT_INTEGRATION, ROCKETRAFT_CHAOS and its
// ROCKETRAFT_CHAOS_* settings) and the admin and bench commands
// (credentials) read. A test in cmd/rocketraft fails when the repository uses
// a ROCKETRAFT_ name that is neither a key nor listed here, so a new tool
// variable cannot break brokers started beside it.
var (
	toolEnv         = []string{"ROCKETRAFT_BIN", "ROCKETRAFT_INTEGRATION", "ROCKETRAFT_CHAOS", "ROCKETRAFT_ACCESS_KEY", "ROCKETRAFT_SECRET_KEY", "ROCKETRAFT_ACL_ACCOUNT_SECRET"}
	toolEnvPrefixes = []string{"ROCKETRAFT_CHAOS_"}
)

// IsToolEnv reports whether name is a ROCKETRAFT_ variable of the project's
// tools and tests, which the configuration layers ignore.
func IsToolEnv(name string) bool {
	if slices.Contains(toolEnv, name) {
		return true
	}
	for _, p := range toolEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ToolEnv lists the variables and prefixes (ending in '_', followed by '*')
// IsToolEnv accepts, for documentation.
func ToolEnv() []string {
	out := slices.Clone(toolEnv)
	for _, p := range toolEnvPrefixes {
		out = append(out, p+"*")
	}
	return out
}

// envLayer matches the ROCKETRAFT_ variables of environ ("NAME=value", as
// os.Environ returns it) to the table. otherKeys are the other process kind's
// keys, which are skipped. Two variables for one key (ROCKETRAFT_LISTENPORT and
// ROCKETRAFT_listenPort) are a problem, reported in name order.
func envLayer[T any](table []keySpec[T], otherKeys []string, environ []string) (layer, problems) {
	byLower := indexKeys(table)
	other := make(map[string]bool, len(otherKeys))
	for _, k := range otherKeys {
		other[strings.ToLower(k)] = true
	}
	environ = slices.Clone(environ)
	slices.Sort(environ) // os.Environ's order is the process's; reports should not depend on it
	var probs problems
	l := make(layer)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, EnvPrefix)
		if !ok || IsToolEnv(name) {
			continue
		}
		at := envOrigin(name)
		spec, known := byLower[strings.ToLower(rest)]
		switch {
		case !known && other[strings.ToLower(rest)]:
			continue
		case !known:
			probs.addAt(at, rest, shownUnknown(table, rest, value), unknownEnvRule(table, rest))
			continue
		}
		if first, dup := l[spec.name]; dup {
			probs.addAt(at, spec.name, shown(spec.name, value),
				"set more than once ("+first.origin.Name+" and "+name+")")
			continue
		}
		l[spec.name] = entry{text: value, origin: at}
	}
	return l, probs
}

// unknownEnvRule is unknownKeyRule for a variable, which also says what a
// ROCKETRAFT_ variable may be.
func unknownEnvRule[T any](table []keySpec[T], rest string) string {
	if best := suggestKey(table, rest); best != "" {
		return "unknown key (did you mean " + best + ", as " + EnvPrefix + strings.ToUpper(best) + "?)"
	}
	return "unknown key: a " + EnvPrefix + " variable must name a key, or be one of " + strings.Join(ToolEnv(), ", ")
}
