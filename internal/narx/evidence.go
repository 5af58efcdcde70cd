package narx

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/streamd/streamd/internal/recursive"
)

// Level 2 of the Bayesian framework (book §4.2.3, docs/design.md, "The model"), in primal form.
//
// Model: y_k = wᵀφ_k + b + e_k, prior w ~ N(0, μ⁻¹I_r), flat prior on b, noise
// e_k ~ N(0, (ζ c_k)⁻¹) with c_k the sample weight (robust weight × forgetting).
// With G = A_ww − a aᵀ/n_c the centred feature Gram (a = Σ c_k φ_k,
// n_c = Σ c_k), eigenpairs (λ_i, u_i), the centred cross-moment
// r_c = Σ c_k (φ_k − φ̄) y_k and p_i = u_iᵀ r_c, the posterior mode for a given
// γ = ζ/μ has w_i = p_i/(λ_i + 1/γ) in G's eigenbasis, and
//
//	E_W(γ) = ½‖w‖²                 = ½ Σ p_i²/(λ_i + 1/γ)²
//	E_D(γ) = ½ Σ c_k e_k²          = ½ (s_c − Σ p_i² (λ_i + 2/γ)/(λ_i + 1/γ)²),
//
// s_c = Σ c_k (y_k − ȳ)². Integrating w and b out and maximising over μ at
// fixed γ (μ = (n_c − 1)/(2(E_W + γE_D)), ζ = γμ) leaves the cost
//
//	J(γ) = Σ_i log(1 + γλ_i) + (n_c − 1)·log(E_W(γ)/γ + E_D(γ)),
//
// which differs from the book's eq. 4.62 form Σ log(λ_i + 1/γ) +
// (N − 1)·log(E_W + γE_D) by (N − 1 − r)·log γ: the book sums over all N − 1
// non-zero eigenvalues of the centred kernel matrix, a fixed-size model has r.
// n_c plays the role of N when samples are weighted or forgotten: it is the
// effective number of observations the statistics carry.
//
// d_eff = 1 + Σ γλ_i/(1 + γλ_i) counts the bias and the well-determined
// directions.
//
// An evidence borrows its lambda and p2 from the shared scratch pool (see
// recursive.Pool): release it once done.
type evidence struct {
	lambda []float64 // eigenvalues of G, clamped at ≥ 0
	p2     []float64 // p_i²
	sc, nc float64
}

// Level2 is the result of a level-2 inference.
type Level2 struct {
	Gamma, Mu, Zeta float64
	DEff            float64
	EW, ED          float64
	Cost            float64 // J(γ)
}

// newEvidence prepares J from the sufficient statistics (A over ψ = [φ; 1],
// r, s = Σ c y², n_c). O(r³) for the eigendecomposition of G, with LAPACK
// dsyev (as gonum's mat.EigenSym, bit for bit) in buffers borrowed from the
// shared pool: it runs at every swap, on the per-sample path, and allocates
// nothing once the pool is warm. ok is false when there is too little data
// (n_c ≤ 1) or the decomposition fails; the evidence then needs no release.
func newEvidence(a mat.Symmetric, rv []float64, s, nc float64) (ev evidence, ok bool) {
	m := a.SymmetricDim()
	r := m - 1
	if !(nc > 1) {
		return ev, false
	}
	rb := rv[r]
	ev = evidence{lambda: recursive.GetFloats(r), p2: recursive.GetFloats(r), nc: nc, sc: max(s-rb*rb/nc, 0)}
	if r == 0 {
		return ev, true
	}
	g, rc, p := recursive.GetFloats(r*r), recursive.GetFloats(r), recursive.GetFloats(r)
	defer func() {
		recursive.PutFloats(g)
		recursive.PutFloats(rc)
		recursive.PutFloats(p)
	}()
	clear(g) // dsyev reads the upper triangle only; the rest is not left to chance
	for i := 0; i < r; i++ {
		ai := a.At(i, r)
		rc[i] = rv[i] - ai*rb/nc
		for j := i; j < r; j++ {
			g[i*r+j] = a.At(i, j) - ai*a.At(j, r)/nc
		}
	}
	sym := blas64.Symmetric{N: r, Stride: r, Data: g, Uplo: blas.Upper}
	query := recursive.GetFloats(1) // a local array would escape to the heap
	lapack64.Syev(lapack.EVCompute, sym, ev.lambda, query, -1)
	work := recursive.GetFloats(int(query[0]))
	recursive.PutFloats(query)
	defer recursive.PutFloats(work)
	if !lapack64.Syev(lapack.EVCompute, sym, ev.lambda, work, len(work)) {
		ev.release()
		return evidence{}, false
	}
	// g now holds the eigenvectors in its columns: p = Uᵀr_c.
	blas64.Gemv(blas.Trans, 1, blas64.General{Rows: r, Cols: r, Stride: r, Data: g},
		blas64.Vector{N: r, Inc: 1, Data: rc}, 0, blas64.Vector{N: r, Inc: 1, Data: p})
	for i, l := range ev.lambda {
		ev.lambda[i] = max(l, 0)
		ev.p2[i] = p[i] * p[i]
	}
	return ev, true
}

