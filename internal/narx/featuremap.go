package narx

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// featureMap is the Nyström map φ(x) = F k_S(x) (docs/design.md, "The model") with F an M×M
// matrix such that F Ω Fᵀ = I: the features are an orthonormal basis, in the
// kernel's feature space, of the span of the members' kernel functions, so
// φ(x)ᵀφ(z) = k_S(x)ᵀ Ω⁻¹ k_S(z) and the ridge ‖w‖² is the RKHS norm of
// the fitted function. Any such F gives the same model (the ridge is
// invariant under rotations of the features); F = L⁻¹ for the Cholesky
// factor L of Ω at the fit, and after that whatever the swaps' reflections
// make of it (swap.go), which is why F is kept as a dense matrix. Members
// whose kernel function lies (to the cut-off) in the span of the others are
// not kept (see nystromBasis), so Ω is positive definite and r = M.
type featureMap struct {
	m, r int
	f    []float64 // r×m row-major, capacity m·m
}

func newFeatureMap(m int) *featureMap {
	return &featureMap{m: m, r: m, f: make([]float64, m*m)}
}

// apply writes φ = F k into dst[:r]. len(k) == M. O(M·r).
func (fm *featureMap) apply(dst, k []float64) {
	m := fm.m
	for i := 0; i < fm.r; i++ {
		dst[i] = floats.Dot(fm.f[i*m:(i+1)*m], k)
	}
}

// dual writes α = Fᵀ w into dst (len M), so that ŷ = αᵀk_S(x) + b. O(M·r).
func (fm *featureMap) dual(dst, w []float64) {
	for j := range dst {
		dst[j] = 0
	}
	m := fm.m
	for i := 0; i < fm.r; i++ {
		floats.AddScaled(dst, w[i], fm.f[i*m:(i+1)*m])
	}
}

// nystromBasis runs the Cholesky factorisation of Ω (M×M row-major) with
// members in their given order, skipping a member whose pivot
// d² = Ω_jj − ‖L⁻¹Ω_{K,j}‖² (the squared distance, in feature space, of its
// kernel function from the span of those kept before it) is at most
// cutoff·Ω_jj: such a member adds nothing a ridge could use but rounding
// amplified by 1/d. It returns the indices kept and F = L⁻¹ (k×k,
// row-major, lower triangular) for the factor L of Ω restricted to them.
// O(M³).
func nystromBasis(omega []float64, M int, cutoff float64) (keep []int, f []float64) {
	l := make([]float64, M*M) // rows of L for the kept members, stride M
	y := make([]float64, M)
	for j := 0; j < M; j++ {
		k := len(keep)
		// Forward substitution L y = Ω_{K,j}.
		for a := 0; a < k; a++ {
			s := omega[keep[a]*M+j]
			row := l[a*M : a*M+a]
			for b, lv := range row {
				s -= lv * y[b]
			}
			y[a] = s / l[a*M+a]
		}
		djj := omega[j*M+j]
		d2 := djj - floats.Dot(y[:k], y[:k])
		if !(d2 > cutoff*djj) || !(d2 > 0) || math.IsInf(d2, 0) {
			continue
		}
		copy(l[k*M:k*M+k], y[:k])
		l[k*M+k] = math.Sqrt(d2)
		keep = append(keep, j)
	}
	k := len(keep)
	if k == 0 {
		return nil, nil
	}
	// F = L⁻¹ by forward substitution, column by column: F is lower
	// triangular, F_bb = 1/L_bb, F_ab = −(Σ_{c<a} L_ac F_cb)/L_aa.
	f = make([]float64, k*k)
	for b := 0; b < k; b++ {
		f[b*k+b] = 1 / l[b*M+b]
		for a := b + 1; a < k; a++ {
			var s float64
			for c := b; c < a; c++ {
				s += l[a*M+c] * f[c*k+b]
			}
			f[a*k+b] = -s / l[a*M+a]
		}
	}
	return keep, f
}
