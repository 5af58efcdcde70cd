package online

import (
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/theta"
)

// With Combine the Learner publishes the average of its model's forecasts
// and the theta method's, and nothing else changes: a Learner without the
// combination, fed the same values, learns the same model, so each of the
// combined Learner's one-step predictions and forecast steps must be, bit
// for bit, blend's average of the other's and those of the theta
// forecaster the combined Learner held at that moment (cloned before the
// value, for the one-step prediction; after it, for the forecast); and
// between re-choices that forecaster must be the previous one updated with
// the value. The series crosses re-choices (theta refitted) and a gap in t
// longer than the lags' depth (theta skips every missing step; the model
// fills only the depth).
func TestCombinationAveragesModelAndTheta(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineTheta
	a, _ := NewLearner(cfg)
	cfg.Combine = CombineNone
	b, _ := NewLearner(cfg)
	y := noisySine(400, 0.1, 11)
	z := a.z
	blend := func(st ForecastStep, mean, sd float64) ForecastStep {
		st.Lo = (st.Lo + mean - z*sd) / 2
		st.Hi = (st.Hi + mean + z*sd) / 2
		st.Mean = (st.Mean + mean) / 2
		st.Std = (st.Std + sd) / 2
		return st
	}
	mean, sd := make([]float64, cfg.Horizon), make([]float64, cfg.Horizon)
	checked, refits := 0, 0
	var last *theta.Model
	for i, v := range y {
		const gap = 9 // missing steps before value 300: more than the lags' depth, 4
		tm := int64(i)
		if i >= 300 {
			tm += gap
		}
		var before *theta.Model
		if a.Theta() != nil {
			before = a.Theta().Clone()
		}
		ra, err := a.Observe(Observation{T: tm, Y: v})
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := b.Observe(Observation{T: tm, Y: v})
		if before != nil && rb.Filled > 0 {
			if rb.Filled != 4 {
				t.Fatalf("value %d: %d steps filled, want the depth 4", i, rb.Filled)
			}
			before.Skip(gap) // every missing step, not only the filled ones
		}
		if a.Theta() != last {
			refits++
			last = a.Theta()
		} else if before != nil {
			// Between re-choices the theta forecaster learns each value.
			mine := before.Clone()
			mine.Update(v)
			if !reflect.DeepEqual(mine.State(), a.Theta().State()) {
				t.Fatalf("value %d: theta state %+v, want %+v after learning %v", i, a.Theta().State(), mine.State(), v)
			}
		}
		if !ra.Fitted || before == nil {
			continue
		}
		before.Forecast(mean[:1], sd[:1])
		want := blend(ForecastStep{Mean: rb.Prediction, Std: rb.Std, Lo: rb.Lo, Hi: rb.Hi}, mean[0], sd[0])
		if ra.Prediction != want.Mean || ra.Std != want.Std || ra.Lo != want.Lo || ra.Hi != want.Hi || ra.DF != 0 {
			t.Fatalf("value %d: one-step %+v, want the average %+v (df %v)", i, ra, want, ra.DF)
		}
		if ra.Residual != v-want.Mean || ra.Weight != rb.Weight || ra.Swapped != rb.Swapped {
			t.Fatalf("value %d: residual %v weight %v swap %v, want %v %v %v", i, ra.Residual, ra.Weight, ra.Swapped, v-want.Mean, rb.Weight, rb.Swapped)
		}
		a.Theta().Forecast(mean, sd)
		for h, s := range rb.Forecast {
			w := blend(s, mean[h], sd[h])
			w.OneStepStd = (s.OneStepStd + sd[0]) / 2
			if ra.Forecast[h] != w {
				t.Fatalf("value %d, step %d: %+v, want the average %+v", i, h+1, ra.Forecast[h], w)
			}
		}
		checked++
	}
	if checked < 300 || refits < 4 {
		t.Fatalf("%d values checked, %d theta refits: the test does not cover the re-choices", checked, refits)
	}
}

// CombineAuto: a series too short for the validation is combined; a
// series the model forecasts far better than the theta method (a noisy
// sine of period 21, which the theta method smooths to its mean) is not,
// once the validation can tell; and CombineNone never combines.
func TestCombineAutoChoice(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineAuto
	l, _ := NewLearner(cfg)
	y := noisySine(cfg.Warmup+50, 0.1, 12)
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
		if i+1 == FirstFit && l.Theta() == nil {
			t.Errorf("after %d values (too few to validate) the forecasts are not combined", i+1)
		}
	}
	if l.Theta() != nil {
		t.Errorf("a noisy sine is combined with the theta method after %d values", len(y))
	}
	// A random walk: the theta method (about the last value) and a linear
	// autoregression are alike, and the average is kept.
	rng := rand.New(rand.NewPCG(13, 1))
	cfg.Model.Kernel.Type = narx.Linear
	l, _ = NewLearner(cfg)
	w := 50.0
	for i := range cfg.Warmup {
		w += rng.NormFloat64()
		if _, err := l.Observe(Observation{T: int64(i), Y: w}); err != nil {
			t.Fatal(err)
		}
	}
	if l.Theta() == nil || math.IsNaN(l.Theta().Level) {
		t.Errorf("a random walk is not combined with the theta method")
	}
	cfg.Combine = CombineNone
	l, _ = NewLearner(cfg)
	for i, v := range y[:FirstFit] {
		l.Observe(Observation{T: int64(i), Y: v})
	}
	if l.Theta() != nil {
		t.Error("CombineNone combined")
	}
}

