package robust

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// refQuantile7 is the type-7 quantile of an ascending slice, written out from
// Hyndman & Fan (1996), definition 7 (R's quantile default).
func refQuantile7(sorted []float64, p float64) float64 {
	n := len(sorted)
	h := float64(n-1) * p
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	if h == lo {
		return sorted[i]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

func sortedFinite(x []float64) []float64 {
	var w []float64
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			w = append(w, v)
		}
	}
	slices.Sort(w)
	return w
}

func TestIQRScaleOneToN(t *testing.T) {
	// Closed form: for 1..n, type-7 Q(p) = 1 + (n−1)p, so IQR = (n−1)/2. Every
	// intermediate is a multiple of 1/4 below 2⁵³, so equality is exact.
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 4, 5, 10, 101, 1000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i + 1)
		}
		rng.Shuffle(n, func(i, j int) { x[i], x[j] = x[j], x[i] })
		want := float64(n-1) / 2 / 1.349
		if got := IQRScale(x, nil); got != want {
			t.Errorf("n=%d: IQRScale = %v, want %v", n, got, want)
		}
	}
}

func TestScaleDegenerate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, x := range [][]float64{nil, {}, {3}, {nan}, {inf, 5, -inf, nan}, {7, 7, 7, 7}} {
		if got := IQRScale(x, nil); got != 0 {
			t.Errorf("IQRScale(%v) = %v, want 0", x, got)
		}
		if got := MADScale(x, nil); got != 0 {
			t.Errorf("MADScale(%v) = %v, want 0", x, got)
		}
	}
	// Non-finite values are skipped: the finite values 1..5 remain.
	x := []float64{nan, 5, 1, inf, 3, -inf, 2, 4}
	if got, want := IQRScale(x, nil), 2/1.349; got != want {
		t.Errorf("IQRScale with non-finite = %v, want %v", got, want)
	}
}

func TestMADScaleKnown(t *testing.T) {
	// Hand-computed; the factor is 1.483 (docs/design.md, "The model"), so 1.483·MAD exactly.
	for _, c := range []struct {
		name string
		x    []float64
		mad  float64
	}{
		// Median 2; |x−2| = {1,1,0,0,2,4,7} → median 1 (Wikipedia "Median absolute deviation").
		{"odd", []float64{1, 1, 2, 2, 4, 6, 9}, 1},
		// Median 2.5; |x−2.5| = {1.5, .5, .5, 1.5} → type-7 median 1.
		{"even", []float64{4, 1, 3, 2}, 1},
		// Median 10; deviations {10,9,0,0,90} → 9; the outlier does not matter.
		{"outlier", []float64{0, 1, 10, 10, 100}, 9},
		// Median 0.5, deviations all 0.5.
		{"two", []float64{0, 1}, 0.5},
		// Median 3; deviations {3,2,0,1,97,0} → sorted {0,0,1,2,3,97} → (1+2)/2.
		{"even-interp", []float64{0, 1, 3, 4, 100, 3}, 1.5},
	} {
		if got, want := MADScale(c.x, nil), 1.483*c.mad; got != want {
			t.Errorf("%s: MADScale = %v, want %v", c.name, got, want)
		}
	}
}

func TestScaleNormalSample(t *testing.T) {
	// For N(0, σ²) both estimators are consistent for σ with asymptotic
	// standard error ≈ 1.166σ/√n (IQR: var = 2(p(1−p) − p²)/(n φ(z)²)/1.349²
	// with p = 1/4, z = 0.6745; MAD: 1.3605σ²/n). The bound is 4 standard
	// errors plus the 0.03 % bias of the rounded constants; the seed is fixed,
	// so this is deterministic, and a wrong constant (e.g. 1.4826 → 1) or
	// quartile breaks it by far more.
	const n, sigma = 100000, 3.0
	rng := rand.New(rand.NewPCG(7, 11))
	x := make([]float64, n)
	for i := range x {
		x[i] = 5 + sigma*rng.NormFloat64()
	}
	tol := 4*1.166*sigma/math.Sqrt(n) + 3e-4*sigma
	scratch := make([]float64, n)
	for name, got := range map[string]float64{"IQR": IQRScale(x, scratch), "MAD": MADScale(x, scratch)} {
		if math.Abs(got-sigma) > tol {
			t.Errorf("%s scale = %v, want σ = %v ± %.4f", name, got, sigma, tol)
		}
	}
}

func TestScaleDoesNotModifyInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float64, 50)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	orig := slices.Clone(x)
	for _, scratch := range [][]float64{nil, make([]float64, 10), make([]float64, 0, 50), make([]float64, 80)} {
		IQRScale(x, scratch)
		MADScale(x, scratch)
		TrimmedMean(x, scratch, 0.1, 0.2)
		if !slices.Equal(x, orig) {
			t.Fatalf("input modified with len(scratch)=%d cap=%d", len(scratch), cap(scratch))
		}
	}
}

func TestTrimmedMeanAgainstSort(t *testing.T) {
	// Hand value: 1..10 with (0.1, 0.2): drop {1} and {9, 10}, mean of 2..8 = 5.
	x := []float64{3, 9, 1, 10, 2, 8, 4, 7, 5, 6}
	if got := TrimmedMean(x, nil, 0.1, 0.2); got != 5 {
		t.Errorf("TrimmedMean(1..10, .1, .2) = %v, want 5", got)
	}
	// Book §5.3 style: (0, β2) on squared errors; 20 % of 5 drops the largest.
	if got := TrimmedMean([]float64{1, 4, 0, 9, 1e6}, nil, 0, 0.2); got != 3.5 {
		t.Errorf("TrimmedMean squared errors = %v, want 3.5", got)
	}
	// Reference: sort, drop ⌊β1 n⌋ and ⌊β2 n⌋, sum ascending. Same summation
	// order, so equality is exact.
	rng := rand.New(rand.NewPCG(5, 6))
	scratch := make([]float64, 300)
	for trial := range 2000 {
		n := 1 + rng.IntN(300)
		x := make([]float64, n)
		for i := range x {
			switch rng.IntN(10) {
			case 0:
				x[i] = math.NaN()
			case 1:
				x[i] = float64(rng.IntN(3)) // ties
			default:
				x[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
			}
		}
		b1 := rng.Float64() * 0.5
		b2 := rng.Float64() * (0.999 - b1)
		w := sortedFinite(x)
		want := 0.0
		if m := len(w); m > 0 {
			kept := w[int(math.Floor(b1*float64(m))) : m-int(math.Floor(b2*float64(m)))]
			for _, v := range kept {
				want += v
			}
			want /= float64(len(kept))
		}
		if got := TrimmedMean(x, scratch, b1, b2); got != want {
			t.Fatalf("trial %d (n=%d, β=%v,%v): got %v, want %v", trial, n, b1, b2, got, want)
		}
	}
}

func TestTrimmedMeanPanics(t *testing.T) {
	for _, b := range [][2]float64{{-0.1, 0}, {0, -1e-300}, {0.5, 0.5}, {1, 0}, {math.NaN(), 0}, {0, math.NaN()}, {0.7, 0.4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("TrimmedMean(β=%v) did not panic", b)
				}
			}()
			TrimmedMean([]float64{1, 2, 3}, nil, b[0], b[1])
		}()
	}
	// Edges that are valid.
	if got := TrimmedMean([]float64{1, 2, 3}, nil, 0.999, 0); got != 3 {
		t.Errorf("TrimmedMean(β1=.999) = %v, want 3", got)
	}
	if got := TrimmedMean(nil, nil, 0.1, 0.1); got != 0 {
		t.Errorf("TrimmedMean(nil) = %v, want 0", got)
	}
}

func TestSampleFuncsNoAlloc(t *testing.T) {
	x := make([]float64, 257)
	for i := range x {
		x[i] = math.Sin(float64(i))
	}
	scratch := make([]float64, len(x))
	var sink float64
	for name, f := range map[string]func(){
		"IQRScale":    func() { sink += IQRScale(x, scratch) },
		"MADScale":    func() { sink += MADScale(x, scratch) },
		"TrimmedMean": func() { sink += TrimmedMean(x, scratch, 0.1, 0.1) },
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per run with scratch, want 0", name, a)
		}
	}
	_ = sink
}

// Select agrees with sorting for every k, on values with many ties and on
// distinct ones, whatever their order.
func TestSelectMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 3, 7, 64, 513} {
		for _, ties := range []bool{false, true} {
			a := make([]float64, n)
			for i := range a {
				if ties {
					a[i] = float64(rng.IntN(4))
				} else {
					a[i] = rng.NormFloat64()
				}
			}
			sorted := slices.Clone(a)
			slices.Sort(sorted)
			for k := range n {
				b := slices.Clone(a)
				if got := Select(b, k); got != sorted[k] {
					t.Fatalf("n %d ties %v: Select(%d) = %v, sorted %v", n, ties, k, got, sorted[k])
				}
			}
		}
	}
}
