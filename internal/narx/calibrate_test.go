package narx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Residuals drawn with variance a + ρ₀b for known parts a, b: the likelihood
// fit must recover ρ₀, and with Gaussian residuals the interval scale τ must
// be near 1. Tolerances: with 512 residuals the ML estimate of ρ has a
// relative std of roughly √(2/512)·(a+ρb)/(ρb) ≈ 10 % here (b dominates), so
// 30 % is a 3σ bound; τ is a 95 %-quantile ratio, whose std over 512 draws is
// about 0.1 — averaged over 50 runs, the mean must lie within 0.05 of 1.
func TestCalibrationRecoversScales(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rho0 := range []float64{0.05, 0.5, 2} {
		var meanRho, meanTau float64
		const runs = 50
		for run := 0; run < runs; run++ {
			c := newCalibration(0.95)
			for i := 0; i < calWindow; i++ {
				a := 0.01 * (0.5 + rng.Float64())
				b := 0.1 * rng.Float64()
				c.add(math.Sqrt(a+rho0*b)*rng.NormFloat64(), a, b)
			}
			c.refit()
			meanRho += c.scale / runs
			meanTau += c.tau / runs
		}
		if math.Abs(meanRho-rho0) > 0.3*rho0 {
			t.Errorf("ρ₀ = %g: mean estimate %g", rho0, meanRho)
		}
		if math.Abs(meanTau-1) > 0.05 {
			t.Errorf("ρ₀ = %g: mean τ %g, want ≈ 1 for Gaussian residuals", rho0, meanTau)
		}
	}
}

// Heavy tails: residuals from a Student-t with 3 degrees of freedom, scaled to
// the predicted variance. The likelihood-optimal variance is inflated by the
// tails; τ must bring the band back so that 95 % of the residuals fall inside.
func TestCalibrationIntervalScaleHeavyTails(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := newCalibration(0.95)
	for i := 0; i < calWindow; i++ {
		a, b := 0.01, 0.0
		z := rng.NormFloat64()
		chi := 0.0
		for k := 0; k < 3; k++ {
			g := rng.NormFloat64()
			chi += g * g
		}
		c.add(0.1*z/math.Sqrt(chi/3), a, b)
	}
	c.refit()
	in := 0
	for i := 0; i < c.count; i++ {
		if c.e2[i] <= 1.959964*1.959964*c.tau*(c.a[i]+c.scale*c.b[i]) {
			in++
		}
	}
	if cov := float64(in) / float64(c.count); math.Abs(cov-0.95) > 0.005 {
		t.Errorf("coverage after τ = %g: %g, want 0.95", c.tau, cov)
	}
	if c.add(math.NaN(), 1, 0) || c.add(1, 0, 0) || c.add(1, 1, -1) {
		t.Error("accepted a non-finite or invalid residual")
	}
}

// Residuals far larger than the predicted variance drive ρ to its upper
// bound, and the bound must hold exactly: exp(ln ρ) rounds to
// 10.00000000000001, and a state restore checks the bounds (a snapshot of
// such a series was refused, so the series started afresh at every restart).
// Likewise residuals that want no Nyström term at the lower bound.
func TestCalibrationScaleStaysWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		e, a, b float64
		bound   float64
	}{{1, 0.01, 0.01, calMaxScale}, {0.1, 0.01, 10, calMinScale}} {
		rng := rand.New(rand.NewPCG(3, 4))
		c := newCalibration(0.95)
		for i := 0; i < calWindow; i++ {
			c.add(tc.e*rng.NormFloat64(), tc.a, tc.b)
		}
		c.refit()
		if !(c.scale >= calMinScale && c.scale <= calMaxScale) {
			t.Errorf("ρ = %v outside [%v, %v]", c.scale, calMinScale, calMaxScale)
		}
		if math.Abs(c.scale/tc.bound-1) > 0.01 {
			t.Errorf("ρ = %v: the test meant to reach the bound %v", c.scale, tc.bound)
		}
	}
}

