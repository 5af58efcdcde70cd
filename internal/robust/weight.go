package robust

import (
	"errors"
	"fmt"
	"math"
)

// WeightFunc names a weight function v(r) of the standardised residual r = e/ŝ
// for weighted LS-SVM (book §5.3; De Brabanter et al. 2009 for Huber,
// logistic and Myriad).
type WeightFunc int

const (
	// Hampel: v = 1 for |r| ≤ c1, (c2 − |r|)/(c2 − c1) for c1 < |r| ≤ c2,
	// Floor beyond (book §5.3: c1 = 2.5, c2 = 3, floor 10⁻⁴).
	Hampel WeightFunc = iota
	// Huber: v = min(1, c1/|r|).
	Huber
	// Logistic: v = tanh(r)/r, v(0) = 1. It has no parameter.
	Logistic
	// Myriad: v = δ²/(δ² + r²) with δ = c1 (in units of ŝ).
	Myriad
)

var weightFuncNames = [...]string{Hampel: "hampel", Huber: "huber", Logistic: "logistic", Myriad: "myriad"}

// ErrUnknownWeightFunc is wrapped by ParseWeightFunc for a name it does not know.
var ErrUnknownWeightFunc = errors.New("robust: unknown weight function")

// String returns the name ParseWeightFunc accepts, or "WeightFunc(n)".
func (f WeightFunc) String() string {
	if f >= 0 && int(f) < len(weightFuncNames) {
		return weightFuncNames[f]
	}
	return fmt.Sprintf("WeightFunc(%d)", int(f))
}

// ParseWeightFunc maps "hampel", "huber", "logistic" or "myriad" (exactly, in
// lower case) to its WeightFunc. Any other name gives an error wrapping
// ErrUnknownWeightFunc.
func ParseWeightFunc(s string) (WeightFunc, error) {
	for f, name := range weightFuncNames {
		if s == name {
			return WeightFunc(f), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want hampel, huber, logistic or myriad)", ErrUnknownWeightFunc, s)
}

// Defaults of the book (§5.3).
const (
	DefaultC1    = 2.5
	DefaultC2    = 3.0
	DefaultFloor = 1e-4
)

// DefaultWeights returns the book's Hampel weights: c1 = 2.5, c2 = 3, floor 10⁻⁴.
func DefaultWeights() Weights {
	return Weights{Func: Hampel, C1: DefaultC1, C2: DefaultC2, Floor: DefaultFloor}
}

// Weights is a weight function with its parameters. The zero value is not
// valid (C1 = 0); start from DefaultWeights.
type Weights struct {
	Func WeightFunc
	// C1 is Hampel's c1, the Huber threshold, or the Myriad δ; unused by
	// Logistic. In units of ŝ.
	C1 float64
	// C2 is Hampel's c2 (> C1); the other weight functions do not use it
	// (callers may still use it, as streamd's learner does for flagging
	// outliers).
	C2 float64
	// Floor is the least weight, in [0, 1): every weight is clamped to
	// [Floor, 1], and Hampel gives Floor beyond c2. The book uses 10⁻⁴ so that
	// the dual system's diagonal 1/(γ v_k) stays finite; a zero floor drops
	// such samples, which the primal ridge form of docs/design.md, "The model" tolerates.
	Floor float64
}

// Validate reports the first problem with w, or nil.
func (w Weights) Validate() error {
	finitePos := func(v float64) bool { return v > 0 && !math.IsInf(v, 1) }
	switch w.Func {
	case Hampel:
		if !finitePos(w.C1) {
			return fmt.Errorf("robust: hampel c1 must be finite and > 0 (got %v)", w.C1)
		}
		if !(w.C2 > w.C1) || math.IsInf(w.C2, 1) {
			return fmt.Errorf("robust: hampel c2 must be finite and > c1 = %v (got %v)", w.C1, w.C2)
		}
	case Huber, Myriad:
		if !finitePos(w.C1) {
			return fmt.Errorf("robust: %v c1 must be finite and > 0 (got %v)", w.Func, w.C1)
		}
	case Logistic:
	default:
		return fmt.Errorf("robust: unknown weight function %v", w.Func)
	}
	if !(w.Floor >= 0 && w.Floor < 1) {
		return fmt.Errorf("robust: weight floor must be in [0, 1) (got %v)", w.Floor)
	}
	return nil
}

// Weight returns the weight v ∈ [Floor, 1] of the standardised residual
// r = e/ŝ (book §5.3; see the WeightFunc constants for the formulas).
// Non-finite r gets Floor: an absurd residual gets the least weight, never
// NaN. Weight is even in r, O(1) and does not allocate. w should have passed
// Validate; with invalid C1, C2 the result is meaningless but, for a Floor in
// [0, 1), still in [Floor, 1] and never NaN. It panics for an unknown Func.
func (w Weights) Weight(r float64) float64 {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return w.Floor
	}
	a := math.Abs(r)
	var v float64
	switch w.Func {
	case Hampel:
		switch {
		case a <= w.C1:
			v = 1
		case a <= w.C2:
			v = (w.C2 - a) / (w.C2 - w.C1)
		default:
			v = 0 // → Floor
		}
	case Huber:
		v = 1
		if a > w.C1 {
			v = w.C1 / a
		}
	case Logistic:
		v = 1
		if a != 0 {
			v = math.Tanh(a) / a // even: tanh(r)/r = tanh(|r|)/|r|
		}
	case Myriad:
		// δ²/(δ² + r²) written as 1/(1 + (r/δ)²) so that neither square
		// overflows for large δ; (r/δ)² = +Inf gives 0 → Floor.
		q := a / w.C1
		v = 1 / (1 + q*q)
	default:
		panic(fmt.Sprintf("robust: Weight with unknown weight function %v", w.Func))
	}
	if !(v >= w.Floor) { // also NaN from invalid parameters
		return w.Floor
	}
	return min(v, 1)
}
