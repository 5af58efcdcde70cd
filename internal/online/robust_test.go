package online

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/synth"
)

func robustConfig(clean bool) Config {
	cfg := testConfig()
	cfg.Robust = Robust{Enabled: true, Weights: robust.DefaultWeights(), Window: 200, Scale: robust.ScaleIQR, Clean: clean}
	return cfg
}

// spiky is the noisy sine with 2 % of its samples replaced by spikes of ±10
// noise std (docs/design.md, "The model"'s robustness case), returning which samples are spikes.
func spiky(n int, seed uint64) (y []float64, spike []bool) {
	y = noisySine(n, 0.1, seed)
	spike = make([]bool, n)
	rng := rand.New(rand.NewPCG(seed, 99))
	for i := range y {
		if rng.Float64() < 0.02 {
			spike[i] = true
			y[i] += float64(1-2*rng.IntN(2)) * 1.0 // 10 noise std
		}
	}
	return y, spike
}

// Spikes in the stream are flagged, clean samples are not (beyond the
// Gaussian tail rate), the spikes get bounded weight, and with cleaning the
// one-step error on clean samples stays near that of a spike-free stream.
func TestRobustFlagsSpikesAndBoundsTheirInfluence(t *testing.T) {
	const n = 3000
	y, spike := spiky(n, 7)
	clean := noisySine(n, 0.1, 7)
	run := func(cfg Config, ys []float64) (flaggedSpikes, spikes, flaggedClean, cleanN int, rmse float64) {
		l, err := NewLearner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var se float64
		for i, v := range ys {
			res, err := l.Observe(Observation{T: int64(i), Y: v})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Fitted {
				continue
			}
			if spike[i] {
				spikes++
				if res.Outlier {
					flaggedSpikes++
				}
				if res.Outlier && res.Weight > 1e-3 {
					t.Fatalf("sample %d: outlier with weight %g", i, res.Weight)
				}
				continue
			}
			cleanN++
			if res.Outlier {
				flaggedClean++
			}
			e := clean[i] - res.Prediction
			se += e * e
		}
		return flaggedSpikes, spikes, flaggedClean, cleanN, math.Sqrt(se / float64(cleanN))
	}
	fs, s, fc, c, rmseRobust := run(robustConfig(true), y)
	_, _, _, _, rmsePlain := run(testConfig(), y)
	_, _, _, _, rmseNoSpikes := run(testConfig(), clean)
	t.Logf("flagged %d/%d spikes, %d/%d clean; one-step RMSE on clean samples: robust %.4f, plain %.4f, spike-free %.4f",
		fs, s, fc, c, rmseRobust, rmsePlain, rmseNoSpikes)
	if float64(fs) < 0.95*float64(s) {
		t.Errorf("flagged %d of %d spikes, want ≥ 95 %%", fs, s)
	}
	if float64(fc) > 0.01*float64(c) {
		t.Errorf("flagged %d of %d clean samples, want ≤ 1 %%", fc, c)
	}
	// Spikes in the lags wreck the plain model's next predictions; cleaned
	// lags and bounded weights keep the robust one within 10 % of spike-free.
	// Measured: robust 0.144, spike-free 0.143, plain 0.204 (1.41×).
	if rmseRobust > 1.1*rmseNoSpikes || !(rmsePlain > 1.25*rmseRobust) {
		t.Errorf("RMSE robust %g, plain %g, spike-free %g", rmseRobust, rmsePlain, rmseNoSpikes)
	}
}