// The theta partner's drift: on a smooth trend (a line with noise of a
// hundredth of its step) the average with a partner drifting by the line's
// whole slope validates far better than with thetaf's half, which lags the
// trend by half a step per step, and is chosen; on a trend that stops
// before the validation's paths (a line to value 50, then level) the whole
// slope overshoots further than the half, and Holt's damped local trend,
// whose slope has followed the stop, is the partner. The choice is
// checkpointed.
func TestThetaPartnerSlope(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineTheta
	cfg.Model.Kernel.Type = narx.Linear
	rng := rand.New(rand.NewPCG(5, 2))
	run := func(y func(i int) float64) *Learner {
		l, _ := NewLearner(cfg)
		for i := range 80 {
			if _, err := l.Observe(Observation{T: int64(i), Y: y(i) + 0.02*rng.NormFloat64()}); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	line := func(i int) float64 { return 100 + 2*float64(i) }
	l := run(line)
	if th := l.Theta(); th == nil || th.Weight != 1 {
		t.Fatalf("smooth trend: theta partner %+v, want the whole slope", th)
	}
	stopped := run(func(i int) float64 { return line(min(i, 50)) })
	if th := stopped.Theta(); th == nil || th.Weight != 0 || !(th.Phi > 0) || math.Abs(th.Trend) > 0.1 {
		t.Errorf("a trend that stopped: theta partner %+v, want a damped trend of slope near 0", th)
	}
	for _, r := range []*Learner{l, stopped} {
		c := restoredSame(t, cfg, r, 6)
		if got, want := c.Theta(), r.Theta(); got == nil || got.Weight != want.Weight || got.Phi != want.Phi || got.Drift != want.Drift {
			t.Errorf("restored theta partner %+v, want %+v", got, want)
		}
	}
}

// restoredSame restores a learner of cfg from l's snapshot and fails t
// unless it forecasts h steps (means and upper bounds) to the bit as l;
// it returns the restored learner.
func restoredSame(t *testing.T, cfg Config, l *Learner, h int) *Learner {
	t.Helper()
	snap, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewLearner(cfg)
	if err := c.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	a, b := forecastOf(t, l, h), forecastOf(t, c, h)
	for k := range a {
		if math.Float64bits(a[k].Mean) != math.Float64bits(b[k].Mean) || math.Float64bits(a[k].Hi) != math.Float64bits(b[k].Hi) {
			t.Fatalf("restored: step %d %v, want %v", k+1, b[k], a[k])
		}
	}
	return c
}

// The autoregressive partner: on a series that cycles about its level (an
// AR(2) with roots of modulus 0.87) the average with an autoregression,
// which returns to the level as the cycle does, errs less over the dense
// plan than the average with the smoothing's level, which holds each
// swing, and the autoregression is the partner; on a random walk, whose
// level does not return, it is not. The choice is checkpointed, and the
// restored series forecasts to the bit as the original.
func TestAutoregressivePartner(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineTheta
	cfg.Model.Kernel.Type = narx.Linear
	cfg.Warmup = 300
	run := func(next func(r *rand.Rand, prev []float64) float64) *Learner {
		rng := rand.New(rand.NewPCG(9, 4))
		l, _ := NewLearner(cfg)
		var y []float64
		for i := range 320 {
			y = append(y, next(rng, y))
			if _, err := l.Observe(Observation{T: int64(i), Y: y[i]}); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	at := func(y []float64, k int) float64 {
		if k < 0 {
			return 0
		}
		return y[k] - 100
	}
	cycle := run(func(r *rand.Rand, y []float64) float64 {
		n := len(y)
		return 100 + 1.5*at(y, n-1) - 0.75*at(y, n-2) + r.NormFloat64()
	})
	if th := cycle.Theta(); th == nil || len(th.AR) == 0 || th.Measured {
		t.Fatalf("a cycle about its level: theta partner %+v, want an autoregression (its band its own)", th)
	}
	walk := run(func(r *rand.Rand, y []float64) float64 { return 100 + at(y, len(y)-1) + r.NormFloat64() })
	if th := walk.Theta(); th == nil || len(th.AR) > 0 {
		t.Errorf("a random walk: theta partner %+v, want no autoregression", th)
	}
	c := restored(t, cfg, cycle)
	if got, want := c.Theta(), cycle.Theta(); got == nil || !slices.Equal(got.AR, want.AR) || got.ARMean != want.ARMean {
		t.Fatalf("restored theta partner %+v, want %+v", got, want)
	}
	// Both go on, across a gap of 7 values (Skip), to the bit.
	r := rand.New(rand.NewPCG(10, 4))
	for i := 320; i < 400; i++ {
		y := 100 + 4*r.NormFloat64()
		if i >= 350 && i < 357 {
			continue
		}
		ra, errA := cycle.Observe(Observation{T: int64(i), Y: y})
		rb, errB := c.Observe(Observation{T: int64(i), Y: y})
		if errA != nil || errB != nil || math.Float64bits(ra.Prediction) != math.Float64bits(rb.Prediction) {
			t.Fatalf("value %d: %v %v, restored %v %v", i, ra.Prediction, errA, rb.Prediction, errB)
		}
	}
	a, b := forecastOf(t, cycle, 8), forecastOf(t, c, 8)
	for h := range a {
		if math.Float64bits(a[h].Mean) != math.Float64bits(b[h].Mean) || math.Float64bits(a[h].Hi) != math.Float64bits(b[h].Hi) {
			t.Fatalf("restored: step %d %v, want %v", h+1, b[h], a[h])
		}
	}
	if th := cycle.Theta(); th == nil || len(th.AR) == 0 {
		t.Fatalf("after the gap: theta partner %+v, want the autoregression still", th)
	}
	// The partner's update and forecasts allocate nothing (the hot path).
	k := 400
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := cycle.Observe(Observation{T: int64(k), Y: 100 + 4*r.NormFloat64()}); err != nil {
			t.Fatal(err)
		}
		k++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per observation with an autoregressive partner, want 0", allocs)
	}
}

// partnerGrowth measures the smoothing's h-step error variance out of
// sample: on a random walk of unit steps, fitted on 1 000 values and
// forecast 12 steps from 248 origins over the next 1 000, the h-step error
// variance is about h one-step ones (α near 1), so g is about 1; on white
// noise about a level the smoothing's α is small and the errors do not grow,
// so g is about 0; on an AR(1) of 0.7 the smoothing follows the last
// value (α near 1, α² above 0.5) and its errors level off as
// y_{t+h} − y_t's do, MSE_h/MSE_1 = (1 − 0.7^h)/(1 − 0.7), whose
// least-squares slope over h = 2..12 is 0.272. The bounds are two standard
// errors of the estimate: each MSE_h rests on about 1 000/12 independent
// paths, so its relative error is about √(2/83) ≈ 0.16, and g, dominated by
// the last steps' ratios weighed by (h − 1)/Σ(h − 1)², is within about
// ±0.1 of its value where the ratios reach 3 (±0.2 for the walk's 12, at
// most ±0.05 for the noise's, near 1): the walk's lower bound is two of
// them below 1, the noise's upper bound two above 0, and the other bounds
// are the clamp's [0, theta.MaxGrowth], which the walk and the noise reach.
// A learner (H = 5, re-chosen last at 400 values: about 39 independent
// paths after the first half, a standard error of about 0.1) whose partner
// is the smoothing of a random walk measures a growth above 0.5, more than
// three of them below 1, and restores it bit for bit; one whose partner is
// an autoregression has none (TestAutoregressivePartner).
func TestPartnerGrowth(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	walk, noise, ar := make([]float64, 2000), make([]float64, 2000), make([]float64, 2000)
	for i := range walk {
		walk[i], ar[i] = rng.NormFloat64(), rng.NormFloat64()
		if i > 0 {
			walk[i] += walk[i-1]
			ar[i] += 0.7 * ar[i-1]
		}
		noise[i] = 50 + rng.NormFloat64()
	}
	for _, c := range []struct {
		name     string
		ys       []float64
		lo, hi   float64
		alphaSq2 bool // α² must exceed 0.5: the case tells the growth from α²
	}{{"random walk", walk, 0.6, theta.MaxGrowth, false}, {"white noise", noise, 0, 0.1, false}, {"AR(1) of 0.7", ar, 0.17, 0.37, true}} {
		v := validation{H: 12}.after(len(c.ys), 1000)
		th := fitPartner(c.ys[:v.train], partner{weight: theta.DefaultWeight}, structure{period: 1})
		if th == nil || v.origins < maxDenseOrigins*3/4 {
			t.Fatalf("%s: partner %v, %d origins", c.name, th, v.origins)
		}
		if c.alphaSq2 && th.Alpha*th.Alpha < 0.5 {
			t.Fatalf("%s: α² %v, want above 0.5", c.name, th.Alpha*th.Alpha)
		}
		g, ok := partnerGrowth(th, c.ys, v)
		if !ok || g < c.lo || g > c.hi {
			t.Errorf("%s: growth %v (%v), want in [%v, %v]", c.name, g, ok, c.lo, c.hi)
		}
	}
	cfg := testConfig()
	cfg.Combine = CombineTheta
	cfg.Model.Kernel.Type = narx.Linear
	cfg.Warmup = 400
	l, _ := NewLearner(cfg)
	for i, y := range walk[:420] {
		if _, err := l.Observe(Observation{T: int64(i), Y: 100 + y}); err != nil {
			t.Fatal(err)
		}
	}
	th := l.Theta()
	if th == nil || len(th.AR) > 0 || !th.Measured || th.Growth < 0.5 {
		t.Fatalf("a random walk's partner %+v, want the smoothing with its growth measured", th)
	}
	c := restored(t, cfg, l)
	if got := c.Theta(); got == nil || !got.Measured || got.Growth != th.Growth {
		t.Fatalf("restored partner %+v, want growth %v", got, th.Growth)
	}
	a, b := forecastOf(t, l, 8), forecastOf(t, c, 8)
	for h := range a {
		if math.Float64bits(a[h].Hi) != math.Float64bits(b[h].Hi) {
			t.Fatalf("restored: step %d %v, want %v", h+1, b[h], a[h])
		}
	}
}

// The theta forecaster's season: a positive series with a period of 12
// gets a multiplicative one, unless the configuration rules seasons out
// (Season < 0), and a series with a value ≤ 0 an additive one.
func TestThetaSeason(t *testing.T) {
	y := make([]float64, 96)
	for i := range y {
		y[i] = 100 + 20*math.Sin(2*math.Pi*float64(i)/12) + float64(i%5)
	}
	run := func(season int, shift float64) *theta.Model {
		cfg := testConfig()
		cfg.Combine, cfg.Season, cfg.Model.Kernel.Type = CombineTheta, season, narx.Linear
		l, _ := NewLearner(cfg)
		for i, v := range y {
			if _, err := l.Observe(Observation{T: int64(i), Y: v + shift}); err != nil {
				t.Fatal(err)
			}
		}
		return l.Theta()
	}
	if th := run(0, 0); th == nil || len(th.Season) != 12 {
		t.Errorf("a positive series of period 12: theta %+v, want period 12", th)
	}
	if th := run(-1, 0); th == nil || th.Season != nil {
		t.Errorf("season none: theta %+v, want no season", th)
	}
	if th := run(0, 0); th == nil || th.Additive {
		t.Errorf("a positive series: theta %+v, want a multiplicative season", th)
	}
	if th := run(0, -100); th == nil || len(th.Season) != 12 || !th.Additive {
		t.Errorf("a series through zero: theta %+v, want an additive season of 12", th)
	}
}

// The theta partner of values without a proposed period takes a common
// period where thetaf's test passes and the autocorrelation peaks: a
// season of 12 does; a random walk (whose autocorrelation declines
// through every lag, passing the test at each) and a sine of period 21
// (anti-correlated at 12, |r| passing the two-sided test) do not.
func TestThetaPeriodNeedsAPeak(t *testing.T) {
	l, _ := NewLearner(testConfig())
	rng := rand.New(rand.NewPCG(4, 4))
	walk, seasonal, sine := make([]float64, 240), make([]float64, 240), make([]float64, 240)
	level := 100.0
	for i := range walk {
		level += rng.NormFloat64()
		walk[i] = level
		seasonal[i] = 100 + 10*math.Sin(2*math.Pi*float64(i)/12) + rng.NormFloat64()
		sine[i] = 10 + 3*math.Sin(0.3*float64(i)) + 0.1*rng.NormFloat64()
	}
	for _, c := range []struct {
		name string
		ys   []float64
		want int
	}{{"random walk", walk, 1}, {"season of 12", seasonal, 12}, {"sine of period 21", sine, 1}} {
		if !theta.Seasonal(c.ys, 12) && c.want == 1 {
			t.Fatalf("%s: thetaf's test does not pass at 12: the case tests nothing", c.name)
		}
		if got := l.thetaPeriod(nil, c.ys); got != c.want {
			t.Errorf("%s: period %d, want %d", c.name, got, c.want)
		}
	}
}

// A state restored under a configuration that no longer combines drops
// the theta forecaster, and forecasts as the model alone.
func TestRestoreWithoutCombinationDropsTheta(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineTheta
	a, _ := NewLearner(cfg)
	y := noisySine(150, 0.1, 14)
	for i, v := range y[:120] {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	snap, _ := a.MarshalBinary()
	cfg.Combine = CombineNone
	b, _ := NewLearner(cfg)
	if err := b.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if b.Theta() != nil || a.Theta() == nil {
		t.Fatalf("theta after the restore %v (before %v), want dropped", b.Theta() != nil, a.Theta() != nil)
	}
	// The model learned alike with or without the combination: the
	// restored Learner predicts as one that never combined.
	c, _ := NewLearner(cfg)
	for i, v := range y[:120] {
		c.Observe(Observation{T: int64(i), Y: v})
	}
	rb, _ := b.Observe(Observation{T: 120, Y: y[120]})
	rc, _ := c.Observe(Observation{T: 120, Y: y[120]})
	if rb.Prediction != rc.Prediction || rb.Hi != rc.Hi || rb.Forecast[4] != rc.Forecast[4] {
		t.Errorf("restored without theta: %+v, want the model alone's %+v", rb, rc)
	}
	if !slices.Contains(b.ConfigChanged(), "combine") {
		t.Errorf("ConfigChanged %v does not name combine", b.ConfigChanged())
	}
}

// combinedSine is a Learner averaged with the theta method (testConfig,
// Warmup 400) that has learned 150 values of a noisy sine, and its
// configuration.
func combinedSine(t *testing.T) (*Learner, Config) {
	t.Helper()
	cfg := testConfig()
	cfg.Combine, cfg.Warmup = CombineTheta, 400
	l, _ := NewLearner(cfg)
	for i, v := range noisySine(150, 0.1, 12) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	return l, cfg
}

// A young series' forecast step that leaves the plausible (a band wider
// than implausibleRanges ranges of its values, or a point forecast that
// far beyond them) is the theta method's alone, bit for bit, and so is
// every later step of the same forecast; the steps before it are still
// the average.
func TestImplausibleStepsAreTheThetaMethods(t *testing.T) {
	l, cfg := combinedSine(t)
	if l.Theta() == nil || !l.values.armed() {
		t.Fatalf("the test needs a combined series whose values judge: theta %v, armed %v", l.Theta() != nil, l.values.armed())
	}
	H := cfg.Horizon
	mean, sd := make([]float64, H), make([]float64, H)
	l.Theta().Clone().Forecast(mean, sd)
	plain := forecastOf(t, l, H)
	// The model's own steps judge (before the average).
	th := l.th
	l.th = nil
	own := forecastOf(t, l, H)
	l.th = th
	for h, st := range own {
		if !l.plausible(st) || st.Fallback || plain[h].Fallback || plain[h].Mean == mean[h] {
			t.Fatalf("step %d: %+v is implausible or the theta method's alone: the values' own range must pass", h+1, st)
		}
	}
	// A range around step 1 that passes it and not a later step: from
	// that on, every step is the theta method's.
	kept := l.values
	first := shrinkRange(t, l, own)
	got := forecastOf(t, l, H)
	for h, st := range got {
		want := ForecastStep{H: h + 1, T: plain[h].T, Mean: mean[h], Std: sd[h], Lo: mean[h] - l.z*sd[h], Hi: mean[h] + l.z*sd[h], OneStepStd: sd[0], Fallback: true}
		if h < first {
			want = plain[h]
		}
		if st != want {
			t.Errorf("step %d (first implausible %d): %+v, want %+v", h+1, first+1, st, want)
		}
	}
	// Shrunk to a sliver, the range makes step 1 implausible too; the next
	// value's one-step prediction is step 1, replaced alike (the value
	// joins the statistics only after its prediction).
	l.values.Lo, l.values.Hi = own[0].Mean, own[0].Mean+1e-6
	l.values.unknownRefs() // a state add could reach; the kept bounds' rule out of play
	if err := l.Forecast(got, nil); err != nil {
		t.Fatal(err)
	}
	res, err := l.Observe(Observation{T: 150, Y: plain[0].Mean})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Mean != mean[0] || res.Prediction != got[0].Mean || res.Std != got[0].Std || res.Lo != got[0].Lo || res.Hi != got[0].Hi || !res.Fallback {
		t.Errorf("one-step prediction %+v, want step 1 %+v, the theta method's", res, got[0])
	}
	// A point forecast ten ranges above the values, with a narrow band.
	l.values = kept
	lo, hi := kept.Lo, kept.Hi
	far := ForecastStep{Mean: hi + 10.5*(hi-lo), Lo: hi + 10.4*(hi-lo), Hi: hi + 10.6*(hi-lo)}
	below := ForecastStep{Mean: lo - 10.5*(hi-lo), Lo: lo - 10.6*(hi-lo), Hi: lo - 10.4*(hi-lo)}
	for _, st := range []ForecastStep{far, below} {
		if l.plausible(st) {
			t.Errorf("%+v passed with the values in [%g, %g]", st, lo, hi)
		}
	}
	for _, bad := range []ForecastStep{{Mean: math.NaN(), Lo: lo, Hi: hi}, {Mean: lo, Lo: lo, Hi: math.Inf(1)}} {
		if l.plausible(bad) {
			t.Errorf("%+v passed", bad)
		}
	}
	l.values.Arm = l.values.N + 1
	if !l.plausible(far) {
		t.Error("a step was judged by statistics not yet armed")
	}
}

// A step of the model's more than partnerRatio times as uncertain as the
// theta partner's (its linearised variance running away) is the partner's
// alone, though within ten ranges of the values; one just below is
// averaged.
func TestWilderStepsAreTheThetaMethods(t *testing.T) {
	l, cfg := combinedSine(t)
	if l.Theta() == nil {
		t.Fatal("the test needs a combined series")
	}
	const h = 2
	l.thetaForecast(l.th, cfg.Horizon)
	m, sd := l.thMean[h], l.thSD[h]
	step := func(ratio float64) ForecastStep {
		s := ratio * partnerRatio * sd
		return ForecastStep{H: h + 1, Mean: m, Std: s, Lo: m - l.z*s, Hi: m + l.z*s}
	}
	wild, tame := step(1.01), step(0.99)
	if !l.plausible(wild) {
		t.Fatalf("the test needs a step within ten ranges: %+v on [%g, %g]", wild, l.values.Lo, l.values.Hi)
	}
	if !l.wilder(wild, h) || l.wilder(tame, h) {
		t.Errorf("wilder: %v at 1.01 times the ratio, %v at 0.99; want true, false", l.wilder(wild, h), l.wilder(tame, h))
	}
	if l.combine(&wild, h, false, false) || !wild.Fallback || wild.Mean != m || wild.Std != sd {
		t.Errorf("the wild step published as %+v, want the partner's (%g, %g)", wild, m, sd)
	}
	if !l.combine(&tame, h, false, false) || tame.Fallback {
		t.Errorf("the tame step published as %+v, want the average", tame)
	}
}

// shrinkRange sets l's value range to a sliver around step 1 of the model's
// own forecast own, ten-fold its band's width at 1.2 times, and returns the
// first step that range makes implausible, failing the test unless there is
// one after step 1.
func shrinkRange(t *testing.T, l *Learner, own []ForecastStep) int {
	t.Helper()
	r := 1.2 * (own[0].Hi - own[0].Lo) / implausibleRanges
	l.values.Lo, l.values.Hi = own[0].Mean-r/2, own[0].Mean+r/2
	l.values.unknownRefs() // judged by implausibleRanges alone: both bounds extended
	for h, st := range own {
		if !l.plausible(st) {
			if h == 0 {
				t.Fatalf("step 1 %+v implausible on its own sliver", st)
			}
			return h
		}
	}
	t.Fatalf("no step of %+v implausible on [%g, %g]", own, l.values.Lo, l.values.Hi)
	return 0
}

// Without the theta method, an established series' forecast falls back to
// the series' marginal distribution, the normal of its values' mean and
// standard deviation, from the first implausible step on: the iterated
// forecast of a chaotic series whose linearised variance grows without
// bound (the Santa Fe laser at M = 200, log+diff, reached a std of 1e304)
// publishes what the values have been instead.
func TestImplausibleStepsFallBackToTheValues(t *testing.T) {
	cfg := testConfig()
	cfg.Horizon = 8
	l, _ := NewLearner(cfg)
	y := noisySine(300, 0.1, 14)
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if l.Theta() != nil || len(l.warmY) != 0 || !l.values.armed() {
		t.Fatalf("the test needs an established series without theta: theta %v, values kept %d", l.Theta() != nil, len(l.warmY))
	}
	// The statistics are those of the 300 values, to rounding.
	var sum, ss float64
	for _, v := range y {
		sum += v
	}
	mu := sum / 300
	for _, v := range y {
		ss += (v - mu) * (v - mu)
	}
	// Welford's recurrences: relative error O(n·ε) ≈ 7e-14 for n = 300.
	if math.Abs(l.values.Mean-mu) > 1e-12*math.Abs(mu) || math.Abs(l.values.sd()-math.Sqrt(ss/299)) > 1e-12*math.Sqrt(ss/299) ||
		l.values.Lo != slices.Min(y) || l.values.Hi != slices.Max(y) || l.values.N != 300 {
		t.Fatalf("statistics %+v, want mean %g sd %g range [%g, %g]", l.values, mu, math.Sqrt(ss/299), slices.Min(y), slices.Max(y))
	}
	H := cfg.Horizon
	plain := forecastOf(t, l, H)
	for h, st := range plain {
		if !l.plausible(st) {
			t.Fatalf("step %d: %+v implausible on the values' own range", h+1, st)
		}
	}
	kept := l.values
	j := shrinkRange(t, l, plain)
	got := forecastOf(t, l, H)
	m, sd := kept.Mean, kept.sd()
	for h, st := range got {
		want := ForecastStep{H: h + 1, T: plain[h].T, Mean: m, Std: sd, Lo: m - l.z*sd, Hi: m + l.z*sd, OneStepStd: sd, Fallback: true}
		if h < j {
			want = plain[h]
		}
		if st != want {
			t.Errorf("step %d: %+v, want %+v", h+1, st, want)
		}
	}
	// Once fallen, a step falls back however plausible (combine).
	st := plain[0]
	if l.combine(&st, 0, true, false) || st.Mean != m || st.Std != sd {
		t.Errorf("a plausible step after a fallen one: %+v, want the values' normal", st)
	}
	// The one-step prediction falls back alike, and says it is a normal.
	l.values.Hi = plain[0].Mean + 1e-6
	res, err := l.Observe(Observation{T: 300, Y: plain[0].Mean})
	if err != nil {
		t.Fatal(err)
	}
	if res.Prediction != m || res.Std != sd || res.DF != 0 || !res.Fallback {
		t.Errorf("one-step prediction %+v, want the values' normal (%g, %g)", res, m, sd)
	}
}

// The value statistics count every value learned, from a series' first on:
// at each re-choice that still keeps every value they are counted again
// from the kept values as cleaned (a gross value stood in for by the
// median), through a snapshot's restore bit for bit; a snapshot of
// version 8 restores them from its kept values, or, with none, arms them
// after Warmup values.
func TestValueStatsFollowTheValues(t *testing.T) {
	cfg := testConfig()
	cfg.Warmup = 64
	y := noisySine(300, 0.5, 13)
	y[5] = 1e9 // gross: cleaned at the first fit
	l, _ := NewLearner(cfg)
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
		if l.values.N != int64(i+1) {
			t.Fatalf("value %d: %d counted", i, l.values.N)
		}
		if l.Fitted() && l.values.Hi > 100 {
			t.Fatalf("value %d: the gross value is still in the range [%g, %g]", i, l.values.Lo, l.values.Hi)
		}
		if i == 50 || i == 200 {
			snap, _ := l.MarshalBinary()
			r, _ := NewLearner(cfg)
			if err := r.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
			if r.values != l.values {
				t.Fatalf("value %d: restored %+v, want %+v", i, r.values, l.values)
			}
		}
	}
	// Version 8: with values kept, counted from them; with none, from the
	// restore on, judging after Warmup.
	for _, young := range []bool{true, false} {
		l, _ := NewLearner(cfg)
		n := 40
		if !young {
			n = 200
		}
		for i := range n {
			if _, err := l.Observe(Observation{T: int64(i), Y: y[i+10]}); err != nil {
				t.Fatal(err)
			}
		}
		snap, _ := l.MarshalBinary()
		old := encodeState(snap, stateOf(t, snap), 8)
		r, _ := NewLearner(cfg)
		if err := r.UnmarshalBinary(old); err != nil {
			t.Fatal(err)
		}
		if young {
			if r.values != l.values {
				t.Errorf("v8 young: %+v, want %+v from the kept values", r.values, l.values)
			}
			continue
		}
		if r.values.N != 0 || r.values.Arm != int64(cfg.Warmup) {
			t.Fatalf("v8 established: %+v, want none counted and armed at %d", r.values, cfg.Warmup)
		}
		for i := range cfg.Warmup {
			if r.values.armed() {
				t.Fatalf("armed after %d values", i)
			}
			if _, err := r.Observe(Observation{T: int64(n + i), Y: y[n+i]}); err != nil {
				t.Fatal(err)
			}
		}
		if !r.values.armed() {
			t.Errorf("not armed after %d values: %+v", cfg.Warmup, r.values)
		}
	}
	// A restore refuses statistics add could not have produced.
	snap, _ := l.MarshalBinary()
	st := stateOf(t, snap)
	for _, bad := range []ValueStats{{N: 3, Mean: math.NaN()}, {N: 3, Lo: 2, Hi: 1}, {N: 3, M2: -1}, {N: -1}} {
		st.Values = bad
		b := encodeState(snap, st, SnapshotVersion)
		r, _ := NewLearner(cfg)
		if err := r.UnmarshalBinary(b); err == nil {
			t.Errorf("statistics %+v restored", bad)
		}
	}
}

// Values whose moments would overflow disarm the statistics for good and
// leave them finite, so that a checkpoint of the series stays valid.
func TestValueStatsOverflowDisarms(t *testing.T) {
	var s ValueStats
	for _, y := range []float64{1, 2, 3} {
		s.add(y)
	}
	if !s.armed() || !s.valid() {
		t.Fatalf("%+v: want armed and valid", s)
	}
	for _, y := range []float64{1e300, -1e300, 4} {
		s.add(y)
	}
	if s.armed() || !s.valid() || s.N != 6 || s.Lo != -1e300 || s.Hi != 1e300 {
		t.Errorf("%+v: want disarmed, valid, six counted, the range kept", s)
	}
}

// TestYoungSeriesForecastByTheta: before its first fit a combined series is
// forecast from its theta.MinValues-th value on by the theta method alone:
// each step, published or asked for (Forecast, and a ForecastCopy's), is
// theta.FitYoung's on the values so far, its band Student's t's at the
// level with the fit's residual degrees of freedom, flagged Fallback, and
// a snapshot restores the same forecast bit for bit.
// Without the combination nothing is published before the first fit, and
// Forecast says the model is not fitted.
func TestYoungSeriesForecastByTheta(t *testing.T) {
	cfg := testConfig()
	cfg.Combine = CombineAuto
	l, _ := NewLearner(cfg)
	cfg.Combine = CombineNone
	alone, _ := NewLearner(cfg)
	y := noisySine(FirstFit, 0.1, 4)
	for i, v := range y[:FirstFit-1] {
		res, err := l.Observe(Observation{T: int64(i), Y: v})
		if err != nil {
			t.Fatal(err)
		}
		if ra, _ := alone.Observe(Observation{T: int64(i), Y: v}); ra.Forecast != nil {
			t.Fatalf("value %d, combine none: a forecast before the first fit", i+1)
		}
		if i+1 < theta.MinValues {
			if res.Forecast != nil {
				t.Fatalf("value %d: a forecast from fewer than %d values", i+1, theta.MinValues)
			}
			continue
		}
		th, err := theta.FitYoung(y[:i+1], 1)
		if err != nil {
			t.Fatal(err)
		}
		mean, sd := make([]float64, cfg.Horizon), make([]float64, cfg.Horizon)
		th.Forecast(mean, sd)
		if len(res.Forecast) != cfg.Horizon || res.Fitted {
			t.Fatalf("value %d: %d steps, fitted %v", i+1, len(res.Forecast), res.Fitted)
		}
		// The band: Student's t with the fit's n − 2 degrees of freedom,
		// distuv's quantile (narx.TQuantile agrees with it to 1e-9
		// relative); at n = 4, ν = 2, whose quantile is (2p − 1)/√(2p(1 − p)).
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(i + 1 - 2)}.Quantile(0.975)
		if i+1 == 4 {
			q = 0.95 / math.Sqrt(2*0.975*0.025)
		}
		for h, st := range res.Forecast {
			want := ForecastStep{H: h + 1, T: int64(i + h + 1), Mean: mean[h], Std: sd[h], Lo: st.Lo, Hi: st.Hi,
				OneStepStd: sd[0], Fallback: true}
			if st != want || math.Abs(st.Lo-(mean[h]-q*sd[h])) > 1e-9*q*sd[h] || math.Abs(st.Hi-(mean[h]+q*sd[h])) > 1e-9*q*sd[h] {
				t.Fatalf("value %d, step %d: %+v, want theta's %+v with the band ± %v·std", i+1, h+1, st, want, q)
			}
		}
		if l.YoungDF() != float64(i+1-2) {
			t.Fatalf("value %d: YoungDF %g, want n − 2 = %d", i+1, l.YoungDF(), i+1-2)
		}
		published := slices.Clone(res.Forecast)
		asked, copied := forecastOf(t, l, cfg.Horizon), forecastOf(t, l.ForecastCopy(), cfg.Horizon)
		snap, _ := l.MarshalBinary()
		r, _ := NewLearner(l.cfg)
		if err := r.UnmarshalBinary(snap); err != nil {
			t.Fatal(err)
		}
		restored := forecastOf(t, r, cfg.Horizon)
		if !slices.Equal(asked, published) || !slices.Equal(copied, published) || !slices.Equal(restored, published) {
			t.Fatalf("value %d: asked %+v, copy %+v, restored %+v, published %+v", i+1, asked[0], copied[0], restored[0], published[0])
		}
	}
	if err := alone.Forecast(make([]ForecastStep, 3), nil); err != narx.ErrNotFitted {
		t.Errorf("combine none, not fitted: Forecast %v, want narx.ErrNotFitted", err)
	}
}

// TestYoungForecastEveryAndSeason: with forecast.every 3 a young series
// publishes at values 6, 9, 12 and 15, and one restored from a snapshot
// taken after any of its values publishes the same forecasts bit for bit;
// a strongly seasonal young series (period 4, 15 values) is forecast by
// the seasonal theta method.
func TestYoungForecastEveryAndSeason(t *testing.T) {
	cfg := testConfig()
	cfg.Combine, cfg.Every = CombineAuto, 3
	y := make([]float64, FirstFit-1)
	for i := range y {
		y[i] = 10 + 4*float64(i%4) + 0.1*math.Sin(float64(i))
	}
	run := func(cut int) (published map[int][]ForecastStep, l *Learner) {
		l, _ = NewLearner(cfg)
		published = map[int][]ForecastStep{}
		for i, v := range y {
			if i == cut {
				snap, _ := l.MarshalBinary()
				l, _ = NewLearner(cfg)
				if err := l.UnmarshalBinary(snap); err != nil {
					t.Fatal(err)
				}
			}
			res, err := l.Observe(Observation{T: int64(i), Y: v})
			if err != nil {
				t.Fatal(err)
			}
			if res.Forecast != nil {
				published[i+1] = slices.Clone(res.Forecast)
			}
		}
		return published, l
	}
	want, l := run(-1)
	if got := slices.Sorted(maps.Keys(want)); !slices.Equal(got, []int{6, 9, 12, 15}) {
		t.Fatalf("young forecasts at values %v, want 6, 9, 12, 15", got)
	}
	if th := l.Theta(); th == nil || len(th.Season) != 4 {
		t.Errorf("theta method of the young forecast %+v, want period 4", th)
	}
	for cut := 1; cut < len(y); cut++ {
		if got, _ := run(cut); !reflect.DeepEqual(got, want) {
			t.Fatalf("restored after value %d: forecasts differ", cut)
		}
	}
}

// TestThetaMarginWithTwoSeasons: with one seasonal period the model
// forecasts alone only when its validation error is below 1 − thetaMargin
// times the average's; with two (the theta method removes one) whenever
// it is below the average's.
func TestThetaMarginWithTwoSeasons(t *testing.T) {
	const avg = 100.0
	for _, c := range []struct {
		alone    float64
		nPeriods int
		want     bool
	}{
		{avg * (1 - thetaMargin/2), 1, true},
		{avg * (1 - 2*thetaMargin), 1, false},
		{avg * (1 - thetaMargin/2), 2, false},
		{avg * (1 + thetaMargin/2), 2, true},
		{avg * (1 + thetaMargin/2), 0, true},
	} {
		if got := combines(c.alone, avg, c.nPeriods); got != c.want {
			t.Errorf("alone %v against %v, %d periods: combines %v, want %v", c.alone, avg, c.nPeriods, got, c.want)
		}
	}
}

// halfHourlyLoad returns n half-hourly values from a Monday's midnight: a
// random-walk level, a daily hump of 100, halved on weekends, and noise of
// standard deviation noise.
func halfHourlyLoad(n int, noise float64) []float64 {
	rng := rand.New(rand.NewPCG(21, 2))
	y := make([]float64, n)
	level := 500.0
	for i := range y {
		daily := 100 * math.Sin(math.Pi*float64(i%48)/48)
		if i/48%7 >= 5 {
			daily *= 0.5
		}
		level += rng.NormFloat64()
		y[i] = level + daily + noise*rng.NormFloat64()
	}
	return y
}

// TestTwoSeasonsWithoutTimes: values without times propose the day and its
// week (detectPeriods), and the last re-choice waits for the week's five
// cycles as with times (lastFit): at Warmup (500 values) no weekly profile
// fits. (With noise of 5, half the daily increments, the values at 500
// propose a spurious 4 instead of the day: detectPeriods, whose increments
// the noise dominates, needs a clearer day.)
func TestTwoSeasonsWithoutTimes(t *testing.T) {
	y := halfHourlyLoad(1700, 2)
	cfg := testConfig()
	cfg.Combine, cfg.Model.Kernel.Type, cfg.Horizon, cfg.Warmup = CombineTheta, narx.Linear, 48, 500
	l, _ := NewLearner(cfg)
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if th := l.Theta(); l.nextFit > 0 || th == nil || th.Profile != 336 || th.Cycles != profileCycles(48) {
		t.Fatalf("next re-choice %d, partner %+v: want none and a weekly profile", l.nextFit, th)
	}
}

// With two seasonal periods (half-hourly times: a day and a week) the
// combination's partner is the theta method adjusted by a moving weekly
// profile when its average validates better: on a load-like series whose
// weekends are half as high as its weekdays, the theta method's daily
// indices cannot carry the week, the profile can. The partner is fitted
// at the re-choice after five weeks (lastFit), and a restore after it
// reproduces the forecasts bit for bit (the ring is in the snapshot).
func TestTwoSeasonsCombineWithAProfile(t *testing.T) {
	const halfHour = int64(30 * 60 * 1000)
	t0 := time.Date(1998, 1, 5, 0, 0, 0, 0, time.UTC).UnixMilli() // a Monday
	y := halfHourlyLoad(1800, 5)
	cfg := testConfig()
	cfg.Combine, cfg.Model.Kernel.Type, cfg.Horizon = CombineTheta, narx.Linear, 48
	l, _ := NewLearner(cfg)
	obs := func(i int) Observation { return Observation{T: t0 + int64(i)*halfHour, Time: true, Y: y[i]} }
	const cut = 1700
	for i := range cut {
		if _, err := l.Observe(obs(i)); err != nil {
			t.Fatal(err)
		}
	}
	if l.cfg.lastFit(l.warmT, l.timed, nil) > cut || l.nextFit > 0 {
		t.Fatalf("the last re-choice (%d) has not run by value %d", l.cfg.lastFit(l.warmT, l.timed, nil), cut)
	}
	th := l.Theta()
	if th == nil || th.Profile != 336 || th.Cycles != profileCycles(48) || th.Season != nil {
		t.Fatalf("partner %+v, want the theta method with a weekly profile of %d cycles", th, profileCycles(48))
	}
	r := restored(t, cfg, l)
	for i := cut; i < len(y); i++ {
		a, err := l.Observe(obs(i))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.Observe(obs(i))
		if math.Float64bits(a.Prediction) != math.Float64bits(b.Prediction) || len(a.Forecast) != 48 ||
			math.Float64bits(a.Forecast[47].Mean) != math.Float64bits(b.Forecast[47].Mean) {
			t.Fatalf("value %d: restored %v, %v; original %v, %v", i, b.Prediction, b.Forecast, a.Prediction, a.Forecast)
		}
	}
}

// TestPlannedInputsAreNotAveraged: y = 50 + 10u + noise of std 1, u a
// random 0/1 for 100 values and 0 for the next 99, then planned at 1 for
// all 10 steps of the forecast at value 199. The last re-choice, at 128
// values, validated on values where u stayed 0, and averages the model
// with the theta method, which knows nothing of u: the steps whose inputs
// differ from the last observation's are the model's alone, about 60
// (averaged, about 55). The tolerance, 1.5, is the noise's std and a half:
// the level and the effect are estimated from the values.
func TestPlannedInputsAreNotAveraged(t *testing.T) {
	cfg := autoConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0}}
	cfg.Planned = []int{0}
	cfg.Combine = CombineAuto
	cfg.Horizon = 10
	cfg.Warmup = 500
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	future := make([][]float64, cfg.Horizon)
	for h := range future {
		future[h] = []float64{1}
	}
	var res Result
	for i := range 199 {
		u := 0.0
		if i < 100 {
			u = float64(rng.IntN(2))
		}
		o := Observation{T: int64(i + 1), Y: 50 + 10*u + rng.NormFloat64(), U: []float64{u}}
		if i == 198 {
			o.Future = future
		}
		if res, err = l.Observe(o); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.Forecast) != cfg.Horizon {
		t.Fatalf("forecast %+v, want %d steps", res.Forecast, cfg.Horizon)
	}
	for _, st := range res.Forecast {
		if math.Abs(st.Mean-60) > 1.5 {
			t.Errorf("step %d: mean %.2f, want 60 ± 1.5 (u planned at 1)", st.H, st.Mean)
		}
	}
}

