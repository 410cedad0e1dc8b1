package config

import (
	"reflect"
	"testing"
)

func TestParsePropertiesGrammar(t *testing.T) {
	data := "\uFEFF# comment\r\n" +
		"  ! bang comment\n" +
		"\n" +
		"a=1\n" +
		"b : two words  \n" +
		"c\tthree\n" +
		"   d=  spaced\n" +
		"e=x\\\n" +
		"   y\\\n" +
		"   z\n" +
		"f\\=g=h\n" +
		"tab=a\\tb\\u0041\n" +
		"empty=\n" +
		"bare\n" +
		"odd=ends\\\\\n" +
		"last=1\\"
	got, probs := parseProperties("", []byte(data))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	want := []rawEntry{
		{key: "a", value: "1", line: 4},
		{key: "b", value: "two words", line: 5},
		{key: "c", value: "three", line: 6},
		{key: "d", value: "spaced", line: 7},
		{key: "e", value: "xyz", line: 8},
		{key: "f=g", value: "h", line: 11},
		{key: "tab", value: "a\tbA", line: 12},
		{key: "empty", value: "", line: 13},
		{key: "bare", value: "", line: 14},
		{key: "odd", value: `ends\`, line: 15},
		{key: "last", value: "1", line: 16},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParsePropertiesBadEscape(t *testing.T) {
	got, probs := parseProperties("", []byte("a=\\u12\nb=2\n"))
	if len(probs) != 1 || probs[0].Key != "a" {
		t.Fatalf("problems = %v, want one on a", probs)
	}
	if len(got) != 1 || got[0].key != "b" {
		t.Errorf("entries = %v, want b still parsed", got)
	}
}
