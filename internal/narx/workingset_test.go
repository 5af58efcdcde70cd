package narx

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGreedySelectionIsPivotedCholesky checks selectGreedy against its
// definition recomputed from scratch at every step: with the members S
// chosen so far, each non-member's Nyström residual
// K(x,x) − k_S(x)ᵀΩ_S⁻¹k_S(x) from a fresh Cholesky solve of Ω_S, and the
// next member must be a row of the largest residual. The incremental
// factor and the fresh solve differ by rounding, about ε·κ(Ω_S) relative
// (κ below 1e6 for these well-spread random points at M = 15); a relative
// 1e-8 on the residuals is far above that and far below the gaps between
// the residuals of distinct random rows. Also: the members are distinct,
// and the same call gives the same rows.
func TestGreedySelectionIsPivotedCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const N, n, M = 120, 3, 15
	X := make([]float64, N*n)
	for i := range X {
		X[i] = rng.NormFloat64()
	}
	for _, kern := range []Kernel{{Type: RBF, Sigma2: 2}, {Type: LinearRBF, Sigma2: 4}} {
		idx := selectGreedy(kern, X, n, M)
		if len(idx) != M {
			t.Fatalf("%v: %d members, want %d", kern.Type, len(idx), M)
		}
		if again := selectGreedy(kern, X, n, M); !slices.Equal(idx, again) {
			t.Fatalf("%v: a second call chose %v, the first %v", kern.Type, again, idx)
		}
		seen := map[int]bool{}
		for k, p := range idx {
			if seen[p] {
				t.Fatalf("%v: row %d chosen twice", kern.Type, p)
			}
			seen[p] = true
			res := residualsFromScratch(kern, X, n, idx[:k])
			best := 0.0
			for i, r := range res {
				if !slices.Contains(idx[:k], i) {
					best = max(best, r)
				}
			}
			if res[p] < best*(1-1e-8) {
				t.Errorf("%v: member %d is row %d, residual %g; row residuals reach %g", kern.Type, k, p, res[p], best)
			}
		}
	}
}

// residualsFromScratch returns every row's Nyström residual against the
// members S (rows of X), K(x,x) − k_S(x)ᵀΩ_S⁻¹k_S(x), by a Cholesky solve.
func residualsFromScratch(kern Kernel, X []float64, n int, S []int) []float64 {
	N := len(X) / n
	res := make([]float64, N)
	row := func(i int) []float64 { return X[i*n : (i+1)*n] }
	for i := range res {
		res[i] = kern.Eval(row(i), row(i))
	}
	if len(S) == 0 {
		return res
	}
	k := len(S)
	omega := mat.NewSymDense(k, nil)
	for a := range S {
		for b := a; b < k; b++ {
			omega.SetSym(a, b, kern.Eval(row(S[a]), row(S[b])))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(omega) {
		panic("members' kernel matrix is not positive definite")
	}
	kx, sol := mat.NewVecDense(k, nil), mat.NewVecDense(k, nil)
	for i := range res {
		for a, s := range S {
			kx.SetVec(a, kern.Eval(row(i), row(s)))
		}
		if err := ch.SolveVecTo(sol, kx); err != nil {
			panic(err)
		}
		res[i] -= mat.Dot(kx, sol)
	}
	return res
}

// A linear kernel on n = 2 inputs spans 2 dimensions: the greedy selection
// pivots twice, on rows of positive residual, and fills the other members
// with the first rows not taken (the Fit's cut-off drops them) instead of
// dividing by a residual of rounding size; nothing non-finite.
func TestGreedySelectionStopsAtTheSpan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const N, n, M = 50, 2, 6
	X := make([]float64, N*n)
	for i := range X {
		X[i] = rng.NormFloat64()
	}
	kern := Kernel{Type: Linear}
	idx := selectGreedy(kern, X, n, M)
	res0 := residualsFromScratch(kern, X, n, nil)
	if r := residualsFromScratch(kern, X, n, idx[:1]); !(res0[idx[0]] > 0) || !(r[idx[1]] > 1e-6*res0[idx[0]]) {
		t.Fatalf("the first two pivots %v have residuals %g, %g", idx[:2], res0[idx[0]], r[idx[1]])
	}
	after := residualsFromScratch(kern, X, n, idx[:2])
	for i, r := range after {
		if math.Abs(r) > 1e-9*res0[idx[0]] {
			t.Fatalf("row %d keeps a residual %g after two pivots: the span is not 2-dimensional", i, r)
		}
	}
	want := []int{}
	for i := 0; len(want) < M-2; i++ {
		if i != idx[0] && i != idx[1] {
			want = append(want, i)
		}
	}
	if !slices.Equal(idx[2:], want) {
		t.Errorf("members after the span %v, want the first rows not taken %v", idx[2:], want)
	}
	m, err := NewModel(Config{Embedding: Embedding{InputLags: [][]int{{0}, {0}}}, Kernel: kern, Size: M, Gamma: 10,
		Forgetting: 1, Cutoff: 1e-10, Window: 10})
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, N)
	for i := range y {
		y[i] = X[i*n] - 2*X[i*n+1]
	}
	if err := m.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	if got := m.Info().M; got != 2 {
		t.Errorf("the fit kept %d members, want the span's 2", got)
	}
}
