package recursive

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Solver constants of RLS. They are fixed (not configurable) so that two
// learners fed the same numbers compute the same bits.
const (
	// backwardTol is the backward-error target of every solve with B = A + D/γ:
	// a solve of B x = b stops once
	//
	//	‖b − B x‖₂ ≤ backwardTol·(‖b‖₂ + tr(B)·‖x‖₂).
	//
	// tr(B) ≥ ‖B‖₂ is used as the cheap (O(m)) norm. Forming b − Bx in
	// floating point costs an error of at most m·ε·tr(B)·‖x‖ (and about
	// √m·ε·tr(B)·‖x‖ in practice, ε = 1.1e-16), so 1e-14 is attainable for
	// the sizes we run (m ≤ a few hundred) while being within two orders of
	// magnitude of the rounding floor. The forward error of θ is then at most
	// cond(B)·1e-14 relative, i.e. the error of a backward-stable direct solve.
	// QuadForm stops its solve once the bound on the relative error of the
	// quadratic form is below backwardTol (see QuadForm).
	backwardTol = 1e-14

	// maxIter caps the preconditioned conjugate gradient iterations of
	// one solve. With the refresh rule below the preconditioned matrix has
	// its spectrum in [1, 1/muMin] = [1, 4], so CG contracts the error by
	// at least (√4−1)/(√4+1) = 1/3 per iteration; 30 iterations (3⁻³⁰ ≈
	// 5e-15) take any start to rounding level. In practice the spectrum is
	// clustered near 1 (the ridge matters only in directions with little
	// data) and a warm-started solve takes 2–4 iterations. A solve that still
	// has not converged forces a refresh (and a second attempt).
	maxIter = 30

	// muMin is the refresh threshold for μ = λ^j (j updates since the
	// last refresh). It bounds the condition number of the preconditioned
	// system by 1/muMin.
	muMin = 0.25

	// refreshCost is the cost of a refresh in PCG iterations per
	// dimension: a refresh costs about m rank-one updates of an m×m matrix,
	// an iteration one m×m matrix–vector product of about the same cost
	// (measured 1.4m–1.8m iterations per refresh for m = 50…400).
	// For λ < 1, P̃ is refreshed once the last solve's iteration count, the
	// marginal cost of keeping P̃ one more update, reaches the average cost
	// per update of the current cycle, (refreshCost·m + iterations since
	// the refresh)/(updates since the refresh) — the renewal rule that
	// minimises the long-run cost when iterations grow as μ falls. Measured
	// over m = 50…200 and λ = 0.9…0.999 (counts of iterations of Update and
	// QuadForm, and refreshes), this rule with μ ≥ 1/4 is within a few
	// percent of the best fixed refresh interval and 10–25% cheaper at
	// λ = 0.9 than refreshing at μ < 1/2.
	refreshCost = 1

	// refineEvery is the refinement period at λ = 1: θ follows the
	// exact Kalman (gain) recursion, and every refineEvery-th update
	// recomputes the true residual r − Bθ and, if its backward error
	// exceeds backwardTol, runs PCG (explicit products) back to backwardTol. The gain
	// recursion alone is accurate: with the refinement disabled, the forward
	// error of θ measured against a batch Cholesky solve after every update
	// stayed below 4e-17·cond₁(B) over three refresh periods (m = 40 and
	// 101, cond₁ up to 1e11), four orders of magnitude inside the tests'
	// 1e-12·cond₁ tolerance, and the refinement almost never has to take a
	// step. A period of 8 thus costs one product with A per 8 updates (an
	// eighth of an m×m pass) for a verified backwardTol backward error at least
	// every 8 updates; a drift of θ cannot build up over more than 7 gain
	// steps, whatever the data.
	refineEvery = 8
)

// refreshEvery is the periodic refresh interval (in updates) that stops
// rounding drift of the inverse P̃ when λ = 1 (or λ close to 1). A refresh
// costs about m³/2 multiply–adds (invert); spread over 4m+32 updates
// that is below m²/8 per update, a few percent of the update. Measured
// drift of the Sherman–Morrison recursion at λ = 1 over two periods: the
// relative error of QuadForm = ψᵀP̃ψ stayed below 3e-17·cond₁ (m = 40, 101;
// cond₁ up to 1e11; TestRLSEveryUpdate logs it), far inside the
// 1e-12·cond₁ tolerance.
func refreshEvery(m int) int { return 4*m + 32 }

// ErrRLSState is returned (wrapped) by RLSFromState when a snapshot is not a
// valid RLS state.
var ErrRLSState = errors.New("recursive: invalid RLS state")

// RLS is weighted recursive least squares with exponential forgetting and a
// ridge term that does not fade.
//
// After samples k = 1..N with regressors ψ_k ∈ Rᵐ, targets y_k, weights
// v_k ≥ 0 and forgetting factor λ ∈ (0, 1], with c_k = v_k·λ^(N−k), it holds
// the sufficient statistics
//
//	A = Σ c_k ψ_k ψ_kᵀ,  r = Σ c_k ψ_k y_k,  s = Σ c_k y_k²,  n_c = Σ c_k
//
// and the ridge solution (docs/design.md, "The model")
//
//	θ = (A + D/γ)⁻¹ r,   D = diag(1, …, 1, 0),
//
// where the last coordinate of ψ is the bias, which is not regularised.
// θ is the solution to rounding after every mutating call (see the
// package documentation, "Accuracy"); it is not the textbook RLS recursion, which rescales
// P ← P/λ and thereby lets the ridge decay as λ^N.
//
// The method, its accuracy and its cost are described in the package
// documentation.
//
// An RLS is owned by one goroutine; no method is safe for concurrent use
// (even QuadForm and ResidualEnergy use the receiver's cache and borrowed
// scratch space). Different RLS may be used concurrently: the pool hands
// each call scratch space of its own, and results do not depend on which
// (nothing in it outlives a call).
type RLS struct {
	m      int     // dimension
	nf     int     // inverted dimension: m, or m−1 while A_mm = 0 (bias unidentified)
	gamma  float64 // γ
	ig     float64 // 1/γ
	lambda float64 // λ

	cap   int           // capacity (dimension) of the buffers
	aBuf  []float64     // Â, full m×m (both triangles, bit-symmetric), row-major
	alpha float64       // A = α·Â: forgetting not yet applied to Â (= μ: 1 after a refresh, always 1 at λ = 1)
	a     *mat.SymDense // the view returned by Stats (upper triangle of Â, or of α·Â in wf)
	rv    []float64     // r
	s     float64       // Σ c y²
	nc    float64       // Σ c

	theta []float64 // θ

	pf          []float64 // Q, full m×m, bit-symmetric: P̃ = σ·Q = B̃⁻¹ on the leading nf block, zero elsewhere
	sigma       float64   // σ = λ^−since
	mu          float64   // μ = λ^since
	since       int       // updates since the last refresh
	sinceRefine int       // updates since the last solve (λ = 1)
	needRefresh bool      // refresh at the next update
	solveIters  int       // PCG iterations of the solves since the last refresh
	lastIters   int       // PCG iterations of the last solve

	// P̃ψ cache shared by QuadForm and Update: ch = Qψ for ψ = cpsi.
	cacheOK bool
	cpsi    []float64
	ch      []float64

	// wk is the scratch space borrowed from scratchPool for the duration of one
	// call (nil between calls); see acquire.
	wk *workspace
	// statsBuf holds A = α·Â for the Stats view while λ < 1, borrowed from
	// the shared float pool until the next mutating call or ReleaseStats.
	statsBuf []float64

	// version counts the calls that may change the statistics, θ or γ
	// (see Version).
	version uint64

	// diagnostics
	updates, refreshes, iters, unconverged uint64
}

