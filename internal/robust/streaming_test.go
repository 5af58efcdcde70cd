package robust

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// checkTree verifies the AVL invariants (order by (value, index), sizes,
// heights, balance) and that the tree holds exactly the ring's slots.
func checkTree(t *testing.T, s *StreamingScale) {
	t.Helper()
	tr := &s.tree
	seen := make([]bool, len(tr.nodes))
	var walk func(i int32, lo, hi int32) (size, height int32)
	walk = func(i int32, lo, hi int32) (int32, int32) {
		if i == nilNode {
			return 0, 0
		}
		if seen[i] {
			t.Fatalf("node %d reached twice", i)
		}
		seen[i] = true
		if lo != nilNode && !tr.less(lo, i) || hi != nilNode && !tr.less(i, hi) {
			t.Fatalf("node %d out of order", i)
		}
		ls, lh := walk(tr.nodes[i].left, lo, i)
		rs, rh := walk(tr.nodes[i].right, i, hi)
		n := tr.nodes[i]
		if n.size != ls+rs+1 || n.height != max(lh, rh)+1 || lh-rh > 1 || rh-lh > 1 {
			t.Fatalf("node %d: size %d height %d, children (%d,%d) (%d,%d)", i, n.size, n.height, ls, lh, rs, rh)
		}
		return n.size, n.height
	}
	if size, _ := walk(tr.root, nilNode, nilNode); int(size) != s.n {
		t.Fatalf("tree holds %d nodes, Len() = %d", size, s.n)
	}
	for k := range s.n {
		if slot := (s.head + k) % len(tr.nodes); !seen[slot] {
			t.Fatalf("ring slot %d missing from the tree", slot)
		}
	}
}

// streamValues returns n values mixing the cases that break order-statistic
// structures: ties on a small grid, constant runs, ±0, huge spikes, and
// non-finite values (to be ignored).
func streamValues(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 99))
	x := make([]float64, 0, n)
	for len(x) < n {
		run := 1 + rng.IntN(40)
		switch rng.IntN(6) {
		case 0: // constant run
			c := float64(rng.IntN(5))
			for range run {
				x = append(x, c)
			}
		case 1: // ties on a coarse grid
			for range run {
				x = append(x, float64(rng.IntN(7))/2-1.5)
			}
		case 2: // signed zeros
			for range run {
				x = append(x, math.Copysign(0, rng.Float64()-0.5))
			}
		case 3: // spikes and non-finite
			for range run {
				switch rng.IntN(5) {
				case 0:
					x = append(x, math.NaN())
				case 1:
					x = append(x, math.Inf(2*rng.IntN(2)-1))
				default:
					x = append(x, 1e12*rng.NormFloat64())
				}
			}
		default:
			for range run {
				x = append(x, 10+3*rng.NormFloat64())
			}
		}
	}
	return x[:n]
}

func TestStreamingScaleAgainstRecompute(t *testing.T) {
	// Every step: Scale and Quantile against IQRScale/MADScale and a sorted
	// copy of the window kept by the test. Both sides evaluate the same type-7
	// formula on the same multiset, so equality is exact (==).
	const steps = 10000
	ps := []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 1}
	for _, w := range []int{1, 2, 7, 200} {
		for _, kind := range []ScaleKind{ScaleIQR, ScaleMAD} {
			t.Run(fmt.Sprintf("W=%d/%v", w, kind), func(t *testing.T) {
				x := streamValues(steps, uint64(w))
				s := NewStreamingScale(w, kind)
				rng := rand.New(rand.NewPCG(uint64(w), 3))
				var window []float64 // finite values, oldest first
				scratch := make([]float64, w)
				for step, v := range x {
					s.Add(v)
					if !math.IsNaN(v) && !math.IsInf(v, 0) {
						window = append(window, v)
						if len(window) > w {
							window = window[1:]
						}
					}
					if s.Len() != len(window) {
						t.Fatalf("step %d: Len() = %d, want %d", step, s.Len(), len(window))
					}
					if step%97 == 0 || w <= 7 {
						checkTree(t, s)
					}
					var want float64
					if kind == ScaleIQR {
						want = IQRScale(window, scratch)
					} else {
						want = MADScale(window, scratch)
					}
					if got := s.Scale(); got != want {
						t.Fatalf("step %d: Scale() = %v, want %v (window %v)", step, got, want, window)
					}
					if len(window) == 0 {
						if q := s.Quantile(0.5); !math.IsNaN(q) {
							t.Fatalf("step %d: Quantile on empty window = %v, want NaN", step, q)
						}
						continue
					}
					sorted := slices.Sorted(slices.Values(window))
					for _, p := range append(ps, rng.Float64()) {
						if got, want := s.Quantile(p), refQuantile7(sorted, p); got != want {
							t.Fatalf("step %d: Quantile(%v) = %v, want %v", step, p, got, want)
						}
					}
				}
			})
		}
	}
}

