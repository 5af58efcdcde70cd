package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamd/streamd/internal/online"
)

// The defaults serve series of every kind, not only the benchmarks': flat,
// all zeros, a step, a trend, exponential growth, intermittent counts,
// magnitudes of 1e12 and 1e-12, negative values, alternating signs, a
// random walk's like, white noise, spikes, quantised values, a daily period
// and a level shift through zero. Each gets its first forecast at value
// online.FirstFit and from then on one at every value, every number in it
// finite and every band around its point forecast (lo ≤ mean ≤ hi); no
// Observe fails.
func TestDefaultsServeSeriesOfEveryKind(t *testing.T) {
	c := DefaultConfig()
	cfg := c.Model.Learner(c.Forecast, c.Robust)
	// 140 values: the re-choices every 16 values, and the first that ranks
	// RBF kernels and differenced forms (at 128).
	const n = 140
	kinds := []struct {
		name string
		y    func(i int, rng *rand.Rand) float64
	}{
		{"constant", func(int, *rand.Rand) float64 { return 5 }},
		{"zeros", func(int, *rand.Rand) float64 { return 0 }},
		{"step", func(i int, _ *rand.Rand) float64 { return map[bool]float64{true: 1, false: 50}[i < 70] }},
		{"trend", func(i int, r *rand.Rand) float64 { return 3*float64(i) + 5*r.NormFloat64() }},
		{"growth", func(i int, r *rand.Rand) float64 { return math.Exp(0.03*float64(i)) * (1 + 0.05*r.NormFloat64()) }},
		{"intermittent", func(_ int, r *rand.Rand) float64 { return float64(r.IntN(10)/9) * float64(1+r.IntN(5)) }},
		{"huge", func(i int, r *rand.Rand) float64 { return 1e12*(1+0.1*math.Sin(float64(i)/5)) + 1e10*r.NormFloat64() }},
		{"tiny", func(i int, r *rand.Rand) float64 { return 1e-12*(1+0.1*math.Sin(float64(i)/5)) + 1e-14*r.NormFloat64() }},
		{"negative", func(i int, r *rand.Rand) float64 { return -100 + 10*math.Sin(float64(i)/7) + r.NormFloat64() }},
		{"alternating", func(i int, r *rand.Rand) float64 { return float64(1-2*(i%2)) * (1 + 0.1*r.Float64()) }},
		{"noise", func(_ int, r *rand.Rand) float64 { return r.NormFloat64() }},
		{"spikes", func(i int, _ *rand.Rand) float64 { return math.Sin(float64(i)/5) + float64(100*(i%37/36)) }},
		{"quantised", func(i int, _ *rand.Rand) float64 { return math.Round(10 * math.Sin(float64(i)/9)) }},
		{"daily", func(i int, r *rand.Rand) float64 {
			return 10 + 5*math.Sin(2*math.Pi*float64(i)/24) + 0.5*r.NormFloat64()
		}},
		{"shift", func(i int, r *rand.Rand) float64 {
			return map[bool]float64{true: 100, false: -100}[i < 100] + r.NormFloat64()
		}},
		{"random walk", func(i int, r *rand.Rand) float64 { return float64(i%3-1) + r.NormFloat64()*math.Sqrt(float64(i+1)) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			l, err := online.NewLearner(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(11, 11))
			for i := range n {
				res, err := l.Observe(online.Observation{T: int64(i + 1), Y: k.y(i, rng)})
				if err != nil {
					t.Fatalf("value %d: %v", i+1, err)
				}
				if want := i+1 >= cfg.FirstForecast(); (len(res.Forecast) > 0) != want {
					t.Fatalf("value %d: %d forecast steps, want them from value %d on", i+1, len(res.Forecast), cfg.FirstForecast())
				}
				for _, st := range res.Forecast {
					if i+1 < online.FirstFit && !st.Fallback {
						t.Fatalf("value %d, before the first fit: step %+v is not flagged the fallback's", i+1, st)
					}
					for _, v := range []float64{st.Mean, st.Std, st.Lo, st.Hi} {
						if math.IsNaN(v) || math.IsInf(v, 0) {
							t.Fatalf("value %d: step %+v is not finite", i+1, st)
						}
					}
					if !(st.Lo <= st.Mean && st.Mean <= st.Hi) {
						t.Fatalf("value %d: step %+v: the band does not hold the mean", i+1, st)
					}
				}
			}
		})
	}
}
