package online

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// flatThenRamp is 80 values of 5, then a ramp rising 0.5 a value (5.5,
// 6, …) to n values, with a glitch (50) at value glitch when glitch > 0.
func flatThenRamp(n, glitch int) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = 5 + 0.5*float64(max(i-79, 0))
	}
	if glitch > 0 {
		y[glitch-1] = 50
	}
	return y
}

// TestFlatValuesStartAfresh: a series that was constant when its structure
// was chosen keeps its values (flat), a glitch leaves it so, and the first
// value that varies and is not a glitch starts it afresh as a young series
// (restart), which follows a ramp where the model chosen on the constant
// did not: at value 90, ten values into the ramp, its young forecast's next
// step (10.5)
// within two values' rise (1.0); the model chosen on the constant
// forecast 5.55 there, the ramp 5 values behind it.
func TestFlatValuesStartAfresh(t *testing.T) {
	cfg := autoConfig()
	cfg.Combine = CombineTheta // as the defaults: a young series' forecasts are the theta method's
	for _, glitch := range []int{0, 60} {
		l, err := NewLearner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		y := flatThenRamp(100, glitch)
		restarts := 0
		for i, v := range y {
			o := Observation{T: int64(i + 1), Y: v}
			res, err := l.Observe(o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Restarted {
				restarts++
			}
			switch n := i + 1; {
			case n == 80:
				if !l.Fitted() || !l.flatY || len(l.warmY) != 80 || l.seen != 80 {
					t.Fatalf("glitch %d, after 80 constants: fitted %v, flat y %v, %d values kept, %d seen; want fitted, flat, all 80 kept",
						glitch, l.Fitted(), l.flatY, len(l.warmY), l.seen)
				}
			case n == 81:
				// The first varying value, 5.5, differs from the constant by a
				// tenth of its magnitude, less than flatGross times it: not a
				// glitch, so the series starts afresh at once, having seen the
				// last restartKeep constants and this value. (The glitch, 50,
				// differs by nine times it.)
				if !res.Restarted || l.seen != restartKeep+1 {
					t.Fatalf("glitch %d, value 81: restarted %v, %d seen; want a restart, %d seen", glitch, res.Restarted, l.seen, restartKeep+1)
				}
			case n == 90:
				if l.seen >= 90 {
					t.Errorf("glitch %d: %d values seen at value 90, want a restart since the change", glitch, l.seen)
				}
				if len(res.Forecast) == 0 || math.Abs(res.Forecast[0].Mean-10.5) > 1 {
					t.Errorf("glitch %d, at value 90: forecast %+v, want step 1 within 1 of 10.5", glitch, res.Forecast)
				}
			}
		}
		if restarts != 1 {
			t.Errorf("glitch %d: %d results say Restarted, want 1", glitch, restarts)
		}
	}
}

// A constant 0 has no magnitude to judge a change by: its first change,
// however large, restarts the series at once, the new value kept as it
// is (not gated as a gross error and replaced by the constant).
func TestFlatZeroRestartsAtOnce(t *testing.T) {
	cfg := autoConfig()
	cfg.Combine = CombineTheta
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		if _, err := l.Observe(Observation{T: int64(i + 1), Y: 0}); err != nil {
			t.Fatal(err)
		}
	}
	if !l.Fitted() || !l.flatY {
		t.Fatalf("after 80 zeros: fitted %v, flat y %v; want both", l.Fitted(), l.flatY)
	}
	res, err := l.Observe(Observation{T: 81, Y: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Restarted || res.Outlier || l.seen != restartKeep+1 || l.warmY[len(l.warmY)-1] != 1000 {
		t.Errorf("value 81 (1000 after zeros): restarted %v, outlier %v, %d seen, last kept %v; want a restart, %d seen, 1000 kept",
			res.Restarted, res.Outlier, l.seen, l.warmY[len(l.warmY)-1], restartKeep+1)
	}
}

// TestFlatInputChoosesAgain: an input constant at a re-choice has no
// effect the model could learn; its first change before the last
// re-choice chooses the structure again, with it, though another input
// never varies (an unused column). y = 10 + 3u + noise of std 0.1, u = 0
// for 140 values (past the re-choice at 128), then random 0/1: the
// one-step errors over values 160–200 average below 0.5 (the noise's mean
// absolute value is 0.08; ignoring u errs by 1.5 on average, half the
// effect).
func TestFlatInputChoosesAgain(t *testing.T) {
	cfg := autoConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0}, {0}}
	cfg.Planned = []int{0, 1}
	cfg.Warmup = 500
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	var sum float64
	var n int
	changed := false
	for i := range 200 {
		u := 0.0
		if i >= 140 {
			u = float64(rng.IntN(2))
		}
		y := 10 + 3*u + 0.1*rng.NormFloat64()
		o := Observation{T: int64(i + 1), Y: y, U: []float64{0, u}}
		if i == 139 && !slices.Equal(l.flatInputs, []int{0, 1}) {
			t.Fatalf("after 140 values with both inputs at 0: flat inputs %v, want [0 1]", l.flatInputs)
		}
		heavy := l.Heavy(o)
		res, err := l.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		if i >= 140 && u != 0 && !changed {
			changed = true
			if !slices.Equal(l.flatInputs, []int{0}) || !heavy {
				t.Fatalf("value %d, the first u = 1: flat inputs %v after it, Heavy %v before; want [0] (chosen again), true", i+1, l.flatInputs, heavy)
			}
		}
		if i+1 >= 160 {
			sum += math.Abs(y - res.Prediction)
			n++
		}
	}
	if mae := sum / float64(n); !(mae < 0.5) {
		t.Errorf("one-step MAE %g over values 160–200, want below 0.5", mae)
	}
}