// workspace is the scratch space of the calls of an RLS of dimension m: the
// spare m×m matrix that a refresh inverts into (so that a failed refresh
// leaves the receiver unchanged) and eight vectors of length m. It is shared
// through scratchPool (see Pool) instead of being kept per RLS; nothing in it
// outlives the call that borrowed it.
type workspace struct {
	m                           int
	w                           []float64 // m×m spare: refresh target
	res, z, p, q, sv, x, old, u []float64
}

// scratchPool shares the scratch space of all RLS of one dimension.
var scratchPool = Pool[*workspace]{New: func(m int) *workspace {
	vecs := make([]float64, 8*m)
	next := func() []float64 {
		v := vecs[:m:m]
		vecs = vecs[m:]
		return v
	}
	wk := &workspace{m: m, w: make([]float64, m*m)}
	wk.res, wk.z, wk.p, wk.q, wk.sv, wk.x, wk.old, wk.u = next(), next(), next(), next(), next(), next(), next(), next()
	return wk
}}

// acquire borrows the scratch space for the receiver's dimension unless the
// call is nested in one that holds it already; it reports whether the
// caller must release it (defer r.release()).
func (r *RLS) acquire() bool {
	if r.wk != nil {
		return false
	}
	r.wk = scratchPool.Get(r.m)
	return true
}

// release returns the scratch space to the pool.
func (r *RLS) release() {
	scratchPool.Put(r.wk.m, r.wk)
	r.wk = nil
}

// ReleaseStats ends the validity of the views returned by Stats, returning
// the buffer that holds A while λ < 1 to the shared pool. Every mutating
// call does it too; calling it once done with the statistics keeps an idle
// RLS from holding the buffer. O(1).
func (r *RLS) ReleaseStats() {
	if r.statsBuf == nil {
		return
	}
	PutFloats(r.statsBuf)
	r.statsBuf = nil
	m := r.m
	r.a.SetRawSymmetric(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: r.aBuf})
}

// NewRLS returns an RLS of dimension m (the last coordinate of ψ is the
// unregularised bias), ridge 1/gamma and forgetting factor lambda, with zero
// statistics and θ = 0 (see "Bias before data" at RLS).
//
// NewRLS panics if m < 1, gamma ≤ 0 or not finite, or lambda ∉ (0, 1].
func NewRLS(m int, gamma, lambda float64) *RLS {
	if m < 1 {
		panic(fmt.Sprintf("recursive: NewRLS: dimension %d < 1", m))
	}
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		panic(fmt.Sprintf("recursive: NewRLS: gamma %v not in (0, ∞)", gamma))
	}
	if !(lambda > 0 && lambda <= 1) {
		panic(fmt.Sprintf("recursive: NewRLS: lambda %v not in (0, 1]", lambda))
	}
	r := &RLS{gamma: gamma, ig: 1 / gamma, lambda: lambda, a: &mat.SymDense{}}
	r.alloc(m)
	r.setDim(m)
	r.Reset()
	return r
}

// alloc allocates the buffers for dimension up to n.
func (r *RLS) alloc(n int) {
	r.cap = n
	r.aBuf = make([]float64, n*n)
	r.pf = make([]float64, n*n)
	vecs := make([]float64, 4*n)
	next := func() []float64 {
		v := vecs[:n:n]
		vecs = vecs[n:]
		return v
	}
	r.rv, r.theta, r.cpsi, r.ch = next(), next(), next(), next()
}

// setDim sets the dimension to n ≤ r.cap and reslices the views. It does
// not touch the contents.
func (r *RLS) setDim(n int) {
	r.m = n
	r.aBuf = r.aBuf[:n*n]
	r.pf = r.pf[:n*n]
	r.rv = r.rv[:n]
	r.theta = r.theta[:n]
	r.cpsi, r.ch = r.cpsi[:n], r.ch[:n]
	r.a.SetRawSymmetric(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: r.aBuf})
	r.cacheOK = false
}

// Dim returns the dimension m.
func (r *RLS) Dim() int { return r.m }

// Gamma returns γ (the ridge is 1/γ).
func (r *RLS) Gamma() float64 { return r.gamma }

// Lambda returns the forgetting factor λ.
func (r *RLS) Lambda() float64 { return r.lambda }

// Reset sets the statistics to zero (A = 0, r = 0, s = 0, n_c = 0) and θ = 0,
// keeping m, γ and λ. The bias is then unidentified (see RLS). Cost O(m²).
func (r *RLS) Reset() {
	r.version++
	r.ReleaseStats()
	m := r.m
	clear(r.aBuf)
	r.alpha = 1
	clear(r.rv)
	clear(r.theta)
	r.s, r.nc = 0, 0
	r.nf = m - 1
	clear(r.pf)
	for i := 0; i < r.nf; i++ {
		r.pf[i*m+i] = r.gamma // (I/γ)⁻¹
	}
	r.sigma, r.mu, r.since, r.sinceRefine, r.needRefresh, r.solveIters, r.lastIters = 1, 1, 0, 0, false, 0, 0
	r.cacheOK = false
}

