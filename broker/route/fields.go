package route

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketraft/rocketraft/transport"
)

// Fields reads typed values out of a request's extFields and remembers the
// first problem (Err), naming the key, the value and the rule.
type Fields struct {
	m   map[string]string
	cmd *transport.Command // read instead of m when set
	// alias gives a key's name the short key a request may send instead
	// (SEND_MESSAGE_V2's single letters), "" for none; nil for no aliases.
	alias func(name string) string
	Err   error
}

// NewFields reads ext.
func NewFields(ext map[string]string) *Fields { return &Fields{m: ext} }

// FieldsOf reads cmd's extFields where they are, without building a map of a
// decoded command's pairs (transport.Command.LookupField).
func FieldsOf(cmd *transport.Command) *Fields { return &Fields{cmd: cmd} }

// FieldsOfAliased is FieldsOf for extFields whose keys may be short aliases of
// the names asked for: a lookup of name reads the field alias(name) when alias
// gives one and cmd has it, else the field name. Problems still name the key by
// its long name. alias is a function (a switch) rather than a map so that a
// lookup costs no hashing.
func FieldsOfAliased(cmd *transport.Command, alias func(name string) string) *Fields {
	return &Fields{cmd: cmd, alias: alias}
}

func (f *Fields) lookup(key string) (string, bool) {
	if f.cmd != nil {
		return f.cmd.LookupField(key)
	}
	v, ok := f.m[key]
	return v, ok
}

func (f *Fields) get(key string) (string, bool) {
	if f.alias != nil {
		if a := f.alias(key); a != "" {
			if v, ok := f.lookup(a); ok {
				return v, true
			}
		}
	}
	return f.lookup(key)
}

// Fail records a problem with key unless an earlier one was recorded.
func (f *Fields) Fail(key, value, rule string) {
	if f.Err == nil {
		f.Err = fmt.Errorf("%w: %s=%q: %s", ErrBadHeader, key, value, rule)
	}
}

// Raw is the value of key as sent.
func (f *Fields) Raw(key string) string { v, _ := f.get(key); return v }

// Str is the value of key; a missing required key is a problem.
func (f *Fields) Str(key string, required bool) string {
	v, ok := f.get(key)
	if !ok && required {
		f.Fail(key, "", "required")
	}
	return v
}

// Int64 is the decimal value of key, def when absent or empty.
func (f *Fields) Int64(key string, required bool, def int64) int64 {
	v, ok := f.get(key)
	if !ok || v == "" {
		if required {
			f.Fail(key, v, "required")
		}
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f.Fail(key, v, "must be a decimal integer")
		return def
	}
	return n
}

// Int32 is Int64 limited to 32 bits.
func (f *Fields) Int32(key string, required bool, def int32) int32 {
	n := f.Int64(key, required, int64(def))
	if n < -1<<31 || n > 1<<31-1 {
		f.Fail(key, f.Raw(key), "must fit in 32 bits")
		return def
	}
	return int32(n)
}

// Bool is true or false in any case (Java's Boolean.parseBoolean, which
// Apache's header decoder uses), def when absent or empty. Java reads any other
// text as false; here it is a problem, named.
func (f *Fields) Bool(key string, def bool) bool {
	switch v := f.Raw(key); {
	case v == "":
		return def
	case strings.EqualFold(v, "true"):
		return true
	case strings.EqualFold(v, "false"):
		return false
	default:
		f.Fail(key, v, "must be true or false")
		return def
	}
}
