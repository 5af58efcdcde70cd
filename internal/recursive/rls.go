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
	// rlsTol is the backward-error target of every solve with B = A + D/γ:
	// a solve of B x = b stops once
	//
	//	‖b − B x‖₂ ≤ rlsTol·(‖b‖₂ + tr(B)·‖x‖₂).
	//
	// tr(B) ≥ ‖B‖₂ is used as the cheap (O(m)) norm. Forming b − Bx in
	// floating point costs an error of at most m·ε·tr(B)·‖x‖ (and about
	// √m·ε·tr(B)·‖x‖ in practice, ε = 1.1e-16), so 1e-14 is attainable for
	// the sizes we run (m ≤ a few hundred) while being within two orders of
	// magnitude of the rounding floor. The forward error of θ is then at most
	// cond(B)·1e-14 relative, i.e. the error of a backward-stable direct solve.
	rlsTol = 1e-14

	// rlsMaxIter caps the preconditioned conjugate gradient iterations of
	// one solve. With the refresh rule below the preconditioned matrix has
	// its spectrum in [1, 1/rlsMuMin] = [1, 2], so CG contracts the error by
	// at least (√2−1)/(√2+1) ≈ 0.17 per iteration; 30 iterations take any
	// warm start to rounding level. A solve that still has not converged
	// forces a refresh (and a second attempt).
	rlsMaxIter = 30

	// rlsMuMin is the refresh threshold for μ = λ^j (j updates since the
	// last refresh). It bounds the condition number of the preconditioned
	// system by 1/rlsMuMin.
	rlsMuMin = 0.5

	// rlsExcessRefresh sets the work-based refresh rule: refresh once
	// rlsExcessRefresh·(PCG iterations beyond one per update since the last
	// refresh) ≥ m, i.e. once those extra iterations (4m² flops each) have
	// cost about two refreshes (m³/3 flops each). Measured over m = 20…400
	// and λ = 0.95…0.999 (flop counts), this is within a few percent of the
	// best fixed threshold and 5–25% cheaper than refreshing only at μ < 1/2.
	rlsExcessRefresh = 6
)