func TestStreamingScaleMADTwoRuns(t *testing.T) {
	// absDev.kth against sorting |x − m| for every k, on windows whose
	// deviations are all below, all above, or balanced around the median.
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 300 {
		n := 2 + rng.IntN(60)
		s := NewStreamingScale(n, ScaleMAD)
		for range n {
			switch trial % 3 {
			case 0:
				s.Add(float64(rng.IntN(4)))
			case 1:
				s.Add(math.Exp(4 * rng.NormFloat64()))
			default:
				s.Add(-math.Exp(4 * rng.NormFloat64()))
			}
		}
		vals := s.State().Values
		m := quantile7(&s.tree, 0.5)
		d := absDev{t: &s.tree, m: m, split: s.tree.countLE(m), n: n}
		dev := make([]float64, n)
		for i, v := range vals {
			dev[i] = math.Abs(v - m)
		}
		slices.Sort(dev)
		for k := range n {
			if got := d.kth(k); got != dev[k] {
				t.Fatalf("trial %d: kth(%d) = %v, want %v", trial, k, got, dev[k])
			}
		}
	}
}

func TestStreamingScaleStateRoundTrip(t *testing.T) {
	// A restored StreamingScale must give bit-identical results thereafter.
	for _, w := range []int{1, 7, 200} {
		for _, kind := range []ScaleKind{ScaleIQR, ScaleMAD} {
			x := streamValues(3000, uint64(100+w))
			for _, at := range []int{0, 3, 1234} { // empty, partial (for W=200), full
				a := NewStreamingScale(w, kind)
				for _, v := range x[:at] {
					a.Add(v)
				}
				st := a.State()
				b, err := StreamingScaleFromState(st)
				if err != nil {
					t.Fatalf("W=%d %v at %d: %v", w, kind, at, err)
				}
				if got := b.State(); !slices.Equal(got.Values, st.Values) || got.Window != w || got.Kind != kind {
					t.Fatalf("W=%d %v at %d: state %+v, want %+v", w, kind, at, got, st)
				}
				for step, v := range x[at:] {
					a.Add(v)
					b.Add(v)
					if math.Float64bits(a.Scale()) != math.Float64bits(b.Scale()) ||
						a.Len() != b.Len() || a.Len() > 0 &&
						math.Float64bits(a.Quantile(0.37)) != math.Float64bits(b.Quantile(0.37)) {
						t.Fatalf("W=%d %v at %d: diverged %d steps later", w, kind, at, step)
					}
				}
			}
		}
	}
}

func TestStreamingScaleFromStateErrors(t *testing.T) {
	for _, st := range []StreamingScaleState{
		{Window: 0, Kind: ScaleIQR},
		{Window: -3, Kind: ScaleIQR},
		{Window: 3, Kind: ScaleKind(2)},
		{Window: 2, Kind: ScaleMAD, Values: []float64{1, 2, 3}},
		{Window: 3, Kind: ScaleMAD, Values: []float64{1, math.NaN()}},
		{Window: 3, Kind: ScaleIQR, Values: []float64{math.Inf(-1)}},
	} {
		if s, err := StreamingScaleFromState(st); err == nil || s != nil {
			t.Errorf("%+v: got %v, %v; want an error", st, s, err)
		}
	}
}

