package config

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// Format is the syntax of a configuration file.
type Format int

const (
	// FormatProperties is Java properties, RocketMQ's broker.conf syntax.
	FormatProperties Format = iota
	// FormatYAML is a flat YAML mapping with the same key names.
	FormatYAML
)

func (f Format) String() string {
	switch f {
	case FormatProperties:
		return "properties"
	case FormatYAML:
		return "yaml"
	default:
		return "Format(" + strconv.Itoa(int(f)) + ")"
	}
}

// FormatFromPath chooses the format by extension: .yaml and .yml are YAML,
// everything else (.properties, .conf, no extension) is Java properties, because
// that is what a RocketMQ operator's broker.conf is.
func FormatFromPath(path string) Format {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return FormatYAML
	default:
		return FormatProperties
	}
}

// decode turns file bytes into raw entries. problems are per-key syntax problems
// (the rest of the file is still usable); err is a file that cannot be read at all.
func decode(data []byte, format Format) ([]rawEntry, problems, error) {
	switch format {
	case FormatProperties:
		entries, probs := parseProperties(data)
		return entries, probs, nil
	case FormatYAML:
		return decodeYAML(data)
	default:
		return nil, nil, fmt.Errorf("config: decode format=%d: %w", int(format), ErrSyntax)
	}
}

// decodeYAML reads a YAML mapping through viper. Viper lowercases every key (and
// flattens nested mappings to "a.b"), so the entries carry lowercased names; the
// key table matches them case-insensitively and reports canonical names.
func decodeYAML(data []byte) ([]rawEntry, problems, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, nil, fmt.Errorf("%w: yaml: %w", ErrSyntax, err)
	}
	keys := v.AllKeys()
	sort.Strings(keys) // viper's order is a map's; sorted keeps reports stable
	var (
		out   []rawEntry
		probs problems
	)
	for _, k := range keys {
		e := rawEntry{key: k}
		switch val := v.Get(k).(type) {
		case []any:
			e.isList = true
			for _, item := range val {
				s, ok := yamlScalar(item)
				if !ok {
					probs.add(k, fmt.Sprint(val), "list items must be plain values")
					continue
				}
				e.list = append(e.list, s)
			}
		case map[string]any:
			// An empty nested mapping has no leaf keys for viper to flatten.
			probs.add(k, "{}", "unknown key")
			continue
		default:
			s, ok := yamlScalar(val)
			if !ok {
				probs.add(k, fmt.Sprint(val), "must be a plain value")
				continue
			}
			e.value = s
		}
		out = append(out, e)
	}
	return out, probs, nil
}

// yamlScalar renders a decoded YAML scalar back to the text the key parsers
// take, so "listenPort: 10911" and "listenPort=10911" meet the same parser.
func yamlScalar(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return strings.TrimSpace(x), true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	default:
		return "", false
	}
}
