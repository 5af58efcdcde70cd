package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// KernelType names a kernel family.
type KernelType int

const (
	// RBF is K(x,z) = exp(−‖x−z‖²/σ²), σ² as LS-SVMlab's sig2 (book eq. 3.26 with the
	// width written as σ² rather than 2σ²; only the parameterisation differs).
	RBF KernelType = iota
	// Linear is K(x,z) = xᵀz.
	Linear
	// Polynomial is K(x,z) = (xᵀz + τ)^d.
	Polynomial
	// LinearRBF is K(x,z) = xᵀz/n + exp(−‖x−z‖²/σ²), n = len(x): a linear
	// part that extrapolates (a trend, a level beyond the data) beside an
	// RBF part that bends; a sum of positive definite kernels is one (book
	// §3.5). With standardised regressors the two parts are of one size: xᵀz/n
	// is the mean product of coordinates of unit variance.
	LinearRBF
)

// HasRBF reports whether the kernel has an RBF part, and so a width σ².
func (t KernelType) HasRBF() bool { return t == RBF || t == LinearRBF }

func (t KernelType) String() string {
	switch t {
	case RBF:
		return "rbf"
	case Linear:
		return "linear"
	case Polynomial:
		return "poly"
	case LinearRBF:
		return "linear+rbf"
	}
	return fmt.Sprintf("KernelType(%d)", int(t))
}

// Kernel is a positive semi-definite kernel on R^n.
type Kernel struct {
	Type   KernelType
	Sigma2 float64 // RBF width σ² > 0
	Degree int     // polynomial degree d ≥ 1
	Offset float64 // polynomial offset τ ≥ 0
}

// Validate reports the first problem with k, or nil.
func (k Kernel) Validate() error {
	switch k.Type {
	case RBF, LinearRBF:
		if !(k.Sigma2 > 0) || math.IsInf(k.Sigma2, 0) {
			return fmt.Errorf("rbf kernel needs a finite sigma2 > 0 (got %v)", k.Sigma2)
		}
	case Linear:
	case Polynomial:
		if k.Degree < 1 {
			return fmt.Errorf("polynomial kernel needs degree ≥ 1 (got %d)", k.Degree)
		}
		if !(k.Offset >= 0) || math.IsInf(k.Offset, 0) {
			return fmt.Errorf("polynomial kernel needs a finite offset ≥ 0 (got %v)", k.Offset)
		}
	default:
		return fmt.Errorf("unknown kernel type %d", int(k.Type))
	}
	return nil
}

// Eval returns K(x, z). len(x) == len(z). O(n).
func (k Kernel) Eval(x, z []float64) float64 {
	switch k.Type {
	case RBF:
		d := sqDist(x, z)
		if d == 0 {
			return 1 // exp(−0/σ²), without the call: K(x, x) on every sample
		}
		return math.Exp(-d / k.Sigma2)
	case Linear:
		return dot(x, z)
	case LinearRBF:
		return dot(x, z)/float64(len(x)) + math.Exp(-sqDist(x, z)/k.Sigma2)
	default:
		return powInt(dot(x, z)+k.Offset, k.Degree)
	}
}

// Column writes dst[i] = K(s_i, x) for the m points stored row-major in pts
// (len(pts) == m·n, n == len(x), len(dst) == m). O(m·n), no allocation.
func (k Kernel) Column(dst, pts, x []float64) {
	n := len(x)
	if k.Type == RBF {
		// Eval's RBF case inline (the same operations): the column is the
		// per-sample kernel work, M evaluations per regressor.
		s2 := k.Sigma2
		sqDists(dst, pts, x)
		for i, d := range dst {
			if d == 0 {
				dst[i] = 1
			} else {
				dst[i] = math.Exp(-d / s2)
			}
		}
		return
	}
	for i := range dst {
		dst[i] = k.Eval(pts[i*n:(i+1)*n], x)
	}
}

