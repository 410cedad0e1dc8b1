package config

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// Effective is a loaded configuration as --print-config shows it: every key,
// sorted by name ignoring case, with its final value as a file would hold it
// and the origin of that value.
type Effective struct {
	Kind string // "broker" or "namesrv"
	Keys []EffectiveKey
	// Warnings are the keys accepted without effect (Broker.Warnings); Text
	// lists them after the keys, as comments.
	Warnings []Warning
}

// EffectiveKey is one key of an Effective configuration.
type EffectiveKey struct {
	Name   string // canonical spelling
	Value  string // as a file would hold it; Mask for a set secret
	Origin Origin
	Masked bool // Value is Mask, not the secret
}

// Mask stands in for a secret's value. It is shorter than any valid secret, so
// printed output pasted back into a file fails validation instead of
// installing "********" as the group's secret.
const Mask = "********"

func effective[T any](kind string, table []keySpec[T], cfg *T, origins map[string]Origin) Effective {
	e := Effective{Kind: kind, Keys: make([]EffectiveKey, 0, len(table))}
	for _, s := range table {
		k := EffectiveKey{Name: s.name, Value: s.get(cfg), Origin: origins[s.name]}
		if isSecretKey(s.name) && k.Value != "" {
			k.Value, k.Masked = Mask, true
		}
		e.Keys = append(e.Keys, k)
	}
	slices.SortFunc(e.Keys, func(a, b EffectiveKey) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return e
}

// Lookup returns the key named name (any case).
func (e Effective) Lookup(name string) (EffectiveKey, bool) {
	for _, k := range e.Keys {
		if strings.EqualFold(k.Name, name) {
			return k, true
		}
	}
	return EffectiveKey{}, false
}

// Text renders e in broker.conf syntax, one key a line, its origin as a
// trailing comment in one column:
//
//	listenPort=10921          # env ROCKETRAFT_LISTENPORT
//
// Java properties have no trailing comments, so the text is for reading: to
// use it as a file, drop each line's "   # origin" tail (and fill in secrets).
func (e Effective) Text() string {
	var b strings.Builder
	b.WriteString("# rocketraft " + e.Kind + ": effective configuration, every key, with the source of each value.\n")
	b.WriteString("# Precedence, lowest first: default < file < env " + EnvPrefix + "<key> < --set. Secrets show as " + Mask + ".\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	for _, k := range e.Keys {
		origin := k.Origin.String()
		if k.Masked {
			origin += " (masked)"
		}
		// tabwriter treats tabs as cell breaks; a value never holds one after
		// parsing except by escape, so render it visibly.
		fmt.Fprintf(tw, "%s=%s\t# %s\n", k.Name, strings.ReplaceAll(k.Value, "\t", `\t`), origin)
	}
	_ = tw.Flush() // a strings.Builder does not fail
	if len(e.Warnings) > 0 {
		b.WriteString("# Accepted without effect (Apache RocketMQ keys; the broker logs each at start):\n")
		tw = tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
		for _, w := range e.Warnings {
			fmt.Fprintf(tw, "# %s=%s\t# %s: %s\n", w.Key, strings.ReplaceAll(w.Value, "\t", `\t`), w.Origin, w.Reason)
		}
		_ = tw.Flush()
	}
	return b.String()
}
