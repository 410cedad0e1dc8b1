package config

import "strconv"

// OriginKind names the layer a value came from, lowest precedence first.
type OriginKind int

const (
	// OriginCode is the zero Origin: a value set in code (Broker.Validate on a
	// struct built by a caller), which has no file, variable or flag to name.
	OriginCode OriginKind = iota
	// OriginDefault is DefaultBroker / DefaultNamesrv, or a default derived from
	// another key (dLegerGroup from brokerName).
	OriginDefault
	// OriginFile is a line of the config file.
	OriginFile
	// OriginEnv is a ROCKETRAFT_<key> environment variable.
	OriginEnv
	// OriginFlag is a --set key=value flag.
	OriginFlag
)

// Origin is where one key's value came from, precise enough to go and change
// it: the file and line, the variable, or the flag.
type Origin struct {
	Kind OriginKind
	// File is the path as given (OriginFile); "" for bytes passed to
	// ParseBroker / ParseNamesrv, which have lines but no name.
	File string
	Line int // OriginFile: 1-based line of the key
	// Name is the environment variable exactly as spelled in the environment
	// (OriginEnv), e.g. ROCKETRAFT_listenPort.
	Name string
	// Derived names what a derived default was computed from (OriginDefault),
	// e.g. "brokerName"; "" for a plain default.
	Derived string
}

// String renders the origin as --print-config and problems show it:
// "broker.conf:3", "line 3", "env ROCKETRAFT_LISTENPORT", "--set", "default",
// "default (brokerName)"; "" for OriginCode.
func (o Origin) String() string {
	switch o.Kind {
	case OriginDefault:
		if o.Derived != "" {
			return "default (" + o.Derived + ")"
		}
		return "default"
	case OriginFile:
		if o.File == "" {
			return "line " + strconv.Itoa(o.Line)
		}
		return o.File + ":" + strconv.Itoa(o.Line)
	case OriginEnv:
		return "env " + o.Name
	case OriginFlag:
		return "--set"
	default:
		return ""
	}
}

func fileOrigin(file string, line int) Origin {
	return Origin{Kind: OriginFile, File: file, Line: line}
}
func envOrigin(name string) Origin { return Origin{Kind: OriginEnv, Name: name} }

var (
	flagOrigin    = Origin{Kind: OriginFlag}
	defaultOrigin = Origin{Kind: OriginDefault}
)
