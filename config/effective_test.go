package config

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// printedLine is `key=value   # origin`, the --print-config line.
var printedLine = regexp.MustCompile(`^([A-Za-z0-9]+)=(.*?) +# (.+)$`)

// parsePrinted splits Effective.Text into key → [value, origin], failing on a
// line that is neither a comment nor a key line, and returns the key order.
func parsePrinted(t *testing.T, text string) (map[string][2]string, []string) {
	t.Helper()
	got := map[string][2]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := printedLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %q is not key=value   # origin", line)
		}
		if _, dup := got[m[1]]; dup {
			t.Fatalf("key %s printed twice", m[1])
		}
		got[m[1]] = [2]string{m[2], m[3]}
		order = append(order, m[1])
	}
	return got, order
}

func TestEffectiveText(t *testing.T) {
	path := writeFile(t, "broker.conf", "brokerName=broker-p\nnamesrvAuthSecret=file-secret-0123456789\n")
	t.Setenv("ROCKETRAFT_listenPort", "30911")
	_, eff, err := Layers{File: path, Env: true, Set: []string{"logLevel=debug", "messageDelayLevel=1s 5s"}}.Broker()
	if err != nil {
		t.Fatal(err)
	}
	text := eff.Text()
	if strings.Contains(text, "file-secret") {
		t.Fatalf("secret printed:\n%s", text)
	}
	got, order := parsePrinted(t, text)
	if len(got) != len(brokerKeys) {
		t.Errorf("%d keys printed, table has %d", len(got), len(brokerKeys))
	}
	if !slices.IsSortedFunc(order, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }) {
		t.Errorf("keys not sorted: %v", order)
	}
	for key, want := range map[string][2]string{
		"brokerName":        {"broker-p", path + ":1"},
		"namesrvAuthSecret": {Mask, path + ":2 (masked)"},
		"listenPort":        {"30911", "env ROCKETRAFT_listenPort"},
		"logLevel":          {"debug", "--set"},
		"messageDelayLevel": {"1s 5s", "--set"},
		"dLegerGroup":       {"broker-p", "default (brokerName)"},
		"adminListen":       {"127.0.0.1:30913", "default (127.0.0.1:<listenPort+2>)"},
		"preferredLeaderId": {"", "default"},
		"raftLogStore":      {"auto", "default"},
	} {
		if got[key] != want {
			t.Errorf("%s: printed %q, want %q", key, got[key], want)
		}
	}
	// The origin comments line up in one column.
	col := -1
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " # ") + 1
		if col >= 0 && i != col {
			t.Fatalf("comment at column %d, others at %d: %q", i, col, line)
		}
		col = i
	}

	// An empty secret is not masked: there is nothing to hide, and "empty" is
	// worth seeing.
	_, eff, _ = Layers{}.Broker()
	if k, _ := eff.Lookup("namesrvAuthSecret"); k.Masked || k.Value != "" {
		t.Errorf("empty secret printed as %+v", k)
	}
}

// Mask pasted back as a value must fail validation, not become the secret.
func TestMaskIsNotAValidSecret(t *testing.T) {
	ps := loadBrokerErr(t, Layers{Set: []string{"namesrvAuthSecret=" + Mask}})
	if len(ps) != 1 || ps[0].Key != "namesrvAuthSecret" {
		t.Errorf("problems = %v", ps)
	}
}

func TestOriginString(t *testing.T) {
	for o, want := range map[Origin]string{
		{}:                    "",
		{Kind: OriginDefault}: "default",
		{Kind: OriginDefault, Derived: "brokerName"}: "default (brokerName)",
		{Kind: OriginFile, File: "b.conf", Line: 3}:  "b.conf:3",
		{Kind: OriginFile, Line: 3}:                  "line 3",
		{Kind: OriginEnv, Name: "ROCKETRAFT_X"}:      "env ROCKETRAFT_X",
		{Kind: OriginFlag}:                           "--set",
	} {
		if got := o.String(); got != want {
			t.Errorf("%+v: %q, want %q", o, got, want)
		}
	}
}

// FuzzParseBroker: any file text, in either format, loads or fails with
// problems; it never panics, and every problem of a file names a line of it.
func FuzzParseBroker(f *testing.F) {
	for _, seed := range []string{
		"listenPort=1\n", "a\\\n b=\\u00\n", "listenPort: [1, {a: b}]\nx: &a 1\ny: *a\n",
		"raft:\n  heartbeatTimeout: 1s\n", "? [a]\n: 1\n", "brokerName: x\nbrokerName: y\n",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, yamlFormat bool) {
		format := FormatProperties
		if yamlFormat {
			format = FormatYAML
		}
		_, err := ParseBroker(data, format)
		verr, ok := err.(*ValidationError)
		if !ok {
			return
		}
		// Java properties end a line at \n, \r\n or a lone \r; YAML too.
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 1
		for _, p := range verr.Problems {
			if p.Origin.Kind == OriginFile && (p.Origin.Line < 1 || p.Origin.Line > lines) {
				t.Errorf("problem %s names line %d of %d", p, p.Origin.Line, lines)
			}
		}
	})
}