// The theta partner's band in closed form: mean ∓ z·sd, its lower bound
// censored at zero where the model's form is a log one (the quantile of
// max(Y, 0)), and the blended bounds the means of the model's and the
// partner's. A band above zero is the normal's either way.
func TestPartnerBandIsPositiveUnderALogForm(t *testing.T) {
	l := &Learner{z: 1.96}
	const mean, sd = 1.0, 2.0
	for _, c := range []struct {
		form   Form
		lo, hi float64
	}{
		{Form{}, mean - 1.96*sd, mean + 1.96*sd},
		{Form{Log: true}, 0, mean + 1.96*sd},
		{Form{Log: true, Diff: true}, 0, mean + 1.96*sd},
	} {
		l.form = c.form
		if lo, hi := l.partnerBand(mean, sd); lo != c.lo || hi != c.hi {
			t.Errorf("form %+v: partner band [%g, %g], want [%g, %g]", c.form, lo, hi, c.lo, c.hi)
		}
		if lo, hi := l.partnerBand(10, 1); lo != 10-1.96 || hi != 10+1.96 {
			t.Errorf("form %+v: a band above zero [%g, %g], want the normal's", c.form, lo, hi)
		}
		st := ForecastStep{Mean: 1.2, Std: 0.5, Lo: 0.5, Hi: 2.5}
		l.blend(&st, mean, sd, 0.5)
		if want := (0.5 + c.lo) / 2; st.Lo != want || st.Hi != (2.5+c.hi)/2 || st.Mean != 1.1 || st.Std != 1.25 {
			t.Errorf("form %+v: blended %+v, want lo %g, hi %g, mean 1.1, std 1.25", c.form, st, want, (2.5+c.hi)/2)
		}
		// The model weighed w = ¼: the weighted means, a tolerance of a
		// few ulps of 4 for the different order of the operations.
		st = ForecastStep{Mean: 1.2, Std: 0.5, Lo: 0.5, Hi: 2.5}
		l.blend(&st, mean, sd, 0.25)
		if want := 0.25*0.5 + 0.75*c.lo; math.Abs(st.Lo-want) > 1e-15 || math.Abs(st.Hi-(0.25*2.5+0.75*c.hi)) > 1e-15 {
			t.Errorf("form %+v, w = ¼: blended %+v, want lo %g, hi %g", c.form, st, want, 0.25*2.5+0.75*c.hi)
		}
	}
}

