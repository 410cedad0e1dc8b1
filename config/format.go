package config

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
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

// decode turns file bytes into raw entries, each with its line. problems are
// per-key syntax problems (the rest of the file is still usable); err is a file
// that cannot be read as its format at all. file names the file in problems.
func decode(file string, data []byte, format Format) ([]rawEntry, problems, error) {
	switch format {
	case FormatProperties:
		entries, probs := parseProperties(file, data)
		return entries, probs, nil
	case FormatYAML:
		return decodeYAML(file, data)
	default:
		return nil, nil, fmt.Errorf("config: decode format=%d: %w", int(format), ErrSyntax)
	}
}