// rlsRefreshEvery is the periodic refresh interval (in updates) that stops
// rounding drift of the preconditioner factor when λ = 1 (or λ close to 1).
// A refresh costs m³/3 flops; spread over 4m+32 updates that is below
// m²/12 flops per update, about 1% of the O(m²) update itself.
func rlsRefreshEvery(m int) int { return 4*m + 32 }

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
// and the ridge solution (DESIGN.md §3)
//
//	θ = (A + D/γ)⁻¹ r,   D = diag(1, …, 1, 0),
//
// where the last coordinate of ψ is the bias, which is not regularised.
// θ is the solution to rounding (backward error below rlsTol) after every
// mutating call; it is not the textbook RLS recursion, which rescales
// P ← P/λ and thereby lets the ridge decay as λ^N.
//
// # Method
//
// A, r, s and n_c are updated exactly (A ← λA + vψψᵀ, …). B = A + D/γ is
// solved by preconditioned conjugate gradients (PCG), warm-started from the
// previous θ. The preconditioner is B̃⁻¹ with B̃ = μ·RᵀR, R upper triangular,
// where B̃ follows B̃ ← λB̃ + vψψᵀ (a rank-one Cholesky update, LINPACK
// dchud / Golub & Van Loan §6.5.4, Givens form) since the last refresh, at
// which B̃ = B exactly. After j updates B̃ = A + λʲ·D/γ = B − (1−λʲ)·D/γ, so
// μ = λʲ and the eigenvalues of B̃⁻¹B lie in [1, 1/μ]. The factor is
// refreshed, R = chol(A + D/γ) from scratch, when λ·μ would fall below
// rlsMuMin = 1/2, when the extra PCG work since the last refresh has cost
// about two refreshes (rlsExcessRefresh), after rlsRefreshEvery(m) = 4m+32
// updates (rounding drift of R at λ = 1), and when a solve fails to
// converge. With λ = 1, B̃ = B up to rounding and one PCG iteration (a
// refined Kalman step) suffices; the true residual r − Bθ is recomputed at
// the start of every solve, so rounding drift cannot accumulate in θ.
//
// # Cost
//
// Per Update: A update m², rank-one factor update 3m², initial residual 2m²,
// and 4m² per PCG iteration (one product with A, two triangular solves):
// about 10m² flops at λ = 1 (one iteration; textbook RLS needs about 3m²).
// For λ < 1 the ridge drift costs a few more iterations plus refreshes
// (m³/3 flops each, no allocation): measured 15–25m² flops per update for
// λ ∈ [0.99, 0.999] and 20–45m² for λ = 0.95, m = 20…400. The refresh
// interval shrinks with 1−λ; for λ < 1/2 every update refreshes (O(m³)).
// Memory: three m×m matrices (A, the factor R, and a spare factor so that a
// failed refresh leaves the receiver unchanged) and eight vectors of
// length m.
//
// # Bias before data
//
// B is positive definite iff A_mm > 0 (A is positive semidefinite and D/γ
// regularises every other direction). While A_mm = 0 — after NewRLS or
// Reset, and as long as every sample has v = 0 or a zero bias coordinate —
// the bias is unidentified. The receiver then works in the leading
// (m−1)-dimensional block, θ_m = 0, which is the limit of the solution with
// a bias ridge δ → 0 (the minimum-norm solution B⁺r). The first sample with
// v > 0 and ψ_m ≠ 0 makes B positive definite and triggers a refresh; from
// then on θ is the exact solution above.
//
// An RLS is owned by one goroutine; no method is safe for concurrent use
// (even QuadForm and ResidualEnergy use the receiver's scratch space).
type RLS struct {
	m      int     // dimension
	nf     int     // factored dimension: m, or m−1 while A_mm = 0 (bias unidentified)
	gamma  float64 // γ
	ig     float64 // 1/γ
	lambda float64 // λ

	cap  int           // capacity (dimension) of the buffers
	aBuf []float64     // A, upper triangle, row-major, stride m
	a    *mat.SymDense // view of aBuf
	rv   []float64     // r
	s    float64       // Σ c y²
	nc   float64       // Σ c

	theta []float64 // θ

	rf          []float64 // R, upper triangular, stride m: B̃ = μ·RᵀR on the leading nf block
	wf          []float64 // spare factor: refresh target
	mu          float64   // μ = λ^since
	since       int       // updates since the last refresh
	needRefresh bool      // refresh at the next update
	excess      int       // PCG iterations beyond one per update since the last refresh

	// scratch, length m each
	res, z, p, q, x, old []float64

	// diagnostics
	updates, refreshes, iters, unconverged uint64
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
	r.rf = make([]float64, n*n)
	r.wf = make([]float64, n*n)
	vecs := make([]float64, 8*n)
	r.rv, vecs = vecs[:n:n], vecs[n:]
	r.theta, vecs = vecs[:n:n], vecs[n:]
	r.res, vecs = vecs[:n:n], vecs[n:]
	r.z, vecs = vecs[:n:n], vecs[n:]
	r.p, vecs = vecs[:n:n], vecs[n:]
	r.q, vecs = vecs[:n:n], vecs[n:]
	r.x, vecs = vecs[:n:n], vecs[n:]
	r.old = vecs[:n:n]
}

