package narx

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestKernelGradAgainstDifferences: GradAdd is ∂K(s, x)/∂x for every kernel
// type, against central differences (step 1e-6: truncation O(1e-12) for
// these smooth kernels, rounding O(1e-10) relative; tolerance 1e-6).
func TestKernelGradAgainstDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 4
	for _, k := range []Kernel{{Type: RBF, Sigma2: 3}, {Type: Linear}, {Type: Polynomial, Degree: 3, Offset: 1}, {Type: LinearRBF, Sigma2: 2}} {
		s, x := make([]float64, n), make([]float64, n)
		for i := range s {
			s[i], x[i] = rng.NormFloat64(), rng.NormFloat64()
		}
		g := make([]float64, n)
		k.GradAdd(g, 1.5, k.Eval(s, x), s, x)
		for i := range x {
			const h = 1e-6
			xi := x[i]
			x[i] = xi + h
			up := k.Eval(s, x)
			x[i] = xi - h
			down := k.Eval(s, x)
			x[i] = xi
			want := 1.5 * (up - down) / (2 * h)
			if math.Abs(g[i]-want) > 1e-6*max(1, math.Abs(want)) {
				t.Errorf("%v: ∂K/∂x_%d = %g, differences %g", k.Type, i, g[i], want)
			}
		}
	}
}

// TestLinearRBFIsTheSum: K(x, z) = xᵀz/n + exp(−‖x−z‖²/σ²) (closed form),
// and its Gram matrix is positive semi-definite (smallest eigenvalue above
// −1e-12 of the largest), as a sum of two such kernels must be.
func TestLinearRBFIsTheSum(t *testing.T) {
	k := Kernel{Type: LinearRBF, Sigma2: 2}
	x, z := []float64{1, 2}, []float64{0.5, -1}
	want := (0.5-2)/2 + math.Exp(-(0.25+9)/2)
	if got := k.Eval(x, z); math.Abs(got-want) > 1e-15 {
		t.Errorf("K = %v, want %v", got, want)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const m, n = 30, 3
	pts := make([]float64, m*n)
	for i := range pts {
		pts[i] = rng.NormFloat64()
	}
	g := mat.NewSymDense(m, nil)
	col := make([]float64, m)
	for j := range m {
		k.Column(col, pts, pts[j*n:(j+1)*n])
		for i := range col {
			g.SetSym(i, j, col[i])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(g, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	if vals[0] < -1e-12*vals[m-1] {
		t.Errorf("smallest eigenvalue %g (largest %g)", vals[0], vals[m-1])
	}
	if k.Type.String() != "linear+rbf" {
		t.Errorf("name %q", k.Type.String())
	}
}

// TestColumnIsEval: a kernel column is its entries' Eval bit for bit, for
// column lengths that leave each remainder of four and a zero distance (the
// point itself) included. The RBF column computes four distances at a time
// (sqDists), which is what this checks; the other kernels' columns call
// Eval and are listed so that a future fast path is held to the same.
func TestColumnIsEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 7
	for _, k := range []Kernel{{Type: RBF, Sigma2: 3}, {Type: Linear}, {Type: LinearRBF, Sigma2: 0.5}, {Type: Polynomial, Degree: 2, Offset: 1}} {
		for m := 1; m <= 9; m++ {
			pts := make([]float64, m*n)
			for i := range pts {
				pts[i] = rng.NormFloat64()
			}
			x := pts[(m-1)*n:]
			col := make([]float64, m)
			k.Column(col, pts, x)
			for i := range col {
				if want := k.Eval(pts[i*n:(i+1)*n], x); math.Float64bits(col[i]) != math.Float64bits(want) {
					t.Errorf("%v, m = %d: column[%d] = %v, Eval %v", k.Type, m, i, col[i], want)
				}
			}
		}
	}
}

func BenchmarkColumn(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	const m, n = 100, 20
	pts := make([]float64, m*n)
	for i := range pts {
		pts[i] = rng.NormFloat64()
	}
	x, col := pts[:n], make([]float64, m)
	k := Kernel{Type: RBF, Sigma2: 40}
	for b.Loop() {
		k.Column(col, pts, x)
	}
}
