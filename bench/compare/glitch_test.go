package main

import (
	"slices"
	"testing"
)

// TestCorruptChangesOneValue: corrupt multiplies the glitchBack-th training
// value from the end by glitchFactor, and nothing else, in a copy.
func TestCorruptChangesOneValue(t *testing.T) {
	in := []nn3Series{{Name: "a", Train: []float64{1, 2, 3, 4, 5, 6, 7}, Test: []float64{8}},
		{Name: "short", Train: []float64{1, 2}, Test: []float64{3}}}
	out := corrupt(in)
	if want := []float64{1, 2, 3 * glitchFactor, 4, 5, 6, 7}; !slices.Equal(out[0].Train, want) {
		t.Errorf("corrupted %v, want %v", out[0].Train, want)
	}
	if !slices.Equal(out[1].Train, in[1].Train) {
		t.Errorf("a series of %d values, shorter than %d: %v", len(in[1].Train), glitchBack, out[1].Train)
	}
	if in[0].Train[2] != 3 || !slices.Equal(out[0].Test, in[0].Test) {
		t.Errorf("the input changed (%v) or the test values did (%v)", in[0].Train, out[0].Test)
	}
}