func TestStreamingScaleConstantAndReset(t *testing.T) {
	s := NewStreamingScale(5, ScaleIQR)
	if s.Scale() != 0 || s.Len() != 0 {
		t.Fatal("empty StreamingScale not zero")
	}
	for range 20 {
		s.Add(4.25)
	}
	if s.Scale() != 0 || s.Quantile(0) != 4.25 || s.Quantile(1) != 4.25 || s.Len() != 5 {
		t.Fatalf("constant window: scale %v", s.Scale())
	}
	// 1..5 after the constants: IQR = 2 (closed form as in TestIQRScaleOneToN).
	for _, v := range []float64{3, math.NaN(), 1, 5, math.Inf(1), 2, 4} {
		s.Add(v)
	}
	if got, want := s.Scale(), 2/1.349; got != want {
		t.Fatalf("1..5: Scale = %v, want %v", got, want)
	}
	s.Reset()
	if s.Len() != 0 || s.Scale() != 0 || !math.IsNaN(s.Quantile(0.5)) || s.Window() != 5 || s.Kind() != ScaleIQR {
		t.Fatal("Reset did not empty the window")
	}
	s.Add(1)
	s.Add(2)
	if got, want := s.Scale(), 0.5/1.349; got != want {
		t.Fatalf("after Reset: Scale = %v, want %v", got, want)
	}
}

func TestStreamingScalePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"window 0":   func() { NewStreamingScale(0, ScaleIQR) },
		"bad kind":   func() { NewStreamingScale(3, ScaleKind(7)) },
		"p > 1":      func() { NewStreamingScale(3, ScaleIQR).Quantile(1.5) },
		"p NaN":      func() { NewStreamingScale(3, ScaleIQR).Quantile(math.NaN()) },
		"p < 0":      func() { NewStreamingScale(3, ScaleIQR).Quantile(-0.1) },
		"window big": func() { NewStreamingScale(MaxWindow+1, ScaleIQR) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestParseScaleKind(t *testing.T) {
	for _, k := range []ScaleKind{ScaleIQR, ScaleMAD} {
		if got, err := ParseScaleKind(k.String()); err != nil || got != k {
			t.Errorf("ParseScaleKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseScaleKind("sd"); !errors.Is(err, ErrUnknownScaleKind) {
		t.Errorf("ParseScaleKind(sd): %v", err)
	}
}

func TestStreamingScaleNoAlloc(t *testing.T) {
	x := streamValues(4096, 5)
	for _, kind := range []ScaleKind{ScaleIQR, ScaleMAD} {
		s := NewStreamingScale(1000, kind)
		for _, v := range x[:2000] {
			s.Add(v)
		}
		i := 0
		var sink float64
		allocs := testing.AllocsPerRun(1000, func() {
			s.Add(x[i%len(x)])
			sink += s.Scale() + s.Quantile(0.9)
			i++
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per Add+Scale+Quantile, want 0", kind, allocs)
		}
		_ = sink
	}
}

// A window holding −0 and +0 restores to the same quantiles, signs
// included: the order of equal values follows ring slots, which a restore
// renumbers, so the zeros are kept as +0.
func TestStreamingSignedZeroRestore(t *testing.T) {
	s := NewStreamingScale(3, ScaleIQR)
	for _, x := range []float64{1, math.Copysign(0, -1), 3, 0} {
		s.Add(x)
	}
	r, err := StreamingScaleFromState(s.State())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []float64{0, 0.5, 1} {
		a, b := s.Quantile(p), r.Quantile(p)
		if math.Float64bits(a) != math.Float64bits(b) {
			t.Errorf("quantile %v: %v, restored %v", p, a, b)
		}
	}
}