// setDim sets the dimension to n ≤ r.cap and reslices the views. It does
// not touch the contents.
func (r *RLS) setDim(n int) {
	r.m = n
	r.aBuf = r.aBuf[:n*n]
	r.rf = r.rf[:n*n]
	r.wf = r.wf[:n*n]
	r.rv = r.rv[:n]
	r.theta = r.theta[:n]
	r.res, r.z, r.p, r.q, r.x, r.old = r.res[:n], r.z[:n], r.p[:n], r.q[:n], r.x[:n], r.old[:n]
	r.a.SetRawSymmetric(blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: r.aBuf})
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
	m := r.m
	clear(r.aBuf)
	clear(r.rv)
	clear(r.theta)
	r.s, r.nc = 0, 0
	r.nf = m - 1
	clear(r.rf)
	d := math.Sqrt(r.ig) // chol(I/γ)
	for i := 0; i < r.nf; i++ {
		r.rf[i*m+i] = d
	}
	r.mu, r.since, r.needRefresh, r.excess = 1, 0, false, 0
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
// Cost: O(m²) flops (see RLS), amortised O(m³)/refresh interval; no
// allocation.
func (r *RLS) Update(psi []float64, y, v float64) (ok bool) {
	m := r.m
	if len(psi) != m {
		panic(fmt.Sprintf("recursive: RLS.Update: len(psi) = %d, want %d", len(psi), m))
	}
	if !rlsFinite(y) || !rlsFinite(v) || v < 0 {
		return false
	}
	lam := r.lambda
	a := r.aBuf
	for i, p := range psi {
		// Diagonal entries bound the others (A is PSD), r_i² ≤ A_ii·s; the
		// factor 2 leaves room for the scaled factor update (v/(λμ) ≤ 2v).
		if !rlsFinite(p) ||
			!rlsFinite(2*(lam*a[i*m+i]+v*p*p)) ||
			!rlsFinite(lam*math.Abs(r.rv[i])+v*math.Abs(p*y)) {
			return false
		}
	}
	if !rlsFinite(lam*r.s+v*y*y) || !rlsFinite(lam*r.nc+v) {
		return false
	}

	leave := r.nf < m && v > 0 && psi[m-1] != 0 // bias becomes identified
	nf := r.nf
	if leave {
		nf = m
	}
	refresh := leave || r.needRefresh || lam*r.mu < rlsMuMin || r.since+1 >= rlsRefreshEvery(m) || rlsExcessRefresh*r.excess >= m
	if refresh {
		// Factor the new B = λA + vψψᵀ + D/γ into the spare before
		// committing anything, so that failure leaves the receiver unchanged.
		w := r.wf
		for i := 0; i < nf; i++ {
			row := w[i*m+i : i*m+nf]
			copy(row, a[i*m+i:i*m+nf])
			rlsScaleAdd(row, lam, v*psi[i], psi[i:nf])
			if i < m-1 {
				row[0] += r.ig
			}
		}
		if !rlsCholesky(nf, m, w) {
			return false
		}
	}

	// Commit the statistics.
	for i := 0; i < m; i++ {
		rlsScaleAdd(a[i*m+i:(i+1)*m], lam, v*psi[i], psi[i:])
	}
	vy := v * y
	for i, p := range psi {
		r.rv[i] = lam*r.rv[i] + vy*p
	}
	r.s = lam*r.s + vy*y
	r.nc = lam*r.nc + v
	r.updates++

	if refresh {
		r.rf, r.wf = r.wf, r.rf
		r.nf, r.mu, r.since, r.needRefresh, r.excess = nf, 1, 0, false, 0
		r.refreshes++
	} else {
		if v > 0 {
			// B̃' = λμRᵀR + vψψᵀ = λμ·(RᵀR + xxᵀ), x = ψ·√(v/(λμ)).
			// While nf = m−1, ψ_m = 0 here (else leave would be set).
			sc := math.Sqrt(v / (lam * r.mu))
			x := r.z
			for i := 0; i < nf; i++ {
				x[i] = sc * psi[i]
			}
			rlsCholUpdate(nf, m, r.rf, x)
		}
		r.mu *= lam
		r.since++
	}
	r.solveTheta()
	return true
}

// solveTheta recomputes θ by PCG warm-started at the current θ; on failure
// it refreshes the factor once and retries; if that fails too it restores
// θ and schedules a refresh.
func (r *RLS) solveTheta() {
	copy(r.old, r.theta)
	it, conv := r.pcg(r.theta, r.rv)
	r.iters += uint64(it)
	r.excess += max(it-1, 0)
	if conv && rlsAllFinite(r.theta) {
		return
	}
	r.unconverged++
	copy(r.theta, r.old)
	if r.refreshNow() {
		it, conv = r.pcg(r.theta, r.rv)
		r.iters += uint64(it)
		if conv && rlsAllFinite(r.theta) {
			return
		}
		copy(r.theta, r.old)
	}
	r.needRefresh = true
}

// refreshNow factors the current B = A + D/γ (leading nf block). On success
// it installs the factor and returns true; otherwise the factor is kept.
func (r *RLS) refreshNow() bool {
	if !r.factorB(r.wf, r.ig) {
		return false
	}
	r.rf, r.wf = r.wf, r.rf
	r.mu, r.since, r.needRefresh, r.excess = 1, 0, false, 0
	r.refreshes++
	return true
}

