package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// KeyDoc documents one configuration key. BrokerKeys and NamesrvKeys return the
// complete tables, in file order, for generating docs and for a test that fails
// when the docs miss a key.
type KeyDoc struct {
	Name        string // canonical spelling, as RocketMQ writes it
	Default     string // as it would be written in the file; derived defaults are described
	Description string
}

// keySpec is one row of a key table: how to parse, print and check one key of a
// config struct T. One table drives loading, Validate and the docs, so the three
// cannot drift apart.
type keySpec[T any] struct {
	name string
	doc  string
	// derivedDefault, when set, documents a default computed from other keys
	// (it replaces the printed value of the Default* struct in KeyDoc).
	derivedDefault string
	// listSep joins a YAML sequence into the text set parses; "" = scalar key.
	listSep string
	set     func(c *T, s string) error
	get     func(c *T) string
	// check returns the rule the current value breaks, or "". It sees values set
	// in code as well as parsed ones, so it repeats range checks set also does.
	check func(c *T) string
}

func entryText(e rawEntry, sep string) string {
	if e.isList {
		return strings.Join(e.list, sep)
	}
	return e.value
}

// unknownKeyRule suggests the closest known key when the name looks like a typo.
func unknownKeyRule[T any](table []keySpec[T], key string) string {
	if best := suggestKey(table, key); best != "" {
		return "unknown key (did you mean " + best + "?)"
	}
	return "unknown key"
}

// suggestKey is the known key nearest to key, or "" when none is near enough
// to be a typo of it. A key with the same words in another order
// (enableAcl for aclEnable) is the nearest of all: edit distance alone finds
// no such pair.
func suggestKey[T any](table []keySpec[T], key string) string {
	if words := camelWords(key); len(words) > 1 {
		for _, s := range table {
			if slices.Equal(words, camelWords(s.name)) {
				return s.name
			}
		}
	}
	lower := strings.ToLower(key)
	best, bestDist := "", len(lower)
	for _, s := range table {
		if d := editDistance(lower, strings.ToLower(s.name)); d < bestDist {
			best, bestDist = s.name, d
		}
	}
	if best != "" && bestDist <= 3 && bestDist*3 <= len(lower) {
		return best
	}
	return ""
}

// camelWords splits a camelCase key into its lower-cased words, sorted:
// "enableAcl" and "aclEnable" both give [acl enable]. Digits stay with the
// word before them (brokerIP1 → [broker ip1]).
func camelWords(key string) []string {
	var words []string
	start := 0
	for i := 1; i < len(key); i++ {
		upper := key[i] >= 'A' && key[i] <= 'Z'
		prevUpper := key[i-1] >= 'A' && key[i-1] <= 'Z'
		if upper && !prevUpper {
			words = append(words, strings.ToLower(key[start:i]))
			start = i
		}
	}
	words = append(words, strings.ToLower(key[start:]))
	slices.Sort(words)
	return words
}

// checkAll runs every key's own check, in table order.
func checkAll[T any](table []keySpec[T], cfg *T) problems {
	var probs problems
	for _, s := range table {
		if s.check == nil {
			continue
		}
		if rule := s.check(cfg); rule != "" {
			probs.add(s.name, s.get(cfg), rule)
		}
	}
	return probs
}

func keyDocs[T any](table []keySpec[T], defaults T) []KeyDoc {
	docs := make([]KeyDoc, len(table))
	for i, s := range table {
		def := s.derivedDefault
		if def == "" {
			def = s.get(&defaults)
		}
		docs[i] = KeyDoc{Name: s.name, Default: def, Description: s.doc}
	}
	return docs
}

// dropKeys removes problems on keys that already have one: a key whose value did
// not parse keeps its default, and a second report about that default would
// point the operator at the wrong thing.
func dropKeys(ps problems, have problems) problems {
	seen := make(map[string]bool, len(have))
	for _, p := range have {
		seen[p.Key] = true
	}
	var out problems
	for _, p := range ps {
		if !seen[p.Key] {
			out = append(out, p)
		}
	}
	return out
}

// KeysMarkdown renders keys as a Markdown table (name, default, description),
// the form docs/ embeds; a docs test compares its file against this output.
func KeysMarkdown(keys []KeyDoc) string {
	var b strings.Builder
	b.WriteString("| key | default | description |\n|---|---|---|\n")
	for _, k := range keys {
		def := "`" + k.Default + "`"
		if k.Default == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k.Name, mdEscape(def), mdEscape(k.Description))
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func itoa(n int) string             { return strconv.Itoa(n) }
func i64toa(n int64) string         { return strconv.FormatInt(n, 10) }
func u64toa(n uint64) string        { return strconv.FormatUint(n, 10) }
func btoa(v bool) string            { return strconv.FormatBool(v) }
func rangeRule(lo, hi int64) string { return fmt.Sprintf("must be %d..%d", lo, hi) }
