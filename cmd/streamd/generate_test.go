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
	}{{"mackey-glass", "t,y", 2}, {"lorenz", "t,y", 2}, {"chua", "t,y", 2}, {"sinc", "x,y,f", 3}, {"hammerstein", "t,y,u", 3}} {
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
	// Values that panicked (a negative or NaN delay indexes before the
	// series), ran out of memory or were silently ignored are usage errors.
	for _, args := range [][]string{{"-tau", "-3"}, {"-tau", "NaN"}, {"-tau", "1e12"}, {"-n", "1000000000"},
		{"-noise", "NaN"}, {"-noise", "-2"}, {"-spikes", "2"}, {"-spikes", "NaN"}} {
		if _, err := gen(append([]string{"mackey-glass"}, args...)...); !errors.As(err, &ue) {
			t.Errorf("mackey-glass %v: %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"-delay", "-1"}, {"-hold", "0"}} {
		if _, err := gen(append([]string{"hammerstein"}, args...)...); !errors.As(err, &ue) {
			t.Errorf("hammerstein %v: %v, want a usage error", args, err)
		}
	}
	for _, args := range [][]string{{"-outliers", "-1"}, {"-test", "-5"}} {
		if _, err := gen(append([]string{"sinc"}, args...)...); !errors.As(err, &ue) {
			t.Errorf("sinc %v: %v, want a usage error", args, err)
		}
	}
}

// --spikes writes the spiked series, the clean one and the spike flags: y and
// clean differ exactly at the flagged rows, by 10 noise std. --test appends
// noise-free grid rows whose y is the true sinc.
func TestGenerateSpikesAndTestRows(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"generate", "mackey-glass", "-n", "2000", "-noise", "0.01", "-spikes", "0.05"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if lines[0] != "t,y,clean,spike" {
		t.Fatalf("header %q", lines[0])
	}
	spikes := 0
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		y, _ := strconv.ParseFloat(f[1], 64)
		c, _ := strconv.ParseFloat(f[2], 64)
		if (f[3] == "1") != (y != c) {
			t.Fatalf("row %q: flag and difference disagree", l)
		}
		if f[3] == "1" {
			spikes++
		}
	}
	if spikes < 60 || spikes > 140 { // 5 % of 2000 = 100, ±4σ
		t.Errorf("%d spikes in 2000 rows at p = 0.05", spikes)
	}
	out.Reset()
	if err := run(context.Background(), []string{"generate", "sinc", "-n", "10", "-test", "5"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 16 {
		t.Fatalf("%d lines, want header + 10 + 5", len(lines))
	}
	for _, l := range lines[11:] {
		f := strings.Split(l, ",")
		if f[1] != f[2] {
			t.Errorf("test row %q: y is not the true value", l)
		}
	}
	var ue *usageError
	if err := run(context.Background(), []string{"generate", "lorenz", "-spikes", "0.1"}, nil, &out, &errb); !errors.As(err, &ue) {
		t.Errorf("spikes without noise: %v", err)
	}
}
