package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeYAML reads a flat YAML mapping through yaml.v3's node tree rather than
// viper: viper lowercases keys and drops positions, and both are needed to
// name a problem as `broker.conf.yaml:7: listenPort=...` with the operator's
// own spelling. Scalars keep their text as written ("04" stays "04"), so a
// YAML file and a properties file with the same text meet the same parser.
//
// A nested mapping is flattened to dotted names ("raft.heartbeatTimeout"),
// which no key has; the unknown-key hint then suggests the flat key
// (raftHeartbeatTimeout).
func decodeYAML(file string, data []byte) ([]rawEntry, problems, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: yaml: %w", ErrSyntax, err)
	}
	if len(doc.Content) == 0 { // empty file, or only comments
		return nil, nil, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%w: yaml: line %d: the document must be a mapping of key: value", ErrSyntax, root.Line)
	}
	var (
		out   []rawEntry
		probs problems
	)
	flattenYAML(file, "", root, &out, &probs)
	return out, probs, nil
}

func flattenYAML(file, prefix string, m *yaml.Node, out *[]rawEntry, probs *problems) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := deref(m.Content[i]), deref(m.Content[i+1])
		at := fileOrigin(file, k.Line)
		if k.Kind != yaml.ScalarNode {
			probs.addAt(at, prefix+"?", "", "a key must be a plain name")
			continue
		}
		e := rawEntry{key: prefix + k.Value, line: k.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			e.value = yamlText(v)
		case yaml.SequenceNode:
			e.isList = true
			ok := true
			for _, item := range v.Content {
				item = deref(item)
				if item.Kind != yaml.ScalarNode {
					probs.addAt(fileOrigin(file, item.Line), e.key, "", "list items must be plain values")
					ok = false
					break
				}
				e.list = append(e.list, yamlText(item))
			}
			if !ok {
				continue
			}
		case yaml.MappingNode:
			if len(v.Content) > 0 {
				flattenYAML(file, e.key+".", v, out, probs)
				continue
			}
			e.isMap = true
		default:
			probs.addAt(at, e.key, "", "must be a plain value")
			continue
		}
		*out = append(*out, e)
	}
}

// deref follows an alias (*name) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// yamlText is a scalar's text as written; null (`key:`, `~`) is empty, as
// "key=" is in properties.
func yamlText(n *yaml.Node) string {
	if n.ShortTag() == "!!null" {
		return ""
	}
	return strings.TrimSpace(n.Value)
}