// Update applies one sample with regressor psi, target y and weight v:
//
//	A ← λA + vψψᵀ,  r ← λr + vψy,  s ← λs + vy²,  n_c ← λn_c + v,
//
// then recomputes θ = (A + D/γ)⁻¹ r. v = 0 only lets the statistics decay.
//
// Update panics if len(psi) != m. It returns ok = false, leaving the
// receiver unchanged, if psi, y or v is not finite, if v < 0, if the new
// statistics would overflow, or if a refresh is due and the new A + D/γ is
// not numerically positive definite (possible only through underflow of a
// long-forgotten bias, A_mm → 0). If a solve fails even after a refresh
// (B numerically singular), the statistics are applied, θ keeps its previous
// value and the next update refreshes again.
//
// If the previous call was QuadForm with the same psi (bit for bit), its
// product P̃ψ is reused; the result is bit-identical either way.
//
// Cost: three m×m passes at λ = 1 (two if QuadForm(psi) came just before),
// plus amortised refinement and refresh; more PCG passes when λ < 1 (see
// RLS, "Cost"). No allocation.
func (r *RLS) Update(psi []float64, y, v float64) (ok bool) {
	r.version++
	m := r.m
	if len(psi) != m {
		panic(fmt.Sprintf("recursive: RLS.Update: len(psi) = %d, want %d", len(psi), m))
	}
	r.ReleaseStats()
	if !isFinite(y) || !isFinite(v) || v < 0 {
		return false
	}
	lam := r.lambda
	a := r.aBuf
	for i, p := range psi {
		// Diagonal entries bound the others (A is PSD), r_i² ≤ A_ii·s. The
		// stored Â = A/α is at most 4A (α = μ ≥ muMin = 1/4 between
		// refreshes); the factor 8 also leaves room for the rounding of √v·ψ.
		if !isFinite(p) ||
			!isFinite(8*(lam*(r.alpha*a[i*m+i])+v*p*p)) ||
			!isFinite(lam*math.Abs(r.rv[i])+v*math.Abs(p*y)) {
			return false
		}
	}
	if !isFinite(lam*r.s+v*y*y) || !isFinite(lam*r.nc+v) {
		return false
	}
	if r.acquire() {
		defer r.release()
	}
	wk := r.wk

	leave := r.nf < m && v > 0 && psi[m-1] != 0 // bias becomes identified
	nf := r.nf
	if leave {
		nf = m
	}
	refresh := leave || r.needRefresh || lam*r.mu < muMin || r.since+1 >= refreshEvery(m) ||
		lam < 1 && r.lastIters*r.since >= refreshCost*m+r.solveIters
	sv := math.Sqrt(v)

	// Sherman–Morrison quantities: h = Qψ, g = σh = P̃ψ, den = λ + vψᵀg.
	var h []float64
	var den float64
	if !refresh && v > 0 {
		h = r.qpsi(psi)
		s := floats.Dot(psi[:nf], h[:nf])
		den = lam + v*r.sigma*s
		if !(s >= 0) || !isFinite(den) || !isFinite(v*r.sigma/den) {
			refresh = true // P̃ lost definiteness: start afresh
		}
	}
	if refresh {
		// Invert the new B = λαÂ + vψψᵀ + D/γ into the spare before
		// committing anything, so that failure leaves the receiver unchanged.
		// The entries are formed exactly as the committed Â below.
		w := wk.w
		if nf < m {
			clear(w)
		}
		c := lam * r.alpha
		for i := 0; i < nf; i++ {
			row, ai := w[i*m:i*m+nf], a[i*m:i*m+nf]
			if c == 1 {
				copy(row, ai)
			} else {
				floats.ScaleTo(row, c, ai)
			}
		}
		if v > 0 {
			floats.ScaleTo(wk.u, sv, psi)
			ger(nf, m, 1, wk.u, w)
		}
		for i := 0; i < nf && i < m-1; i++ {
			w[i*m+i] += r.ig
		}
		if !invert(nf, m, w, wk.u) {
			return false
		}
	}

	// Commit the statistics. A refresh applies the pending forgetting to Â
	// (α = 1); otherwise only α decays and Â receives vψψᵀ/α, so that
	// A = αÂ costs one m×m pass (a rank-one update) even when λ < 1.
	e := y - floats.Dot(psi, r.theta) // a-priori error
	copy(wk.old, r.theta)
	if refresh {
		if c := lam * r.alpha; c != 1 {
			floats.Scale(c, a)
		}
		r.alpha = 1
		if v > 0 {
			floats.ScaleTo(wk.u, sv, psi)
			ger(m, m, 1, wk.u, a)
		}
	} else {
		r.alpha *= lam
		if v > 0 {
			floats.ScaleTo(wk.u, math.Sqrt(v/r.alpha), psi)
			ger(m, m, 1, wk.u, a)
		}
	}
	vy := v * y
	for i, p := range psi {
		r.rv[i] = lam*r.rv[i] + vy*p
	}
	r.s = lam*r.s + vy*y
	r.nc = lam*r.nc + v
	r.updates++
	r.cacheOK = false // Q changes below (h stays readable)

	if refresh {
		copy(r.pf, wk.w)
		r.nf = nf
		r.resetCounters()
		r.refreshes++
		r.solveTheta()
		return true
	}
	if v > 0 {
		// Gain step θ ← θ + P̃'ψ·v·e with P̃'ψ = g/den: exact for the B̃
		// system, the exact solution itself when λ = 1.
		floats.AddScaled(r.theta[:nf], v*r.sigma*e/den, h[:nf])
		// Q ← Q − w wᵀ, w = h·√(vσ/den): bit-symmetric rank-one update.
		u := wk.u[:nf]
		floats.ScaleTo(u, math.Sqrt(v*r.sigma/den), h[:nf])
		ger(nf, m, -1, u, r.pf)
	}
	r.sigma /= lam
	r.mu *= lam
	r.since++
	r.sinceRefine++
	if lam != 1 || r.sinceRefine >= refineEvery {
		r.solveTheta()
	}
	return true
}

// resetCounters marks P̃ as freshly computed from B.
func (r *RLS) resetCounters() {
	r.sigma, r.mu, r.since, r.sinceRefine, r.needRefresh, r.solveIters, r.lastIters = 1, 1, 0, 0, false, 0, 0
	r.cacheOK = false
}