// A step that falls back to the theta partner has the partner's band, its
// lower bound censored at zero under a log form as in the average
// (partnerBand): a combined series' fallback steps, like its averaged
// ones, stay at or above zero where the model's form found it positive.
func TestThetaFallbackIsCensoredUnderALogForm(t *testing.T) {
	l, _ := combinedSine(t)
	if l.th == nil {
		t.Fatal("the test needs a combined series")
	}
	const h, mean, sd = 1, 1.0, 2.0
	l.thMean[h], l.thSD[h] = mean, sd
	for _, c := range []struct {
		form Form
		lo   float64
	}{{Form{}, mean - l.z*sd}, {Form{Log: true}, 0}} {
		l.form = c.form
		st := ForecastStep{Mean: math.NaN(), Lo: 0, Hi: 1}
		if l.combine(&st, h, false, false) || !st.Fallback || st.Mean != mean || st.Std != sd || st.Lo != c.lo || st.Hi != mean+l.z*sd {
			t.Errorf("form %+v: fallback step %+v, want the partner's %g ± %g with lo %g", c.form, st, mean, sd, c.lo)
		}
	}
}

// A season the model found is the partner's too (structure.knownSeason):
// on 32 values, the last re-choice of a 36-value series, a monthly season
// whose peak is eight times its trough (the shape of NN3.059's first year)
// fails thetaf's test, yet the evidence keeps lag 12 in the model's lags;
// the partner then adjusts by the period's indices rather than forecasting
// a flat line that halves the season in the average.
func TestPartnerTakesTheModelsSeason(t *testing.T) {
	season := []float64{1.211, 1.335, 1.688, 2.262, 3.835, 6.423, 9.784, 9.064, 6.082, 4.456, 2.105, 1.115}
	cfg := autoConfig()
	cfg.Combine = CombineTheta
	l, _ := NewLearner(cfg)
	rng := rand.New(rand.NewPCG(59, 1))
	y := make([]float64, 36)
	for i := range y {
		y[i] = 1000 * season[i%12] * math.Exp(0.03*rng.NormFloat64())
	}
	if theta.Seasonal(y[:32], 12) {
		t.Fatal("thetaf's test passes on the re-choice's values: the case tests nothing")
	}
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if lags := l.Model().Config().Embedding.YLags; !slices.Contains(lags, 12) {
		t.Fatalf("the model's lags %v hold no 12: the case tests nothing", lags)
	}
	th := l.Theta()
	if th == nil || len(th.Season) != 12 {
		t.Fatalf("partner %+v, want the period-12 indices", th)
	}
	mean := make([]float64, 12)
	th.Forecast(mean, nil)
	// Noise of 3 % of the value. The partner is fitted on the re-choice's
	// 32 values, where the centred moving average leaves each index one or
	// two ratios of a value to a mean of 13: a ratio's noise is about
	// 3 %, and each step within 15 % of the season is five of those.
	for h, v := range mean {
		if want := 1000 * season[(36+h)%12]; math.Abs(v-want) > 0.15*want {
			t.Errorf("partner's step %d: %v, want the season's %v within 15 %%", h+1, v, want)
		}
	}
}

