package store

import (
	"maps"
	"slices"
	"testing"
)

// TestPropertyPairsMatchParseProperties: the pairs are the map's entries, in
// order, skipping an item without a separator; a break stops the walk.
func TestPropertyPairsMatchParseProperties(t *testing.T) {
	props := "KEYS\x01k1\x02junk\x02TAGS\x01a\x02EMPTY\x01\x02UNIQ_KEY\x01u"
	var names []string
	got := map[string]string{}
	for name, value := range PropertyPairs(props) {
		names = append(names, name)
		got[name] = value
	}
	if want := ParseProperties(props); !maps.Equal(got, want) {
		t.Fatalf("pairs %v, ParseProperties %v", got, want)
	}
	if want := []string{"KEYS", "TAGS", "EMPTY", "UNIQ_KEY"}; !slices.Equal(names, want) {
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
