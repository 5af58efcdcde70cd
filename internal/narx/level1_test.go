package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// gpPredictiveVar is the predictive variance of y at x under the Gaussian
// process f ~ GP(0, μ⁻¹K) plus a bias with a flat prior and noise ζ⁻¹
// (Rasmussen & Williams 2006, eq. 2.42 with h(x) = 1, B⁻¹ → 0):
//
//	V = ζ⁻¹ + k** − k*ᵀC⁻¹k* + (1 − 1ᵀC⁻¹k*)²/(1ᵀC⁻¹1),
//
// C = μ⁻¹K + ζ⁻¹I, k* = μ⁻¹k(x), k** = μ⁻¹K(x,x). Computed directly with a
// Cholesky factorisation: nothing shared with the primal code.
func gpPredictiveVar(t *testing.T, kern Kernel, X []float64, n int, x []float64, mu, zeta float64) float64 {
	t.Helper()
	N := len(X) / n
	c := mat.NewSymDense(N, nil)
	ks := mat.NewVecDense(N, nil)
	ones := mat.NewVecDense(N, nil)
	for i := 0; i < N; i++ {
		for j := i; j < N; j++ {
			c.SetSym(i, j, kern.Eval(X[i*n:(i+1)*n], X[j*n:(j+1)*n])/mu)
		}
		c.SetSym(i, i, c.At(i, i)+1/zeta)
		ks.SetVec(i, kern.Eval(X[i*n:(i+1)*n], x)/mu)
		ones.SetVec(i, 1)
	}
	var ch mat.Cholesky
	if !ch.Factorize(c) {
		t.Fatal("C not positive definite")
	}
	var cik, ci1 mat.VecDense
	if err := ch.SolveVecTo(&cik, ks); err != nil {
		t.Fatal(err)
	}
	if err := ch.SolveVecTo(&ci1, ones); err != nil {
		t.Fatal(err)
	}
	r := 1 - mat.Dot(ones, &cik)
	return 1/zeta + kern.Eval(x, x)/mu - mat.Dot(ks, &cik) + r*r/mat.Dot(ones, &ci1)
}

// Level 1 against an independent computation: with M = N, no forgetting and
// every eigenpair kept, the primal predictive variance ζ⁻¹(1 + ψᵀ(A+D/γ)⁻¹ψ) +
// μ⁻¹(K(x,x) − ‖φ(x)‖²) equals the GP posterior predictive variance with the
// same kernel and hyperparameters (μ⁻¹ = γζ⁻¹), bias with a flat prior as in
// the book. Before any online residual the calibration scales are 1, so the
// model's variance is the level-1 formula itself. Tolerance 1e-8 relative:
// the primal path goes through Λ^{-1/2}, which amplifies rounding by
// √cond(Ω) ≲ 1e3 here (asserted). Points off the training region are
// included: there the Nyström term carries the variance.
func TestLevel1EqualsGaussianProcess(t *testing.T) {
	for _, tc := range []struct {
		N, n          int
		sigma2, gamma float64
	}{{30, 2, 0.5, 10}, {60, 3, 1, 100}, {100, 4, 2, 1000}} {
		t.Run(fmt.Sprintf("N=%d,n=%d", tc.N, tc.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(41, uint64(tc.N)))
			m, cfg, X, _ := fitFullRank(t, rng, tc.N, tc.n, tc.sigma2, tc.gamma)
			info := m.Info()
			zeta, mu := 1/info.NoiseVar, 1/(info.Gamma*info.NoiseVar)
			for i := 0; i < 40; i++ {
				x := make([]float64, tc.n)
				for j := range x {
					x[j] = 6*rng.Float64() - 3 // beyond the training range [−2, 2]
				}
				_, got := m.Observe(x)
				m.prepared = false
				want := gpPredictiveVar(t, cfg.Kernel, X, tc.n, x, mu, zeta)
				if math.Abs(got-want) > 1e-8*want {
					t.Errorf("x = %v: primal variance %.15g, GP %.15g", x, got, want)
				}
			}
		})
	}
}
