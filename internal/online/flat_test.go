package online

import (
	"math"
	"math/rand/v2"
	"reflect"
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
				if !l.Fitted() || l.flat != 1 || len(l.warmY) != 80 || l.seen != 80 {
					t.Fatalf("glitch %d, after 80 constants: fitted %v, flat %d, %d values kept, %d seen; want fitted, flat 1, all 80 kept",
						glitch, l.Fitted(), l.flat, len(l.warmY), l.seen)
				}
			case n == 81:
				// The first varying value, 5.5, is a gross error of the model
				// fitted on the constant (its noise is the floor): cleaned, the
				// series stays as it was; the second and third in a row are
				// not (grossRun).
				if !l.Fitted() || l.seen != 81 {
					t.Fatalf("glitch %d, value 81: fitted %v, %d seen", glitch, l.Fitted(), l.seen)
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

// TestFlatInputChoosesAgain: an input constant at the last re-choice
// before Warmup (128 values here) has no effect the model could learn;
// its first change chooses the structure again, with it. y = 10 + 3u +
// noise of std 0.1 and u = 0 for 140 values, then random 0/1: the
// one-step errors over values 160–200 average below 0.5 (the noise's
// mean absolute value is 0.08; ignoring u errs by 1.5 on average, half
// the effect).
func TestFlatInputChoosesAgain(t *testing.T) {
	cfg := autoConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0}}
	cfg.Planned = []int{0}
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
		o := Observation{T: int64(i + 1), Y: y, U: []float64{u}}
		if i == 139 && l.flat != 2 {
			t.Fatalf("after 140 values with u = 0: flat %d, want 2 (the input)", l.flat)
		}
		heavy := l.Heavy(o)
		res, err := l.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		if i >= 140 && u != 0 && !changed {
			changed = true
			if l.flat != 0 || !heavy {
				t.Fatalf("value %d, the first u = 1: flat %d after it, Heavy %v before; want 0 (chosen again), true", i+1, l.flat, heavy)
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

// TestFlatRestoreIsBitIdentical: a checkpoint of a flat series restores it
// flat (the values kept say so), and the restored Learner restarts at the
// same value, with the same forecasts to the bit.
func TestFlatRestoreIsBitIdentical(t *testing.T) {
	y := flatThenRamp(120, 0)
	a, _ := NewLearner(autoConfig())
	for i := range 70 {
		if _, err := a.Observe(Observation{T: int64(i + 1), Y: y[i]}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewLearner(autoConfig())
	if err := b.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if b.flat != a.flat || a.flat != 1 {
		t.Fatalf("flat %d restored as %d, want 1", a.flat, b.flat)
	}
	for i := 70; i < len(y); i++ {
		o := Observation{T: int64(i + 1), Y: y[i]}
		ra, _ := a.Observe(o)
		rb, err := b.Observe(o)
		if err != nil || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("value %d: %+v vs restored %+v (%v)", i+1, ra, rb, err)
		}
	}
}
