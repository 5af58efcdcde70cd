package main

import (
	"context"
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
