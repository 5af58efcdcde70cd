package robust

import (
	"errors"
	"fmt"
	"math"
)

// ScaleKind selects the robust scale of a StreamingScale.
type ScaleKind int

const (
	// ScaleIQR is IQR/1.349 with type-7 quartiles (the default).
	ScaleIQR ScaleKind = iota
	// ScaleMAD is 1.483·median(|x − median(x)|).
	ScaleMAD
)

var scaleKindNames = [...]string{ScaleIQR: "iqr", ScaleMAD: "mad"}

// ErrUnknownScaleKind is wrapped by ParseScaleKind for a name it does not know.
var ErrUnknownScaleKind = errors.New("robust: unknown scale kind")

// String returns the name ParseScaleKind accepts, or "ScaleKind(n)".
func (k ScaleKind) String() string {
	if k.valid() {
		return scaleKindNames[k]
	}
	return fmt.Sprintf("ScaleKind(%d)", int(k))
}

func (k ScaleKind) valid() bool { return k >= 0 && int(k) < len(scaleKindNames) }

// ParseScaleKind maps "iqr" or "mad" to its ScaleKind; any other name gives an
// error wrapping ErrUnknownScaleKind.
func ParseScaleKind(s string) (ScaleKind, error) {
	for k, name := range scaleKindNames {
		if s == name {
			return ScaleKind(k), nil
		}
	}
	return 0, fmt.Errorf("%w %q (want iqr or mad)", ErrUnknownScaleKind, s)
}

// MaxWindow is the largest window NewStreamingScale accepts.
const MaxWindow = math.MaxInt32

// StreamingScale is an exact robust scale over a sliding window of the last W
// finite values added. It keeps the window twice: as a ring (arrival order,
// for eviction) and in an order-statistic AVL tree whose node i is ring slot
// i, so both live in one pool of W nodes allocated by NewStreamingScale
// (24·W bytes); no method but State allocates.
//
// Costs, n = Len() ≤ W:
//   - Add: O(log W) worst case (one AVL removal and one insertion);
//   - Quantile and Scale for ScaleIQR: O(log W) (four order statistics);
//   - Scale for ScaleMAD: O(log² W) — exact: the distances |x − m| of the
//     sorted window are two sorted runs (m − x₍ᵢ₎ below the median m, x₍ᵢ₎ − m
//     above), and their k-th smallest is found by a binary search over the
//     split between the runs, each probe an O(log W) order statistic.
//
// Results are functions of the multiset in the window only, evaluated with
// the same type-7 arithmetic as IQRScale and MADScale, so they equal those of
// IQRScale/MADScale on the window's values exactly (==), and a StreamingScale
// restored from State gives bit-identical results from then on.
//
// A StreamingScale is not safe for concurrent use.
type StreamingScale struct {
	kind ScaleKind
	tree osTree // node i is ring slot i
	head int    // ring slot of the oldest value
	n    int
}

// NewStreamingScale returns an empty StreamingScale over the last window
// values. It panics if window < 1 or window > MaxWindow, or kind is unknown.
func NewStreamingScale(window int, kind ScaleKind) *StreamingScale {
	if window < 1 || window > MaxWindow {
		panic(fmt.Sprintf("robust: streaming scale window must be in [1, %d] (got %d)", MaxWindow, window))
	}
	if !kind.valid() {
		panic(fmt.Sprintf("robust: unknown scale kind %v", kind))
	}
	return &StreamingScale{kind: kind, tree: newOSTree(window)}
}

// Window returns W, the capacity of the window.
func (s *StreamingScale) Window() int { return len(s.tree.nodes) }

// Kind returns the scale kind.
func (s *StreamingScale) Kind() ScaleKind { return s.kind }

// Len returns the number of values in the window, min(W, finite values added).
func (s *StreamingScale) Len() int { return s.n }

// Reset empties the window, keeping W and the kind.
func (s *StreamingScale) Reset() {
	s.tree.reset()
	s.head, s.n = 0, 0
}

// Add appends x to the window, evicting the oldest value when the window is
// full. Non-finite x (NaN, ±Inf) is ignored: it neither enters nor evicts.
// O(log W) worst case; no allocation.
func (s *StreamingScale) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	// −0 as +0: equal values are ordered by ring slot, which a restore
	// renumbers, so two zeros of different signs could swap places and a
	// quantile's sign with them.
	x += 0
	w := len(s.tree.nodes)
	var slot int
	if s.n == w {
		slot = s.head
		s.tree.remove(int32(slot))
		s.head++
		if s.head == w {
			s.head = 0
		}
	} else {
		slot = s.head + s.n
		if slot >= w {
			slot -= w
		}
		s.n++
	}
	s.tree.nodes[slot].val = x
	s.tree.insert(int32(slot))
}

