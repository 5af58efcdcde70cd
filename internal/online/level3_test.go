package online

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/streamd/streamd/internal/narx"
)

// nonlinearAR2 is y_k = 0.8·y_{k−1}·e^{−y_{k−1}²/4} − 0.6·y_{k−2} + 0.2·sin(y_{k−2}) + noise: its true
// lag order is 2.
func nonlinearAR2(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	y := make([]float64, n+2)
	for k := 2; k < len(y); k++ {
		y[k] = 1.6*y[k-1]*math.Exp(-y[k-1]*y[k-1]/4) - 0.6*y[k-2] + 0.2*math.Sin(y[k-2]) + 0.3*rng.NormFloat64()
	}
	return y[2:]
}

// Level 3 on a process of known lag order 2: among candidates 1, 2 and 6 the
// evidence must choose 2 (lag 1 misses information; lag 6 adds four irrelevant
// dimensions that make the RBF model rougher at the same data size).
func TestLagOrderByEvidence(t *testing.T) {
	cfg := testConfig()
	cfg.Warmup, cfg.AutoSigma2, cfg.LagCandidates = 400, true, []int{1, 2, 6}
	cfg.Model.Size, cfg.Model.AutoGamma = 60, true
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range nonlinearAR2(450, 1) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	got := l.Model().Config().Embedding.YLags
	if len(got) != 2 {
		t.Errorf("chose lags %v, want 1..2", got)
	}
	// A snapshot taken after the choice restores the chosen structure.
	r := restored(t, cfg, l)
	for i, v := range nonlinearAR2(600, 1)[450:] {
		o := Observation{T: int64(450 + i), Y: v}
		a, _ := l.Observe(o)
		b, _ := r.Observe(o)
		if a.Prediction != b.Prediction || a.Std != b.Std {
			t.Fatalf("restored learner differs at %d", i)
		}
	}
}

// iteratedConfig ranks lags 1 and 2 by 3-step iterated validation, σ² and γ
// inferred, M = 60 (30 while ranking).
func iteratedConfig() Config {
	cfg := testConfig()
	cfg.Warmup, cfg.AutoSigma2, cfg.LagCandidates = 400, true, []int{1, 2}
	cfg.Tuning, cfg.TuneSize, cfg.Horizon = TuneIterated, 30, 3
	cfg.Model.Size, cfg.Model.AutoGamma = 60, true
	return cfg
}

// Iterated validation on the same order-2 process: an order-1 model cannot
// represent it, so its 3-step iterated forecasts from the validation origins
// are worse (total squared error 1.41 vs 1.00), and lags 1..2 must win. (At
// 20 steps the order-1 model wins, rightly: the iterated mean path of the
// true order oscillates while this noisy process's conditional mean decays.)
// Also checks that the final model has the configured size, not the
// ranking's.
func TestLagOrderByIteratedValidation(t *testing.T) {
	cfg := iteratedConfig()
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range nonlinearAR2(400, 2) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Model().Config().Embedding.YLags; len(got) != 2 {
		t.Errorf("chose lags %v, want 1..2", got)
	}
	// The fit keeps at most M members: those whose kernel function is not
	// (to the cut-off) in the span of the others, more than the 30 of the
	// ranking fits on this 2-dimensional input.
	if got, m := l.Model().Config().Size, l.Model().Info().M; got != 60 || m <= 30 || m > 60 {
		t.Errorf("final working set size %d with %d members kept, want 60 and 31..60", got, m)
	}
	bad := cfg
	bad.Horizon = 200
	if _, err := NewLearner(bad); err == nil {
		t.Error("accepted iterated tuning with warmup < 3·horizon")
	}
}