// qpsi returns h = Qψ (zero beyond nf), reusing the cached product if psi is
// bit-identical to the cached ψ and Q has not changed since. The result is
// the receiver's ch.
func (r *RLS) qpsi(psi []float64) []float64 {
	h := r.ch
	if r.cacheOK && SameBits(psi, r.cpsi) {
		return h
	}
	nf := r.nf
	gemv(nf, r.m, 1, r.pf, psi, h)
	clear(h[nf:])
	copy(r.cpsi, psi)
	r.cacheOK = true
	return h
}

// solveTheta recomputes θ by PCG warm-started at the current θ; on failure
// it restores θ from r.wk.old (which the caller has set), refreshes once and
// retries; if that fails too it restores θ and schedules a refresh.
func (r *RLS) solveTheta() {
	r.sinceRefine = 0
	it, conv := r.pcg(r.theta, r.rv)
	r.iters += uint64(it)
	r.solveIters += it
	r.lastIters = it
	if conv && AllFinite(r.theta) {
		return
	}
	r.unconverged++
	copy(r.theta, r.wk.old)
	if r.refreshNow() {
		it, conv = r.pcg(r.theta, r.rv)
		r.iters += uint64(it)
		if conv && AllFinite(r.theta) {
			return
		}
		copy(r.theta, r.wk.old)
	}
	r.needRefresh = true
}

// refreshNow inverts the current B = A + D/γ (leading nf block). On success
// it installs the inverse and returns true; otherwise P̃ is kept.
func (r *RLS) refreshNow() bool {
	if !r.invertB(r.wk.w, r.ig) {
		return false
	}
	copy(r.pf, r.wk.w)
	r.normalizeA()
	r.resetCounters()
	r.refreshes++
	return true
}

// normalizeA applies the pending factor α to Â (α = 1), with the same
// arithmetic as invertB, so that the refreshed P̃ is the inverse of
// exactly the stored A + D/γ.
func (r *RLS) normalizeA() {
	if r.alpha != 1 {
		floats.Scale(r.alpha, r.aBuf)
		r.alpha = 1
	}
}

// invertB writes (A + D·ig)⁻¹ of the leading nf block into w (stride m),
// zero elsewhere; A = α·Â is formed as normalizeA does.
func (r *RLS) invertB(w []float64, ig float64) bool {
	m, nf := r.m, r.nf
	if nf < m {
		clear(w)
	}
	for i := 0; i < nf; i++ {
		if r.alpha == 1 {
			copy(w[i*m:i*m+nf], r.aBuf[i*m:i*m+nf])
		} else {
			floats.ScaleTo(w[i*m:i*m+nf], r.alpha, r.aBuf[i*m:i*m+nf])
		}
		if i < m-1 {
			w[i*m+i] += ig
		}
	}
	return invert(nf, m, w, r.wk.u)
}

// pcg solves B x = b by preconditioned conjugate gradients (Golub & Van
// Loan §11.5, Alg. 11.5.1) with preconditioner P̃ on the leading nf block,
// starting from x. It stops on the backwardTol criterion (converged = true) or
// after maxIter iterations or a breakdown (converged = false). The
// residual is recomputed exactly at the start, so rounding errors do not
// accumulate across calls.
//
// While μ = 1 (B̃ = B) the products B·p are formed explicitly. While μ < 1
// they are implicit: every search direction is p = P̃s for a vector s kept
// alongside (p₀ = P̃res₀, s₀ = res₀; p ← z + βp, s ← res + βs), so
// B·p = B̃p + (1−μ)Dp/γ = s + (1−μ)Dp/γ costs O(m) and an iteration costs
// one product with P̃ instead of two m×m products. The iteration then
// solves (P̃⁻¹ + (1−μ)D/γ)·Δ = res₀ for the correction: exact if
// P̃ = B̃⁻¹, and otherwise off by the rounding drift of P̃ times ‖Δ‖, which
// the true residual of the next solve sees and corrects.
// x and b must not be the receiver's scratch vectors res, z, p, q, sv.
func (r *RLS) pcg(x, b []float64) (iters int, converged bool) {
	wk := r.wk
	res, z, p, q, sv := wk.res, wk.z, wk.p, wk.q, wk.sv
	bn := norm2(b)
	trB := r.traceB()
	r.mulB(q, x)
	floats.SubTo(res, b, q)
	if norm2(res) <= backwardTol*(bn+trB*norm2(x)) {
		return 0, true
	}
	implicit := r.mu < 1
	delta := (1 - r.mu) * r.ig
	r.precond(z, res)
	copy(p, z)
	copy(sv, res)
	rz := floats.Dot(res, z)
	for it := 1; it <= maxIter; it++ {
		if implicit {
			r.mulBImplicit(q, sv, p, delta)
		} else {
			r.mulB(q, p)
		}
		pq := floats.Dot(p, q)
		if !(pq > 0) || math.IsInf(pq, 1) || !(rz > 0) || math.IsInf(rz, 1) {
			return it, false
		}
		alpha := rz / pq
		floats.AddScaled(x, alpha, p)
		floats.AddScaled(res, -alpha, q)
		if norm2(res) <= backwardTol*(bn+trB*norm2(x)) {
			return it, true
		}
		r.precond(z, res)
		rzNew := floats.Dot(res, z)
		beta := rzNew / rz
		rz = rzNew
		for i, zi := range z {
			p[i] = zi + beta*p[i]
		}
		if implicit {
			for i, ri := range res {
				sv[i] = ri + beta*sv[i]
			}
		}
	}
	return maxIter, false
}

// mulBImplicit sets q = s + delta·Dp, which is B·p when p = P̃s, P̃ = B̃⁻¹
// and delta = (1−μ)/γ (B = B̃ + (1−μ)D/γ).
func (r *RLS) mulBImplicit(q, s, p []float64, delta float64) {
	m := r.m
	copy(q, s)
	floats.AddScaled(q[:m-1], delta, p[:m-1])
}

// mulB sets dst = (A + D/γ) x.
func (r *RLS) mulB(dst, x []float64) {
	m := r.m
	gemv(m, m, r.alpha, r.aBuf, x, dst)
	floats.AddScaled(dst[:m-1], r.ig, x[:m-1])
}

// precond sets z = P̃ρ on the leading nf coordinates and z = 0 on the rest
// (the unidentified bias).
func (r *RLS) precond(z, rho []float64) {
	nf := r.nf
	gemv(nf, r.m, r.sigma, r.pf, rho, z)
	clear(z[nf:])
}

