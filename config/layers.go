package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/viper"
)

// Layers names the sources of one configuration. Each key takes its value from
// the highest layer that sets it:
//
//	default  <  File  <  environment (ROCKETRAFT_<key>)  <  Set (--set key=value)
//
// The zero Layers is the defaults alone.
type Layers struct {
	// File is broker.conf / namesrv.conf (format by extension); "" for none.
	File string
	// Env reads ROCKETRAFT_<key> variables from the process environment (see
	// EnvPrefix for the mapping and IsToolEnv for the variables left alone).
	Env bool
	// Set are "key=value" overrides, as given to --set, in command-line order.
	Set []string
}

// Broker loads the broker configuration from l and validates it. Effective
// holds every key's final value and origin, for --print-config.
func (l Layers) Broker() (Broker, Effective, error) {
	src, err := l.sources("broker")
	if err != nil {
		return Broker{}, Effective{}, err
	}
	b, eff, err := loadBroker(src)
	if err != nil {
		return Broker{}, Effective{}, l.wrap("broker", err)
	}
	return b, eff, nil
}

// Namesrv loads the nameserver configuration from l and validates it.
func (l Layers) Namesrv() (Namesrv, Effective, error) {
	src, err := l.sources("namesrv")
	if err != nil {
		return Namesrv{}, Effective{}, err
	}
	n, eff, err := loadNamesrv(src)
	if err != nil {
		return Namesrv{}, Effective{}, l.wrap("namesrv", err)
	}
	return n, eff, nil
}

func (l Layers) sources(kind string) (sources, error) {
	src := sources{sets: l.Set}
	if l.File != "" {
		data, err := os.ReadFile(l.File)
		if err != nil {
			return sources{}, fmt.Errorf("config: read %s config %s: %w", kind, l.File, err)
		}
		src.file, src.data, src.format, src.hasFile = l.File, data, FormatFromPath(l.File), true
	}
	if l.Env {
		src.environ = os.Environ()
		if src.environ == nil {
			src.environ = []string{}
		}
	}
	return src, nil
}

func (l Layers) wrap(kind string, err error) error {
	if l.File != "" {
		return fmt.Errorf("config: %s config %s:\n%w", kind, l.File, err)
	}
	return fmt.Errorf("config: %s config:\n%w", kind, err)
}

// sources is Layers after the file was read: the bytes of the file layer (so
// ParseBroker can pass bytes without a name), the environment layer and the
// flags.
type sources struct {
	file    string // name of the file in origins; "" for ParseBroker's bytes
	data    []byte
	format  Format
	hasFile bool
	// environ is os.Environ() when the environment layer is on, nil when off.
	// It only says which variables exist; viper reads their values itself.
	environ []string
	sets    []string
}

// entry is one key's value in one layer, under the key's canonical name.
type entry struct {
	text   string
	origin Origin
}

// layer holds the entries of one source by canonical key name.
type layer map[string]entry

// applyLayers sets cfg from every layer of src and returns the origin of every
// key of table (OriginDefault for keys no layer sets) and the problems: unknown
// or repeated keys in any layer, and final values that do not parse. A syntax
// error that makes the file unreadable as its format is err.
//
// Viper does the layering: the file layer is its config map, the environment
// its bound variables, --set its overrides, so its documented precedence
// (override > env > config) is the one operators get. It cannot say which layer
// answered, so each layer also keeps its entries with their origins here, and
// the answer is checked against the layer named as its origin.
func applyLayers[T any](table []keySpec[T], otherKeys []string, src sources, cfg *T) (map[string]Origin, problems, error) {
	var (
		probs           problems
		file, env, sets layer
	)
	if src.hasFile {
		raw, fprobs, err := decode(src.file, src.data, src.format)
		if err != nil {
			return nil, nil, err
		}
		probs = append(probs, redacted(fprobs)...)
		var lp problems
		file, lp = fileLayer(table, src.file, raw)
		probs = append(probs, lp...)
	}
	if src.environ != nil {
		var lp problems
		env, lp = envLayer(table, otherKeys, src.environ)
		probs = append(probs, lp...)
	}
	sets, lp := setLayer(table, src.sets)
	probs = append(probs, lp...)

	v := viper.New()
	v.AllowEmptyEnv(true) // ROCKETRAFT_ADMINLISTEN= disables, as adminListen= does in a file
	if len(file) > 0 {
		m := make(map[string]any, len(file))
		for name, e := range file {
			m[name] = e.text
		}
		_ = v.MergeConfigMap(m) // never fails: it only merges maps
	}
	for name, e := range env {
		_ = v.BindEnv(name, e.origin.Name) // fails only without a key
	}
	for name, e := range sets {
		v.Set(name, e.text)
	}

	origins := make(map[string]Origin, len(table))
	for i := range table {
		s := &table[i]
		e, ok := highest(s.name, sets, env, file)
		if !ok {
			origins[s.name] = defaultOrigin
			continue
		}
		origins[s.name] = e.origin
		text := v.GetString(s.name)
		if text != e.text {
			// An internal error, not the operator's: refuse to start rather than
			// run with a value whose printed source would be wrong.
			return nil, nil, fmt.Errorf("config: viper resolved %s to %q but its highest layer is %s with %q: "+
				"viper's precedence (Set > env > config) changed", s.name, shown(s.name, text), e.origin, shown(s.name, e.text))
		}
		if err := s.set(cfg, text); err != nil {
			probs.addAt(e.origin, s.name, shown(s.name, text), err.Error())
		}
	}
	return origins, probs, nil
}

