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