// traceB returns tr(A + D/γ) ≥ ‖A + D/γ‖₂.
func (r *RLS) traceB() float64 {
	m := r.m
	t := 0.0
	for i := 0; i < m; i++ {
		t += r.aBuf[i*m+i]
	}
	return r.alpha*t + float64(m-1)*r.ig
}

// FeatureTrace returns tr(D(A + D/γ)⁻¹), the trace of the inverse's
// feature block (the bias, last, excluded): level 2's
// Σ 1/(λ_i + 1/γ) over the centred feature Gram's eigenvalues, since that
// block of the inverse is (G + I/γ)⁻¹. ok is false, and the trace 0, when
// P̃ is not the inverse at this moment (λ < 1 between refreshes: forgetting
// is pending on it), the bias is unidentified (P̃ then inverts the
// feature block of B alone), or a refresh is pending (a solve failed: θ
// and P̃ may not match the statistics). Exact up to P̃'s rounding drift
// (see refreshEvery). O(m), no allocation.
func (r *RLS) FeatureTrace() (trace float64, ok bool) {
	m := r.m
	if r.mu != 1 || r.nf != m || r.needRefresh {
		return 0, false
	}
	for i := 0; i < m-1; i++ {
		trace += r.pf[i*m+i]
	}
	return r.sigma * trace, true
}

// Theta returns θ, len m. The slice is a view into the receiver, valid until
// the next mutating call; it must not be modified.
func (r *RLS) Theta() []float64 { return r.theta }

// Predict returns ψᵀθ. It panics if len(psi) != m. O(m).
func (r *RLS) Predict(psi []float64) float64 {
	if len(psi) != r.m {
		panic(fmt.Sprintf("recursive: RLS.Predict: len(psi) = %d, want %d", len(psi), r.m))
	}
	return floats.Dot(psi, r.theta)
}

// QuadForm returns ψᵀ(A + D/γ)⁻¹ψ. While P̃ = B⁻¹ (μ = 1: always when
// λ = 1, and right after a refresh) it is ψᵀP̃ψ, one matrix–vector product,
// exact up to the rounding drift of P̃ (bounded by the periodic refresh).
// Otherwise PCG from x = 0 (first preconditioned vector P̃ψ, implicit
// products as in pcg) runs until the Gauss-quadrature error bound holds: in
// exact arithmetic ψᵀx_k ≤ ψᵀB⁻¹ψ ≤ ψᵀx_k + ρ_k with ρ_k = res_kᵀP̃res_k
// (the error is res_kᵀB⁻¹res_k, and P̃ = B̃⁻¹ ⪰ B⁻¹), and it stops once
// ρ_k ≤ backwardTol·ψᵀx_k: a relative error below backwardTol plus rounding and the
// drift of P̃.
//
// While the bias is unidentified (A_mm = 0) it returns +Inf if ψ_m ≠ 0:
// the improper bias prior has infinite variance. It returns NaN if psi is not
// finite. It panics if len(psi) != m. The statistics are not changed; the
// product P̃ψ is kept for a following Update with the same psi.
//
// Cost: one m×m pass (P̃ψ) at μ = 1; one more per PCG iteration otherwise
// (2–4 typical); no allocation.
func (r *RLS) QuadForm(psi []float64) float64 {
	m := r.m
	if len(psi) != m {
		panic(fmt.Sprintf("recursive: RLS.QuadForm: len(psi) = %d, want %d", len(psi), m))
	}
	if !AllFinite(psi) {
		return math.NaN()
	}
	if r.nf < m && psi[m-1] != 0 {
		return math.Inf(1)
	}
	nf := r.nf
	h := r.qpsi(psi)
	if r.mu == 1 {
		return max(r.sigma*floats.Dot(psi[:nf], h[:nf]), 0)
	}
	// PCG from x = 0 with implicit products (see pcg): p = P̃s throughout.
	if r.acquire() {
		defer r.release()
	}
	wk := r.wk
	x, res, z, p, q, sv := wk.x, wk.res, wk.z, wk.p, wk.q, wk.sv
	delta := (1 - r.mu) * r.ig
	clear(x)
	copy(res, psi)
	copy(sv, psi)
	floats.ScaleTo(z, r.sigma, h)
	copy(p, z)
	rz := floats.Dot(res, z)
	quad := 0.0
	for range maxIter {
		r.mulBImplicit(q, sv, p, delta)
		pq := floats.Dot(p, q)
		if !(pq > 0) || math.IsInf(pq, 1) || !(rz > 0) || math.IsInf(rz, 1) {
			break
		}
		alpha := rz / pq
		floats.AddScaled(x, alpha, p)
		floats.AddScaled(res, -alpha, q)
		quad = floats.Dot(psi, x)
		r.precond(z, res)
		rzNew := floats.Dot(res, z)
		if rzNew <= backwardTol*quad {
			break
		}
		beta := rzNew / rz
		rz = rzNew
		for i, zi := range z {
			p[i] = zi + beta*p[i]
		}
		for i, ri := range res {
			sv[i] = ri + beta*sv[i]
		}
	}
	return max(quad, 0)
}

// ResidualEnergy returns Σ c_k (y_k − ψ_kᵀθ)² = s − 2θᵀr + θᵀAθ, clamped at
// ≥ 0 (the formula cancels when the fit is good: its absolute error is about
// ε·s). Cost O(m²); no allocation.
func (r *RLS) ResidualEnergy() float64 {
	m := r.m
	if r.acquire() {
		defer r.release()
	}
	q := r.wk.q
	gemv(m, m, r.alpha, r.aBuf, r.theta, q)
	e := r.s - 2*floats.Dot(r.theta, r.rv) + floats.Dot(r.theta, q)
	return max(e, 0)
}

// Stats returns the sufficient statistics A (upper triangle stored), r,
// s = Σ c y² and n_c = Σ c. a and rv are views into the receiver, valid
// until the next mutating call (Update, ExchangeFeature, Load, Reload,
// SetGamma, Reset) or
// ReleaseStats; they must not be modified. Cost O(1), or O(m²) while λ < 1
// and forgetting is pending on the stored Â (A = αÂ is then formed in a
// buffer borrowed from the shared pool, held until the view ends: call
// ReleaseStats when done so that an idle RLS does not keep it); no
// allocation once the pool holds such a buffer.
func (r *RLS) Stats() (a *mat.SymDense, rv []float64, s, nc float64) {
	m := r.m
	data := r.aBuf
	if r.alpha != 1 {
		if r.statsBuf == nil {
			r.statsBuf = GetFloats(m * m)
		}
		data = r.statsBuf[:m*m]
		floats.ScaleTo(data, r.alpha, r.aBuf)
	}
	r.a.SetRawSymmetric(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: data})
	return r.a, r.rv, r.s, r.nc
}

