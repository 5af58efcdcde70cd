package online

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamd/streamd/internal/narx"
)

// TestGrowFollowsTheEvidence checks grow's rule on scripted rankings: a
// doubling is probed at the current lags, and only when the probe's
// evidence beats the current one by more than growMinGain per target (not
// at exactly that) are the other lag sets probed at the doubled size,
// each around the current width scaled by its dimension, the best of all
// kept; no size beyond Growth.Max or with fewer than growTargets targets
// per member is tried.
func TestGrowFollowsTheEvidence(t *testing.T) {
	const targets = 1000
	margin := growMinGain * targets // nats a doubling must beat
	type key struct {
		size int
		lags int // the order p of lags 1..p
	}
	sets := [][]int{narx.Lags(4), narx.Lags(8), narx.Lags(16)}
	others := func(size int) []key { return []key{{size, 4}, {size, 8}} }
	const width = 16.0 // the current width, for lags 1..16
	base := structure{cfg: narx.Config{Kernel: narx.Kernel{Type: narx.RBF, Sigma2: width}, Embedding: narx.Embedding{YLags: narx.Lags(16)}, Size: 100},
		searched: true, fits: true}
	cases := []struct {
		name    string
		max     int
		targets int
		kernel  narx.KernelType
		scores  map[key]float64 // absent: −Inf
		want    key
		tried   []key
	}{
		{"a doubling that gains more than the margin is kept, the lags ranked again at its size", 400, targets, narx.RBF,
			map[key]float64{{200, 16}: margin + 1, {200, 8}: margin + 5, {200, 4}: margin - 1, {400, 8}: margin + 5 + margin/2},
			key{200, 8}, append(append([]key{{200, 16}}, others(200)...), key{400, 8})},
		{"exactly the margin is not enough", 400, targets, narx.LinearRBF,
			map[key]float64{{200, 16}: margin},
			key{100, 16}, []key{{200, 16}}},
		{"other lags win only by beating the current lags' probe", 400, targets, narx.RBF,
			map[key]float64{{200, 16}: margin + 3, {200, 8}: margin + 2, {200, 4}: margin + 1},
			key{200, 16}, append(append([]key{{200, 16}}, others(200)...), key{400, 16})},
		{"no size beyond Max", 200, targets, narx.RBF,
			map[key]float64{{200, 16}: margin + 1, {200, 8}: 0, {200, 4}: 0},
			key{200, 16}, append([]key{{200, 16}}, others(200)...)},
		{"no size with fewer than growTargets targets per member", 400, 799, narx.RBF,
			map[key]float64{{200, 16}: 1e9, {200, 8}: 0, {200, 4}: 0, {400, 16}: 1e10},
			key{200, 16}, append([]key{{200, 16}}, others(200)...)},
		{"a linear kernel does not grow", 400, targets, narx.Linear, nil, key{100, 16}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &Learner{cfg: Config{Model: narx.Config{Size: 100}, Growth: Growth{Max: tc.max}}}
			best := base
			best.cfg.Kernel.Type = tc.kernel
			best.targets = tc.targets
			var tried []key
			rank := func(d formData, c narx.Config, how rankHow, size int) (structure, error) {
				k := key{size, len(c.Embedding.YLags)}
				tried = append(tried, k)
				if how != rankProbe {
					t.Errorf("%+v ranked by %v, want a probe", k, how)
				}
				// The probe's width: the current one scaled by the
				// dimension (1 per lag here), or the probed winner's.
				if w := c.Kernel.Sigma2 / float64(k.lags); k.size == 200 && w != width/16 {
					t.Errorf("%+v probed around σ² = %v, want %v", k, c.Kernel.Sigma2, width/16*float64(k.lags))
				}
				s, ok := tc.scores[k]
				if !ok {
					s = math.Inf(-1)
				}
				c.Size = size
				return structure{cfg: c, score: s, searched: true, fits: true, targets: tc.targets}, nil
			}
			got, err := l.grow(best, sets, rank)
			if err != nil {
				t.Fatal(err)
			}
			if g := (key{got.cfg.Size, len(got.cfg.Embedding.YLags)}); g != tc.want {
				t.Errorf("grew to M = %d, lags 1..%d; want %d, 1..%d", g.size, g.lags, tc.want.size, tc.want.lags)
			}
			if !slices.Equal(tried, tc.tried) {
				t.Errorf("ranked %v, want %v", tried, tc.tried)
			}
		})
	}
}

