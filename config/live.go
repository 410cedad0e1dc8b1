package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Live changes (UPDATE_BROKER_CONFIG, mqadmin updateBrokerConfig, `rocketraft
// admin broker config set`). Only a few keys are read again by the running
// code; every other key is read once, at start, by whatever it configures (the
// listeners, the raft node, the store's file layout, the flush goroutine), and
// changing it in the struct alone would report a value the node does not use.
// So a live change names its keys, and ApplyLive refuses the whole change if
// any key is not in liveKeys, naming the key and why.

// ErrNotLive is matched by a *LiveError that refuses a key which cannot change
// while the broker runs.
var ErrNotLive = errors.New("key cannot change while the broker runs")

// LiveKey is a key that may change while the broker runs, and what re-reads it.
type LiveKey struct {
	Name   string
	Effect string // when the new value takes effect
}

// liveKeys are the keys whose new value the running broker uses. The broker
// applies them (cmd/rocketraft wires each to its setter); a key added here
// without a setter there would be reported as changed and not be.
var liveKeys = []LiveKey{
	{"maxMessageSize", "the next send is checked against it"},
	{"fileReservedTime", "the next retention run (every 10 s) keeps CommitLog segments this long"},
	{"deleteWhen", "the next retention run deletes expired segments only during these hours"},
	{"diskMaxUsedSpaceRatio", "the next retention run deletes segments early above this disk usage"},
	{"logLevel", "the node's log switches at once"},
}

// LiveKeys lists the keys ApplyLive accepts, in file order.
func LiveKeys() []LiveKey { return slices.Clone(liveKeys) }

func isLive(name string) bool {
	return slices.ContainsFunc(liveKeys, func(k LiveKey) bool { return k.Name == name })
}

// notLiveReason says why key cannot change while the broker runs, in the words
// an operator needs: what reads it once, and what to do instead.
func notLiveReason(key string) string {
	const restart = "; set it in broker.conf and restart the node"
	switch {
	case slices.Contains([]string{"brokerClusterName", "brokerName", "brokerIP1", "listenPort", "namesrvAddr",
		"storePathRootDir", "dLegerGroup", "dLegerPeers", "dLegerPeerClientAddrs", "dLegerSelfId", "dLegerJoin",
		"preferredLeaderId", "adminListen"}, key):
		return "the node's identity, addresses and peers are read once at start" + restart
	case slices.Contains([]string{"mappedFileSizeCommitLog", "mappedFileSizeConsumeQueue", "maxIndexNum", "maxHashSlotNum"}, key):
		return "it shapes the files on disk, which every node of the group must agree on; the store reads it once when it opens"
	case strings.HasPrefix(key, "raft") || strings.HasPrefix(key, "groupCommit"):
		return "the raft node and its group-commit proposer are built at start" + restart
	case key == "flushDiskType" || key == "flushIntervalCommitLog":
		return "the CommitLog flush goroutine reads it once at start" + restart
	case key == "aclEnable" || key == "aclFile":
		return "the authorisation stage is built at start; change accounts live with `rocketraft admin acl`"
	case strings.HasPrefix(key, "tls") || key == "namesrvAuthSecret":
		return "listeners, certificates and credentials are set up at start" + restart
	}
	return "it is read once at start" + restart
}

// Change is one key a live update changed, as a file would write the values.
type Change struct {
	Key, Old, New string
}

// LiveError refuses a live update: every key that is unknown, cannot change
// live or has a bad value, one Problem each. Nothing of the update was applied.
//
// Invariant: len(Problems) > 0.
type LiveError struct {
	Problems []Problem
	// NotLive are the keys among Problems that exist but cannot change live.
	NotLive []string
}

// Error lists each problem on its own line as `key="value": rule`.
func (e *LiveError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, ErrNotLive) true when a key cannot change live, and
// errors.Is(err, ErrInvalid) when a key is unknown or a value breaks a rule.
func (e *LiveError) Is(target error) bool {
	switch target {
	case ErrNotLive:
		return len(e.NotLive) > 0
	case ErrInvalid:
		return len(e.NotLive) < len(e.Problems)
	}
	return false
}

