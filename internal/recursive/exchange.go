package recursive

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// ExchangeFeature re-expresses the statistics after one regularised
// coordinate of ψ is exchanged for a new one, in O(m²) — the working-set
// swap of a Nyström model (package narx). With ψ = [φ; 1] (the bias last)
// the exchange is, for every sample at once:
//
//  1. a new coordinate e is appended, ψ⁺ = [ψ; e], whose statistics border
//     the old ones: A⁺ = [[A, a], [aᵀ, diag]], r⁺ = [r; rhs] (a = Σ c ψ e,
//     diag = Σ c e², rhs = Σ c e y, supplied by the caller);
//  2. ψ⁺ is reflected, ψ⁺ ← Hψ⁺ with H = I − 2uuᵀ, len(u) = m+1, ‖u‖ = 1
//     and u_{m−1} = 0, so that only regularised coordinates mix;
//  3. the last coordinate of Hψ⁺ is dropped.
//
// So ψ' = [I_m 0]·H·ψ⁺, A' = [I 0]·HA⁺H·[I 0]ᵀ, r' = [I 0]·Hr⁺, and s, n_c
// are unchanged. The ridge is invariant under H (it is the identity on the
// coordinates H mixes), so B' = A' + D/γ is the leading block of
// H·(A⁺ + D⁺/γ)·H, and its inverse follows from the old one exactly (up to
// rounding) by bordering (a Schur complement), the reflection and the
// inverse of a leading block: P̃ changes by a symmetric rank-four term.
// With forgetting pending (μ < 1) the same holds for B̃ = A + μD/γ, whose
// new coordinate gets the ridge μ/γ. θ is then solved anew from the warm
// start P̃'r' (see Update, "Accuracy").
//
// gain is what the exchange would take off the minimum of the ridge
// objective Σc(y − ψᵀθ)² + θᵀDθ/γ, that is s − rᵀB⁻¹r: gain =
// r'ᵀB'⁻¹r' − rᵀB⁻¹r, positive when the new features fit the statistics
// better (both with P̃ for B⁻¹: exact when μ = 1, always so at λ = 1). The
// exchange is applied only if gain ≥ minGain (−Inf: always); ok reports
// whether it was.
//
// It returns ok = false, leaving the receiver unchanged, in two cases that
// gain tells apart. Refused, with gain NaN: an input is not finite, u is not
// a unit vector (to 1e-12) or mixes the bias, the bias is not yet
// identified (see RLS), or the new system is not numerically positive
// definite (a pivot of the bordering or of the dropped coordinate is not
// positive). Declined, with the finite gain: gain < minGain. It panics if
// len(a) != m or len(u) != m+1.
//
// Cost: about eight m×m passes (four products with P̃ and one with A, and
// the symmetric updates of A and P̃), plus the solve; no allocation once
// the shared pools hold the scratch space.
func (r *RLS) ExchangeFeature(a []float64, diag, rhs float64, u []float64, minGain float64) (gain float64, ok bool) {
	r.version++
	m := r.m
	if len(a) != m || len(u) != m+1 {
		panic(fmt.Sprintf("recursive: RLS.ExchangeFeature: len(a) = %d, len(u) = %d, want %d and %d", len(a), len(u), m, m+1))
	}
	if r.nf != m || m < 2 || u[m-1] != 0 || !AllFinite(a) || !AllFinite(u) || !isFinite(diag) || !isFinite(rhs) || diag < 0 {
		return math.NaN(), false
	}
	if n := floats.Dot(u, u); math.Abs(n-1) > 1e-12 {
		return math.NaN(), false
	}
	r.ReleaseStats()
	if r.acquire() {
		defer r.release()
	}
	buf := GetFloats(7 * m)
	defer PutFloats(buf)
	ga, om, zeta, p, w := buf[:m], buf[m:2*m], buf[2*m:3*m], buf[3*m:4*m], buf[4*m:5*m]
	rn, pr := buf[5*m:6*m], buf[6*m:7*m]
	um, ue := u[:m], u[m]
	sg := r.sigma

	// Bordering: P̃⁺ = [[P̃ + g gᵀ/s, −g/s], [−gᵀ/s, 1/s]] with g = P̃a and
	// the Schur complement s = diag + μ/γ − aᵀg.
	gemv(m, m, sg, r.pf, a, ga)
	s := diag + r.mu*r.ig - floats.Dot(a, ga)
	if !(s > 0) || !isFinite(1/s) {
		return math.NaN(), false
	}
	// Reflection: HP̃⁺H = P̃⁺ − uζᵀ − ζuᵀ with ω = P̃⁺u, ζ = 2ω − 2(uᵀω)u.
	gemv(m, m, sg, r.pf, um, om)
	c := (floats.Dot(ga, um) - ue) / s
	floats.AddScaled(om, c, ga)
	omE := -c
	kappa := floats.Dot(um, om) + ue*omE
	for i := range zeta {
		zeta[i] = 2*om[i] - 2*kappa*um[i]
	}
	zetaE := 2*omE - 2*kappa*ue
	// The dropped coordinate: p = (HP̃⁺H)[:m, m], π = (HP̃⁺H)[m, m]; the
	// inverse of the leading block is the rest minus p pᵀ/π.
	for i := range p {
		p[i] = -ga[i]/s - um[i]*zetaE - zeta[i]*ue
	}
	pi := 1/s - 2*ue*zetaE
	if !(pi > 0) || !isFinite(1/pi) {
		return math.NaN(), false
	}
	// The gain: r' = r − 2(uᵀr⁺)u on the leading block, and
	// r'ᵀP̃'r' = r'ᵀP̃r' + (gᵀr')²/s − 2(uᵀr')(ζᵀr') − (pᵀr')²/π.
	t := floats.Dot(um, r.rv) + ue*rhs
	copy(rn, r.rv)
	floats.AddScaled(rn, -2*t, um)
	gemv(m, m, sg, r.pf, r.rv, pr)
	before := floats.Dot(r.rv, pr)
	gemv(m, m, sg, r.pf, rn, pr)
	gr, ur, zr, prr := floats.Dot(ga, rn), floats.Dot(um, rn), floats.Dot(zeta, rn), floats.Dot(p, rn)
	gain = floats.Dot(rn, pr) + gr*gr/s - 2*ur*zr - prr*prr/pi - before
	if !(gain >= minGain) {
		return gain, false
	}
	// A⁺u for the statistics: A' = A − u zᵀ − z uᵀ on the leading block,
	// z = 2w − 2(uᵀw)u, w = A⁺u.
	r.normalizeA()
	gemv(m, m, 1, r.aBuf, um, w)
	floats.AddScaled(w, ue, a)
	wE := floats.Dot(a, um) + diag*ue
	kA := floats.Dot(um, w) + ue*wE
	for i := range w {
		w[i] = 2*w[i] - 2*kA*um[i]
	}
	if !AllFinite(buf) || !isFinite(kA) || !isFinite(kappa) {
		return math.NaN(), false
	}

	// Commit: A and Q by their upper triangles, mirrored (bit-symmetric).
	is, ip := 1/s, 1/pi
	for i := 0; i < m; i++ {
		ai, qi := r.aBuf[i*m:(i+1)*m], r.pf[i*m:(i+1)*m]
		for k := i; k < m; k++ {
			av := ai[k] - (um[i]*w[k] + w[i]*um[k])
			qv := qi[k] + (ga[i]*ga[k]*is-(um[i]*zeta[k]+zeta[i]*um[k])-p[i]*p[k]*ip)/sg
			ai[k], r.aBuf[k*m+i] = av, av
			qi[k], r.pf[k*m+i] = qv, qv
		}
	}
	copy(r.rv, rn)
	r.cacheOK = false
	gemv(m, m, sg, r.pf, r.rv, r.theta)
	copy(r.wk.old, r.theta)
	r.solveTheta()
	return gain, true
}