// TestGrowthResizesTheDerivedSettings: a grown model's window, level-2
// period and entropy patience follow its size where the configuration
// derived them, and keep their configured values elsewhere.
func TestGrowthResizesTheDerivedSettings(t *testing.T) {
	c := narx.Config{Size: 100, Window: 600, NoiseEvery: 1000, Forgetting: 1, Select: narx.SelectOptions{Patience: 400}}
	g := Growth{Max: 400, Window: true, NoiseEvery: true, Patience: true}.resize(c, 400)
	if g.Size != 400 || g.Window != AutoWindow(400, 1) || g.NoiseEvery != AutoNoiseEvery(400) || g.Select.Patience != AutoPatience(400) {
		t.Errorf("resized to %d: window %d, noise every %d, patience %d", g.Size, g.Window, g.NoiseEvery, g.Select.Patience)
	}
	if AutoWindow(400, 1) != 1600 || AutoNoiseEvery(400) != 4000 || AutoPatience(400) != 1600 || AutoWindow(10, 0.99) != 500 {
		t.Errorf("auto rules: window %d (forgetting 0.99 at M = 10: %d), noise every %d, patience %d",
			AutoWindow(400, 1), AutoWindow(10, 0.99), AutoNoiseEvery(400), AutoPatience(400))
	}
	f := Growth{Max: 400}.resize(c, 400)
	if f.Window != 600 || f.NoiseEvery != 1000 || f.Select.Patience != 400 {
		t.Errorf("configured settings changed: window %d, noise every %d, patience %d", f.Window, f.NoiseEvery, f.Select.Patience)
	}
}

// laser returns the first n values of the Santa Fe laser record
// (testdata/santafe/A_1100.dat): a chaotic series whose one-step map a
// small working set cannot resolve (docs/benchmarks.md, "The working set
// binds").
func laser(t *testing.T, n int) []float64 {
	t.Helper()
	b, err := os.ReadFile("../../testdata/santafe/A_1100.dat")
	if err != nil {
		t.Fatal(err)
	}
	var y []float64
	for _, f := range strings.Fields(string(b))[:n] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatal(err)
		}
		y = append(y, v)
	}
	return y
}

