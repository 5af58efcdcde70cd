package online

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/synth"
)

// Heavy is what the daemon trusts to run an Observe on its partition
// goroutine: over real series, with re-choices, retunes, gaps and rejected
// observations, every Observe that Heavy said was light neither fitted
// (the model and the re-choice schedule unchanged) nor retuned; Heavy was
// true at every re-choice count and at every retune that happened; and it
// was true at no other sample than those (the re-choice counts and the
// retune schedule). A twin fed the same observations through
// ObserveYielding gets the same results, bit for bit, and its yield is
// called within every Observe that fitted or retuned, never within one
// Heavy said was light, nor after ObserveYielding returns.
func TestHeavyForetellsFitsAndRetunes(t *testing.T) {
	mg := synth.AddNoise(synth.MackeyGlass(1200, 17, 500), 0.0023, 1)
	rng := rand.New(rand.NewPCG(4, 4))
	sincX := make([]float64, 1400)
	sincY := make([]float64, 1400)
	for i := range sincX {
		x := 6*rng.Float64() - 3
		f := 1.0
		if i >= 200 {
			f = 4 // the series changes: the width retunes
		}
		sincX[i], sincY[i] = x, synth.Sinc(f*x)+0.05*rng.NormFloat64()
	}
	for _, c := range []struct {
		name string
		cfg  func() Config
		obs  func(i int) Observation
		n    int
	}{
		{"mackey-glass", func() Config {
			cfg := testConfig()
			cfg.Model.Embedding = narx.Embedding{YLags: narx.Lags(6)}
			cfg.Model.Size, cfg.Model.Window, cfg.Model.AutoGamma = 20, 60, true
			cfg.AutoSigma2, cfg.RetuneEvery, cfg.Warmup = true, 50, 300
			cfg.Forms = []Form{{}, {Diff: true}}
			return cfg
		}, func(i int) Observation { return Observation{T: int64(i + 1), Y: mg[i]} }, len(mg)},
		{"drifting-sinc", func() Config {
			cfg := testConfig()
			cfg.Model.Embedding = narx.Embedding{InputLags: [][]int{{0}}}
			cfg.Model.Kernel.Sigma2 = 1
			cfg.Model.Size, cfg.Model.Window, cfg.Model.NoiseEvery, cfg.Model.AutoGamma = 20, 200, 100, true
			cfg.AutoSigma2, cfg.Warmup, cfg.Horizon, cfg.Scale, cfg.RetuneEvery = true, 200, 0, ScaleNone, 80
			return cfg
		}, func(i int) Observation { return Observation{T: int64(i + 1), Y: sincY[i], U: []float64{sincX[i]}} }, len(sincY)},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg()
			l, err := NewLearner(cfg)
			if err != nil {
				t.Fatal(err)
			}
			twin, err := NewLearner(cfg)
			if err != nil {
				t.Fatal(err)
			}
			yields, pauses := 0, 0
			count := func() { yields++ }
			// The re-choice counts, from the schedule's definition.
			var rechoices []int64
			for n := cfg.nextFit(0, cfg.Warmup); n > 0; n = cfg.nextFit(n, cfg.Warmup) {
				rechoices = append(rechoices, int64(n))
			}
			fits, retunes, heavies, rejected := 0, 0, 0, 0
			t0 := int64(0)
			for i := range c.n {
				o := c.obs(i)
				o.T += t0
				if i > 0 && i%97 == 0 {
					// A rejected observation changes nothing, Heavy included.
					before := l.Heavy(o)
					bad := o
					bad.Y = math.NaN()
					if _, err := l.Observe(bad); err == nil {
						t.Fatal("NaN accepted")
					}
					yields = 0
					if _, err := twin.ObserveYielding(bad, count); err == nil || yields > 0 {
						t.Fatalf("NaN accepted (%v) or yielded for (%d)", err, yields)
					}
					if l.Heavy(o) != before {
						t.Fatalf("sample %d: a rejected observation changed Heavy", i)
					}
					rejected++
				}
				if i%211 == 210 {
					t0 += 3 // a gap of three steps: filled, not heavy
					o.T += 3
				}
				heavy := l.Heavy(o)
				model, nextFit := l.Model(), l.nextFit
				seen, learned, fitted := l.seen+1, l.learned, l.Fitted()
				res, err := l.Observe(o)
				if err != nil {
					t.Fatalf("sample %d: %v", i, err)
				}
				yields = 0
				res2, err := twin.ObserveYielding(o, count)
				if err != nil || !reflect.DeepEqual(res, res2) {
					t.Fatalf("sample %d: ObserveYielding gave %+v, %v; Observe %+v", seen, res2, err, res)
				}
				pauses += yields
				fitted2 := l.Fitted()
				fit := l.nextFit != nextFit || fitted2 != fitted
				if fit {
					fits++
				}
				if res.Retuned {
					retunes++
				}
				if heavy {
					heavies++
				}
				if (fit || res.Retuned) && yields == 0 || !heavy && yields > 0 {
					t.Fatalf("sample %d: heavy %v, fitted %v, retuned %v: %d yields", seen, heavy, fit, res.Retuned, yields)
				}
				if !heavy && (fit || res.Retuned || l.Model() != model) {
					t.Fatalf("sample %d: Heavy said light, but the Observe fitted (%v), retuned (%v) or replaced the model (%v)",
						seen, fit, res.Retuned, l.Model() != model)
				}
				rechoice := slices.Contains(rechoices, seen) || nextFit > 0 && seen >= nextFit
				if rechoice && !heavy {
					t.Fatalf("sample %d: a re-choice count, and Heavy said light", seen)
				}
				retuneDue := fitted && !rechoice && cfg.RetuneEvery > 0 &&
					(learned+1+l.retunePhase(int64(cfg.RetuneEvery)))%int64(cfg.RetuneEvery) == 0
				if heavy && !rechoice && !retuneDue {
					t.Fatalf("sample %d: Heavy, but neither a re-choice nor a retune was due", seen)
				}
			}
			yields = 0
			if _, err := twin.Observe(c.obs(c.n - 1)); err == nil || yields > 0 { // an old t: rejected
				t.Fatalf("a yield kept after ObserveYielding (%d calls) or an old t accepted (%v)", yields, err)
			}
			t.Logf("%d samples, %d rejected: %d heavy, %d fits and re-choices, %d retunes, %d yields", c.n, rejected, heavies, fits, retunes, pauses)
			if fits != len(rechoices) || retunes == 0 {
				t.Errorf("%d fits (want the %d re-choices %v) and %d retunes (want some): the test does not exercise Heavy",
					fits, len(rechoices), rechoices, retunes)
			}
		})
	}
}

