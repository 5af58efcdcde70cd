package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3"; empty means "from the build info".
var version string

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

// versionString is "streamd <version> <go version> <os/arch>", followed by
// the VCS revision when the build recorded one: the -X version if set, else
// the module version from the build info (a `go install …@v1.2.3`), else
// "devel".
func versionString() string {
	v := versionOnly()
	bi, ok := debug.ReadBuildInfo()
	s := fmt.Sprintf("streamd %s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if !ok {
		return s
	}
	var rev, modified string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		s += " rev " + rev + modified
	}
	return s
}

// versionOnly is the release: the -X version if set, else the module version
// from the build info, else "devel".
func versionOnly() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