// Version returns a number that changes at every call that may change the
// statistics, θ or γ (Update, ExchangeFeature, Load, Reload, SetGamma,
// Reset), whether or not the call succeeds; nothing else changes it. A
// value computed from them stays valid while the same RLS (a Clone or a
// restored RLS is another) reports the same Version. O(1).
func (r *RLS) Version() uint64 { return r.version }

// SumWeights returns n_c = Σ c_k, the total weight the statistics carry. O(1).
func (r *RLS) SumWeights() float64 { return r.nc }

// SetGamma sets γ and refreshes, so that θ = (A + D/γ)⁻¹r holds exactly for
// the new γ. It returns ok = false, leaving the receiver unchanged, if gamma
// is not in (0, ∞) or the new system is not numerically positive definite.
// Cost O(m³).
func (r *RLS) SetGamma(gamma float64) (ok bool) {
	r.version++
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		return false
	}
	r.ReleaseStats()
	if r.acquire() {
		defer r.release()
	}
	wk := r.wk
	ig := 1 / gamma
	if !r.invertB(wk.w, ig) {
		return false
	}
	oldGamma, oldIG := r.gamma, r.ig
	oldSigma, oldMu, oldSince, oldRefine, oldNeed, oldSolve, oldLast := r.sigma, r.mu, r.since, r.sinceRefine, r.needRefresh, r.solveIters, r.lastIters
	r.gamma, r.ig = gamma, ig
	swapContents(r.pf, wk.w) // the new inverse in; the old kept for a failure
	r.resetCounters()
	copy(wk.old, r.theta)
	it, conv := r.pcg(r.theta, r.rv)
	if !AllFinite(r.theta) {
		copy(r.theta, wk.old)
		swapContents(r.pf, wk.w)
		r.gamma, r.ig = oldGamma, oldIG
		r.sigma, r.mu, r.since, r.sinceRefine, r.needRefresh, r.solveIters, r.lastIters = oldSigma, oldMu, oldSince, oldRefine, oldNeed, oldSolve, oldLast
		return false
	}
	r.normalizeA()
	r.refreshes++
	r.iters += uint64(it)
	if !conv {
		r.unconverged++
		r.needRefresh = true
	}
	return true
}

// Load replaces the statistics by A = a (n×n symmetric), r = rv, s and
// n_c = nc — for instance after a change of feature space — and recomputes
// P̃ and θ from scratch. n may differ from m: the receiver is
// re-dimensioned to n, reusing its buffers when n is at most the largest
// dimension it has had and allocating new ones otherwise. γ and λ are kept.
//
// Load panics if len(rv) != n. It returns ok = false, leaving the receiver
// unchanged, if an entry is not finite, s < 0 or nc < 0, or a + D/γ is not
// numerically positive definite. a_nn = 0 is accepted only with a zero last
// row and rv_n = 0 (the bias is then unidentified, see RLS).
// a must not share storage with the receiver, except the view returned by
// Stats. Cost O(n³).
func (r *RLS) Load(a mat.Symmetric, rv []float64, s, nc float64) (ok bool) {
	r.version++
	n := a.SymmetricDim()
	if len(rv) != n {
		panic(fmt.Sprintf("recursive: RLS.Load: len(rv) = %d, want %d", len(rv), n))
	}
	if !isFinite(s) || !isFinite(nc) || s < 0 || nc < 0 || !AllFinite(rv) {
		return false
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if !isFinite(a.At(i, j)) {
				return false
			}
		}
	}
	nf := n
	if a.At(n-1, n-1) == 0 {
		for j := 0; j < n; j++ {
			if a.At(n-1, j) != 0 {
				return false
			}
		}
		if rv[n-1] != 0 {
			return false
		}
		nf = n - 1
	}

	// Invert into a spare with stride n: the scratch space of dimension n,
	// which the rest of the call uses.
	if r.wk != nil {
		panic("recursive: RLS.Load: nested call")
	}
	r.wk = scratchPool.Get(n)
	defer r.release()
	own := a == mat.Symmetric(r.a)
	w, u := r.wk.w, r.wk.u
	for i := 0; i < nf; i++ {
		for j := i; j < nf; j++ {
			aij := a.At(i, j)
			w[i*n+j], w[j*n+i] = aij, aij
		}
		if i < n-1 {
			w[i*n+i] += r.ig
		}
	}
	if nf < n {
		for j := 0; j < n; j++ {
			w[(n-1)*n+j], w[j*n+n-1] = 0, 0
		}
	}
	if !invert(nf, n, w, u) {
		return false
	}

	// Commit. a (possibly the Stats view) has been read.
	r.ReleaseStats()
	if n > r.cap {
		r.alloc(n)
		r.setDim(n)
	} else if n != r.m {
		r.setDim(n)
	}
	if own {
		r.normalizeA() // the same numbers as the Stats view
	} else {
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				aij := a.At(i, j)
				r.aBuf[i*n+j], r.aBuf[j*n+i] = aij, aij
			}
		}
		r.alpha = 1
	}
	copy(r.rv, rv)
	r.s, r.nc = s, nc
	r.nf = nf
	copy(r.pf, w)
	r.resetCounters()
	r.refreshes++
	clear(r.theta)
	clear(r.wk.old)
	r.solveTheta()
	return true
}

// Reload is Load on a fresh RLS: on success the receiver is exactly what
// NewRLS(n, γ, λ) followed by Load(a, rv, s, nc) would give — the same
// numbers, and the diagnostic counters (updates, refreshes, iterations,
// unconverged solves) restarted — but it keeps its buffers when they are
// large enough. On failure the receiver is unchanged, as with Load.
func (r *RLS) Reload(a mat.Symmetric, rv []float64, s, nc float64) (ok bool) {
	u, f, it, un := r.updates, r.refreshes, r.iters, r.unconverged
	r.updates, r.refreshes, r.iters, r.unconverged = 0, 0, 0, 0
	if !r.Load(a, rv, s, nc) {
		r.updates, r.refreshes, r.iters, r.unconverged = u, f, it, un
		return false
	}
	return true
}

