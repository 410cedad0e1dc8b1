package clientapi

import (
	"testing"

	"github.com/rocketraft/rocketraft/store"
)

// TestStampKeepsTheLastProperty: Java 4.9.8 and 5.x send properties without a
// separator after the last pair, the Go client with one. Each stamped property
// must become a pair of its own either way, and the pair before it keep its
// value (it is often TAGS, which the Java consumer re-filters on).
func TestStampKeepsTheLastProperty(t *testing.T) {
	a := &API{d: Deps{Config: Config{ClusterName: "JavaCluster"}}}
	for name, props := range map[string]string{
		"java, no trailing separator": "WAIT\x01true\x02UNIQ_KEY\x01ABC\x02TAGS\x01TagA",
		"go, trailing separator":      "WAIT\x01true\x02UNIQ_KEY\x01ABC\x02TAGS\x01TagA\x02",
	} {
		t.Run(name, func(t *testing.T) {
			got := store.ParseProperties(a.stamp(props))
			want := map[string]string{"WAIT": "true", "UNIQ_KEY": "ABC", "TAGS": "TagA", "CLUSTER": "JavaCluster",
				"MSG_REGION": DefaultRegionID, "TRACE_ON": "true"}
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
	if got, want := a.stamp(""), "CLUSTER\x01JavaCluster\x02MSG_REGION\x01"+DefaultRegionID+"\x02TRACE_ON\x01true\x02"; got != want {
		t.Errorf("empty properties: %q, want %q", got, want)
	}
	if got, want := a.stamp("CLUSTER\x01Other"), "CLUSTER\x01Other\x02MSG_REGION\x01"+DefaultRegionID+"\x02TRACE_ON\x01true\x02"; got != want {
		t.Errorf("a CLUSTER the producer set was replaced: %q, want %q", got, want)
	}
	// All three set by the producer: stored byte for byte as sent.
	if own := "TRACE_ON\x01false\x02CLUSTER\x01x\x02MSG_REGION\x01r"; a.stamp(own) != own {
		t.Errorf("producer's properties changed: %q", a.stamp(own))
	}
	// A name with no value separator is not the property.
	if got := store.ParseProperties(a.stamp("CLUSTER\x02K\x01v")); got["CLUSTER"] != "JavaCluster" || got["K"] != "v" {
		t.Errorf("a bare CLUSTER name counted as set: %q", got)
	}
}