// Models fitted together on different series and fed in lockstep, as a
// daemon started on a backlog feeds them, must not refit their calibration at
// the same samples: after the first refit (at calMin residuals, the same
// sample for all) each takes its own phase in the refit period. With 64
// models and 256 phases, a uniform hash leaves ≈ 57 distinct phases and at
// most 3–4 models on one sample (birthday bounds, < 1e-3 chance of 6);
// without the phase all 64 refit at once. Each model's phase is
// a function of its data: a second run gives the same refit samples.
func TestCalibrationRefitsSpread(t *testing.T) {
	const models, n = 64, 2
	cfg := baseConfig(n, 10)
	cfg.Window = 50
	refitsAt := func() map[int][]int { // sample → models refitting there
		at := map[int][]int{}
		fitAndFeed(t, cfg, models, 100+calMin+2*calRefitEvery, 99, func(k, i int, m *Model) {
			if m.sinceCal == 0 || (m.cal.count == calMin && i-100 == calMin-1) {
				at[i] = append(at[i], k)
			}
		})
		return at
	}
	at := refitsAt()
	first := 100 + calMin - 1
	if len(at[first]) != models {
		t.Fatalf("%d models refit at the first sample with calMin residuals, want all %d", len(at[first]), models)
	}
	phases, most := 0, 0
	for i, ks := range at {
		if i == first {
			continue
		}
		if i < first+calRefitEvery {
			phases++
		}
		most = max(most, len(ks))
	}
	if phases < 45 || most > 5 {
		t.Errorf("refits after the first: %d distinct samples in the first period, up to %d models on one; want ≥ 45 and ≤ 5", phases, most)
	}
	again := refitsAt()
	for i, ks := range at {
		if !slices.Equal(ks, again[i]) {
			t.Fatalf("sample %d: models %v refit in one run, %v in another", i, ks, again[i])
		}
	}
}

// Frozen working sets (SwapInterval 0) fitted together and fed in lockstep
// must not refresh level 2 at the same samples: with swaps, each accepted
// swap refreshes it and desynchronises the series; without, the refreshes
// take a per-model phase in the period NoiseEvery (noisePhase). The bounds
// are those of TestCalibrationRefitsSpread (64 models, 256 phases); without
// the phase all 64 refresh at once. A second run refreshes at the same
// samples: the phase is a function of the data.
func TestFrozenNoiseRefreshesSpread(t *testing.T) {
	const models, n, every = 64, 2, 256
	cfg := baseConfig(n, 10)
	cfg.Window, cfg.SwapInterval, cfg.NoiseEvery = 50, 0, every
	refreshesAt := func() map[int][]int { // sample → models refreshing there
		at := map[int][]int{}
		fitAndFeed(t, cfg, models, 100+every, 98, func(k, i int, m *Model) {
			if m.sinceNoise == 0 {
				at[i] = append(at[i], k)
			}
		})
		return at
	}
	at := refreshesAt()
	most, total := 0, 0
	for _, ks := range at {
		most = max(most, len(ks))
		total += len(ks)
	}
	if total != models || len(at) < 45 || most > 5 {
		t.Errorf("%d refreshes in the first period over %d distinct samples, up to %d models on one; want %d, ≥ 45 and ≤ 5",
			total, len(at), most, models)
	}
	again := refreshesAt()
	for i, ks := range at {
		if !slices.Equal(ks, again[i]) {
			t.Fatalf("sample %d: models %v refreshed in one run, %v in another", i, ks, again[i])
		}
	}
}

// fitAndFeed fits each of models models (configuration cfg) on the first 100
// of total samples of its own random regression (seeded by its index and
// seed), then learns the rest one by one, calling visit after sample i of
// model k.
func fitAndFeed(t *testing.T, cfg Config, models, total int, seed uint64, visit func(k, i int, m *Model)) {
	t.Helper()
	n := cfg.Embedding.Dim()
	for k := 0; k < models; k++ {
		rng := rand.New(rand.NewPCG(uint64(k), seed))
		X, y := randRegression(rng, total, n, 0.1)
		m, err := NewModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fit(X[:100*n], y[:100], nil); err != nil {
			t.Fatal(err)
		}
		for i := 100; i < len(y); i++ {
			m.Observe(X[i*n : (i+1)*n])
			m.Learn(y[i], 1)
			visit(k, i, m)
		}
	}
}
