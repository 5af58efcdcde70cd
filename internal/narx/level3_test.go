package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Data from a function made of RBF bumps exp(−‖x−c‖²/σ²₀) at uniformly random
// centres with N(0,1) amplitudes, plus Gaussian noise of a known std. Such a
// function is (approximately) a Gaussian-process draw whose covariance is the
// bump convolved with itself: a Gaussian of width 2σ²₀ (variances add under
// convolution). So the evidence must rank σ² ≈ 2σ²₀ first, and the inferred
// noise std must land near the truth. Tolerances: a factor 1.5 on σ² (30 bumps
// are a coarse approximation of the process, and the evidence is flat near its
// optimum) and 10 % on the noise std (its sampling std at N = 600 is ~3 %).
func TestLevel3RecoversWidthAndNoise(t *testing.T) {
	for _, tc := range []struct{ sigma2, noise float64 }{{0.5, 0.1}, {2, 0.05}, {4, 0.2}} {
		rng := rand.New(rand.NewPCG(31, uint64(10*tc.sigma2)))
		const N, n, bumps = 600, 2, 30
		centres := make([]float64, bumps*n)
		amp := make([]float64, bumps)
		for i := range centres {
			centres[i] = 6*rng.Float64() - 3
		}
		for i := range amp {
			amp[i] = rng.NormFloat64()
		}
		truth := Kernel{Type: RBF, Sigma2: tc.sigma2}
		X := make([]float64, N*n)
		y := make([]float64, N)
		for i := 0; i < N; i++ {
			x := X[i*n : (i+1)*n]
			for j := range x {
				x[j] = 6*rng.Float64() - 3
			}
			for b := 0; b < bumps; b++ {
				y[i] += amp[b] * truth.Eval(x, centres[b*n:(b+1)*n])
			}
			y[i] += tc.noise * rng.NormFloat64()
		}
		cfg := baseConfig(n, 150)
		cfg.Cutoff, cfg.AutoGamma = 1e-10, true
		res, err := SearchSigma2(cfg, X, y, MedianSqDist(X, n, 2000, 1), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("σ²₀ = %g, noise %g: inferred σ² = %.3g, γ = %.3g, noise std %.4f (%d fits)",
			tc.sigma2, tc.noise, res.Best.Sigma2, res.Best.Gamma, res.Best.NoiseStd, len(res.Trials))
		if r := res.Best.Sigma2 / (2 * tc.sigma2); r < 1/1.5 || r > 1.5 {
			t.Errorf("σ²₀ = %g: inferred σ² = %g, want ≈ 2σ²₀ = %g", tc.sigma2, res.Best.Sigma2, 2*tc.sigma2)
		}
		if math.Abs(res.Best.NoiseStd-tc.noise) > 0.1*tc.noise {
			t.Errorf("noise std %g, true %g", res.Best.NoiseStd, tc.noise)
		}
	}
}

// wavySurface draws N regressors uniform on [−2, 2]² (X, N×2 row-major)
// and targets sin(2x₁)·cos(x₂) plus noise of std 0.05, from PCG(seed, seed+1).
func wavySurface(N int, seed uint64) (X, y []float64) {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	X, y = make([]float64, 2*N), make([]float64, N)
	for i := range N {
		X[2*i], X[2*i+1] = 4*rng.Float64()-2, 4*rng.Float64()-2
		y[i] = math.Sin(2*X[2*i])*math.Cos(X[2*i+1]) + 0.05*rng.NormFloat64()
	}
	return X, y
}

// wavySearch is the width search of 40 members on 300 samples of
// wavySurface around their median squared distance center.
func wavySearch(t *testing.T) (cfg Config, X, y []float64, center float64, res WidthSearch) {
	t.Helper()
	const N, n = 300, 2
	X, y = wavySurface(N, 41)
	cfg = baseConfig(n, 40)
	cfg.Cutoff, cfg.AutoGamma = 1e-10, true
	center = MedianSqDist(X, n, 2000, 1)
	res, err := SearchSigma2(cfg, X, y, center, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, X, y, center, res
}

// SearchSigma2 compares widths on one working set, the one selected at the
// centre width: each trial's evidence is exactly (bit for bit) that of a
// fit at the trial's width on those rows, and the best trial is the
// largest of them. A selection per width would make the evidence a
// function of the members as much as of the width.
func TestWidthSearchComparesOneWorkingSet(t *testing.T) {
	cfg, X, y, center, res := wavySearch(t)
	n := cfg.Embedding.Dim()
	c0 := cfg
	c0.Kernel.Sigma2 = center
	rows := SelectWorkingSet(c0.Kernel, X, n, cfg.Size, nil, cfg.Select).Index
	best := math.Inf(-1)
	for _, tr := range res.Trials {
		c := cfg
		c.Kernel.Sigma2 = tr.Sigma2
		m, err := NewModel(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.fit(X, y, nil, rows); err != nil {
			t.Fatal(err)
		}
		if got := m.LogEvidence(); got != tr.LogEvidence {
			t.Errorf("σ² = %g: trial evidence %v, a fit on the centre's working set %v", tr.Sigma2, tr.LogEvidence, got)
		}
		best = max(best, tr.LogEvidence)
	}
	if res.Best.LogEvidence != best {
		t.Errorf("best evidence %v, largest trial %v", res.Best.LogEvidence, best)
	}
}

// TryWidths fits the widths it is given on the working set selected at
// its centre, as SearchSigma2 does: its trials at the search's grid points
// σ²·2^k carry the search's evidence bit for bit, and its best is the
// largest of them.
func TestTryWidthsAreTheSearchsTrials(t *testing.T) {
	cfg, X, y, center, search := wavySearch(t)
	widths := []float64{center / 4, center / 2, center}
	got, err := TryWidths(cfg, X, y, center, widths, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Trials) != len(widths) {
		t.Fatalf("%d trials for %d widths", len(got.Trials), len(widths))
	}
	best := math.Inf(-1)
	for i, tr := range got.Trials {
		// The search's grid point k = i−2 (its first 11 trials are k = −5..5).
		want := search.Trials[5+i-2]
		if tr.Sigma2 != widths[i] || tr.LogEvidence != want.LogEvidence {
			t.Errorf("σ² = %g: evidence %v, the search's at σ² = %g: %v", tr.Sigma2, tr.LogEvidence, want.Sigma2, want.LogEvidence)
		}
		best = max(best, tr.LogEvidence)
	}
	if got.Best.LogEvidence != best {
		t.Errorf("best %v, largest trial %v", got.Best.LogEvidence, best)
	}
	if _, err := TryWidths(cfg, X, y, center, []float64{0}, nil); err == nil {
		t.Error("a width of 0 was tried")
	}
}

// TestLogEvidenceKeptByTheRefresh checks the value the level-2 refresh
// keeps for LogEvidence: bit for bit the evidence decomposed afresh from the
// statistics, right after a fit (whose window, shorter than the fit, gives
// loadStats the newest columns) and after each periodic refresh while the
// model learns and swaps (with forgetting, the pending factor that Stats
// forms and SetGamma applies), with and without the level-2 search of γ;
// and never served once the statistics or γ have moved on. The O(r²)
// refresh at a held γ keeps none.
func TestLogEvidenceKeptByTheRefresh(t *testing.T) {
	const N, n = 400, 2
	X, y := wavySurface(N, 43)
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	for _, lambda := range []float64{1, 0.99} {
		for _, auto := range []bool{false, true} {
			cfg := baseConfig(n, 30)
			cfg.Forgetting, cfg.AutoGamma = lambda, auto
			cfg.Window, cfg.NoiseEvery, cfg.SwapInterval = 150, 7, 5
			m, err := NewModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const fit = 200
			if err := m.Fit(X[:fit*n], y[:fit], nil); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("λ = %g, auto γ %v", lambda, auto)
			if m.logEvRLS != m.rls || m.logEvAt != m.rls.Version() {
				t.Fatalf("%s: the fit's refresh kept no value", name)
			}
			if got, want := m.LogEvidence(), m.logEvidenceNow(); !same(got, want) {
				t.Errorf("%s: after the fit %v, afresh %v", name, got, want)
			}
			kept, stale, swaps := 0, 0, 0
			for i := fit; i < N; i++ {
				m.Observe(X[i*n : (i+1)*n])
				if m.Learn(y[i], 1) {
					swaps++
				}
				got, want := m.LogEvidence(), m.logEvidenceNow()
				if !same(got, want) {
					t.Fatalf("%s, sample %d: LogEvidence %v, afresh %v", name, i, got, want)
				}
				if m.logEvAt == m.rls.Version() {
					kept++
				} else {
					stale++
				}
			}
			// Every 7th sample refreshes; the others learned after it. At a
			// held γ and λ = 1 the periodic refresh needs no spectrum
			// (refreshNoiseHeld) and keeps no value.
			if lambda == 1 && !auto {
				if kept != 0 || swaps == 0 {
					t.Errorf("%s: %d samples with a kept value current (want 0: level2Held), %d swaps", name, kept, swaps)
				}
			} else if kept < 20 || stale < 100 || swaps == 0 {
				t.Errorf("%s: %d samples with a kept value current, %d stale, %d swaps: the cases were not exercised", name, kept, stale, swaps)
			}
			if err := m.SetGamma(3 * m.rls.Gamma()); err != nil {
				t.Fatal(err)
			}
			if got, want := m.LogEvidence(), m.logEvidenceNow(); !same(got, want) {
				t.Errorf("%s: after SetGamma %v, afresh %v", name, got, want)
			}
		}
	}
}
