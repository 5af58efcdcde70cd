package robust

import (
	"errors"
	"math"
	"testing"
)

func TestWeight(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	hampel := DefaultWeights()
	huber := Weights{Func: Huber, C1: 1.345, Floor: 1e-4}
	logistic := Weights{Func: Logistic, Floor: 1e-4}
	myriad := Weights{Func: Myriad, C1: 1, Floor: 1e-4}
	myriad0 := Weights{Func: Myriad, C1: 2, Floor: 0}
	// Hand-computed values; tol is relative, 2 ulps for the ones involving a
	// division or tanh, 0 for those that are exact.
	for _, c := range []struct {
		name string
		w    Weights
		r    float64
		want float64
		tol  float64
	}{
		{"hampel 0", hampel, 0, 1, 0},
		{"hampel 1", hampel, -1, 1, 0},
		{"hampel c1", hampel, 2.5, 1, 0},
		{"hampel -c1", hampel, -2.5, 1, 0},
		{"hampel just above c1", hampel, math.Nextafter(2.5, 3), 1, 1e-15},
		{"hampel mid", hampel, 2.75, 0.5, 0},            // (3−2.75)/0.5
		{"hampel -mid", hampel, -2.6, 0.8, 2.2e-16 * 2}, // (3−2.6)/0.5
		{"hampel near c2", hampel, 2.9999, 2e-4, 1e-11}, // (3−2.9999)/0.5, cancellation
		{"hampel c2", hampel, 3, 1e-4, 0},               // formula gives 0 → floor
		{"hampel beyond", hampel, 3.5, 1e-4, 0},
		{"hampel huge", hampel, -1e300, 1e-4, 0},
		{"hampel +Inf", hampel, inf, 1e-4, 0},
		{"hampel -Inf", hampel, -inf, 1e-4, 0},
		{"hampel NaN", hampel, nan, 1e-4, 0},
		{"huber 0", huber, 0, 1, 0},
		{"huber c1", huber, 1.345, 1, 0},
		{"huber 2c1", huber, -2.69, 0.5, 0},
		{"huber 10", huber, 10, 0.1345, 2.2e-16 * 2},
		{"huber floor", huber, 1e6, 1e-4, 0}, // 1.345e-6 < floor
		{"huber NaN", huber, nan, 1e-4, 0},
		{"huber Inf", huber, inf, 1e-4, 0},
		{"logistic 0", logistic, 0, 1, 0},
		{"logistic tiny", logistic, 1e-300, 1, 0},
		{"logistic 1", logistic, 1, 0.7615941559557649, 2.2e-16 * 2},       // tanh 1
		{"logistic -2", logistic, -2, 0.9640275800758169 / 2, 2.2e-16 * 2}, // tanh 2 / 2
		{"logistic 100", logistic, 100, 0.01, 2.2e-16 * 2},                 // tanh 100 = 1
		{"logistic floor", logistic, 1e5, 1e-4, 0},                         // 1e-5 < floor
		{"logistic -Inf", logistic, -inf, 1e-4, 0},
		{"myriad 0", myriad, 0, 1, 0},
		{"myriad δ", myriad, 1, 0.5, 0},
		{"myriad 2", myriad, 2, 0.2, 2.2e-16 * 2},
		{"myriad -3", myriad, -3, 0.1, 2.2e-16 * 2},
		{"myriad δ=2 r=2", myriad0, 2, 0.5, 0},
		{"myriad floor", myriad, 1e200, 1e-4, 0}, // (r/δ)² overflows → 0 → floor
		{"myriad zero floor", myriad0, 1e200, 0, 0},
		{"myriad NaN", myriad, nan, 1e-4, 0},
	} {
		got := c.w.Weight(c.r)
		if math.IsNaN(got) || math.Abs(got-c.want) > c.tol*c.want {
			t.Errorf("%s: Weight(%v) = %v, want %v (rel tol %g)", c.name, c.r, got, c.want, c.tol)
		}
	}
}

