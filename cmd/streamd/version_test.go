package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestStampOf reads the version and revision from build infos of the kinds
// the go command writes, and lets the -X variables win.
func TestStampOf(t *testing.T) {
	const rev = "dd808598fa620033742122a87a95fd37abebe643"
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name       string
		bi         *debug.BuildInfo
		ok         bool
		xv, xr     string // -X main.version, main.revision
		want       buildStamp
		wantString string // in versionString's format, after the Go version
	}{
		{name: "no build info", bi: nil, ok: false,
			want: buildStamp{Version: "devel", Revision: "unknown"}},
		{name: "go run (no VCS stamp)", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ok: true,
			want: buildStamp{Version: "devel", Revision: "unknown"}},
		{name: "go build in a clean checkout",
			bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122015449-dd808598fa62"}, Settings: vcs}, ok: true,
			want: buildStamp{Version: "v0.0.0-20261122015449-dd808598fa62", Revision: rev}},
		{name: "go build with uncommitted changes",
			bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261122015449-dd808598fa62+dirty"}, Settings: dirty}, ok: true,
			want: buildStamp{Version: "v0.0.0-20261122015449-dd808598fa62+dirty", Revision: rev, Modified: true}},
		{name: "go install @tag", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, ok: true,
			want: buildStamp{Version: "v1.4.0", Revision: "unknown"}},
		{name: "ldflags -X win", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, ok: true,
			xv: "v1.2.3", xr: "abc123",
			want: buildStamp{Version: "v1.2.3", Revision: "abc123"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(v, r string) { version, revision = v, r }(version, revision)
			version, revision = tc.xv, tc.xr
			if got := stampOf(tc.bi, tc.ok); got != tc.want {
				t.Errorf("stampOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestBuildInfoLabelsSet: the labels of streamd_build_info are never empty,
// neither from buildInfo nor in the configuration `streamd run` opens the
// daemon with. (Under `go test` the binary has no VCS stamp: the labels
// read "devel".)
func TestBuildInfoLabelsSet(t *testing.T) {
	bi := buildInfo()
	if bi.Version == "" || bi.GoVersion != runtime.Version() {
		t.Errorf("buildInfo() = %+v", bi)
	}
	cfg := DefaultConfig()
	dc, err := cfg.daemon()
	if err != nil {
		t.Fatal(err)
	}
	if dc.Build.Version == "" || dc.Build.GoVersion == "" {
		t.Errorf("run's daemon config has empty build labels: %+v", dc.Build)
	}
	if s := versionString(); !strings.Contains(s, " rev ") {
		t.Errorf("versionString() = %q, want a rev (or rev unknown)", s)
	}
}

// TestVersionStampedFromCheckout builds the binary from this checkout with
// -buildvcs=true (what `go build` and `go install` do by default in a git
// checkout) and checks that `streamd version` names the checkout's HEAD and
// a module version. Outside a git checkout there is nothing to stamp from,
// and the test skips.
func TestVersionStampedFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is not installed")
		}
		t.Skip("git not installed")
	}
	head, err := exec.Command(gitPath, "rev-parse", "HEAD").Output()
	if err != nil {
		if os.Getenv("CI") == "true" { // CI runs in a fresh clone
			t.Fatalf("not a git checkout (git rev-parse HEAD: %v)", err)
		}
		t.Skipf("not a git checkout (git rev-parse HEAD: %v)", err)
	}
	bin := filepath.Join(t.TempDir(), "streamd")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("streamd version: %v", err)
	}
	f := strings.Fields(string(out))
	// streamd <version> <go> <os/arch> rev <revision> [(modified)]
	if len(f) < 6 || f[0] != "streamd" || f[4] != "rev" {
		t.Fatalf("streamd version printed %q", out)
	}
	if want := strings.TrimSpace(string(head)); f[5] != want {
		t.Errorf("revision %q, want HEAD %q", f[5], want)
	}
	if !strings.HasPrefix(f[1], "v") {
		t.Errorf("version %q, want a module version (tag or pseudo-version)", f[1])
	}
}
