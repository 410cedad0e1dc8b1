package admin

import "strings"

// BinaryVersion is what `rocketraft admin version` prints: the release (or
// the module version Go recorded), the commit it was built from, the commit's
// time, whether the work tree had changes, and the Go toolchain.
type BinaryVersion struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go,omitempty"`
}

// String is the one-line form the broker reports as rocketraftVersion:
// "v0.4.0 (0123456789ab, 2025-03-01T10:00:00Z, modified, go1.26.0)".
func (v BinaryVersion) String() string {
	var extra []string
	if v.Revision != "" {
		extra = append(extra, v.Revision[:min(12, len(v.Revision))])
	}
	if v.Time != "" {
		extra = append(extra, v.Time)
	}
	if v.Modified {
		extra = append(extra, "modified")
	}
	if v.Go != "" {
		extra = append(extra, v.Go)
	}
	if len(extra) == 0 {
		return v.Version
	}
	return v.Version + " (" + strings.Join(extra, ", ") + ")"
}

// VersionTable renders a BinaryVersion; its JSON form is the object itself.
func VersionTable(v BinaryVersion) Table {
	modified := "no"
	if v.Modified {
		modified = "yes"
	}
	return Table{
		Header: []string{"VERSION", "REVISION", "TIME", "MODIFIED", "GO"},
		Rows:   [][]string{{v.Version, v.Revision, v.Time, modified, v.Go}},
		Doc:    v,
	}
}
