package online

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShiftWatch checks the location-shift watch on scripted residuals of
// unit standard deviation. Null: over 10⁶ N(0, 1) residuals the correction
// applies on at most 1e-4 of the samples — the start is 5.3 standard
// deviations of the clipped residuals' average (a normal tail of about
// 10⁻⁷ per sample; an alarm lasts until the average falls below 2 of its
// deviations, tens of samples, and the bound allows a hundred times that).
// A shift of 5: the correction applies within 12 samples of it (the
// average of clipped residuals passes 0.90 after 10), and 100 samples
// later it is within 1.1 of 5 (four standard deviations of C,
// √(α_C/(2 − α_C)) = 0.26). A burst of five residuals of 10 does not pass
// (E reaches 2·(1 − (15/16)⁵) = 0.55).
// Nothing applies before 16 residuals, and a non-finite residual or
// deviation is ignored.
func TestShiftWatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	var s shiftState
	alarms := 0
	const n = 1_000_000
	for range n {
		s.update(rng.NormFloat64(), 1)
		if s.correction() != 0 {
			alarms++
		}
	}
	if f := float64(alarms) / n; f > 1e-4 {
		t.Errorf("null: the correction applied on %.2g of the samples, want ≤ 1e-4", f)
	}

	s = shiftState{}
	for range 100 {
		s.update(rng.NormFloat64(), 1)
	}
	first := -1
	for i := range 100 {
		s.update(5+rng.NormFloat64(), 1)
		if first < 0 && s.correction() != 0 {
			first = i
		}
	}
	if first < 0 || first >= 12 {
		t.Errorf("a shift of 5 was corrected from its sample %d, want within 12", first)
	}
	if c := s.correction(); math.Abs(c-5) > 1.1 {
		t.Errorf("100 samples after a shift of 5 the correction is %v", c)
	}

	s = shiftState{}
	for range 100 {
		s.update(rng.NormFloat64(), 1)
	}
	for range 5 {
		s.update(10, 1)
		if c := s.correction(); c != 0 {
			t.Fatalf("a burst of five errors of 10 was corrected by %v", c)
		}
	}

	s = shiftState{}
	for i := range 15 {
		s.update(10, 1)
		if c := s.correction(); c != 0 {
			t.Fatalf("corrected by %v after %d residuals", c, i+1)
		}
	}
	before := s
	s.update(math.NaN(), 1)
	s.update(1, 0)
	s.update(math.Inf(1), 1)
	if s != before {
		t.Errorf("non-finite input changed the watch: %+v → %+v", before, s)
	}
}

// shiftedNoise returns n values of white noise around 10 (deviation 1)
// whose level steps by 5 from value 150 on, the same for every n.
func shiftedNoise(n int) []float64 {
	rng := rand.New(rand.NewPCG(7, 7))
	ys := make([]float64, n)
	for i := range ys {
		ys[i] = 10 + rng.NormFloat64()
		if i >= 150 {
			ys[i] += 5
		}
	}
	return ys
}

