package main

import (
	"runtime/debug"

	"github.com/rocketraft/rocketraft/internal/admin"
)

// version is the release this binary was built as, set at link time:
//
//	go build -ldflags "-X main.version=v0.4.0" ./cmd/rocketraft
//
// Empty: the module version and VCS stamp Go records in the build info.
var version string

// binaryVersion is this binary's version: the link-time version (else the
// module's, "(devel)" for a build in a work tree), the commit, its time and
// whether the tree had changes, and the Go toolchain.
func binaryVersion() admin.BinaryVersion {
	v := admin.BinaryVersion{Version: version}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Version == "" {
			v.Version = "unknown"
		}
		return v
	}
	v.Go = info.GoVersion
	if v.Version == "" {
		v.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