// TestFlatRestoreIsBitIdentical: a checkpoint restores what the values
// kept say of a flat series, and the restored Learner goes on to the bit:
// a constant with a ramp (restarted at the same value), also cut just
// after a gated glitch on the constant (its run of gross errors in the
// checkpoint); a constant in logs
// with a glitch after its last re-choice (the glitch kept as the constant,
// not as the log form's prediction of it, an ulp off: no restart later);
// an input that never varies and a y that gets stuck after the last
// re-choice (nothing to watch: the values are released).
func TestFlatRestoreIsBitIdentical(t *testing.T) {
	logs := autoConfig()
	logs.Forms = []Form{{Log: true}}
	for _, c := range []struct {
		name string
		cfg  Config
		n    int
		cuts []int
		obs  func(i int) Observation
	}{
		{"glitch run", autoConfig(), 120, []int{60}, func(i int) Observation { return Observation{T: int64(i + 1), Y: flatThenRamp(120, 60)[i]} }},
		{"ramp", autoConfig(), 120, []int{70, 80}, func(i int) Observation { return Observation{T: int64(i + 1), Y: flatThenRamp(120, 0)[i]} }},
		{"log glitch", logs, 520, []int{240, 300}, func(i int) Observation {
			y := 0.1
			if i == 249 {
				y = 1
			}
			return Observation{T: int64(i + 1), Y: y}
		}},
		{"stuck y", func() Config { c := autoConfig(); c.Model.Embedding.InputLags = [][]int{{0}}; return c }(), 460, []int{150, 425}, func(i int) Observation {
			y := 10 + math.Sin(float64(i)/3)
			if i >= 200 && i < 430 {
				y = 10
			}
			return Observation{T: int64(i + 1), Y: y, U: []float64{0}}
		}},
	} {
		for _, cut := range c.cuts {
			a, _ := NewLearner(c.cfg)
			for i := range cut {
				if _, err := a.Observe(c.obs(i)); err != nil {
					t.Fatal(err)
				}
			}
			snap, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := NewLearner(c.cfg)
			if err := b.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
			if b.flatY != a.flatY || !slices.Equal(b.flatInputs, a.flatInputs) {
				t.Fatalf("%s, cut %d: flat y %v inputs %v restored as %v %v", c.name, cut, a.flatY, a.flatInputs, b.flatY, b.flatInputs)
			}
			restarts := 0
			for i := cut; i < c.n; i++ {
				ra, _ := a.Observe(c.obs(i))
				rb, err := b.Observe(c.obs(i))
				if err != nil || !reflect.DeepEqual(ra, rb) {
					t.Fatalf("%s, cut %d, value %d: %+v vs restored %+v (%v)", c.name, cut, i+1, ra, rb, err)
				}
				if ra.Restarted {
					restarts++
				}
			}
			if want := map[string]int{"ramp": 1, "glitch run": 1}[c.name]; restarts != want {
				t.Errorf("%s, cut %d: %d restarts after the cut, want %d", c.name, cut, restarts, want)
			}
		}
	}
}

// TestConstantSeriesDoesNotFallBack: a constant series averaged with the
// theta method, whose std there is 0, publishes the average, not the
// partner's fallback (wilder compares only with a partner that has a
// spread).
func TestConstantSeriesDoesNotFallBack(t *testing.T) {
	cfg := autoConfig()
	cfg.Combine = CombineTheta
	l, _ := NewLearner(cfg)
	fallbacks := 0
	for i := range 120 {
		res, err := l.Observe(Observation{T: int64(i + 1), Y: 5})
		if err != nil {
			t.Fatal(err)
		}
		if res.Fitted && res.Fallback || slices.ContainsFunc(res.Forecast, func(s ForecastStep) bool { return res.Fitted && s.Fallback }) {
			fallbacks++
		}
	}
	if fallbacks > 0 {
		t.Errorf("%d results of a constant series fell back", fallbacks)
	}
}