// highest returns the entry of the highest layer (first argument) holding name.
func highest(name string, layers ...layer) (entry, bool) {
	for _, l := range layers {
		if e, ok := l[name]; ok {
			return e, true
		}
	}
	return entry{}, false
}

// fileLayer matches decoded file entries to the table: unknown keys, a list
// for a scalar key and a key written twice are problems naming the line.
func fileLayer[T any](table []keySpec[T], file string, raw []rawEntry) (layer, problems) {
	byLower := indexKeys(table)
	var probs problems
	l := make(layer, len(raw))
	for _, e := range raw {
		at := fileOrigin(file, e.line)
		spec, ok := byLower[strings.ToLower(e.key)]
		if !ok {
			probs.addAt(at, e.key, shownUnknown(table, e.key, entryText(e, " ")), unknownKeyRule(table, e.key))
			continue
		}
		value := e.value
		switch {
		case e.isMap:
			probs.addAt(at, spec.name, "{}", "must be a single value, not a mapping")
			continue
		case e.isList && spec.listSep == "":
			probs.addAt(at, spec.name, shown(spec.name, entryText(e, " ")), "must be a single value, not a list")
			continue
		case e.isList:
			value = strings.Join(e.list, spec.listSep)
		}
		if first, dup := l[spec.name]; dup {
			probs.addAt(at, spec.name, shown(spec.name, value),
				fmt.Sprintf("set more than once (lines %d and %d)", first.origin.Line, e.line))
			continue
		}
		l[spec.name] = entry{text: value, origin: at}
	}
	return l, probs
}

// setLayer parses --set key=value flags. A key given twice is a problem, as
// it is in a file: which one was meant is a guess.
func setLayer[T any](table []keySpec[T], sets []string) (layer, problems) {
	byLower := indexKeys(table)
	var probs problems
	l := make(layer, len(sets))
	for _, kv := range sets {
		key, value, ok := strings.Cut(kv, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			probs.addAt(flagOrigin, kv, "", "must be key=value")
			continue
		}
		spec, known := byLower[strings.ToLower(key)]
		if !known {
			probs.addAt(flagOrigin, key, shownUnknown(table, key, value), unknownKeyRule(table, key))
			continue
		}
		if _, dup := l[spec.name]; dup {
			probs.addAt(flagOrigin, spec.name, shown(spec.name, value), "set more than once with --set")
			continue
		}
		l[spec.name] = entry{text: value, origin: flagOrigin}
	}
	return l, probs
}

func indexKeys[T any](table []keySpec[T]) map[string]*keySpec[T] {
	byLower := make(map[string]*keySpec[T], len(table))
	for i := range table {
		byLower[strings.ToLower(table[i].name)] = &table[i]
	}
	return byLower
}

func keyNames[T any](table []keySpec[T]) []string {
	names := make([]string, len(table))
	for i, s := range table {
		names[i] = s.name
	}
	return names
}

// isSecretKey is the rule for masking: a key whose name says secret or
// password (namesrvAuthSecret today) never shows its value, in problems or in
// --print-config. By name, so a misspelt secret key is masked too.
func isSecretKey(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "secret") || strings.Contains(l, "password")
}

// shown is value as a problem may quote it: a secret's only as its length.
func shown(key, value string) string {
	if isSecretKey(key) {
		return redactSecret(value)
	}
	return value
}

// shownUnknown is shown for a key no row has: masked also when it looks like a
// typo of a secret key (namesrvAuthSecrt), whose value is then most likely the
// secret.
func shownUnknown[T any](table []keySpec[T], key, value string) string {
	if best := suggestKey(table, key); best != "" && isSecretKey(best) {
		return redactSecret(value)
	}
	return shown(key, value)
}

// redacted masks the values of decode's problems on secret keys.
func redacted(ps problems) problems {
	for i := range ps {
		ps[i].Value = shown(ps[i].Key, ps[i].Value)
	}
	return ps
}