// RLSState is a snapshot of an RLS: every number needed to resume it
// bit-identically. Matrices are m×m, row-major.
type RLSState struct {
	M      int
	Gamma  float64
	Lambda float64

	A      []float64 // Â, symmetric (both triangles filled): A = AScale·Â
	AScale float64   // forgetting not yet applied to Â, in (0, 1]
	RV     []float64 // r
	S      float64   // Σ c y²
	NC     float64   // Σ c

	Theta []float64 // θ

	// Inverse: Sigma·P = (A + Mu·D/γ)⁻¹ on the leading Factored × Factored
	// block, P symmetric and zero elsewhere. Factored is M, or M−1 while
	// the bias is unidentified. Sigma = Lambda^−Since.
	P           []float64
	Sigma       float64
	Factored    int
	Mu          float64
	Since       int
	SinceRefine int // updates since the last solve (λ = 1)
	SolveIters  int // PCG iterations of the solves since the last refresh
	LastIters   int // PCG iterations of the last solve
	NeedRefresh bool

	// Diagnostics: updates applied, refreshes of P̃, PCG iterations, solves
	// that did not converge.
	Updates, Refreshes, Iterations, Unconverged uint64
}

// State returns a deep copy of the receiver's state. It allocates.
func (r *RLS) State() RLSState {
	return RLSState{
		M: r.m, Gamma: r.gamma, Lambda: r.lambda,
		A: append([]float64(nil), r.aBuf...), AScale: r.alpha, RV: append([]float64(nil), r.rv...), S: r.s, NC: r.nc,
		Theta: append([]float64(nil), r.theta...),
		P:     append([]float64(nil), r.pf...), Sigma: r.sigma, Factored: r.nf, Mu: r.mu,
		Since: r.since, SinceRefine: r.sinceRefine, SolveIters: r.solveIters, LastIters: r.lastIters, NeedRefresh: r.needRefresh,
		Updates: r.updates, Refreshes: r.refreshes, Iterations: r.iters, Unconverged: r.unconverged,
	}
}

// Clone returns an RLS with the receiver's state and nothing shared with
// it: what either does next leaves the other unchanged, and each computes
// bit for bit what the receiver would have (the state is the one a
// snapshot restores; the cache of P̃ψ, not part of it, is recomputed
// alike). O(m²); it allocates.
func (r *RLS) Clone() *RLS {
	c, err := RLSFromState(r.State())
	if err != nil {
		panic("recursive: RLS.Clone: the state of a live RLS refused: " + err.Error())
	}
	return c
}

// RLSFromState returns an RLS resuming st. It returns an error wrapping
// ErrRLSState if dimensions are inconsistent, a number is not finite or out
// of range, A or P is not symmetric, P has a non-positive diagonal or a
// non-zero entry outside its block, or the unidentified-bias invariants (zero
// last row of A, r_m = 0) do not hold.
func RLSFromState(st RLSState) (*RLS, error) {
	m := st.M
	bad := func(format string, args ...any) (*RLS, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrRLSState}, args...)...)
	}
	switch {
	case m < 1:
		return bad("M = %d < 1", m)
	case !(st.Gamma > 0) || math.IsInf(st.Gamma, 1):
		return bad("Gamma = %v not in (0, ∞)", st.Gamma)
	case !(st.Lambda > 0 && st.Lambda <= 1):
		return bad("Lambda = %v not in (0, 1]", st.Lambda)
	case len(st.A) != m*m:
		return bad("len(A) = %d, want %d", len(st.A), m*m)
	case len(st.P) != m*m:
		return bad("len(P) = %d, want %d", len(st.P), m*m)
	case len(st.RV) != m:
		return bad("len(RV) = %d, want %d", len(st.RV), m)
	case len(st.Theta) != m:
		return bad("len(Theta) = %d, want %d", len(st.Theta), m)
	case st.Factored != m && st.Factored != m-1:
		return bad("Factored = %d, want %d or %d", st.Factored, m-1, m)
	case !(st.AScale > 0 && st.AScale <= 1):
		return bad("AScale = %v not in (0, 1]", st.AScale)
	case !(st.Mu > 0 && st.Mu <= 1):
		return bad("Mu = %v not in (0, 1]", st.Mu)
	case !(st.Sigma >= 1) || math.IsInf(st.Sigma, 1):
		return bad("Sigma = %v not in [1, ∞)", st.Sigma)
	case st.Since < 0:
		return bad("Since = %d < 0", st.Since)
	case st.SinceRefine < 0:
		return bad("SinceRefine = %d < 0", st.SinceRefine)
	case st.SolveIters < 0:
		return bad("SolveIters = %d < 0", st.SolveIters)
	case st.LastIters < 0:
		return bad("LastIters = %d < 0", st.LastIters)
	case !isFinite(st.S) || st.S < 0:
		return bad("S = %v", st.S)
	case !isFinite(st.NC) || st.NC < 0:
		return bad("NC = %v", st.NC)
	case !AllFinite(st.A):
		return bad("A has a non-finite entry")
	case !AllFinite(st.P):
		return bad("P has a non-finite entry")
	case !AllFinite(st.RV):
		return bad("RV has a non-finite entry")
	case !AllFinite(st.Theta):
		return bad("Theta has a non-finite entry")
	}
	nf := st.Factored
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			if st.A[i*m+j] != st.A[j*m+i] {
				return bad("A not symmetric at (%d, %d)", i, j)
			}
			if st.P[i*m+j] != st.P[j*m+i] {
				return bad("P not symmetric at (%d, %d)", i, j)
			}
		}
	}
	for i := 0; i < nf; i++ {
		if !(st.P[i*m+i] > 0) {
			return bad("P[%d,%d] = %v not positive", i, i, st.P[i*m+i])
		}
	}
	if nf == m-1 {
		for j := 0; j < m; j++ {
			if st.A[(m-1)*m+j] != 0 {
				return bad("Factored = M−1 but A[%d,%d] = %v ≠ 0", m-1, j, st.A[(m-1)*m+j])
			}
			if st.P[(m-1)*m+j] != 0 {
				return bad("Factored = M−1 but P[%d,%d] = %v ≠ 0", m-1, j, st.P[(m-1)*m+j])
			}
		}
		if st.RV[m-1] != 0 {
			return bad("Factored = M−1 but RV[%d] = %v ≠ 0", m-1, st.RV[m-1])
		}
	}
	r := &RLS{gamma: st.Gamma, ig: 1 / st.Gamma, lambda: st.Lambda, a: &mat.SymDense{}}
	r.alloc(m)
	r.setDim(m)
	copy(r.aBuf, st.A)
	r.alpha = st.AScale
	copy(r.pf, st.P)
	copy(r.rv, st.RV)
	copy(r.theta, st.Theta)
	r.s, r.nc = st.S, st.NC
	r.nf, r.sigma, r.mu, r.since, r.sinceRefine, r.solveIters, r.lastIters, r.needRefresh = nf, st.Sigma, st.Mu, st.Since, st.SinceRefine, st.SolveIters, st.LastIters, st.NeedRefresh
	r.updates, r.refreshes, r.iters, r.unconverged = st.Updates, st.Refreshes, st.Iterations, st.Unconverged
	return r, nil
}