// A candidate's window holds only its fit's samples, and it ranks and
// forecasts exactly as the same fit with the configured window: the same
// log evidence, noise level, γ and forecast, bit for bit (the window holds
// the last min(N, W) samples either way, and loadStats takes their kernel
// columns from it), for weighted and unweighted fits, with N below W.
func TestCandidateWindowIsTheSameFit(t *testing.T) {
	cfg := testConfig()
	cfg.Model.Window, cfg.Model.AutoGamma = 600, true
	ys := noisySine(140, 0.2, 9)
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Model.Embedding
	X, y := embed(e, ys, nil, 0, e.Depth())
	v := make([]float64, len(y))
	for k := range v {
		v[k] = 0.5 + float64(k%3)/4
	}
	for _, w := range [][]float64{nil, v} {
		full, err := l.fitModel(cfg.Model, X, y, w)
		if err != nil {
			t.Fatal(err)
		}
		cand, err := l.fitCandidate(cfg.Model, X, y, w)
		if err != nil {
			t.Fatal(err)
		}
		if c := cand.Config().Window; c != len(y) {
			t.Fatalf("candidate window %d, want the fit's %d samples", c, len(y))
		}
		if full.LogEvidence() != cand.LogEvidence() || full.Info() != cand.Info() {
			t.Fatalf("weights %v: evidence %v, info %+v; with the full window %v, %+v",
				w != nil, cand.LogEvidence(), cand.Info(), full.LogEvidence(), full.Info())
		}
		h := narx.NewHistory(e)
		for _, z := range ys[len(ys)-e.Depth()-1:] {
			h.Push(z, nil)
		}
		a, b := make([]narx.Step, 10), make([]narx.Step, 10)
		full.Forecast(a, h, nil)
		cand.Forecast(b, h, nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("weights %v: forecast %+v, with the full window %+v", w != nil, b, a)
		}
	}
}