// Quantile returns the type-7 quantile Q(p) of the window, or NaN when the
// window is empty. It panics unless 0 ≤ p ≤ 1. O(log W); no allocation.
func (s *StreamingScale) Quantile(p float64) float64 {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("robust: quantile p must be in [0, 1] (got %v)", p))
	}
	if s.n == 0 {
		return math.NaN()
	}
	return quantile7(&s.tree, p)
}

// Scale returns the robust scale of the window: IQR/1.349 (ScaleIQR, 0 when
// Len() < 2) or 1.483·MAD (ScaleMAD, 0 when Len() < 2), equal (==) to
// IQRScale/MADScale of the window's values. O(log W) for ScaleIQR, O(log² W)
// for ScaleMAD; no allocation.
func (s *StreamingScale) Scale() float64 {
	if s.n < 2 {
		return 0
	}
	if s.kind == ScaleIQR {
		return iqrScale(&s.tree)
	}
	m := quantile7(&s.tree, 0.5)
	d := absDev{t: &s.tree, m: m, split: s.tree.countLE(m), n: s.n}
	return MADFactor * quantile7(d, 0.5)
}

// absDev is the multiset {|x − m| : x in t} seen as the merge of two sorted
// runs of the sorted values x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎ split at split = #{x ≤ m}:
// A(i) = m − x₍split−1−i₎ (i < split) and B(j) = x₍split+j₎ − m, both
// non-decreasing because rounding is monotone, and bitwise equal to
// |x − m| because fl(x − m) = −fl(m − x).
type absDev struct {
	t        *osTree
	m        float64
	split, n int
}

func (d absDev) count() int { return d.n }

func (d absDev) a(i int) float64 { return d.m - d.t.kth(d.split-1-i) }
func (d absDev) b(j int) float64 { return d.t.kth(d.split+j) - d.m }

// kth returns the k-th smallest (0-based) of the merged runs: the least i (the
// number taken from A) with i = len A, or j = k+1−i = 0, or A(i) ≥ B(j−1);
// then the answer is max(A(i−1), B(j−1)). O(log n) probes of O(log n) each.
func (d absDev) kth(k int) float64 {
	na, nb := d.split, d.n-d.split
	lo, hi := max(0, k+1-nb), min(na, k+1)
	for lo < hi {
		i := int(uint(lo+hi) >> 1) // i < na and j ≥ 1 here
		if d.a(i) >= d.b(k-i) {    // B(j−1) with j = k+1−i
			hi = i
		} else {
			lo = i + 1
		}
	}
	i, j := lo, k+1-lo
	switch {
	case i == 0:
		return d.b(j - 1)
	case j == 0:
		return d.a(i - 1)
	}
	return max(d.a(i-1), d.b(j-1))
}

// StreamingScaleState is a snapshot of a StreamingScale: plain data for the
// caller's encoding.
type StreamingScaleState struct {
	Window int
	Kind   ScaleKind
	// Values are the window's values, oldest first; len(Values) ≤ Window.
	Values []float64
}

// State returns a snapshot of s. It allocates len = Len() values. O(W).
func (s *StreamingScale) State() StreamingScaleState {
	w := len(s.tree.nodes)
	vals := make([]float64, s.n)
	for i := range vals {
		vals[i] = s.tree.nodes[(s.head+i)%w].val
	}
	return StreamingScaleState{Window: w, Kind: s.kind, Values: vals}
}

// StreamingScaleFromState rebuilds a StreamingScale from a snapshot; it and
// the snapshotted one give bit-identical results for the same later Adds. It
// returns an error, and no StreamingScale, when the window or kind is invalid,
// there are more values than the window holds, or a value is not finite.
// O(W + n log n).
func StreamingScaleFromState(st StreamingScaleState) (*StreamingScale, error) {
	if st.Window < 1 || st.Window > MaxWindow {
		return nil, fmt.Errorf("robust: streaming scale state: window must be in [1, %d] (got %d)", MaxWindow, st.Window)
	}
	if !st.Kind.valid() {
		return nil, fmt.Errorf("robust: streaming scale state: unknown scale kind %v", st.Kind)
	}
	if len(st.Values) > st.Window {
		return nil, fmt.Errorf("robust: streaming scale state: %d values exceed the window %d", len(st.Values), st.Window)
	}
	for i, v := range st.Values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("robust: streaming scale state: value %d is not finite (%v)", i, v)
		}
	}
	s := NewStreamingScale(st.Window, st.Kind)
	for _, v := range st.Values {
		s.Add(v)
	}
	return s, nil
}