// gemv sets y[:n] = alpha·W x[:n] for the leading n×n block W of w
// (row-major, stride ld), with gonum's assembly kernel. n = 0 is a no-op.
func gemv(n, ld int, alpha float64, w, x, y []float64) {
	if n == 0 {
		return
	}
	blas64.Gemv(blas.NoTrans, alpha,
		blas64.General{Rows: n, Cols: n, Stride: ld, Data: w[:(n-1)*ld+n]},
		blas64.Vector{N: n, Inc: 1, Data: x}, 0, blas64.Vector{N: n, Inc: 1, Data: y})
}

// ger adds alpha·u uᵀ to the leading n×n block of w (row-major, stride
// ld), with gonum's assembly kernel. With alpha = ±1 the update is
// bit-symmetric: entry (i, j) receives fl(±u_i·u_j), and multiplication
// commutes, so a bit-symmetric w stays bit-symmetric (with or without fused
// multiply–add). n = 0 is a no-op.
func ger(n, ld int, alpha float64, u, w []float64) {
	if n == 0 {
		return
	}
	x := blas64.Vector{N: n, Inc: 1, Data: u}
	blas64.Ger(alpha, x, x, blas64.General{Rows: n, Cols: n, Stride: ld, Data: w[:(n-1)*ld+n]})
}

// invBlock is the height of the block rows of invert.
const invBlock = 16

// invert overwrites the leading n×n block of w (row-major, stride ld,
// symmetric with both triangles stored) by its inverse, using the
// symmetric sweep operator (Gauss–Jordan elimination with diagonal pivots,
// Goodnight 1979): sweeping pivot k maps
//
//	w_ij ← w_ij − w_ik w_kj / d,   w_kj, w_jk ← w_kj / d,   w_kk ← −1/d
//
// (d = w_kk, i, j ≠ k); after all pivots w = −W⁻¹. The pivots are the
// Cholesky pivots squared, so they are all positive iff W is positive
// definite. Each sweep is a symmetric rank-one update −u uᵀ with
// u = w_k·/√d, applied by ger (alpha = −1, hence bit-symmetric) to the
// block rows [r, r+invBlock) × columns [r, n) only: about (1/2 + 1/(2b))
// of the matrix for b block rows. The lower part left of the diagonal
// blocks is not needed during the sweep (row k left of its block is read
// from column k) and is mirrored at the end, so the result is bit-symmetric
// and bit-identical to the full sweep. u is scratch of length ≥ n.
// It returns false if a pivot is not positive and finite or the inverse
// overflows (w is then partially overwritten). It does not allocate and
// starts no goroutines (unlike lapack Dpotrf/Dpotri, whose blocked
// Dgemm may). Cost about n³/2 multiply–adds in assembly rank-one kernels.
func invert(n, ld int, w, u []float64) bool {
	const nb = invBlock
	u = u[:n]
	for k := 0; k < n; k++ {
		d := w[k*ld+k]
		id := 1 / d
		if !(d > 0) || math.IsInf(d, 1) || math.IsInf(id, 1) {
			return false
		}
		is := 1 / math.Sqrt(d)
		b := k / nb * nb  // first column kept in row k
		e := min(b+nb, n) // rows j < e keep column k
		for j := 0; j < b; j++ {
			u[j] = w[j*ld+k] * is
		}
		floats.ScaleTo(u[b:], is, w[k*ld+b:k*ld+n])
		u[k] = 0
		for r0 := 0; r0 < n; r0 += nb {
			r1 := min(r0+nb, n)
			blas64.Ger(-1, blas64.Vector{N: r1 - r0, Inc: 1, Data: u[r0:r1]}, blas64.Vector{N: n - r0, Inc: 1, Data: u[r0:]},
				blas64.General{Rows: r1 - r0, Cols: n - r0, Stride: ld, Data: w[r0*ld+r0 : (r1-1)*ld+n]})
		}
		floats.ScaleTo(w[k*ld+b:k*ld+n], is, u[b:])
		for j := 0; j < e; j++ {
			w[j*ld+k] = u[j] * is
		}
		w[k*ld+k] = -id
	}
	for i := 0; i < n; i++ {
		row := w[i*ld+i/nb*nb : i*ld+n]
		floats.Scale(-1, row)
		if !AllFinite(row) {
			return false
		}
	}
	for i := nb; i < n; i++ {
		for j := 0; j < i/nb*nb; j++ {
			w[i*ld+j] = w[j*ld+i]
		}
	}
	return true
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// norm2 is the Euclidean norm: √(xᵀx) with the assembly dot product when
// xᵀx is safely inside the normal range, gonum's scaled Nrm2 otherwise (no
// overflow or underflow).
func norm2(x []float64) float64 {
	if s := floats.Dot(x, x); s > 0x1p-900 && s < 0x1p900 {
		return math.Sqrt(s)
	}
	return blas64.Nrm2(blas64.Vector{N: len(x), Inc: 1, Data: x})
}

// SizeBytes returns the bytes held by the receiver's own float64 buffers
// (Â, Q, r, θ and the cached P̃ψ), excluding Go object headers. The scratch
// space (workspace: a spare m×m matrix and eight vectors) is shared (see Pool)
// and not counted, nor is the buffer Stats borrows while λ < 1.
func (r *RLS) SizeBytes() int {
	n := 0
	for _, b := range [][]float64{r.aBuf, r.rv, r.theta, r.pf, r.cpsi, r.ch} {
		n += cap(b)
	}
	return 8 * n
}

// swapContents exchanges the contents of x and y (equal lengths).
func swapContents(x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		x[i], y[i] = y[i], v
	}
}
