package crtx

import "runtime/debug"

// Version names the build of this module that is running (BuildVersion of
// its build information). Both command lines print it for --version; it
// reads the binary's build information, so it needs no flag at link time.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return BuildVersion(info)
}

// BuildVersion names a build of this module from its build information:
// its module version when it was built as a dependency, from a tagged
// module ("v1.2.0") or from a checkout, which Go stamps with a
// pseudo-version of the commit ("v0.0.0-20261126053043-fb88d5c78414", with
// "+dirty" when the tree had changes); else the commit its VCS settings name
// ("devel 0123abc"), else "devel" (built with -buildvcs=false).
func BuildVersion(info *debug.BuildInfo) string {
	mod := info.Main
	if mod.Path != modulePath {
		for _, d := range info.Deps {
			if d.Path == modulePath {
				mod = *d
			}
		}
	}
	if mod.Path == modulePath && mod.Version != "" && mod.Version != "(devel)" {
		return mod.Version
	}
	v := "devel"
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) >= 7 {
		v += " " + rev[:7] + dirty
	}
	return v
}

const modulePath = "github.com/crtx-market/crtx"

// Release is what this build's replicas write with their heartbeat, for
// the others to tell what they know: 1 since metered listings, which a
// replica of a release before (0) would settle wrong. A feature that
// replicas of an older release would mishandle waits until none is left
// (Listings.CreateListing of a metered agent).
const (
	Release        = 1
	ReleaseMetered = 1
)