// TestGrowthWhereTheBudgetBinds: on the laser's first 600 values a
// working set of 16 binds (each doubling gains more than growMinGain per
// target), and a Learner allowed to grow to 64 does so, with the settings
// derived from its size, and forecasts the values after its last re-choice
// more accurately than one held at 16; a Learner restored from the grown
// one forecasts bit for bit as it does. On a noisy sine, which 16 members
// fit as well as more, the Learner stays at 16.
func TestGrowthWhereTheBudgetBinds(t *testing.T) {
	cfg := autoConfig()
	cfg.Model.Size, cfg.Model.Window, cfg.Model.NoiseEvery = 16, 100, 160
	cfg.Forms = []Form{{}}
	cfg.Warmup = 256
	grown := cfg
	grown.Growth = Growth{Max: 64, Window: true, NoiseEvery: true, Patience: true}

	y := laser(t, 600)
	run := func(c Config, ys []float64, snapAt int) (l *Learner, sse float64, twin *Learner) {
		l, err := NewLearner(c)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range ys {
			o := Observation{T: int64(i), Y: v}
			r, err := l.Observe(o)
			if err != nil {
				t.Fatal(err)
			}
			if i >= cfg.Warmup {
				d := v - r.Prediction
				sse += d * d
			}
			if twin != nil {
				rr, err := twin.Observe(o)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(r.Prediction) != math.Float64bits(rr.Prediction) || !slices.Equal(r.Forecast, rr.Forecast) {
					t.Fatalf("sample %d: prediction %v restored %v\n%+v\n%+v", i, r.Prediction, rr.Prediction, r.Forecast, rr.Forecast)
				}
			}
			if i+1 == snapAt {
				twin = restored(t, c, l)
			}
		}
		return l, sse, twin
	}
	fixed, sseFixed, _ := run(cfg, y, 0)
	g, sseGrown, _ := run(grown, y, cfg.Warmup+50)
	if s := fixed.model.Config().Size; s != 16 {
		t.Fatalf("without growth M = %d, want 16", s)
	}
	gc := g.model.Config()
	if gc.Size != 64 || gc.Window != AutoWindow(64, 1) || gc.NoiseEvery != AutoNoiseEvery(64) {
		t.Fatalf("with growth to 64: M = %d, window %d, noise every %d; want 64, %d, %d", gc.Size, gc.Window, gc.NoiseEvery, AutoWindow(64, 1), AutoNoiseEvery(64))
	}
	// The evidence gain the doublings were kept for must show in the
	// forecasts: a smaller one-step error on the 344 values after the
	// last re-choice (a quarter of the fixed model's in the run this test
	// was written with; half leaves room for the seeds' luck).
	if !(sseGrown < 0.5*sseFixed) {
		t.Errorf("one-step SSE after warm-up: grown %.3g, fixed %.3g; want the grown at most half", sseGrown, sseFixed)
	}

	s, _, _ := run(grown, noisySine(400, 0.5, 2), 0)
	if m := s.model.Config().Size; m != 16 {
		t.Errorf("noisy sine: M = %d, want 16", m)
	}
}

// TestSettledSeriesGrows: on the laser a Learner allowed 128 members
// reaches 64 at its last re-choice (256 values: 128 members would need 256
// targets) and, settled, tests 128 at its 512th value (Warmup·2) on its
// model's window, and grows: Heavy says so before exactly that value and
// no other; a Learner restored before it grows at the same value and
// forecasts bit for bit as the original. (What the growth buys is
// measured on the whole record, docs/benchmarks.md: over the 300 values
// after it here, two intensity collapses decide any sum of errors.)
func TestSettledSeriesGrows(t *testing.T) {
	cfg := autoConfig()
	cfg.Model.Size, cfg.Model.Window, cfg.Model.NoiseEvery = 16, 100, 160
	cfg.Forms = []Form{{}}
	cfg.Warmup = 256
	cfg.Growth = Growth{Max: 128, Window: true, NoiseEvery: true, Patience: true}
	y := laser(t, 800)
	a, _ := NewLearner(cfg)
	var twin *Learner
	for i, v := range y {
		o := Observation{T: int64(i), Y: v}
		if heavy := a.Heavy(o); i >= cfg.Warmup && heavy != (i+1 == 2*cfg.Warmup) {
			t.Fatalf("before value %d: Heavy %v", i+1, heavy)
		}
		ra, err := a.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		if i+1 == 2*cfg.Warmup && (!ra.Retuned || a.model.Config().Size != 128) {
			t.Fatalf("at value %d: retuned %v, M = %d; want a refit at 128", i+1, ra.Retuned, a.model.Config().Size)
		}
		if twin != nil {
			rt, err := twin.Observe(o)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(ra.Prediction) != math.Float64bits(rt.Prediction) || !slices.Equal(ra.Forecast, rt.Forecast) {
				t.Fatalf("value %d: prediction %v restored %v", i+1, ra.Prediction, rt.Prediction)
			}
		}
		if i+1 == 400 {
			if s := a.model.Config().Size; s != 64 {
				t.Fatalf("after the last re-choice M = %d, want 64", s)
			}
			twin = restored(t, cfg, a)
		}
	}
	if s := a.model.Config().Size; s != 128 {
		t.Errorf("at the end M = %d, want 128", s)
	}
}
