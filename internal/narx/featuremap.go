package narx

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// featureMap is the Nyström map φ(x) = Λ_r^{-1/2} U_rᵀ k_S(x) (DESIGN §3; book
// eq. 6.4/6.12 up to the constant factor the book gets wrong, which would only
// rescale γ). It keeps the r eigenpairs of Ω with λ_i > cutoff·λ_max, so that
// φ(x)ᵀφ(z) = k_S(x)ᵀ Ω_r⁺ k_S(z).
type featureMap struct {
	m, r int
	f    []float64 // r×m row-major, capacity m·m
	vals []float64 // the r kept eigenvalues, in the order of the rows of f
}

func newFeatureMap(m int) *featureMap {
	return &featureMap{m: m, f: make([]float64, m*m), vals: make([]float64, m)}
}

// copyFrom makes fm a copy of o (same M). No allocation.
func (fm *featureMap) copyFrom(o *featureMap) {
	fm.r = o.r
	copy(fm.f[:o.r*o.m], o.f[:o.r*o.m])
	copy(fm.vals[:o.r], o.vals[:o.r])
}

// build recomputes F from the eigenpairs of Ω (values ascending). O(M·r).
func (fm *featureMap) build(vals []float64, vecs *mat.Dense, cutoff float64) {
	m := fm.m
	lmax := vals[m-1]
	fm.r = 0
	if !(lmax > 0) {
		return
	}
	// Largest eigenvalue first, so feature 0 is the dominant direction.
	for i := m - 1; i >= 0; i-- {
		l := vals[i]
		if !(l > cutoff*lmax) {
			break
		}
		row := fm.f[fm.r*m : (fm.r+1)*m]
		fm.vals[fm.r] = l
		s := 1 / math.Sqrt(l)
		for j := 0; j < m; j++ {
			row[j] = s * vecs.At(j, i)
		}
		fm.r++
	}
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
