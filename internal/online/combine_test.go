package online

import (
	"math"
	"math/rand/v2"
	"reflect"
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
// (theta advanced through the missing steps).
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
		tm := int64(i)
		if i >= 300 {
			tm += 3 // a gap of three missing steps at value 300
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
		if before != nil {
			for range rb.Filled { // fillGap advances it by its own forecasts
				before.Forecast(mean[:1], nil)
				before.Update(mean[0])
			}
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