// ApplyLive returns b with the settings of text (Java properties, as
// UPDATE_BROKER_CONFIG carries them) and the keys that changed, all or none: a
// key that is unknown, not live, given twice or set to a value that breaks a
// rule (its own, or one between keys) refuses the whole update with a
// *LiveError. A key set to the value in force is no change and is accepted
// whatever the key, so the text GET_BROKER_CONFIG returns can be sent back with
// one line edited. b itself is never modified.
func (b Broker) ApplyLive(text string) (Broker, []Change, error) {
	raw, probs := parseProperties("", []byte(text))
	for i := range probs {
		probs[i].Origin = Origin{} // a line of a request, not of a file
	}
	var notLive []string
	next := b
	next.Warnings = nil
	byName := indexKeys(brokerLoadKeys)
	seen := map[string]bool{}
	var changed []string
	for _, e := range raw {
		spec, ok := byName[strings.ToLower(e.key)]
		if !ok {
			probs.add(e.key, shownUnknown(brokerKeys, e.key, e.value), unknownKeyRule(brokerKeys, e.key))
			continue
		}
		name := spec.name
		if seen[name] {
			probs.add(name, shown(name, e.value), "given twice")
			continue
		}
		seen[name] = true
		if !slices.ContainsFunc(brokerKeys, func(k keySpec[Broker]) bool { return k.name == name }) {
			// An Apache key without effect here: nothing reads it.
			notLive = append(notLive, name)
			probs.add(name, e.value, "an Apache RocketMQ key with no effect in rocketraft, so there is nothing to change")
			continue
		}
		if isSecretKey(name) && e.value == Mask {
			continue // the masked value GET_BROKER_CONFIG shows: no change
		}
		trial := next
		if err := spec.set(&trial, e.value); err != nil {
			probs.add(name, shown(name, e.value), err.Error())
			continue
		}
		if spec.get(&trial) == spec.get(&b) && !isSecretKey(name) {
			continue // the value in force, whatever the key
		}
		if !isLive(name) {
			notLive = append(notLive, name)
			probs.add(name, shown(name, e.value), "cannot change while the broker runs: "+notLiveReason(name))
			continue
		}
		next = trial
		changed = append(changed, name)
	}
	if len(probs) == 0 {
		probs = append(probs, newProblems(b.validate(), next.validate())...)
	}
	if len(probs) > 0 {
		return b, nil, &LiveError{Problems: probs, NotLive: notLive}
	}
	var out []Change
	for _, s := range brokerKeys {
		if slices.Contains(changed, s.name) {
			out = append(out, Change{Key: s.name, Old: s.get(&b), New: s.get(&next)})
		}
	}
	next.Warnings = b.Warnings
	return next, out, nil
}

// newProblems are the problems of after that before did not have: what the
// update broke, not what was already true of the running config (a TLS file
// removed since start is not the update's fault).
func newProblems(before, after problems) problems {
	var out problems
	for _, p := range after {
		if !slices.ContainsFunc(before, func(q Problem) bool { return q.Key == p.Key && q.Rule == p.Rule }) {
			out = append(out, p)
		}
	}
	return out
}

// PropertiesText renders every broker key with its value in force as Java
// properties, one `key=value` line each in file order, escaped so that
// java.util.Properties.load (mqadmin getBrokerConfig) and ApplyLive read the
// exact value back; a set secret shows as Mask.
func (b Broker) PropertiesText() string {
	ps := make([]Property, len(brokerKeys))
	for i, s := range brokerKeys {
		v := s.get(&b)
		if isSecretKey(s.name) && b.NamesrvAuthSecret != "" {
			v = Mask
		}
		ps[i] = Property{Key: s.name, Value: v}
	}
	return WriteProperties(ps)
}

// escapeProperty escapes s as java.util.Properties.store does: backslash and
// control characters always, separators in keys, a leading blank in values,
// and everything outside printable ASCII as \uXXXX (load reads ISO-8859-1, and
// mqadmin's string2Properties feeds it UTF-8 bytes).
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case key && (r == '=' || r == ':' || r == '#' || r == '!'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04X\u%04X`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Property is one key=value entry of Java properties text.
type Property struct {
	Key, Value string
}

// ParseProperties reads Java properties text (GET_BROKER_CONFIG's body) into
// its entries in order, with java.util.Properties.load's grammar; a malformed
// escape is an error naming its line's key.
func ParseProperties(text string) ([]Property, error) {
	raw, probs := parseProperties("", []byte(text))
	if err := probs.err(); err != nil {
		return nil, err
	}
	out := make([]Property, len(raw))
	for i, e := range raw {
		out[i] = Property{Key: e.key, Value: e.value}
	}
	return out, nil
}

// WriteProperties writes ps as Java properties text, one escaped key=value
// line each (UPDATE_BROKER_CONFIG's body).
func WriteProperties(ps []Property) string {
	var sb strings.Builder
	for _, p := range ps {
		sb.WriteString(escapeProperty(p.Key, true) + "=" + escapeProperty(p.Value, false) + "\n")
	}
	return sb.String()
}

// LiveKeysMarkdown renders keys as a Markdown table (key, when the change
// takes effect), the form docs/ embeds.
func LiveKeysMarkdown(keys []LiveKey) string {
	var b strings.Builder
	b.WriteString("| key | a change takes effect |\n|---|---|\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "| `%s` | %s |\n", k.Name, mdEscape(k.Effect))
	}
	return b.String()
}
