package main

import (
	"encoding/json"
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(b))
}

// A Student-t forecast is scored with its own density: ν = 4, std 1 (scale
// √(1/2)), e = 0: −log p = −lnΓ(5/2) + lnΓ(2) + ½ln(4π) + ln√(1/2)
// = 0.634255662731754 (lnΓ(5/2) = ln(3√π/4)); and at e = 1,
// + (5/2)·ln(1 + 1/2).
func TestScoreStudentT(t *testing.T) {
	var s score
	s.add(0, 0, 1, 1, -2, 2, tOfVariance(4))
	s.add(1, 0, 1, 1, -2, 2, tOfVariance(4))
	at0 := -math.Log(3*math.Sqrt(math.Pi)/4) + 0.5*math.Log(4*math.Pi) + math.Log(math.Sqrt(0.5))
	want := (2*at0 + 2.5*math.Log(1.5)) / 2
	if got := float64(s.metrics().NLPD); !near(got, want, 1e-14) {
		t.Errorf("nlpd = %.17g, want %.17g", got, want)
	}
}

// A young series' step is scored with Student's t at scale std: ν = 2,
// std 2, whose density is (1/std)·1/(2√2·(1 + x²/2)^{3/2}) at x = e/std:
// −log p = ln 2 + ln(2√2) at e = 0, and + (3/2)·ln(1 + 1/2) at e = 2.
func TestScoreStudentTAtScale(t *testing.T) {
	var s score
	s.add(0, 0, 2, 2, -9, 9, tOfScale(2))
	s.add(2, 0, 2, 2, -9, 9, tOfScale(2))
	at0 := math.Log(2) + math.Log(2*math.Sqrt(2))
	want := (2*at0 + 1.5*math.Log(1.5)) / 2
	if got := float64(s.metrics().NLPD); !near(got, want, 1e-14) {
		t.Errorf("nlpd = %.17g, want %.17g", got, want)
	}
}

// TestScoreClosedForm checks every metric on cases computed by hand.
func TestScoreClosedForm(t *testing.T) {
	// Targets y = 1, 2, 3 (mean 2, ddof-0 variance 2/3); predictions μ = 1, 1, 5
	// with σ = 1: errors 0, 1, −2.
	//   SSE = 0 + 1 + 4 = 5; NMSE = 5 / (3 · 2/3) = 2.5; RMSE = √(5/3); MAE = 3/3 = 1
	//   coverage: |e| ≤ 1.96 for e = 0, 1 → 2/3
	//   NLPD = ½log(2π) + (0 + 1 + 4)/(2·3) = 0.918939 + 0.833333
	// Baseline std 2: all |e| ≤ 3.92 → coverage 1; NLPD = ½log(8π) + 5/(2·4·3).
	var s score
	s.add(1, 1, 1, 2, 1-z95*1, 1+z95*1, normal)
	s.add(2, 1, 1, 2, 1-z95*1, 1+z95*1, normal)
	s.add(3, 5, 1, 2, 5-z95*1, 5+z95*1, normal)
	m := s.metrics()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"nmse", float64(m.NMSE), 2.5},
		{"rmse", float64(m.RMSE), math.Sqrt(5.0 / 3)},
		{"mae", float64(m.MAE), 1},
		{"coverage95", float64(m.Coverage95), 2.0 / 3},
		{"nlpd", float64(m.NLPD), 0.5*math.Log(2*math.Pi) + 5.0/6},
		{"coverage95_one_step_bar", float64(m.Coverage95OneStepBar), 1},
		{"nlpd_one_step_bar", float64(m.NLPDOneStepBar), 0.5*math.Log(8*math.Pi) + 5.0/24},
	} {
		if !near(c.got, c.want, 1e-14) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	if m.N != 3 {
		t.Errorf("n = %d", m.N)
	}
}

// TestScoreNLPDScale: σ = 2, y = μ: NLPD = ½log(2π·4) exactly; the band edge
// |e| = 1.96σ counts as covered, just beyond it does not.
func TestScoreNLPDScale(t *testing.T) {
	var s score
	s.add(10, 10, 2, 2, 10-z95*2, 10+z95*2, normal)
	if m := s.metrics(); !near(float64(m.NLPD), 0.5*math.Log(8*math.Pi), 1e-15) {
		t.Errorf("nlpd = %v", m.NLPD)
	}
	var edge score
	edge.add(z95*2, 0, 2, 2, -z95*2, z95*2, normal)
	edge.add(z95*2*(1+1e-9), 0, 2, 2, -z95*2, z95*2, normal)
	if got := float64(edge.metrics().Coverage95); got != 0.5 {
		t.Errorf("coverage at the band edge = %v, want 0.5", got)
	}
}

// TestScoreNMSEOffset: the variance is Welford's, so a large common offset
// does not cancel catastrophically: y = 1e9 + {0, 1}, μ = 1e9 + 0.5 gives
// NMSE = (0.25 + 0.25)/(2 · 0.25) = 1.
func TestScoreNMSEOffset(t *testing.T) {
	var s score
	s.add(1e9, 1e9+0.5, 1, 1, 1e9+0.5-z95*1, 1e9+0.5+z95*1, normal)
	s.add(1e9+1, 1e9+0.5, 1, 1, 1e9+0.5-z95*1, 1e9+0.5+z95*1, normal)
	if m := s.metrics(); !near(float64(m.NMSE), 1, 1e-12) {
		t.Errorf("nmse = %v, want 1", m.NMSE)
	}
}

func TestScoreDegenerate(t *testing.T) {
	var empty score
	b, err := json.Marshal(empty.metrics())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"n":0,"nmse":null,"rmse":null,"mae":null,"coverage95":null,"nlpd":null,"coverage95_one_step_bar":null,"nlpd_one_step_bar":null}` {
		t.Errorf("empty metrics: %s", b)
	}
	var one score // a single target has zero variance: NMSE undefined
	one.add(3, 2, 1, 1, 2-z95*1, 2+z95*1, normal)
	m := one.metrics()
	if !math.IsNaN(float64(m.NMSE)) || float64(m.RMSE) != 1 {
		t.Errorf("one target: %+v", m)
	}
	var zero score // σ = 0 and a miss: infinite NLPD, encoded null
	zero.add(1, 0, 0, 0, 0-z95*0, 0+z95*0, normal)
	if b, _ := json.Marshal(zero.metrics().NLPD); string(b) != "null" {
		t.Errorf("nlpd with σ = 0: %s", b)
	}
}

func TestPercentile(t *testing.T) {
	d := []int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	for _, c := range []struct {
		p    float64
		want int64
	}{{0, 10}, {0.5, 50}, {0.99, 100}, {0.1, 10}, {0.11, 20}, {1, 100}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("empty percentile")
	}
}
