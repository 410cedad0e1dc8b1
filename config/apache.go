package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Apache RocketMQ's broker reads one properties file into five Java beans
// (BrokerConfig with BrokerIdentity, NettyServerConfig, NettyClientConfig,
// MessageStoreConfig and, in 5.x, AuthConfig): every setter is a key, and a
// key no bean has is silently ignored. rocketraft keeps Apache's names where
// the meaning is the same (brokerKeys); the rest of Apache's keys are listed
// in apache_keys.go, grouped by why they mean nothing here (thread pools,
// master/slave HA, POP, ...). Such a key loads: the broker logs one Warning
// for it at start, naming the key, its value, where it came from and why, so
// an operator's broker.conf carries over and nothing is silently ignored.
// A key that is in neither list is still an error with a suggestion.

// Warning is a key accepted without effect.
type Warning struct {
	Key    string // Apache's spelling
	Value  string // as the winning layer wrote it
	Reason string // why it has no effect under rocketraft, one line
	Origin Origin // the layer the value came from
}

// String renders the warning like a Problem: `broker.conf:5: brokerId="0": no
// effect: raft assigns broker ids ...`.
func (w Warning) String() string {
	kv := fmt.Sprintf("%s=%q: no effect: %s", w.Key, w.Value, w.Reason)
	switch w.Origin.Kind {
	case OriginCode:
		return kv
	case OriginFlag:
		return "--set " + kv
	default:
		return w.Origin.String() + ": " + kv
	}
}

// apacheGroup is Apache keys sharing one reason for having no effect, for the
// configuration T they load into (Broker or Namesrv).
type apacheGroup[T any] struct {
	reason string
	keys   []string
	// refuse, when set, returns the rule a value breaks although the key has
	// no effect: a setting whose absence would make the broker less safe than
	// the operator asked for (5.x authenticationEnabled=true) is an error,
	// not a warning.
	refuse func(value string) string
	// reasonFor, when set, words the reason for this value and the keys loaded
	// before it (storePathCommitLog compares itself with storePathRootDir).
	reasonFor func(cfg *T, value string) string
}

// ApacheKeyGroup documents Apache keys accepted without effect: the reason and
// the keys it covers, for the operator's page.
type ApacheKeyGroup struct {
	Reason string
	Keys   []string // sorted ignoring case
}

// ApacheKeys lists every Apache broker key rocketraft accepts without effect,
// by reason, in the order of apache_keys.go.
func ApacheKeys() []ApacheKeyGroup { return keyGroupDocs(apacheGroups) }

// ApacheNamesrvKeys lists every Apache nameserver key rocketraft accepts
// without effect, by reason, in the order of apache_namesrv_keys.go.
func ApacheNamesrvKeys() []ApacheKeyGroup { return keyGroupDocs(apacheNamesrvGroups) }

func keyGroupDocs[T any](groups []apacheGroup[T]) []ApacheKeyGroup {
	out := make([]ApacheKeyGroup, len(groups))
	for i, g := range groups {
		keys := slices.Clone(g.keys)
		slices.SortFunc(keys, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
		out[i] = ApacheKeyGroup{Reason: g.reason, Keys: keys}
	}
	return out
}

// ApacheKeysMarkdown renders groups as a Markdown table (keys, why), the form
// docs/ embeds.
func ApacheKeysMarkdown(groups []ApacheKeyGroup) string {
	var b strings.Builder
	b.WriteString("| keys | why they have no effect |\n|---|---|\n")
	for _, g := range groups {
		keys := make([]string, len(g.Keys))
		for i, k := range g.Keys {
			keys[i] = "`" + k + "`"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", strings.Join(keys, " "), mdEscape(g.Reason))
	}
	return b.String()
}

// noEffectRows turns groups into rows of the loading table: each parses any
// value (unless refuse says otherwise) into a Warning that warn records on the
// configuration. They are not in the key table (brokerKeys, namesrvKeys), so
// the key docs, Effective and Validate never see them.
func noEffectRows[T any](groups []apacheGroup[T], warn func(cfg *T, w Warning)) []keySpec[T] {
	var rows []keySpec[T]
	for _, g := range groups {
		for _, name := range g.keys {
			rows = append(rows, noEffectRow(name, g, warn))
		}
	}
	return rows
}

func noEffectRow[T any](name string, g apacheGroup[T], warn func(cfg *T, w Warning)) keySpec[T] {
	return keySpec[T]{
		name: name,
		set: func(cfg *T, s string) error {
			if g.refuse != nil {
				if rule := g.refuse(s); rule != "" {
					return errors.New(rule)
				}
			}
			reason := g.reason
			if g.reasonFor != nil {
				reason = g.reasonFor(cfg, s)
			}
			warn(cfg, Warning{Key: name, Value: s, Reason: reason})
			return nil
		},
		get: func(*T) string { return "" },
	}
}

// brokerLoadKeys is what a broker config is loaded with: our keys first (so
// loading the Apache rows can read their values), then Apache's keys without
// effect. Each name, ignoring case, is in one row only (a test checks it).
var brokerLoadKeys = slices.Concat(brokerKeys, noEffectRows(apacheGroups,
	func(b *Broker, w Warning) { b.Warnings = append(b.Warnings, w) }))

// attributeWarnings gives every warning the origin of its key's value and
// orders them as problems are ordered: file lines first, then variables, flags.
func attributeWarnings(ws []Warning, origins map[string]Origin) []Warning {
	if len(ws) == 0 {
		return nil
	}
	ps := make(problems, len(ws))
	for i, w := range ws {
		ps[i] = Problem{Key: w.Key, Value: w.Value, Rule: w.Reason, Origin: origins[w.Key]}
	}
	ps.sortByOrigin()
	out := make([]Warning, len(ps))
	for i, p := range ps {
		out[i] = Warning{Key: p.Key, Value: p.Value, Reason: p.Rule, Origin: p.Origin}
	}
	return out
}