// With AutoGamma, iterated tuning deploys the validated γ — the evidence
// optimum of the winning candidate's validation fit (TuneSize, data before
// the first origin) — and the final model holds it: level-2 refreshes and
// swaps online keep it, and a restored snapshot continues identically.
func TestIteratedTuningHoldsValidatedGamma(t *testing.T) {
	cfg := iteratedConfig()
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	y := nonlinearAR2(700, 2)
	for i, v := range y[:400] {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	mc := l.Model().Config()
	if mc.AutoGamma {
		t.Fatal("final model re-infers γ; want the validated γ held")
	}
	// The validation fit of the winner, rebuilt: first origin N − H − 4·max(H/4, 1).
	ys := make([]float64, 400)
	loc, scale := scaleOf(y[:400], cfg.Scale)
	for i := range ys {
		ys[i] = (y[i] - loc) / scale
	}
	train := 400 - 3 - 4
	vc := cfg.Model
	vc.Embedding.YLags, vc.Kernel.Sigma2, vc.Size = mc.Embedding.YLags, mc.Kernel.Sigma2, cfg.TuneSize
	X, yt := embed(vc.Embedding, ys[:train], nil, 0, vc.Embedding.Depth())
	vm, err := narx.NewModel(vc)
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.Fit(X, yt, nil); err != nil {
		t.Fatal(err)
	}
	g := l.Model().Info().Gamma
	if want := vm.Info().Gamma; g != want || mc.Gamma != want {
		t.Errorf("final γ %g (config %g), want the validated %g", g, mc.Gamma, want)
	}
	r := restored(t, cfg, l)
	swapped := 0
	for i, v := range y[400:] {
		o := Observation{T: int64(400 + i), Y: v}
		a, _ := l.Observe(o)
		b, _ := r.Observe(o)
		if a.Prediction != b.Prediction || a.Std != b.Std {
			t.Fatalf("restored learner differs at %d", i)
		}
		if a.Swapped {
			swapped++
		}
	}
	if swapped == 0 {
		t.Error("no swap online: the test does not exercise level-2 refreshes after swaps")
	}
	if got := l.Model().Info().Gamma; got != g {
		t.Errorf("γ %g after 300 online samples (level-2 refreshes every %d), want the held %g", got, cfg.Model.NoiseEvery, g)
	}
}

// The periodic level-3 re-run follows a drifting series: y = sinc(x) during
// warm-up, then sinc(4x), whose features are four times narrower. After the
// drift the width search on the window (checked against SearchSigma2 on the
// same samples: the same width, bit for bit) replaces σ² by a smaller one,
// and the one-step error falls below that of a Learner that keeps its
// width. The retunes fall at the series' phase (retunePhase), and a restored
// snapshot retunes at the same samples.
func TestRetuneFollowsADriftingWidth(t *testing.T) {
	cfg := testConfig()
	cfg.Model.Embedding = narx.Embedding{InputLags: [][]int{{0}}}
	cfg.Model.Size, cfg.Model.Window, cfg.Model.NoiseEvery = 20, 200, 100
	cfg.Model.AutoGamma = true
	cfg.AutoSigma2, cfg.Warmup, cfg.Horizon, cfg.Scale = true, 200, 0, ScaleNone
	rng := rand.New(rand.NewPCG(4, 4))
	obs := func(i int) Observation {
		x := 6*rng.Float64() - 3
		f := 1.0
		if i >= 200 {
			f = 4
		}
		return Observation{T: int64(i), Y: sinc(f*x) + 0.05*rng.NormFloat64(), U: []float64{x}}
	}
	stream := make([]Observation, 1400)
	for i := range stream {
		stream[i] = obs(i)
	}
	retuning := cfg
	retuning.RetuneEvery = 400
	a, _ := NewLearner(retuning)
	b, _ := NewLearner(cfg)
	var snap []byte
	var sseA, sseB float64
	preds := map[int]float64{}
	retunedAt, retunes := -1, map[int]bool{}
	for i, o := range stream {
		if i == 250 { // after the fit, before the first retune
			snap, _ = a.MarshalBinary()
		}
		ra, err := a.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := b.Observe(o)
		preds[i] = ra.Prediction
		retunes[i] = ra.Retuned
		if ra.Retuned && retunedAt < 0 {
			retunedAt = i
			// The width is the search's on the window it was run on (the
			// refit keeps the same samples in its window).
			X, y, _ := a.Model().Window()
			mc := b.Model().Config()
			want, err := narx.SearchSigma2(mc, X, y, narx.MedianSqDist(X, 1, 2000, mc.Seed), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Model().Config().Kernel.Sigma2; got != want.Best.Sigma2 {
				t.Errorf("retuned σ² %v, the width search on the window gives %v", got, want.Best.Sigma2)
			}
		}
		if i >= 1000 {
			sseA += ra.Residual * ra.Residual
			sseB += rb.Residual * rb.Residual
		}
	}
	s0 := b.Model().Config().Kernel.Sigma2
	s1 := a.Model().Config().Kernel.Sigma2
	t.Logf("σ² %.3g → %.3g (retuned at sample %d); one-step RMSE after 1000: %.4f retuning, %.4f not", s0, s1, retunedAt,
		math.Sqrt(sseA/400), math.Sqrt(sseB/400))
	// The first retune after the drift (sample 200): the learned count L,
	// counted from the first fit (sample FirstFit − 1), at which L plus the
	// series' phase is a multiple of 400.
	first := FirstFit - 1 + 400 - int(a.retunePhase(400))
	for first < 200 {
		first += 400
	}
	t.Logf("retune phase %d: first retune due at sample %d", a.retunePhase(400), first)
	if retunedAt != first || !(s1 < s0/2) {
		t.Errorf("no retune to a narrower width at sample %d (at %d, σ² %v → %v)", first, retunedAt, s0, s1)
	}
	if !(sseA < 0.7*sseB) {
		t.Errorf("retuning did not help: RMSE %.4f vs %.4f", math.Sqrt(sseA/400), math.Sqrt(sseB/400))
	}
	c, _ := NewLearner(retuning)
	if err := c.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	restoredRetunes := 0
	for i := 250; i < 1000; i++ {
		rc, _ := c.Observe(stream[i])
		if rc.Retuned != retunes[i] || rc.Prediction != preds[i] {
			t.Fatalf("sample %d: the restored Learner predicts %v (retuned %v), the original %v (retuned %v)",
				i, rc.Prediction, rc.Retuned, preds[i], retunes[i])
		}
		if rc.Retuned {
			restoredRetunes++
		}
	}
	if restoredRetunes == 0 {
		t.Error("no retune after the restore: the check above saw none")
	}
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(x) / x
}

// Series onboarded together must not retune together: the phases of 64
// Learners whose warm-up statistics differ only slightly (a fleet of
// similar sensors) spread over the period. 64 uniform draws from 256 give
// about 57 distinct values; 45 leaves room, and a shared phase gives 1.
func TestRetunePhasesSpread(t *testing.T) {
	const n, every = 64, 256
	phases := map[int64]bool{}
	for i := 0; i < n; i++ {
		l := &Learner{yLoc: 10 + 1e-3*float64(i), yScale: 3 + 1e-4*float64(i%7)}
		p := l.retunePhase(every)
		if p < 0 || p >= every {
			t.Fatalf("phase %d outside [0, %d)", p, every)
		}
		phases[p] = true
	}
	if len(phases) < 45 {
		t.Errorf("%d distinct phases of %d Learners in a period of %d", len(phases), n, every)
	}
}
