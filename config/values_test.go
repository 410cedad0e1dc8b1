package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParsePeers(t *testing.T) {
	got, err := parsePeers(" n0-127.0.0.1:40911 ; n1-host-b.example:40921;n2-[::1]:40931; ")
	if err != nil {
		t.Fatal(err)
	}
	want := []Peer{{"n0", "127.0.0.1:40911"}, {"n1", "host-b.example:40921"}, {"n2", "[::1]:40931"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if s := formatPeers(got); s != "n0-127.0.0.1:40911;n1-host-b.example:40921;n2-[::1]:40931" {
		t.Errorf("formatPeers = %q", s)
	}
	for in, rule := range map[string]string{
		"":                 "at least one peer",
		"n0":               "must be id-host:port",
		"-127.0.0.1:1":     "must be id-host:port",
		"n0-127.0.0.1":     "address must be host:port",
		"n0-:40911":        "non-empty host",
		"n0-127.0.0.1:0":   "port must be 1..65535",
		"n0-h:1;n1-h:port": `item "n1-h:port" address port must be 1..65535`,
	} {
		if _, err := parsePeers(in); err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("parsePeers(%q) = %v, want %q", in, err, rule)
		}
	}
}

func TestParseDelayLevels(t *testing.T) {
	got, err := parseDelayLevels("1s  5m\t2h 1d 500ms 1h30m")
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, 5 * time.Minute, 2 * time.Hour, 24 * time.Hour, 500 * time.Millisecond, 90 * time.Minute}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if s := formatDelayLevels(want); s != "1s 5m 2h 1d 500ms 90m" {
		t.Errorf("formatDelayLevels = %q", s)
	}
	for _, bad := range []string{"", "1s 0s", "1s -5s", "1w", "d", "5"} {
		if _, err := parseDelayLevels(bad); err == nil {
			t.Errorf("parseDelayLevels(%q) accepted", bad)
		}
	}
}

func TestParseDurationMillis(t *testing.T) {
	for _, tc := range []struct {
		in         string
		bareMillis bool
		want       time.Duration
		ok         bool
	}{
		{"500", true, 500 * time.Millisecond, true},
		{"500ms", true, 500 * time.Millisecond, true},
		{"2s", true, 2 * time.Second, true},
		{"500", false, 0, false},
		{"1.5s", false, 1500 * time.Millisecond, true},
		{"-1", true, 0, false},
		{"", false, 0, false},
	} {
		got, err := parseDuration(tc.in, tc.bareMillis)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseDuration(%q, %v) = %v, %v", tc.in, tc.bareMillis, got, err)
		}
	}
	if d, err := parseHours("36h"); err != nil || d != 36*time.Hour {
		t.Errorf("parseHours(36h) = %v, %v", d, err)
	}
	for _, tc := range []struct {
		in   string
		want []int
		rule string // "" = ok; else a part of the error
	}{
		{"04", []int{4}, ""},
		{" 4 ", []int{4}, ""},
		{"04;16", []int{4, 16}, ""},
		{"23; 00 ;12", []int{23, 0, 12}, ""},
		{"24", nil, "00..23"},
		{"", nil, "00..23"},
		{"04;", nil, `item "" must be an hour`},
		{"04;61", nil, `item "61"`},
		{"04;4", nil, "hour 04 is listed twice"},
		{"four", nil, "hour of day"},
	} {
		got, err := parseDeleteWhen(tc.in)
		switch {
		case tc.rule == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("parseDeleteWhen(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.rule != "" && (err == nil || !strings.Contains(err.Error(), tc.rule)):
			t.Errorf("parseDeleteWhen(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.rule)
		}
	}
	if got := formatDeleteWhen([]int{4, 16}); got != "04;16" {
		t.Errorf("formatDeleteWhen = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"listenprt", "listenport", 1}, {"kitten", "sitting", 3}} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}
