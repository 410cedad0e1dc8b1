package clientapi

import (
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

// TestWithClusterKeepsTheLastProperty: withProperty, for CLUSTER. Java 4.9.8 and 5.x send properties
// without a separator after the last pair, the Go client with one. CLUSTER must
// become a pair of its own either way, and the pair before it keep its value
// (it is often TAGS, which the Java consumer re-filters on).
func TestWithClusterKeepsTheLastProperty(t *testing.T) {
	for name, props := range map[string]string{
		"java, no trailing separator": "WAIT\x01true\x02UNIQ_KEY\x01ABC\x02TAGS\x01TagA",
		"go, trailing separator":      "WAIT\x01true\x02UNIQ_KEY\x01ABC\x02TAGS\x01TagA\x02",
	} {
		t.Run(name, func(t *testing.T) {
			got := store.ParseProperties(withProperty(props, propertyCluster, "JavaCluster"))
			want := map[string]string{"WAIT": "true", "UNIQ_KEY": "ABC", "TAGS": "TagA", "CLUSTER": "JavaCluster"}
			if len(got) != len(want) {
				t.Fatalf("properties %q, want %q", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q (all: %q)", k, got[k], v, got)
				}
			}
		})
	}
	if got := withProperty("", propertyCluster, "C"); got != "CLUSTER\x01C\x02" {
		t.Errorf("empty properties: %q", got)
	}
	if got := withProperty("CLUSTER\x01Other", propertyCluster, "C"); got != "CLUSTER\x01Other" {
		t.Errorf("a CLUSTER the producer set was replaced: %q", got)
	}
}