// GradAdd adds c·∂K(s, x)/∂x to g, given kx = K(s, x). O(n). len(g) may be
// less than len(x): only the leading coordinates are then computed (the same
// numbers as the full gradient's there).
func (k Kernel) GradAdd(g []float64, c, kx float64, s, x []float64) {
	switch k.Type {
	case RBF:
		f := -2 * c * kx / k.Sigma2
		x, s := x[:len(g)], s[:len(g)]
		for i := range g {
			g[i] += f * (x[i] - s[i])
		}
	case Linear:
		for i := range g {
			g[i] += c * s[i]
		}
	case LinearRBF:
		// kx is the sum; the RBF part alone is K − xᵀs/n.
		n := float64(len(x))
		f := -2 * c * (kx - dot(s, x)/n) / k.Sigma2
		for i := range g {
			g[i] += c*s[i]/n + f*(x[i]-s[i])
		}
	default:
		f := c * float64(k.Degree) * powInt(dot(s, x)+k.Offset, k.Degree-1)
		for i := range g {
			g[i] += f * s[i]
		}
	}
}

// sqDists writes dst[i] = sqDist(s_i, x) for the len(dst) points stored
// row-major in pts, bit for bit: four points at a time, each summed in
// sqDist's order. A sum's additions wait on each other (one add's latency
// per coordinate); four independent sums keep the adder busy, which is
// most of the cost of a kernel column.
func sqDists(dst, pts, x []float64) {
	n := len(x)
	m := len(dst)
	i := 0
	for ; i+4 <= m; i += 4 {
		p0 := pts[i*n : (i+1)*n]
		p1 := pts[(i+1)*n : (i+2)*n]
		p2 := pts[(i+2)*n : (i+3)*n]
		p3 := pts[(i+3)*n : (i+4)*n]
		var s0, s1, s2, s3 float64
		for j, xj := range x {
			d0, d1, d2, d3 := p0[j]-xj, p1[j]-xj, p2[j]-xj, p3[j]-xj
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
		}
		dst[i], dst[i+1], dst[i+2], dst[i+3] = s0, s1, s2, s3
	}
	for ; i < m; i++ {
		dst[i] = sqDist(pts[i*n:(i+1)*n], x)
	}
}

func sqDist(x, z []float64) float64 {
	z = z[:len(x)]
	var s float64
	for i, xi := range x {
		d := xi - z[i]
		s += d * d
	}
	return s
}

func dot(x, z []float64) float64 {
	z = z[:len(x)]
	var s float64
	for i, xi := range x {
		s += xi * z[i]
	}
	return s
}

func powInt(b float64, d int) float64 {
	r := 1.0
	for ; d > 0; d-- {
		r *= b
	}
	return r
}

// MedianSqDist returns the median of ‖x_i − x_j‖² over at most maxPairs pairs of
// distinct rows of X (N×n row-major), drawn with a generator seeded by seed so
// the result is reproducible; all pairs when there are few. It is the usual
// starting point for an RBF width (σ² ≈ the median squared distance makes the
// typical kernel value e⁻¹). Returns 1 when fewer than two distinct rows exist.
func MedianSqDist(X []float64, n, maxPairs int, seed uint64) float64 {
	N := len(X) / n
	var d []float64
	if N*(N-1)/2 <= maxPairs {
		for i := 0; i < N; i++ {
			for j := i + 1; j < N; j++ {
				d = append(d, sqDist(X[i*n:(i+1)*n], X[j*n:(j+1)*n]))
			}
		}
	} else {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		for len(d) < maxPairs {
			i, j := rng.IntN(N), rng.IntN(N)
			if i != j {
				d = append(d, sqDist(X[i*n:(i+1)*n], X[j*n:(j+1)*n]))
			}
		}
	}
	slices.Sort(d)
	if len(d) == 0 || !(d[len(d)/2] > 0) {
		return 1
	}
	return d[len(d)/2]
}