// factorB writes chol(A + D·ig) of the leading nf block into w (stride m).
func (r *RLS) factorB(w []float64, ig float64) bool {
	m, nf := r.m, r.nf
	for i := 0; i < nf; i++ {
		copy(w[i*m+i:i*m+nf], r.aBuf[i*m+i:i*m+nf])
		if i < m-1 {
			w[i*m+i] += ig
		}
	}
	return rlsCholesky(nf, m, w)
}

// pcg solves B x = b by preconditioned conjugate gradients (Golub & Van
// Loan §11.5, Alg. 11.5.1) with preconditioner (RᵀR)⁻¹ on the leading nf
// block (PCG is invariant to the scale μ), starting from x. It stops on the
// rlsTol criterion (converged = true) or after rlsMaxIter iterations or a
// breakdown (converged = false). The residual is recomputed exactly at the
// start, so rounding errors do not accumulate across calls. x and b must
// not be the receiver's scratch vectors res, z, p, q.
func (r *RLS) pcg(x, b []float64) (iters int, converged bool) {
	res, z, p, q := r.res, r.z, r.p, r.q
	bn := rlsNorm(b)
	trB := r.traceB()
	r.mulB(q, x)
	for i, bi := range b {
		res[i] = bi - q[i]
	}
	if rlsNorm(res) <= rlsTol*(bn+trB*rlsNorm(x)) {
		return 0, true
	}
	r.precond(z, res)
	copy(p, z)
	rz := floats.Dot(res, z)
	for it := 1; it <= rlsMaxIter; it++ {
		r.mulB(q, p)
		pq := floats.Dot(p, q)
		if !(pq > 0) || math.IsInf(pq, 1) || !(rz > 0) || math.IsInf(rz, 1) {
			return it, false
		}
		alpha := rz / pq
		floats.AddScaled(x, alpha, p)
		floats.AddScaled(res, -alpha, q)
		if rlsNorm(res) <= rlsTol*(bn+trB*rlsNorm(x)) {
			return it, true
		}
		r.precond(z, res)
		rzNew := floats.Dot(res, z)
		beta := rzNew / rz
		rz = rzNew
		for i, zi := range z {
			p[i] = zi + beta*p[i]
		}
	}
	return rlsMaxIter, false
}

// mulB sets dst = (A + D/γ) x.
func (r *RLS) mulB(dst, x []float64) {
	m := r.m
	blas64.Symv(1, r.a.RawSymmetric(), blas64.Vector{N: m, Inc: 1, Data: x}, 0, blas64.Vector{N: m, Inc: 1, Data: dst})
	ig := r.ig
	for i := 0; i < m-1; i++ {
		dst[i] += ig * x[i]
	}
}

// precond sets z = (RᵀR)⁻¹ρ on the leading nf coordinates and z = 0 on the
// rest (the unidentified bias).
func (r *RLS) precond(z, rho []float64) {
	nf := r.nf
	copy(z[:nf], rho[:nf])
	for i := nf; i < r.m; i++ {
		z[i] = 0
	}
	if nf == 0 {
		return
	}
	t := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: nf, Stride: r.m, Data: r.rf}
	zv := blas64.Vector{N: nf, Inc: 1, Data: z}
	blas64.Trsv(blas.Trans, t, zv)   // Rᵀw = ρ
	blas64.Trsv(blas.NoTrans, t, zv) // Rz = w
}

