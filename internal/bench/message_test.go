package bench

import (
	"testing"
	"time"

	"github.com/rocketraft/rocketraft/store"
)

// TestEncodedPropertiesMatchesTheMap: the direct encoding a native send uses
// is byte for byte EncodeProperties of the properties map, for every option
// that adds a property.
func TestEncodedPropertiesMatchesTheMap(t *testing.T) {
	cases := []ProduceOptions{
		{Topic: "T", MessageSize: 8},
		{Topic: "T", MessageSize: 8, KeyPrefix: "k"},
		{Topic: "T", MessageSize: 8, KeyPrefix: "key-", Tag: "TagA", DelayLevel: 3, PropertySize: 5},
		{Topic: "T", MessageSize: 8, Transaction: true, Group: "pg", Tag: "x"},
		{Topic: "T", MessageSize: 8, KeyPrefix: "o-", KeyRandom: true},
	}
	for i, o := range cases {
		sh := newShape(o, time.Unix(0, 0x1234_5678_9abc_def0))
		for _, n := range []int64{0, 1, 255, 1 << 40} {
			want := store.EncodeProperties(sh.properties(n))
			if got := sh.encodedProperties(n); got != want {
				t.Errorf("case %d n=%d: encodedProperties %q, EncodeProperties(properties) %q", i, n, got, want)
			}
		}
	}
	if got := newShape(ProduceOptions{}, time.Unix(0, 0xABCDEF)).uniqKey(0x2A); got != "0000000000ABCDEF000000000000002A" {
		t.Errorf("uniqKey = %q", got)
	}
}

// TestRandomKeysSpreadOverHashSlots: --key-random keys are distinct and land
// on hash slots all over an IndexFile, where prefix+n keys crowd onto few
// pages of them (what the option exists to show in an index benchmark). A
// page of the slot table is 1024 slots.
func TestRandomKeysSpreadOverHashSlots(t *testing.T) {
	const slots, pages, n = 5_000_000, 5_000_000 / 1024, 20_000
	spread := func(o ProduceOptions) (distinctKeys, pagesTouched int) {
		sh := newShape(o, time.Unix(0, 42))
		keys, touched := map[string]bool{}, map[int32]bool{}
		for i := int64(0); i < n; i++ {
			k := string(sh.appendKey(nil, i))
			keys[k] = true
			touched[javaHashCode("T#"+k)%slots/1024] = true
		}
		return len(keys), len(touched)
	}
	d, random := spread(ProduceOptions{KeyPrefix: "k", KeyRandom: true})
	if d != n || random < pages*9/10 {
		t.Errorf("random keys: %d distinct of %d, %d of %d slot pages touched", d, n, random, pages)
	}
	_, seq := spread(ProduceOptions{KeyPrefix: "k"})
	t.Logf("slot pages touched by %d keys: random %d, sequential %d", n, random, seq)
	if seq*4 > random {
		t.Errorf("sequential keys touch %d slot pages, random ones %d; the option assumes sequential ones crowd", seq, random)
	}
	if k := string(newShape(ProduceOptions{KeyPrefix: "o-", KeyRandom: true}, time.Unix(0, 42)).appendKey(nil, 7)); len(k) != 2+16 {
		t.Errorf("random key %q: want the prefix and 16 hex digits", k)
	}
}

// javaHashCode is Java's String.hashCode of an ASCII string made non-negative,
// as the broker's IndexFile hashes "topic#key".
func javaHashCode(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	if h < 0 {
		h = -h
	}
	return h
}