// The robust state (residual scale window, outlier count) travels in the
// snapshot: a restored learner continues bit-identically.
func TestRobustSnapshotRoundTrip(t *testing.T) {
	y, _ := spiky(900, 8)
	a, _ := NewLearner(robustConfig(true))
	for i := 0; i < 500; i++ {
		if _, err := a.Observe(Observation{T: int64(i), Y: y[i]}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewLearner(robustConfig(true))
	if err := b.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	for i := 500; i < 900; i++ {
		ra, errA := a.Observe(Observation{T: int64(i), Y: y[i]})
		rb, errB := b.Observe(Observation{T: int64(i), Y: y[i]})
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if ra.Prediction != rb.Prediction || ra.Weight != rb.Weight || ra.Outlier != rb.Outlier || ra.Std != rb.Std {
			t.Fatalf("sample %d: %+v vs %+v", i, ra, rb)
		}
	}
	if a.Outliers() != b.Outliers() || a.Outliers() == 0 {
		t.Errorf("outliers %d vs %d", a.Outliers(), b.Outliers())
	}
	// Into a learner without robust weighting the state is kept, the
	// scale dropped and the change named (TestRestoreUnderAnotherRobustConfiguration).
	plain, _ := NewLearner(testConfig())
	if err := plain.UnmarshalBinary(snap); err != nil || plain.rscale != nil || !slices.Contains(plain.ConfigChanged(), "robust") {
		t.Errorf("a robust snapshot into a non-robust learner: %v, scale kept %v, changed %v", err, plain.rscale != nil, plain.ConfigChanged())
	}
}

// Robust cross-validation (book §5.3) on the book's outlier case (noisy sinc,
// 300 points, 3 gross outliers): the width it picks must fit the true sinc at
// least as well as the book's hand-set σ² = 3 does with the same robust fit
// (measured over seeds 1–3: 0.0066/0.0205/0.0268 against 0.0235/0.0281/0.0307;
// in backtests the evidence, which outliers can mislead, did worse on one seed).
func TestRobustCVChoosesTheWidth(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		x, y, _ := synth.NoisySinc(synth.SincOptions{N: 300, Lo: -10, Hi: 10, NoiseStd: 0.1, Outliers: 3, OutlierValue: 5, Seed: seed})
		cfg := bookSincConfig()
		book := sincRMSE(t, cfg, x, y)
		cfg.AutoSigma2, cfg.Tuning = true, TuneRobustCV
		cv := sincRMSE(t, cfg, x, y)
		t.Logf("seed %d: RMSE vs true sinc: robust-cv %.4f, σ² = 3 %.4f", seed, cv, book)
		if cv > 1.05*book {
			t.Errorf("seed %d: robust-cv RMSE %g, book σ² %g", seed, cv, book)
		}
	}
}

// The warm-up's weighted fit with cleaning on keeps the targets as
// observed and cleans only the lags: a cleaned target that came back with
// weight 1 at the next fit would pin the model to the contaminated fit it
// was taken from (such a fit lost up to 53 % of RMSE). So without y lags
// cleaning changes nothing (identical forecasts), and the 3 gross outliers
// cost at most 5 % of RMSE against the true sinc over the same data
// without them (the same x and noise draws: 3 of 300 samples lose their
// weight, about 1 % of variance; the rest is margin for the working set
// and γ; seen: at most 1.6 %).
func TestWarmupCleaningKeepsOutliersWeighted(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		x, y, _ := synth.NoisySinc(synth.SincOptions{N: 300, Lo: -10, Hi: 10, NoiseStd: 0.1, Outliers: 3, OutlierValue: 5, Seed: seed})
		_, yClean, _ := synth.NoisySinc(synth.SincOptions{N: 300, Lo: -10, Hi: 10, NoiseStd: 0.1, Seed: seed})
		cfg := bookSincConfig()
		cleaned := sincRMSE(t, cfg, x, y)
		cfg.Robust.Clean = false
		uncleaned := sincRMSE(t, cfg, x, y)
		reference := sincRMSE(t, cfg, x, yClean)
		t.Logf("seed %d: RMSE vs true sinc %.4f, without the outliers %.4f", seed, cleaned, reference)
		if cleaned != uncleaned {
			t.Errorf("seed %d: cleaning without lags changed the fit: RMSE %g, without cleaning %g", seed, cleaned, uncleaned)
		}
		if cleaned > 1.05*reference {
			t.Errorf("seed %d: RMSE %g with 3 outliers, %g without", seed, cleaned, reference)
		}
	}
}

// bookSincConfig is the book's robust sinc model (§5.4) as
// config/sinc-robust.yaml gives it: f(x) with M = 10, σ² = 3, fitted on the
// 300-sample warm-up.
func bookSincConfig() Config {
	cfg := robustConfig(true)
	cfg.Model.Embedding = narx.Embedding{InputLags: [][]int{{0}}}
	cfg.Model.Size, cfg.Model.Kernel.Sigma2, cfg.Model.AutoGamma = 10, 3, true
	cfg.Model.Window, cfg.Model.SwapInterval, cfg.Model.NoiseEvery, cfg.Model.Seed = 200, 10, 100, 1
	cfg.Model.Select = narx.SelectOptions{Method: narx.SelectEntropy, MaxIter: 6000, Patience: 100}
	cfg.Scale, cfg.Warmup, cfg.Horizon = ScaleNone, 300, 0
	return cfg
}

// sincRMSE fits cfg on (x, y) and returns its RMSE against the true sinc on
// a grid of 1000 points over [-10, 10].
func sincRMSE(t *testing.T, cfg Config, x, y []float64) float64 {
	t.Helper()
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if _, err := l.Observe(Observation{T: int64(i), Y: y[i], U: []float64{x[i]}}); err != nil {
			t.Fatal(err)
		}
	}
	grid := make([][]float64, 1000)
	for i := range grid {
		grid[i] = []float64{-10 + 20*float64(i)/999}
	}
	steps := make([]ForecastStep, len(grid))
	if err := l.Forecast(steps, grid); err != nil {
		t.Fatal(err)
	}
	var se float64
	for i, s := range steps {
		d := s.Mean - synth.Sinc(grid[i][0])
		se += d * d
	}
	return math.Sqrt(se / float64(len(grid)))
}

// TestRobustColdStartDoesNotCleanAway: with robust weighting and cleaning on
// from the first value, Mackey–Glass with 1 % noise (std about 0.0023) and
// 2 % spikes of 10 noise std is tracked from the first fit. A model fitted on 16 values predicts its noise
// too low, and flagging by that level would feed its own predictions back
// as lags and drift away (one-step errors reached 0.77 by sample 31). No
// value is flagged before the residuals' robust scale exists, and every
// one-step error up to sample 128 stays below 0.1 plus a spike, the series'
// range being about 0.9.
func TestRobustColdStartDoesNotCleanAway(t *testing.T) {
	cfg := autoConfig()
	cfg.Robust = robustConfig(true).Robust
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mg := synth.MackeyGlass(128, 17, 500)
	std := 0.0
	for _, v := range mg {
		std += (v - mg[0]) * (v - mg[0])
	}
	noise := 0.01 * math.Sqrt(std/float64(len(mg)))
	y, _ := synth.AddSpikes(synth.AddNoise(mg, noise, 3), 0.02, 10*noise, 3)
	for i, v := range y {
		scaleLen := l.rscale.Len()
		res, err := l.Observe(Observation{T: int64(i), Y: v})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Fitted {
			continue
		}
		if math.Abs(res.Residual) > 0.1+10*noise {
			t.Errorf("sample %d: one-step error %.3f", i, res.Residual)
		}
		if res.Outlier && scaleLen < robustMinResiduals {
			t.Errorf("sample %d flagged with %d residuals in the scale", i, scaleLen)
		}
	}
}