// traceB returns tr(A + D/γ) ≥ ‖A + D/γ‖₂.
func (r *RLS) traceB() float64 {
	m := r.m
	t := float64(m-1) * r.ig
	for i := 0; i < m; i++ {
		t += r.aBuf[i*m+i]
	}
	return t
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

// QuadForm returns ψᵀ(A + D/γ)⁻¹ψ, solved by PCG to the rlsTol backward
// error (the quadratic form's error is second order in the solve error).
// While the bias is unidentified (A_mm = 0) it returns +Inf if ψ_m ≠ 0:
// the improper bias prior has infinite variance. It returns NaN if psi is not
// finite. It panics if len(psi) != m. The statistics are not changed.
//
// Cost: O(m²) per PCG iteration (one at λ = 1, a few otherwise); no
// allocation.
func (r *RLS) QuadForm(psi []float64) float64 {
	m := r.m
	if len(psi) != m {
		panic(fmt.Sprintf("recursive: RLS.QuadForm: len(psi) = %d, want %d", len(psi), m))
	}
	if !rlsAllFinite(psi) {
		return math.NaN()
	}
	if r.nf < m && psi[m-1] != 0 {
		return math.Inf(1)
	}
	x := r.x
	clear(x)
	r.pcg(x, psi)
	return max(floats.Dot(psi, x), 0)
}

// ResidualEnergy returns Σ c_k (y_k − ψ_kᵀθ)² = s − 2θᵀr + θᵀAθ, clamped at
// ≥ 0 (the formula cancels when the fit is good: its absolute error is about
// ε·s). Cost O(m²); no allocation.
func (r *RLS) ResidualEnergy() float64 {
	m := r.m
	blas64.Symv(1, r.a.RawSymmetric(), blas64.Vector{N: m, Inc: 1, Data: r.theta}, 0, blas64.Vector{N: m, Inc: 1, Data: r.q})
	e := r.s - 2*floats.Dot(r.theta, r.rv) + floats.Dot(r.theta, r.q)
	return max(e, 0)
}

// Stats returns the sufficient statistics A (upper triangle stored), r,
// s = Σ c y² and n_c = Σ c. a and rv are views into the receiver, valid
// until the next mutating call; they must not be modified.
func (r *RLS) Stats() (a *mat.SymDense, rv []float64, s, nc float64) {
	return r.a, r.rv, r.s, r.nc
}

// SetGamma sets γ and refreshes, so that θ = (A + D/γ)⁻¹r holds exactly for
// the new γ. It returns ok = false, leaving the receiver unchanged, if gamma
// is not in (0, ∞) or the new system is not numerically positive definite.
// Cost O(m³).
func (r *RLS) SetGamma(gamma float64) (ok bool) {
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		return false
	}
	ig := 1 / gamma
	if !r.factorB(r.wf, ig) {
		return false
	}
	oldGamma, oldIG, oldMu, oldSince, oldNeed, oldExcess := r.gamma, r.ig, r.mu, r.since, r.needRefresh, r.excess
	r.gamma, r.ig = gamma, ig
	r.rf, r.wf = r.wf, r.rf
	r.mu, r.since, r.needRefresh, r.excess = 1, 0, false, 0
	copy(r.old, r.theta)
	it, conv := r.pcg(r.theta, r.rv)
	if !rlsAllFinite(r.theta) {
		copy(r.theta, r.old)
		r.rf, r.wf = r.wf, r.rf
		r.gamma, r.ig, r.mu, r.since, r.needRefresh, r.excess = oldGamma, oldIG, oldMu, oldSince, oldNeed, oldExcess
		return false
	}
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
// the factor and θ from scratch. n may differ from m: the receiver is
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
	n := a.SymmetricDim()
	if len(rv) != n {
		panic(fmt.Sprintf("recursive: RLS.Load: len(rv) = %d, want %d", len(rv), n))
	}
	if !rlsFinite(s) || !rlsFinite(nc) || s < 0 || nc < 0 || !rlsAllFinite(rv) {
		return false
	}
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			if !rlsFinite(a.At(i, j)) {
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

	// Factor into a spare with stride n.
	var w []float64
	if n > r.cap {
		w = make([]float64, n*n)
	} else {
		w = r.wf[:n*n]
	}
	for i := 0; i < nf; i++ {
		for j := i; j < nf; j++ {
			w[i*n+j] = a.At(i, j)
		}
		if i < n-1 {
			w[i*n+i] += r.ig
		}
	}
	if !rlsCholesky(nf, n, w) {
		return false
	}

	// Commit.
	if n > r.cap {
		// a cannot be the Stats view here (its dimension is at most cap).
		r.alloc(n)
		r.setDim(n)
		copy(r.wf, w) // the factor; swapped in below
	} else if n != r.m {
		r.setDim(n)
	}
	if a != mat.Symmetric(r.a) {
		clear(r.aBuf)
		for i := 0; i < n; i++ {
			for j := i; j < n; j++ {
				r.aBuf[i*n+j] = a.At(i, j)
			}
		}
	}
	copy(r.rv, rv)
	r.s, r.nc = s, nc
	r.nf = nf
	r.rf, r.wf = r.wf, r.rf
	r.mu, r.since, r.needRefresh, r.excess = 1, 0, false, 0
	r.refreshes++
	clear(r.theta)
	r.solveTheta()
	return true
}

// RLSState is a snapshot of an RLS: every number needed to resume it
// bit-identically. Matrices are m×m, row-major.
type RLSState struct {
	M      int
	Gamma  float64
	Lambda float64

	A  []float64 // A, symmetric (both triangles filled)
	RV []float64 // r
	S  float64   // Σ c y²
	NC float64   // Σ c

	Theta []float64 // θ

	// Preconditioner: B̃ = Mu·RᵀR on the leading Factored × Factored block;
	// R is upper triangular, zero elsewhere. Factored is M, or M−1 while the
	// bias is unidentified.
	R           []float64
	Factored    int
	Mu          float64
	Since       int
	Excess      int // PCG iterations beyond one per update since the last refresh
	NeedRefresh bool

	// Diagnostics: updates applied, factor refreshes, PCG iterations, solves
	// that did not converge.
	Updates, Refreshes, Iterations, Unconverged uint64
}

// State returns a deep copy of the receiver's state. It allocates.
func (r *RLS) State() RLSState {
	m := r.m
	st := RLSState{
		M: m, Gamma: r.gamma, Lambda: r.lambda,
		A: make([]float64, m*m), RV: append([]float64(nil), r.rv...), S: r.s, NC: r.nc,
		Theta: append([]float64(nil), r.theta...),
		R:     make([]float64, m*m), Factored: r.nf, Mu: r.mu, Since: r.since, Excess: r.excess, NeedRefresh: r.needRefresh,
		Updates: r.updates, Refreshes: r.refreshes, Iterations: r.iters, Unconverged: r.unconverged,
	}
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			st.A[i*m+j] = r.aBuf[i*m+j]
			st.A[j*m+i] = r.aBuf[i*m+j]
		}
	}
	for i := 0; i < r.nf; i++ {
		copy(st.R[i*m+i:i*m+r.nf], r.rf[i*m+i:i*m+r.nf])
	}
	return st
}

