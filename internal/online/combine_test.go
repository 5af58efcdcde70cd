package online

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

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

// The theta forecaster's season: a positive series with a period of 12
// gets one, unless the configuration rules seasons out (Season < 0), and
// a series with a value ≤ 0 never does (its decomposition is
// multiplicative).
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
	if th := run(0, -100); th == nil || th.Season != nil {
		t.Errorf("a series through zero: theta %+v, want no season", th)
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

// A young series' forecast step that leaves the plausible (a band wider
// than implausibleRanges ranges of the values kept, or a point forecast
// that far beyond them) is the theta method's alone, bit for bit; every
// other step is still the average; and with the values released, nothing
// is replaced.
func TestImplausibleStepsAreTheThetaMethods(t *testing.T) {
	cfg := testConfig()
	cfg.Combine, cfg.Warmup = CombineTheta, 400
	l, _ := NewLearner(cfg)
	for i, v := range noisySine(150, 0.1, 12) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if l.Theta() == nil || !l.keptOK {
		t.Fatalf("the test needs a young combined series: theta %v, values kept %v", l.Theta() != nil, l.keptOK)
	}
	H := cfg.Horizon
	mean, sd := make([]float64, H), make([]float64, H)
	l.Theta().Clone().Forecast(mean, sd)
	plain := make([]ForecastStep, H)
	if err := l.Forecast(plain, nil); err != nil {
		t.Fatal(err)
	}
	for h, st := range plain {
		if !l.plausible(st) || st.Mean == mean[h] {
			t.Fatalf("step %d: %+v is implausible or the theta method's alone: the values' own range must pass", h+1, st)
		}
	}
	// Shrunk to a sliver around step 1's mean, the range makes every band
	// wider than ten of it.
	lo, hi := l.keptLo, l.keptHi
	l.keptLo, l.keptHi = plain[0].Mean, plain[0].Mean+1e-3*(hi-lo)
	got := make([]ForecastStep, H)
	if err := l.Forecast(got, nil); err != nil {
		t.Fatal(err)
	}
	for h, st := range got {
		want := ForecastStep{H: h + 1, T: plain[h].T, Mean: mean[h], Std: sd[h], Lo: mean[h] - l.z*sd[h], Hi: mean[h] + l.z*sd[h], OneStepStd: sd[0]}
		if st != want {
			t.Errorf("step %d: %+v, want the theta method's %+v", h+1, st, want)
		}
	}
	// The next value's one-step prediction is step 1, replaced alike (the
	// value joins the range only after its prediction).
	res, err := l.Observe(Observation{T: 150, Y: plain[0].Mean})
	if err != nil {
		t.Fatal(err)
	}
	if res.Prediction != got[0].Mean || res.Std != got[0].Std || res.Lo != got[0].Lo || res.Hi != got[0].Hi || res.DF != 0 {
		t.Errorf("one-step prediction %+v, want step 1 %+v", res, got[0])
	}
	// A point forecast ten ranges above the values, with a narrow band.
	l.keptLo, l.keptHi = lo, hi
	far := ForecastStep{Mean: hi + 10.5*(hi-lo), Lo: hi + 10.4*(hi-lo), Hi: hi + 10.6*(hi-lo)}
	if l.plausible(far) {
		t.Errorf("%+v passed with the values in [%g, %g]", far, lo, hi)
	}
	l.keptOK = false
	if !l.plausible(far) {
		t.Error("a step was judged with no values kept")
	}
}

// keep's running range is the range of the values kept, as they slide
// (the oldest dropped beyond Warmup, extremes among them), through the
// re-choices and a snapshot's restore; it lapses when the values are
// released.
func TestKeptRangeFollowsTheValues(t *testing.T) {
	cfg := testConfig()
	cfg.Warmup = 64
	y := noisySine(300, 0.5, 13)
	y[20], y[40] = 40, -25 // extremes, dropped from the slide at values 84 and 104
	check := func(i int, l *Learner) {
		t.Helper()
		if len(l.warmY) == 0 {
			if l.keptOK {
				t.Fatalf("value %d: range kept with no values", i)
			}
			return
		}
		if !l.keptOK || l.keptLo != slices.Min(l.warmY) || l.keptHi != slices.Max(l.warmY) {
			t.Fatalf("value %d: range [%g, %g] (ok %v), values kept [%g, %g]", i, l.keptLo, l.keptHi, l.keptOK, slices.Min(l.warmY), slices.Max(l.warmY))
		}
	}
	// The slide of a series not yet fitted, which keeps its last Warmup
	// values.
	s, _ := NewLearner(cfg)
	for i, v := range y {
		s.keep(v, nil, int64(i))
		check(i, s)
	}
	l, _ := NewLearner(cfg)
	released := false
	for i, v := range y {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
		check(i, l)
		if i == 50 {
			snap, _ := l.MarshalBinary()
			r, _ := NewLearner(cfg)
			if err := r.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
			check(i, r)
		}
		released = released || len(l.warmY) == 0
	}
	if !released {
		t.Error("the values were never released: the lapse is untested")
	}
}
