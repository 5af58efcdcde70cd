package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func runMain(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout for code 0, else in stderr
	}{
		{nil, 2, "Commands:"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"help"}, 0, "backtest"},
		{[]string{"-h"}, 0, "version"},
		{[]string{"version", "extra"}, 2, "extra"},
	} {
		stdout, stderr, code := runMain(tc.args...)
		got := stderr
		if tc.code == 0 {
			got = stdout
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%q: exit %d (want %d), output %q lacks %q", tc.args, code, tc.code, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	stdout, _, code := runMain("version")
	if code != 0 || !strings.HasPrefix(stdout, "streamd ") || !strings.Contains(stdout, runtime.Version()) {
		t.Errorf("exit %d, %q", code, stdout)
	}
	defer func(v string) { version = v }(version)
	version = "v1.2.3"
	if stdout, _, _ := runMain("version"); !strings.HasPrefix(stdout, "streamd v1.2.3 ") {
		t.Errorf("with -X main.version: %q", stdout)
	}
}