// RLSFromState returns an RLS resuming st. It returns an error wrapping
// ErrRLSState if dimensions are inconsistent, a number is not finite or out
// of range, A is not symmetric, the factor has a non-positive diagonal, or
// the unidentified-bias invariants (zero last row of A, r_m = 0) do not hold.
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
	case len(st.R) != m*m:
		return bad("len(R) = %d, want %d", len(st.R), m*m)
	case len(st.RV) != m:
		return bad("len(RV) = %d, want %d", len(st.RV), m)
	case len(st.Theta) != m:
		return bad("len(Theta) = %d, want %d", len(st.Theta), m)
	case st.Factored != m && st.Factored != m-1:
		return bad("Factored = %d, want %d or %d", st.Factored, m-1, m)
	case !(st.Mu > 0 && st.Mu <= 1):
		return bad("Mu = %v not in (0, 1]", st.Mu)
	case st.Since < 0:
		return bad("Since = %d < 0", st.Since)
	case st.Excess < 0:
		return bad("Excess = %d < 0", st.Excess)
	case !rlsFinite(st.S) || st.S < 0:
		return bad("S = %v", st.S)
	case !rlsFinite(st.NC) || st.NC < 0:
		return bad("NC = %v", st.NC)
	case !rlsAllFinite(st.A):
		return bad("A has a non-finite entry")
	case !rlsAllFinite(st.R):
		return bad("R has a non-finite entry")
	case !rlsAllFinite(st.RV):
		return bad("RV has a non-finite entry")
	case !rlsAllFinite(st.Theta):
		return bad("Theta has a non-finite entry")
	}
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			if st.A[i*m+j] != st.A[j*m+i] {
				return bad("A not symmetric at (%d, %d)", i, j)
			}
		}
	}
	for i := 0; i < st.Factored; i++ {
		if !(st.R[i*m+i] > 0) {
			return bad("R[%d,%d] = %v not positive", i, i, st.R[i*m+i])
		}
	}
	if st.Factored == m-1 {
		for j := 0; j < m; j++ {
			if st.A[(m-1)*m+j] != 0 {
				return bad("Factored = M−1 but A[%d,%d] = %v ≠ 0", m-1, j, st.A[(m-1)*m+j])
			}
		}
		if st.RV[m-1] != 0 {
			return bad("Factored = M−1 but RV[%d] = %v ≠ 0", m-1, st.RV[m-1])
		}
	}
	r := &RLS{gamma: st.Gamma, ig: 1 / st.Gamma, lambda: st.Lambda, a: &mat.SymDense{}}
	r.alloc(m)
	r.setDim(m)
	for i := 0; i < m; i++ {
		copy(r.aBuf[i*m+i:(i+1)*m], st.A[i*m+i:(i+1)*m])
		copy(r.rf[i*m+i:(i+1)*m], st.R[i*m+i:(i+1)*m])
	}
	copy(r.rv, st.RV)
	copy(r.theta, st.Theta)
	r.s, r.nc = st.S, st.NC
	r.nf, r.mu, r.since, r.excess, r.needRefresh = st.Factored, st.Mu, st.Since, st.Excess, st.NeedRefresh
	r.updates, r.refreshes, r.iters, r.unconverged = st.Updates, st.Refreshes, st.Iterations, st.Unconverged
	return r, nil
}

