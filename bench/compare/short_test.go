package main

import (
	"slices"
	"testing"
)

// TestCutShort: the first train values train, the next h test; a series
// too short for both is an error.
func TestCutShort(t *testing.T) {
	train := make([]float64, shortTrain+shortHorizon+3)
	for i := range train {
		train[i] = float64(i)
	}
	out, err := cutShort([]nn3Series{{Name: "a", Train: train, Test: []float64{-1}}}, shortTrain, shortHorizon)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out[0].Train, train[:shortTrain]) || !slices.Equal(out[0].Test, train[shortTrain:shortTrain+shortHorizon]) {
		t.Errorf("train %v, test %v", out[0].Train, out[0].Test)
	}
	if _, err := cutShort([]nn3Series{{Name: "b", Train: train[:shortTrain+shortHorizon-1]}}, shortTrain, shortHorizon); err == nil {
		t.Errorf("a series of %d values was cut", shortTrain+shortHorizon-1)
	}
}
