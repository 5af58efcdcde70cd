package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCutShort: the first n values train, the next h test (the
// default cut and three years forecast a year); a series too short for
// both is an error.
func TestCutShort(t *testing.T) {
	for _, c := range [][2]int{{shortTrain, shortHorizon}, {36, 12}} {
		testCutShort(t, c[0], c[1])
	}
}

func testCutShort(t *testing.T, n, h int) {
	values := make([]float64, n+h+3)
	for i := range values {
		values[i] = float64(i)
	}
	out, err := cutShort([]nn3Series{{Name: "a", Train: values, Test: []float64{-1}}}, n, h)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Train, values[:n]) || !slices.Equal(out[0].Test, values[n:n+h]) {
		t.Errorf("cut %d/%d: train %v, test %v", n, h, out[0].Train, out[0].Test)
	}
	if _, err := cutShort([]nn3Series{{Name: "b", Train: values[:n+h-1]}}, n, h); err == nil {
		t.Errorf("cut %d/%d: a series of %d values was cut", n, h, n+h-1)
	}
}

// The short suite's cut must be at least a value and a step: run refuses
// others before building anything.
func TestShortFlagsRefused(t *testing.T) {
	for _, args := range [][]string{{"-short-train", "0", "short"}, {"-short-horizon", "0", "short"}} {
		var out, errw strings.Builder
		err := run(context.Background(), args, &out, &errw)
		if err == nil || !strings.Contains(err.Error(), "-short-train and -short-horizon") {
			t.Errorf("%v: %v, want the flags refused", args, err)
		}
	}
}

// writeDated's file of NN3's monthly dates: a header t,y, the first value
// dated 2000-01-01 and each next a calendar month later, across the year's
// end; the values written exactly (shortest round-trip form).
func TestWriteDated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.csv")
	y := []float64{1.5, 2, 1e-7, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, math.Nextafter(0.3, 1)}
	if err := writeDated(path, monthsFrom(2000, 1, 1, len(y)), y); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(y)+1 || lines[0] != "t,y" {
		t.Fatalf("%d lines, header %q", len(lines), lines[0])
	}
	for i, want := range map[int]string{1: "2000-01-01,1.5", 3: "2000-03-01,1e-07", 12: "2000-12-01,12", 13: "2001-01-01,13", 14: "2001-02-01,0.30000000000000004"} {
		if lines[i] != want {
			t.Errorf("line %d %q, want %q", i, lines[i], want)
		}
	}
}

// setTimes from R's start: each kind's step, a quarter's first month, a
// minutely set's RFC 3339 times, and none for a set without a time step.
func TestSetTimes(t *testing.T) {
	for _, c := range []struct {
		kind         string
		year, period int
		want         []string
	}{
		{"monthly", 1949, 11, []string{"1949-11-01", "1949-12-01", "1950-01-01"}},
		{"quarterly", 1960, 4, []string{"1960-10-01", "1961-01-01", "1961-04-01"}},
		{"annual", 1700, 1, []string{"1700-01-01", "1701-01-01", "1702-01-01"}},
		{"decennial", 1790, 1, []string{"1790-01-01", "1800-01-01", "1810-01-01"}},
		{"10-minutely", 1, 1, []string{"2000-01-01T00:00:00Z", "2000-01-01T00:10:00Z", "2000-01-01T00:20:00Z"}},
		{"regular", 1, 1, nil},
	} {
		if got := setTimes(classicSet{Kind: c.kind}, c.year, c.period, 3); !slices.Equal(got, c.want) {
			t.Errorf("%s from %d/%d: %v, want %v", c.kind, c.year, c.period, got, c.want)
		}
	}
}
