package crtx_test

import (
	"runtime/debug"
	"testing"

	"github.com/crtx-market/crtx"
)

// A build names itself by its module version, else its commit, else devel.
func TestBuildVersion(t *testing.T) {
	const path = "github.com/crtx-market/crtx"
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "fb88d5c78414aa"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"tagged", debug.BuildInfo{Main: debug.Module{Path: path, Version: "v1.2.0"}}, "v1.2.0"},
		{"a checkout, stamped", debug.BuildInfo{Main: debug.Module{Path: path, Version: "v0.0.0-20261126053043-fb88d5c78414+dirty"}, Settings: vcs},
			"v0.0.0-20261126053043-fb88d5c78414+dirty"},
		{"a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "(devel)"},
			Deps: []*debug.Module{{Path: path, Version: "v1.3.0"}}}, "v1.3.0"},
		{"unstamped, with VCS settings", debug.BuildInfo{Main: debug.Module{Path: path, Version: "(devel)"}, Settings: vcs}, "devel fb88d5c+dirty"},
		{"-buildvcs=false", debug.BuildInfo{Main: debug.Module{Path: path, Version: "(devel)"}}, "devel"},
	} {
		if got := crtx.BuildVersion(&c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