// growingSeason feeds a learner of cfg n values of a season of period
// whose amplitude grows (±10 % of a level that doubles, to ±40 %), with
// noise of 0.5 %, and returns it.
func growingSeason(t *testing.T, cfg Config, period, n int) *Learner {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 4))
	l, _ := NewLearner(cfg)
	for i := range n {
		amp := 0.1 + 0.3*float64(i)/float64(n)
		y := (100 + float64(i)) * (1 + amp*math.Sin(2*math.Pi*float64(i)/float64(period)+0.5)) * (1 + 0.005*rng.NormFloat64())
		if _, err := l.Observe(Observation{T: int64(i), Y: y}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// Holt–Winters' partner: on a series whose season's amplitude grows (a
// quarterly season, configured, growingSeason), the theta method's
// indices, fitted to every cycle, average the amplitudes and its
// forecasts of the validation's paths miss the latest ones; the average
// with Holt–Winters, whose season is smoothed value by value, validates
// better and is the partner. The choice is checkpointed and the restored
// series forecasts to the bit as the original.
func TestHoltWintersPartner(t *testing.T) {
	cfg := testConfig()
	cfg.Combine, cfg.Season, cfg.Model.Kernel.Type = CombineTheta, 4, narx.Linear
	l := growingSeason(t, cfg, 4, 96)
	th := l.Theta()
	if th == nil || !th.HW || len(th.Season) != 4 {
		t.Fatalf("a growing season: theta partner %+v, want Holt–Winters of period 4", th)
	}
	if got := restoredSame(t, cfg, l, 8).Theta(); got == nil || !got.HW || got.HWGamma != th.HWGamma {
		t.Fatalf("restored theta partner %+v, want %+v", got, th)
	}
}

// Holt–Winters' partner smooths a season of the calendar only: the same
// growing season at a period of 10 values (no common period, no time
// step, none configured), which the increments' test proposes, keeps a
// theta partner of that period, not Holt–Winters' (calendarSeason).
func TestHoltWintersNeedsACalendarSeason(t *testing.T) {
	cfg := testConfig()
	cfg.Combine, cfg.Model.Kernel.Type = CombineTheta, narx.Linear
	if th := growingSeason(t, cfg, 10, 120).Theta(); th == nil || th.HW || len(th.Season) != 10 {
		t.Fatalf("a season of 10 values: theta partner %+v, want the theta method of period 10", th)
	}
}
