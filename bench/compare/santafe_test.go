package main

import (
	"math"
	"testing"
)

// TestPooled checks the many-origin rows' pooling against hand-computed
// values: steps weighted by their counts, h below from and empty steps
// left out, the squared errors pooled before the division by the variance.
func TestPooled(t *testing.T) {
	hs := []horizonMetrics{
		{H: 1, N: 1000, RMSE: 100, NLPD: 50, Coverage95: 0}, // the one-step population: left out
		{H: 2, N: 10, RMSE: 1, NLPD: 1, Coverage95: 1},
		{H: 3, N: 30, RMSE: 3, NLPD: 2, Coverage95: 0.9},
		{H: 4, N: 0, RMSE: num(math.NaN()), NLPD: num(math.NaN())}, // no targets
	}
	nmse, nlpd, cover, n, ok := pooled(hs, 2, 2)
	// MSE = (10·1 + 30·9)/40 = 7; NLPD = (10·1 + 30·2)/40 = 1.75;
	// coverage = (10·1 + 30·0.9)/40 = 0.925.
	want := []float64{7.0 / 2, 1.75, 0.925}
	for i, got := range []float64{nmse, nlpd, cover} {
		if math.Abs(got-want[i]) > 1e-12*math.Abs(want[i]) {
			t.Errorf("pooled value %d = %v, want %v", i, got, want[i])
		}
	}
	if n != 40 || !ok {
		t.Errorf("n = %d, ok = %v; want 40, true", n, ok)
	}
	if _, _, _, _, ok := pooled(hs[:1], 2, 2); ok {
		t.Error("pooled nothing, yet ok")
	}
	if _, _, _, _, ok := pooled(hs, 2, 0); ok {
		t.Error("a zero variance, yet ok")
	}
	if v := variance([]float64{1, 2, 3, 4}); math.Abs(v-1.25) > 1e-15 {
		t.Errorf("variance = %v, want 1.25 (ddof 0)", v)
	}
	if s := lagString([]int{1, 2, 3}); s != "1..3" {
		t.Errorf("lagString(1, 2, 3) = %q", s)
	}
	if s := lagString([]int{1, 12, 13}); s != "1,12,13" {
		t.Errorf("lagString(1, 12, 13) = %q", s)
	}
}