// rlsScaleAdd sets row = lam·row + c·x (len(x) == len(row)).
func rlsScaleAdd(row []float64, lam, c float64, x []float64) {
	if lam != 1 {
		floats.Scale(lam, row)
	}
	if c != 0 {
		floats.AddScaled(row, c, x)
	}
}

// rlsCholesky overwrites the upper triangle of the leading n×n block of w
// (row-major, stride ld) by U with UᵀU = w, right-looking (outer product)
// form, Golub & Van Loan Alg. 4.2.2 transposed to row-major upper storage.
// It returns false if a pivot is not positive and finite (w is then
// partially overwritten). It does not allocate and starts no goroutines
// (unlike lapack Dpotrf, whose blocked Dgemm may). Cost n³/3 flops.
func rlsCholesky(n, ld int, w []float64) bool {
	for k := 0; k < n; k++ {
		row := w[k*ld+k : k*ld+n]
		d := row[0]
		if !(d > 0) || math.IsInf(d, 1) {
			return false
		}
		d = math.Sqrt(d)
		row[0] = d
		tail := row[1:]
		floats.Scale(1/d, tail)
		for i, u := range tail {
			if u != 0 {
				ii := k + 1 + i
				floats.AddScaled(w[ii*ld+ii:ii*ld+n], -u, tail[i:])
			}
		}
	}
	return true
}

// rlsCholUpdate overwrites the upper-triangular R (leading n×n block, stride
// ld, positive diagonal) by R' with R'ᵀR' = RᵀR + xxᵀ, destroying x[:n].
// Givens rotations as in LINPACK dchud (Golub & Van Loan §6.5.4); stable,
// keeps the diagonal positive. Cost 3n² flops; no allocation.
func rlsCholUpdate(n, ld int, rf, x []float64) {
	for k := 0; k < n; k++ {
		xk := x[k]
		if xk == 0 {
			continue
		}
		row := rf[k*ld+k : k*ld+n]
		rkk := row[0]
		h := math.Hypot(rkk, xk)
		c, s := rkk/h, xk/h
		row[0] = h
		tail := row[1:]
		xs := x[k+1 : n]
		xs = xs[:len(tail)]
		for j, t := range tail {
			xj := xs[j]
			tail[j] = c*t + s*xj
			xs[j] = c*xj - s*t
		}
	}
}

func rlsFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func rlsAllFinite(x []float64) bool {
	for _, f := range x {
		if !rlsFinite(f) {
			return false
		}
	}
	return true
}

// rlsNorm is the Euclidean norm (scaled, no overflow).
func rlsNorm(x []float64) float64 {
	return blas64.Nrm2(blas64.Vector{N: len(x), Inc: 1, Data: x})
}
