package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestGenerate(t *testing.T) {
	gen := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"generate"}, args...), nil, &out, &errb)
		return out.String(), err
	}
	for _, tc := range []struct {
		kind, header string
		cols         int
	}{{"mackey-glass", "t,y", 2}, {"lorenz", "t,y", 2}, {"chua", "t,y", 2}, {"sinc", "x,y,f", 3}} {
		a, err := gen(tc.kind, "-n", "50", "-noise", "0.01")
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		lines := strings.Split(strings.TrimSpace(a), "\n")
		if lines[0] != tc.header || len(lines) != 51 {
			t.Fatalf("%s: header %q, %d lines", tc.kind, lines[0], len(lines))
		}
		for _, l := range lines[1:] {
			f := strings.Split(l, ",")
			if len(f) != tc.cols {
				t.Fatalf("%s: line %q", tc.kind, l)
			}
			for _, v := range f {
				if _, err := strconv.ParseFloat(v, 64); err != nil {
					t.Fatalf("%s: %v", tc.kind, err)
				}
			}
		}
		b, _ := gen(tc.kind, "-n", "50", "-noise", "0.01")
		if a != b {
			t.Errorf("%s: not deterministic", tc.kind)
		}
		c, _ := gen(tc.kind, "-n", "50", "-noise", "0.01", "-seed", "2")
		if a == c {
			t.Errorf("%s: the seed changes nothing", tc.kind)
		}
	}
	var ue *usageError
	if _, err := gen("weather"); !errors.As(err, &ue) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := gen("-n", "5"); !errors.As(err, &ue) {
		t.Errorf("missing kind: %v", err)
	}
}