// release returns the evidence's buffers to the pool; it must not be used
// afterwards.
func (ev evidence) release() {
	recursive.PutFloats(ev.lambda)
	recursive.PutFloats(ev.p2)
}

// at evaluates the level-2 quantities at γ. O(r).
func (ev evidence) at(gamma float64) Level2 {
	ig := 1 / gamma
	var ew, fit, logdet, deff float64
	for i, l := range ev.lambda {
		d := l + ig
		ew += ev.p2[i] / (d * d)
		fit += ev.p2[i] * (l + 2*ig) / (d * d)
		logdet += math.Log1p(gamma * l)
		deff += gamma * l / (1 + gamma*l)
	}
	ew *= 0.5
	ed := 0.5 * max(ev.sc-fit, 0)
	return level2At(gamma, ev.nc, ev.sc, ew, ed, 1+deff, logdet)
}

// level2At completes a level-2 result at γ from its energies E_W, E_D,
// d_eff and Σ log(1 + γλ_i) (logdet; NaN leaves the cost NaN): μ and ζ at
// their optimum for this γ, and J(γ). sc is s_c, the floor's scale.
func level2At(gamma, nc, sc, ew, ed, dEff, logdet float64) Level2 {
	// A perfect fit (E_D = 0 and E_W = 0) would make the cost −∞; the floor is
	// rounding-level relative to the data energy.
	energy := max(ew/gamma+ed, 1e-300+1e-18*sc)
	l2 := Level2{Gamma: gamma, DEff: dEff, EW: ew, ED: ed,
		Cost: logdet + (nc-1)*math.Log(energy)}
	l2.Mu = (nc - 1) / (2 * gamma * energy)
	l2.Zeta = gamma * l2.Mu
	return l2
}

// Gamma bounds of the level-2 search; outside them the ridge is either
// negligible against rounding or swamps the data in standardised units.
const (
	minLogGamma = -6 * math.Ln10
	maxLogGamma = 10 * math.Ln10
)

// GammaAtBound reports whether a level-2 γ lies at a bound of its search
// (within a relative 1e-6): the evidence then has no interior optimum, which
// says the structure is wrong rather than that γ is extreme — at the floor
// the lags carry nothing the ridge keeps (a flat forecast), at the ceiling
// the fit interpolates its samples.
func GammaAtBound(gamma float64) bool {
	return gamma <= math.Exp(minLogGamma)*(1+1e-6) || gamma >= math.Exp(maxLogGamma)*(1-1e-6)
}

// minimise returns the level-2 optimum over log γ ∈ [minLogGamma, maxLogGamma]:
// J is not convex in log γ, so a grid of 64 points locates every basin, and a
// golden-section search refines each grid minimum; the best wins. O(r) per
// evaluation, about 64 + 40·(number of basins) evaluations.
func (ev evidence) minimise() Level2 {
	const grid = 64
	step := (maxLogGamma - minLogGamma) / (grid - 1)
	costs := make([]float64, grid)
	for i := range costs {
		costs[i] = ev.at(math.Exp(minLogGamma + float64(i)*step)).Cost
	}
	best := Level2{Cost: math.Inf(1)}
	for i := range costs {
		if (i > 0 && costs[i] > costs[i-1]) || (i < grid-1 && costs[i] > costs[i+1]) {
			continue
		}
		lo := minLogGamma + float64(max(i-1, 0))*step
		hi := minLogGamma + float64(min(i+1, grid-1))*step
		if c := ev.golden(lo, hi); c.Cost < best.Cost {
			best = c
		}
	}
	return best
}

// golden refines a minimum of J(exp(t)) on [lo, hi] to |Δt| < 1e-6.
func (ev evidence) golden(lo, hi float64) Level2 {
	const invPhi = 0.6180339887498949
	f := func(t float64) Level2 { return ev.at(math.Exp(t)) }
	a, b := lo, hi
	c := b - invPhi*(b-a)
	d := a + invPhi*(b-a)
	fc, fd := f(c), f(d)
	for b-a > 1e-6 {
		if fc.Cost < fd.Cost {
			b, d, fd = d, c, fc
			c = b - invPhi*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + invPhi*(b-a)
			fd = f(d)
		}
	}
	best := fc
	for _, e := range []Level2{fd, f(lo), f(hi)} {
		if e.Cost < best.Cost {
			best = e
		}
	}
	return best
}

// SetGamma holds γ at gamma (finite, > 0) and switches AutoGamma off: γ is
// then a structure choice made outside level 2 (online.TuneIterated chooses it
// by validating iterated forecasts), like an inferred kernel width. On a
// fitted model the ridge solution is recomputed at gamma and level 2
// re-estimates the noise level and d_eff at it (O(r³)); later level-2
// refreshes keep gamma. On an unfitted model only the configuration changes.
// On error m is unchanged.
func (m *Model) SetGamma(gamma float64) error {
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return fmt.Errorf("narx: SetGamma: gamma must be finite and > 0 (got %v)", gamma)
	}
	if m.fitted && !m.rls.SetGamma(gamma) {
		return fmt.Errorf("narx: SetGamma: the ridge system at γ = %g cannot be solved", gamma)
	}
	m.cfg.Gamma, m.cfg.AutoGamma = gamma, false
	if m.fitted {
		m.refreshNoise()
	}
	return nil
}
