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
	Err error
}

// NewFields reads ext.
func NewFields(ext map[string]string) *Fields { return &Fields{m: ext} }

// FieldsOf reads cmd's extFields where they are, without building a map of a
// decoded command's pairs (transport.Command.LookupField).
func FieldsOf(cmd *transport.Command) *Fields { return &Fields{cmd: cmd} }

func (f *Fields) get(key string) (string, bool) {
	if f.cmd != nil {
		return f.cmd.LookupField(key)
	}
	v, ok := f.m[key]
	return v, ok
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
	return f.StrOf(key, v, ok, required)
}

// The ...Of readers apply the same rules to a value the caller found itself
// (ok: the key was present), for a handler that gathers a header's fields in
// one pass over the pairs. A zero Fields is enough for them.

// StrOf is Str of a value found by the caller.
func (f *Fields) StrOf(key, v string, ok, required bool) string {
	if !ok && required {
		f.Fail(key, "", "required")
	}
	return v
}

// Int64 is the decimal value of key, def when absent or empty.
func (f *Fields) Int64(key string, required bool, def int64) int64 {
	v, ok := f.get(key)
	return f.Int64Of(key, v, ok, required, def)
}

// Int64Of is Int64 of a value found by the caller.
func (f *Fields) Int64Of(key, v string, ok, required bool, def int64) int64 {
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
	v, ok := f.get(key)
	return f.Int32Of(key, v, ok, required, def)
}

// Int32Of is Int32 of a value found by the caller.
func (f *Fields) Int32Of(key, v string, ok, required bool, def int32) int32 {
	n := f.Int64Of(key, v, ok, required, int64(def))
	if n < -1<<31 || n > 1<<31-1 {
		f.Fail(key, v, "must fit in 32 bits")
		return def
	}
	return int32(n)
}

// Bool is true or false in any case (Java's Boolean.parseBoolean, which
// Apache's header decoder uses), def when absent or empty. Java reads any other
// text as false; here it is a problem, named.
func (f *Fields) Bool(key string, def bool) bool {
	return f.BoolOf(key, f.Raw(key), def)
}

// BoolOf is Bool of a value found by the caller ("" when absent).
func (f *Fields) BoolOf(key, v string, def bool) bool {
	switch {
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
