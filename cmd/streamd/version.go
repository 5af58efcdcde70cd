package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/streamd/streamd/internal/daemon"
)

// version and revision may be set at build time, for builds that carry no
// VCS stamp (a source tarball, or -buildvcs=false):
//
//	go build -ldflags "-X main.version=v1.2.3 -X main.revision=$(git rev-parse HEAD)" ./cmd/streamd
//
// Empty means "from the build info" (stamp).
var version, revision string

// unknownRevision is the revision of a build that recorded none. `go run`
// does not stamp VCS information (its -buildvcs default, auto, means off for
// go run), nor does any build under -buildvcs=false; a label or line that
// says so reads better than an empty one.
const unknownRevision = "unknown"

// versionCommand prints the version.
type versionCommand struct{}

func (versionCommand) Run(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: streamd version\n\nPrints the version, the Go version and the source revision.\n")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, versionString())
	return err
}

// buildStamp is what a binary knows of the source it was built from.
type buildStamp struct {
	// Version is the -X version if set, else the main module's version from
	// the build info, else "devel". Since Go 1.24 a `go build` or `go install`
	// in a git checkout stamps a pseudo-version such as
	// v0.0.0-20261122015449-dd808598fa62 (time and short revision, "+dirty"
	// with uncommitted changes) or the tag at HEAD; `go install …@v1.2.3`
	// stamps v1.2.3.
	Version string
	// Revision is the -X revision if set, else the build info's
	// vcs.revision, else "unknown".
	Revision string
	// Modified: the build info's vcs.modified (uncommitted changes).
	Modified bool
}

// stampOf reads a stamp from bi (ok false: the binary has no build info).
// The -X variables win over bi.
func stampOf(bi *debug.BuildInfo, ok bool) buildStamp {
	s := buildStamp{Version: version, Revision: revision}
	if ok {
		if s.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			s.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				if s.Revision == "" {
					s.Revision = kv.Value
				}
			case "vcs.modified":
				s.Modified = kv.Value == "true"
			}
		}
	}
	if s.Version == "" {
		s.Version = "devel"
	}
	if s.Revision == "" {
		s.Revision = unknownRevision
	}
	return s
}

// stamp is this binary's build stamp.
func stamp() buildStamp { return stampOf(debug.ReadBuildInfo()) }

// versionString is "streamd <version> <go version> <os/arch> rev <revision>",
// with " (modified)" when the checkout had uncommitted changes.
func versionString() string {
	s := stamp()
	v := fmt.Sprintf("streamd %s %s %s/%s rev %s", s.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, s.Revision)
	if s.Modified {
		v += " (modified)"
	}
	return v
}

// versionOnly is the release: stamp().Version, never empty.
func versionOnly() string { return stamp().Version }

// buildInfo labels the daemon's streamd_build_info metric: every label set,
// so that a dashboard never shows an empty version. The module version
// carries the revision whenever the build stamped one (a pseudo-version ends
// in the short revision).
func buildInfo() daemon.BuildInfo {
	return daemon.BuildInfo{Version: versionOnly(), GoVersion: runtime.Version()}
}