// TestLevelShiftIsCorrected: a Learner with the daemon's kind of
// configuration (autoConfig) on white noise around 10 whose level steps by
// 5 noise deviations after 150 values, its next re-choice at Warmup (200),
// 50 values later. Without the correction its one-step errors over values
// 170–199 keep 1.6 of the shift on average (TestLevelShiftOff; the exact
// RLS moves its intercept as a running mean, and the model's lags follow
// part of the shift); with it the mean error there must be within 1 of 0
// (the mean of 30 errors of deviation 1 has a deviation of 0.18; the
// correction lags the model's own adaptation, and over-corrects by 0.4
// here), and the forecasts' mean over the horizon must
// have moved to the new level too (within 2 of 15 at every step). A
// restore from a checkpoint taken while the correction applies gives the
// same predictions to the bit.
func TestLevelShiftIsCorrected(t *testing.T) {
	ys := shiftedNoise(260)
	l, _ := NewLearner(autoConfig())
	var restored *Learner
	var sum float64
	var n int
	for i, y := range ys {
		res, err := l.Observe(Observation{T: int64(i), Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if restored != nil {
			rr, _ := restored.Observe(Observation{T: int64(i), Y: y})
			if rr.Prediction != res.Prediction || math.IsNaN(res.Prediction) {
				t.Fatalf("value %d: the restored learner predicts %v, the original %v", i, rr.Prediction, res.Prediction)
			}
		}
		if i >= 170 && i < 200 {
			sum += y - res.Prediction
			n++
		}
		if i == 185 {
			if l.shift.correction() == 0 {
				t.Fatalf("no correction 35 values after the shift: %+v", l.shift)
			}
			for h, st := range res.Forecast {
				if math.Abs(st.Mean-15) > 2 {
					t.Errorf("step %d of the forecast after the shift: %v, want 15 ± 2", h+1, st.Mean)
				}
			}
			snap, _ := l.MarshalBinary()
			restored, _ = NewLearner(autoConfig())
			if err := restored.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
		}
	}
	if m := sum / float64(n); math.Abs(m) >= 1 {
		t.Errorf("mean one-step error over values 170–199: %v, want within 1 of 0 (the shift is 5; 1.6 uncorrected)", m)
	}
}

// TestLevelShiftOff: the series of TestLevelShiftIsCorrected. The watch
// reports the correction's start once (Result.ShiftStarted, when
// LevelShift becomes non-zero); with Config.NoLevelShift no correction
// starts and the one-step errors over values 170–199 keep more than a
// fifth of the shift (1.6 of 5 here: the model chosen at 128 values
// follows part of it by its lags; the mean of 30 errors of deviation 1
// has a deviation of 0.18, so 1 is three deviations from either). A
// checkpoint taken while a correction applies keeps it when restored
// under the same configuration, and drops it under NoLevelShift, which
// the restore names as a changed key (and turning the watch back on too).
func TestLevelShiftOff(t *testing.T) {
	ys := shiftedNoise(200)
	cfg := autoConfig()
	cfg.Calibrate = cfg.Horizon // the bands over the horizon calibrated, as the daemon's are
	on, _ := NewLearner(cfg)
	offCfg := cfg
	offCfg.NoLevelShift = true
	off, _ := NewLearner(offCfg)
	var starts int
	var sum float64
	var snap []byte
	for i, y := range ys {
		before := on.LevelShift()
		res, err := on.Observe(Observation{T: int64(i), Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if res.ShiftStarted != (before == 0 && on.LevelShift() != 0) {
			t.Fatalf("value %d: ShiftStarted %v, correction %v → %v", i, res.ShiftStarted, before, on.LevelShift())
		}
		if res.ShiftStarted {
			starts++
		}
		if i == 185 {
			if on.LevelShift() == 0 {
				t.Fatal("no correction 35 values after the shift")
			}
			snap, _ = on.MarshalBinary()
		}
		r, err := off.Observe(Observation{T: int64(i), Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if r.ShiftStarted || off.LevelShift() != 0 {
			t.Fatalf("value %d: NoLevelShift started a correction (%v)", i, off.LevelShift())
		}
		if i >= 170 {
			sum += y - r.Prediction
		}
	}
	if starts != 1 {
		t.Errorf("%d corrections started, want 1", starts)
	}
	if m := sum / 30; m <= 1 {
		t.Errorf("NoLevelShift: mean one-step error over values 170–199 %v, want above 1 (the shift is 5)", m)
	}
	kept, _ := NewLearner(cfg)
	dropped, _ := NewLearner(offCfg)
	if err := kept.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if err := dropped.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if kept.LevelShift() == 0 || kept.ConfigChanged() != nil {
		t.Errorf("restored under the same configuration: correction %v, changed %v; want the checkpoint's, none", kept.LevelShift(), kept.ConfigChanged())
	}
	if c := dropped.LevelShift(); c != 0 || !slices.Equal(dropped.ConfigChanged(), []string{"level_shift"}) {
		t.Errorf("restored under NoLevelShift: correction %v, changed %v; want none, [level_shift]", c, dropped.ConfigChanged())
	}
	// The key rendered only when off is named when turned back on too.
	offSnap, _ := off.MarshalBinary()
	back, _ := NewLearner(cfg)
	if err := back.UnmarshalBinary(offSnap); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.ConfigChanged(), []string{"level_shift"}) {
		t.Errorf("a checkpoint of NoLevelShift restored with the watch: changed %v, want [level_shift]", back.ConfigChanged())
	}
	// The calibration over the horizon scored the corrected forecasts: kept
	// with the correction, started again without it.
	scored := func(l *Learner) bool {
		return slices.ContainsFunc(l.cal.n, func(n int) bool { return n > 0 }) || l.cal.live
	}
	if !scored(kept) || scored(dropped) {
		t.Errorf("calibration over the horizon: scores or a live shadow kept %v, after the drop %v; want true, false", scored(kept), scored(dropped))
	}
}

// TestShiftStartedNotAtAReChoice: when the errors show a shift at the very
// sample whose re-choice replaces the model, the new model watches afresh
// and no correction is reported started. Two learners differ only in
// Warmup (200 and 400: the same re-choices up to 128 values, then at 200
// for one and 256 for the other), so they predict alike up to the 200th
// value; on this series (seed 4, a step of 5 from value 190) the watch
// starts at that value, which the twin without a re-choice there reports.
func TestShiftStartedNotAtAReChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	l, _ := NewLearner(autoConfig())
	twinCfg := autoConfig()
	twinCfg.Warmup = 400
	twin, _ := NewLearner(twinCfg)
	for i := range 200 {
		y := 10 + rng.NormFloat64()
		if i >= 189 {
			y += 5
		}
		res, err := l.Observe(Observation{T: int64(i), Y: y})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := twin.Observe(Observation{T: int64(i), Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if res.Prediction != tr.Prediction {
			t.Fatalf("value %d: the twins predict %v and %v", i+1, res.Prediction, tr.Prediction)
		}
		if i < 199 {
			continue
		}
		if !tr.ShiftStarted || twin.LevelShift() == 0 {
			t.Fatalf("the premise: the twin without a re-choice starts a correction at value 200 (started %v, correction %v)", tr.ShiftStarted, twin.LevelShift())
		}
		if res.ShiftStarted || l.LevelShift() != 0 {
			t.Errorf("at the re-choice: ShiftStarted %v, correction %v; want false, 0", res.ShiftStarted, l.LevelShift())
		}
	}
}

// TestGapFillKeepsTheCorrection: while a level-shift correction applies,
// a missing value is filled in as the published forecast of its step would
// have it, the correction included, not by the model's uncorrected
// prediction (which would drag the lags back below the shifted level).
func TestGapFillKeepsTheCorrection(t *testing.T) {
	l, want, c := correctedNext(t)
	if n := l.fillGap(l.lastT, l.lastT+2); n != 1 {
		t.Fatalf("filled %d values of a gap of one", n)
	}
	if l.lastZ != want {
		t.Errorf("filled level %v, want %v (the corrected prediction; uncorrected %v)", l.lastZ, want, want-l.yScale*c)
	}
}

// TestGrossErrorStandInKeepsTheCorrection: while a level-shift correction
// applies, a gross error's stand-in in the lags is the prediction as
// published, the correction included.
func TestGrossErrorStandInKeepsTheCorrection(t *testing.T) {
	l, want, c := correctedNext(t)
	res, err := l.Observe(Observation{T: 186, Y: 1e6})
	if err != nil || !res.Outlier || res.Weight != 0 {
		t.Fatalf("1e6: %v, outlier %v, weight %v", err, res.Outlier, res.Weight)
	}
	if l.lastZ != want {
		t.Errorf("stand-in level %v, want %v (the corrected prediction; uncorrected %v)", l.lastZ, want, want-l.yScale*c)
	}
}

// correctedNext returns the learner of TestLevelShiftIsCorrected's series
// 35 values after the shift, with a correction c applying, and want, the
// level of its next value's corrected prediction (the inputs held, the
// calendar's for its time).
func correctedNext(t *testing.T) (l *Learner, want, c float64) {
	t.Helper()
	l, _ = NewLearner(autoConfig())
	for i, y := range shiftedNoise(186) {
		if _, err := l.Observe(Observation{T: int64(i), Y: y}); err != nil {
			t.Fatal(err)
		}
	}
	if c = l.shift.correction(); c == 0 {
		t.Fatal("no correction 35 values after the shift")
	}
	copy(l.uNorm, l.hist.LastInputs())
	l.calendarNorm(l.uNorm, l.StepTime(l.lastT, 1))
	l.hist.Regressor(l.x, l.uNorm)
	return l, l.levelBase() + l.yLoc + l.yScale*(l.model.Predict(l.x)+c), c
}
