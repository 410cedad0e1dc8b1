package store

import (
	"maps"
	"slices"
	"testing"
)

// TestPropertyPairsMatchParseProperties: the pairs are the map's entries, in
// order, skipping an item without a separator; an item with a second
// separator is a pair whose value holds it (Property reads it so), which the
// map leaves out; a break stops the walk.
func TestPropertyPairsMatchParseProperties(t *testing.T) {
	props := "KEYS\x01k1\x02junk\x02TAGS\x01a\x02TWO\x01x\x01y\x02EMPTY\x01\x02UNIQ_KEY\x01u"
	var names []string
	got := map[string]string{}
	for name, value := range PropertyPairs(props) {
		names = append(names, name)
		got[name] = value
	}
	if v, _ := Property(props, "TWO"); got["TWO"] != v || v != "x\x01y" {
		t.Fatalf("TWO: pair %q, Property %q", got["TWO"], v)
	}
	delete(got, "TWO")
	if want := ParseProperties(props); !maps.Equal(got, want) {
		t.Fatalf("pairs %v, ParseProperties %v", got, want)
	}
	if want := []string{"KEYS", "TAGS", "TWO", "EMPTY", "UNIQ_KEY"}; !slices.Equal(names, want) {
		t.Fatalf("order %v, want %v", names, want)
	}
	n := 0
	for range PropertyPairs(props) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("walked %d pairs after a break", n)
	}
}