func TestWeightRangeAndSymmetry(t *testing.T) {
	// v ∈ [floor, 1], even in r, non-increasing in |r|, on a dense grid.
	for _, w := range []Weights{
		DefaultWeights(),
		{Func: Hampel, C1: 1, C2: 1.0000001, Floor: 0.3},
		{Func: Huber, C1: 0.5, Floor: 1e-4},
		{Func: Logistic, Floor: 0},
		{Func: Myriad, C1: 1e200, Floor: 1e-4},
		{Func: Myriad, C1: 1e-200, Floor: 1e-4},
	} {
		if err := w.Validate(); err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
		prev := 1.0
		for i := range 20001 {
			r := float64(i) * 1e-3
			v := w.Weight(r)
			if !(v >= w.Floor && v <= 1) || v > prev {
				t.Fatalf("%+v: Weight(%v) = %v (previous %v)", w, r, v, prev)
			}
			if vm := w.Weight(-r); vm != v {
				t.Fatalf("%+v: Weight(%v) = %v ≠ Weight(%v) = %v", w, -r, vm, r, v)
			}
			prev = v
		}
	}
}

func TestWeightsValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	good := []Weights{
		DefaultWeights(),
		{Func: Hampel, C1: 1, C2: 2, Floor: 0},
		{Func: Huber, C1: 1.345, C2: nan, Floor: 1e-4}, // C2 unused
		{Func: Logistic, C1: -1, Floor: 0.5},           // C1 unused
		{Func: Myriad, C1: 0.1, Floor: 1e-4},
	}
	for _, w := range good {
		if err := w.Validate(); err != nil {
			t.Errorf("%+v: unexpected %v", w, err)
		}
	}
	bad := []Weights{
		{},
		{Func: Hampel, C1: 3, C2: 3, Floor: 1e-4},
		{Func: Hampel, C1: 3, C2: 2.5, Floor: 1e-4},
		{Func: Hampel, C1: 2.5, C2: inf, Floor: 1e-4},
		{Func: Hampel, C1: nan, C2: 3, Floor: 1e-4},
		{Func: Hampel, C1: 2.5, C2: 3, Floor: -1e-4},
		{Func: Hampel, C1: 2.5, C2: 3, Floor: 1},
		{Func: Hampel, C1: 2.5, C2: 3, Floor: nan},
		{Func: Huber, C1: 0, Floor: 1e-4},
		{Func: Huber, C1: inf, Floor: 1e-4},
		{Func: Myriad, C1: -1, Floor: 1e-4},
		{Func: WeightFunc(4), C1: 1, C2: 2},
		{Func: WeightFunc(-1), C1: 1, C2: 2},
	}
	for _, w := range bad {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v: Validate accepted it", w)
		}
	}
}

func TestParseWeightFunc(t *testing.T) {
	for _, f := range []WeightFunc{Hampel, Huber, Logistic, Myriad} {
		got, err := ParseWeightFunc(f.String())
		if err != nil || got != f {
			t.Errorf("ParseWeightFunc(%q) = %v, %v", f.String(), got, err)
		}
	}
	for _, s := range []string{"", "Hampel", "tukey", " huber"} {
		if _, err := ParseWeightFunc(s); !errors.Is(err, ErrUnknownWeightFunc) {
			t.Errorf("ParseWeightFunc(%q): err = %v, want ErrUnknownWeightFunc", s, err)
		}
	}
	if s := WeightFunc(9).String(); s != "WeightFunc(9)" {
		t.Errorf("String = %q", s)
	}
}

func TestWeightNoAlloc(t *testing.T) {
	var sink float64
	for _, w := range []Weights{DefaultWeights(), {Func: Huber, C1: 1.345}, {Func: Logistic}, {Func: Myriad, C1: 1}} {
		if a := testing.AllocsPerRun(100, func() { sink += w.Weight(2.7) + w.Weight(math.NaN()) }); a != 0 {
			t.Errorf("%v: %v allocations per Weight, want 0", w.Func, a)
		}
	}
	_ = sink
}
