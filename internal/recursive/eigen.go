package recursive

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Defaults of the SymEigen settings; see the fields of SymEigen.
const (
	// DefaultSymEigenRefreshEvery is the default period, in updates, of the
	// full re-decomposition that bounds the accumulation of rounding error.
	DefaultSymEigenRefreshEvery = 50

	// DefaultSymEigenDriftTol is the default tolerance of the O(n²) drift
	// probe run after every update (relative to ‖A‖_F). One update adds a
	// backward error of a modest multiple of n·ε·‖A‖ (ε = 2⁻⁵³); measured,
	// the probe stays below 5e-14 even after 200 updates without refresh at
	// n = 300, so it fires only when something went wrong. The probe sees
	// about ‖R‖_F/√n of a residual R, so 1e-12 keeps ‖A·U − U·Λ‖_F below
	// ~2e-11·‖A‖_F at n = 400.
	DefaultSymEigenDriftTol = 1e-12
)

// ErrSymEigenState is returned (wrapped) by SymEigenFromState for a
// snapshot that does not describe a valid decomposer.
var ErrSymEigenState = errors.New("recursive: invalid SymEigen state")

const (
	// eigEps is the relative machine precision, LAPACK's dlamch('E') = 2⁻⁵³.
	eigEps = 0x1p-53
	// eigSecularMaxIter bounds the root-finding iterations per eigenvalue.
	// The rational iteration converges in a handful of steps (at most 19 in
	// the tests, over 2.4e5 roots); the bound only matters when bisection
	// takes over.
	eigSecularMaxIter = 100
	// eigGemmTile is the tile edge for the serial matrix product; gonum's Dgemm
	// runs a tile of at most 3×3 blocks of 64 without spawning goroutines.
	eigGemmTile = 64
)

// SymEigen keeps the eigendecomposition A = U·diag(λ)·Uᵀ of an n×n symmetric
// matrix A current under rank-one updates A + ρ·v·vᵀ and under the
// replacement of one row and column (a working-set swap, DESIGN.md §3).
// The eigenvalues λ are ascending and U is orthogonal.
//
// SymEigen owns a copy of A and updates its entries directly from the inputs,
// so A is exact (bit-for-bit what the updates say) and the decomposition can
// always be recomputed from it. The decomposition is updated in O(n³) per
// rank-one update (one n×K by K×K product, K ≤ n the number of non-deflated
// components) with an O(n²) secular-equation solve, after which an O(n²)
// drift probe decides whether to recompute it from scratch (Refresh).
//
// A decomposer itself holds A, U and λ, about 16·n² bytes. The update
// workspaces (four more n×n arrays, dsyev's work array of about n·(n+2)
// and some vectors: 46 KiB at n = 32) are not kept per decomposer: each call
// borrows them from a process-wide pool for its own duration (see Pool), so
// thousands of decomposers that are updated one at a time per goroutine
// share a handful of workspaces. Once the pool holds a workspace of the
// dimension (after the first call on each goroutine in flight at once),
// RankOne and ReplaceRowCol do not allocate. Neither does a refresh for
// n < 128; from n = 128 on, the blocked LAPACK dsyev calls gonum's Dgemm,
// which then runs blocks on goroutines and allocates a few hundred bytes.
// Everything else is serial. All results are deterministic: the same
// sequence of calls gives bit-identical results (a workspace carries nothing
// from one call to the next, so which one a call borrows does not matter), and
// a decomposer restored with SymEigenFromState continues bit-identically
// (on the same GOARCH: the compiler may fuse multiply-adds on some, e.g.
// arm64, so bits can differ between architectures).
//
// A SymEigen is not safe for concurrent use; it is owned by one goroutine
// (the Learner's partition goroutine). Different SymEigens may be used
// concurrently: the pool hands each call a workspace of its own.
type SymEigen struct {
	// RefreshEvery is the period, in updates (RankOne or ReplaceRowCol
	// calls that changed A), of the full re-decomposition; ≤ 0 disables the
	// periodic refresh. NewSymEigen sets DefaultSymEigenRefreshEvery.
	RefreshEvery int

	// DriftTol is the tolerance of the drift probe run after every update:
	// with a fixed unit probe vector x and y = U·x, the decomposition is
	// recomputed when ‖A·y − U·Λ·x‖ > DriftTol·‖A‖_F or ‖Uᵀ·y − x‖ > DriftTol.
	// ≤ 0 disables the probe; non-finite results still force a refresh.
	// NewSymEigen sets DefaultSymEigenDriftTol.
	DriftTol float64

	n    int
	a    *mat.SymDense // exact A; both triangles of the raw data are kept
	vals []float64
	u    *mat.Dense

	sinceRefresh int
	updates      uint64
	refreshes    uint64

	// wk is the workspace borrowed from eigPool for the duration of one
	// call (nil between calls); see acquire.
	wk *eigWork
}

// eigWork is the workspace of the updates of an n×n SymEigen: about
// 32·n² + 40·n bytes plus dsyev's work array, shared through eigPool (see
// Pool) instead of being kept per decomposer. No value in it outlives the
// call that borrowed it, except probe, which is the same for every
// workspace of a given n.
type eigWork struct {
	probe []float64 // fixed unit probe vector of the drift check

	// Per-update workspaces, length n (n×n for the matrices).
	z, d, w, dl, wl, zhat, tau, delta []float64
	key, vnew                         []float64
	col, org, nd, df, src, pos        []int
	p1, p2, p3                        []float64
	ug, q, prod, unew                 []float64
	syevWork                          []float64
}

// eigPool shares the update workspaces of all SymEigens of one dimension.
var eigPool = Pool[*eigWork]{New: newEigWork}

func newEigWork(n int) *eigWork {
	e := &eigWork{}
	vec := func() []float64 { return make([]float64, n) }
	e.z, e.d, e.w, e.dl, e.wl, e.zhat, e.tau, e.delta = vec(), vec(), vec(), vec(), vec(), vec(), vec(), vec()
	e.key, e.vnew = vec(), vec()
	e.p1, e.p2, e.p3 = vec(), vec(), vec()
	ivec := func() []int { return make([]int, n) }
	e.col, e.org, e.nd, e.df, e.src, e.pos = ivec(), ivec(), ivec(), ivec(), ivec(), ivec()
	e.ug, e.q, e.prod, e.unew = make([]float64, n*n), make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)

	// Workspace query of the full decomposition (LAPACK dsyev).
	work := []float64{0}
	lapack64.Syev(lapack.EVCompute, blas64.Symmetric{N: n, Stride: n, Data: e.unew, Uplo: blas.Upper}, e.vnew, work, -1)
	e.syevWork = make([]float64, max(int(work[0]), 3*n-1))

	// The probe vector: deterministic pseudo-random entries in [-1, 1)
	// (splitmix64 from a fixed seed), normalised to unit length.
	e.probe = vec()
	var s uint64 = 0x9e3779b97f4a7c15
	for i := range e.probe {
		s += 0x9e3779b97f4a7c15
		x := s
		x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
		x = (x ^ (x >> 27)) * 0x94d049bb133111eb
		x ^= x >> 31
		e.probe[i] = float64(x>>11)*0x1p-52 - 1
	}
	nrm := blas64.Nrm2(eigVec(e.probe))
	for i := range e.probe {
		e.probe[i] /= nrm
	}
	return e
}

// acquire borrows the workspace for the current call unless the call is
// nested in one that holds it already; it reports whether the caller must
// release it (defer e.release()).
func (e *SymEigen) acquire() bool {
	if e.wk != nil {
		return false
	}
	e.wk = eigPool.Get(e.n)
	return true
}

// release returns the workspace to the pool.
func (e *SymEigen) release() {
	eigPool.Put(e.n, e.wk)
	e.wk = nil
}

// NewSymEigen returns a decomposer for n×n matrices holding A = 0 with the
// decomposition λ = 0, U = I. It panics if n < 1.
func NewSymEigen(n int) *SymEigen {
	if n < 1 {
		panic("recursive: SymEigen dimension must be positive")
	}
	e := &SymEigen{
		RefreshEvery: DefaultSymEigenRefreshEvery,
		DriftTol:     DefaultSymEigenDriftTol,
		n:            n,
		a:            mat.NewSymDense(n, nil),
		vals:         make([]float64, n),
		u:            mat.NewDense(n, n, nil),
	}
	for i := 0; i < n; i++ {
		e.u.Set(i, i, 1)
	}
	return e
}

// Dim returns n.
func (e *SymEigen) Dim() int { return e.n }

// Values returns the eigenvalues, ascending. The slice is a view of the
// receiver's storage, valid until the next mutating call; do not modify it.
func (e *SymEigen) Values() []float64 { return e.vals }

// Vectors returns U, n×n, column i the eigenvector of Values()[i]. It is a
// view of the receiver's storage (the same *mat.Dense for the receiver's
// lifetime, updated in place); do not modify it.
func (e *SymEigen) Vectors() *mat.Dense { return e.u }

// Matrix returns the exact current A. It is a view of the receiver's
// storage; do not modify it.
func (e *SymEigen) Matrix() *mat.SymDense { return e.a }

// Updates returns the number of updates (RankOne and ReplaceRowCol calls
// that changed A) since construction, carried through State.
func (e *SymEigen) Updates() uint64 { return e.updates }

// Refreshes returns the number of full re-decompositions done by updates
// (periodic, drift or failure) and Refresh, carried through State.
func (e *SymEigen) Refreshes() uint64 { return e.refreshes }

// Factorize sets A to a copy of a and computes its full decomposition with
// LAPACK dsyev (lapack64.Syev, the routine behind gonum's mat.EigenSym), in
// O(n³). It returns ok == false, leaving the receiver unchanged, if a has a
// non-finite entry or dsyev fails to converge. It panics if
// a.SymmetricDim() != Dim().
func (e *SymEigen) Factorize(a mat.Symmetric) (ok bool) {
	n := e.n
	if a.SymmetricDim() != n {
		panic(mat.ErrShape)
	}
	if e.acquire() {
		defer e.release()
	}
	// e.wk.ug holds the new A (full symmetric), e.wk.unew the copy dsyev destroys.
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := a.At(i, j)
			if !eigFinite(v) {
				return false
			}
			e.wk.ug[i*n+j], e.wk.ug[j*n+i] = v, v
		}
	}
	if !e.decompose(e.wk.ug) {
		return false
	}
	copy(e.a.RawSymmetric().Data, e.wk.ug)
	e.sinceRefresh = 0
	return true
}

// Refresh recomputes the decomposition of the current A from scratch with
// LAPACK dsyev (lapack64.Syev into the receiver's workspace), in O(n³); it
// allocates only inside gonum's Dgemm for n ≥ 128 (see SymEigen). It returns
// ok == false, leaving the receiver unchanged, if dsyev fails to converge.
func (e *SymEigen) Refresh() (ok bool) {
	if e.acquire() {
		defer e.release()
	}
	if !e.decompose(e.a.RawSymmetric().Data) {
		return false
	}
	e.refreshes++
	e.sinceRefresh = 0
	return true
}

// decompose replaces vals and U by the decomposition of the full symmetric
// n×n row-major matrix a (not modified). On failure nothing is changed.
func (e *SymEigen) decompose(a []float64) bool {
	n := e.n
	copy(e.wk.unew, a)
	ok := lapack64.Syev(lapack.EVCompute, blas64.Symmetric{N: n, Stride: n, Data: e.wk.unew, Uplo: blas.Upper},
		e.wk.vnew, e.wk.syevWork, len(e.wk.syevWork))
	if !ok || !AllFinite(e.wk.vnew) || !AllFinite(e.wk.unew) {
		return false
	}
	copy(e.vals, e.wk.vnew)
	copy(e.u.RawMatrix().Data, e.wk.unew)
	return true
}

// RankOne sets A ← A + ρ·v·vᵀ and updates the decomposition, in O(n³) for
// one n×K by K×K product (K ≤ n the number of non-deflated components) and
// O(n²) for everything else, without allocating. It panics if len(v) != Dim().
//
// The update follows Golub (1973) and Bunch, Nielsen and Sorensen (1978):
// with z = Uᵀv, the eigenproblem of diag(λ) + ρ·z·zᵀ is solved by deflation
// (LAPACK dlaed2), the secular equation (dlaed4) and the stable eigenvectors
// of Gu and Eisenstat (1994) (dlaed3); see rankOne.
//
// It returns refreshed == true if the decomposition was then recomputed from
// scratch: periodically (RefreshEvery), because the drift probe exceeded
// DriftTol, or because the update failed (non-finite numbers, a secular root
// that did not converge).
//
// Bad data is not an error and not a panic: if ρ or an entry of v is not
// finite, or A + ρ·v·vᵀ would overflow, RankOne returns false and the receiver
// is unchanged. ρ = 0 or v = 0 also leave it unchanged.
func (e *SymEigen) RankOne(rho float64, v []float64) (refreshed bool) {
	n := e.n
	if len(v) != n {
		panic(mat.ErrShape)
	}
	if !eigFinite(rho) || !AllFinite(v) || rho == 0 {
		return false
	}
	vmax := 0.0
	for _, x := range v {
		vmax = math.Max(vmax, math.Abs(x))
	}
	if vmax == 0 {
		return false
	}
	a := e.a.RawSymmetric().Data
	amax := 0.0
	for _, x := range a {
		amax = math.Max(amax, math.Abs(x))
	}
	if !eigFinite(amax + math.Abs(rho)*vmax*vmax) {
		return false
	}
	if e.acquire() {
		defer e.release()
	}
	for i := 0; i < n; i++ {
		t := rho * v[i]
		for j := i; j < n; j++ {
			x := a[i*n+j] + t*v[j]
			a[i*n+j], a[j*n+i] = x, x
		}
	}
	ok := e.rankOne(rho, v)
	return e.finish(ok)
}

// ReplaceRowCol sets row and column j of A to col (len(col) == Dim(); col[j]
// is the new diagonal entry) and updates the decomposition, in O(n³) and
// without allocating. It panics if j is out of range or len(col) != Dim().
//
// The change is E = e_j·dᵀ + d·e_jᵀ with d = col − A[:,j] except
// d_j = (col[j] − A[j,j])/2, a symmetric rank-2 change. With s = √‖d‖,
// a = s·e_j and b = d/s (balanced magnitudes),
//
//	E = a·bᵀ + b·aᵀ = ½(a+b)(a+b)ᵀ − ½(a−b)(a−b)ᵀ,
//
// done as two rank-one updates of the decomposition; A itself is set
// directly, so it is exact. The drift probe and the periodic refresh run
// once, after both, and the call counts as one update.
//
// It returns refreshed as RankOne does. If an entry of col is not finite it
// returns false and the receiver is unchanged; if col equals A[:,j] nothing
// changes either.
func (e *SymEigen) ReplaceRowCol(j int, col []float64) (refreshed bool) {
	n := e.n
	if j < 0 || j >= n {
		panic(mat.ErrRowAccess)
	}
	if len(col) != n {
		panic(mat.ErrShape)
	}
	if !AllFinite(col) {
		return false
	}
	if e.acquire() {
		defer e.release()
	}
	a := e.a.RawSymmetric().Data
	d := e.wk.p1
	for i := 0; i < n; i++ {
		d[i] = col[i] - a[i*n+j]
	}
	d[j] /= 2
	dn := blas64.Nrm2(eigVec(d))
	if dn == 0 {
		return false
	}
	for i := 0; i < n; i++ {
		a[i*n+j], a[j*n+i] = col[i], col[i]
	}
	ok := eigFinite(dn) && AllFinite(d)
	if ok {
		s := math.Sqrt(dn)
		vp, vm := e.wk.p2, e.wk.p3
		for i := 0; i < n; i++ {
			b := d[i] / s
			vp[i], vm[i] = b, -b
		}
		vp[j] += s
		vm[j] += s
		ok = e.rankOne(0.5, vp) && e.rankOne(-0.5, vm)
	}
	return e.finish(ok)
}

// finish does the bookkeeping after an update of A: the periodic refresh,
// the drift probe, and the refresh forced by a failed update (ok == false).
func (e *SymEigen) finish(ok bool) (refreshed bool) {
	e.updates++
	e.sinceRefresh++
	need := !ok ||
		(e.RefreshEvery > 0 && e.sinceRefresh >= e.RefreshEvery) ||
		!e.probeOK()
	if !need {
		return false
	}
	// If dsyev fails (it does not, for finite A, in practice) the updated
	// decomposition is kept and the next update tries again.
	return e.Refresh()
}

// probeOK runs the drift check in O(n²): with the fixed unit probe x and
// y = U·x it compares A·y with U·Λ·x and Uᵀ·y with x. Non-finite values in
// the decomposition always fail it; DriftTol ≤ 0 disables the comparison.
func (e *SymEigen) probeOK() bool {
	if !AllFinite(e.vals) || !AllFinite(e.u.RawMatrix().Data) {
		return false
	}
	if !(e.DriftTol > 0) {
		return true
	}
	n := e.n
	u := e.u.RawMatrix()
	x, y, t, r := e.wk.probe, e.wk.p1, e.wk.p2, e.wk.p3
	blas64.Gemv(blas.NoTrans, 1, u, eigVec(x), 0, eigVec(y))
	for i := range t {
		t[i] = e.vals[i] * x[i]
	}
	blas64.Gemv(blas.NoTrans, 1, u, eigVec(t), 0, eigVec(r))
	blas64.Symv(1, e.a.RawSymmetric(), eigVec(y), -1, eigVec(r))
	res := blas64.Nrm2(eigVec(r)) / math.Max(e.normA(), math.SmallestNonzeroFloat64)
	blas64.Gemv(blas.Trans, 1, u, eigVec(y), 0, eigVec(r))
	for i := 0; i < n; i++ {
		r[i] -= x[i]
	}
	orth := blas64.Nrm2(eigVec(r))
	return res <= e.DriftTol && orth <= e.DriftTol
}

// normA returns ‖A‖_F.
func (e *SymEigen) normA() float64 {
	a := e.a.RawSymmetric().Data
	return blas64.Nrm2(blas64.Vector{N: len(a), Inc: 1, Data: a})
}

// rankOne replaces the decomposition of A by that of A + ρ·v·vᵀ (A itself is
// not touched). It returns false if it failed; the decomposition is then
// inconsistent and must be recomputed.
//
// With z = Uᵀv, A + ρvvᵀ = U (D + ρzzᵀ) Uᵀ, D = diag(λ). The steps:
//
//  1. Sign: for ρ < 0 solve −(−D + |ρ|zzᵀ) instead, i.e. work on the poles
//     d_k = −λ_{n−1−k} so that the poles are ascending and the weight
//     positive; the secular index k maps to column col[k] of U.
//  2. Scale z to unit length, r = |ρ|·‖z‖² (as LAPACK dlaed2).
//  3. Deflation (dlaed2): a component with r·|w_k| ≤ tol keeps its
//     eigenpair; two poles closer than the tolerance (|t·c·s| ≤ tol after a
//     Givens rotation that zeroes one weight) are decoupled by rotating the
//     two columns of U. tol = 8ε·max(max|d|, r) ≥ 8ε·‖D + r·wwᵀ‖/2, so the
//     neglected entries are a backward error of order ε‖A‖.
//  4. The K remaining eigenvalues solve the secular equation
//     1/r + Σ w_j²/(d_j − μ) = 0, each stored as an offset τ from its nearer
//     pole (eigSecularRoot, after dlaed4), so that d_j − μ_k is accurate.
//  5. Gu–Eisenstat (1994), as in dlaed3: recompute the weights from the
//     computed roots by Löwner's formula,
//     r·ŵ_i² = ∏_k (μ_k − d_i) / ∏_{k≠i} (d_k − d_i),
//     the exact weights of a nearby problem whose computed roots are exact;
//     its eigenvectors q_k ∝ (D − μ_k I)⁻¹ ŵ, formed from the accurate
//     differences d_j − μ_k, are then numerically orthogonal.
//  6. U ← U·Q on the non-deflated columns (serial tiled dgemm), then merge
//     the deflated and updated pairs into ascending order.
func (e *SymEigen) rankOne(rho float64, v []float64) bool {
	n := e.n
	u := e.u.RawMatrix()
	ud := u.Data
	blas64.Gemv(blas.Trans, 1, u, eigVec(v), 0, eigVec(e.wk.z))

	// 1. Sign and order.
	sign := 1.0
	if rho < 0 {
		sign = -1
	}
	d, w, col := e.wk.d, e.wk.w, e.wk.col
	for k := 0; k < n; k++ {
		c := k
		if sign < 0 {
			c = n - 1 - k
		}
		col[k] = c
		d[k] = sign * e.vals[c]
		w[k] = e.wk.z[c]
	}

	// 2. Scale.
	zn := blas64.Nrm2(eigVec(w))
	if zn == 0 {
		return true
	}
	r := math.Abs(rho) * zn * zn
	if !eigFinite(r) || r == 0 {
		return false
	}
	for k := range w {
		w[k] /= zn
	}

	// 3. Deflation (dlaed2, with the poles already sorted).
	tol := 8 * eigEps * math.Max(math.Max(math.Abs(d[0]), math.Abs(d[n-1])), r)
	nd, df := e.wk.nd[:0], e.wk.df[:0]
	pj := -1
	for nj := 0; nj < n; nj++ {
		if r*math.Abs(w[nj]) <= tol {
			df = append(df, nj)
			continue
		}
		if pj < 0 {
			pj = nj
			continue
		}
		s, c := w[pj], w[nj]
		tau := math.Hypot(c, s)
		t := d[nj] - d[pj]
		c /= tau
		s = -s / tau
		if math.Abs(t*c*s) <= tol {
			// Rotate columns col[pj] (x) and col[nj] (y) of U:
			// x ← c·x + s·y, y ← c·y − s·x, which zeroes w[pj].
			w[nj], w[pj] = tau, 0
			cp, cn := col[pj], col[nj]
			for i := 0; i < n; i++ {
				x, y := ud[i*n+cp], ud[i*n+cn]
				ud[i*n+cp] = c*x + s*y
				ud[i*n+cn] = c*y - s*x
			}
			dp := d[pj]*c*c + d[nj]*s*s
			d[nj] = d[pj]*s*s + d[nj]*c*c
			d[pj] = dp
			df = append(df, pj)
		} else {
			nd = append(nd, pj)
		}
		pj = nj
	}
	if pj >= 0 {
		nd = append(nd, pj)
	}
	K := len(nd)

	// 4. Secular equation; q holds Δ_jk = d_j − μ_k (K×K, row j, column k).
	dl, wl := e.wk.dl[:K], e.wk.wl[:K]
	for k, i := range nd {
		dl[k], wl[k] = d[i], w[i]
	}
	q := e.wk.q[:K*K]
	for k := 0; k < K; k++ {
		o, t, ok := eigSecularRoot(k, dl, wl, r, e.wk.delta[:K])
		if !ok {
			return false
		}
		e.wk.org[k], e.wk.tau[k] = o, t
		for j := 0; j < K; j++ {
			q[j*K+k] = e.wk.delta[j]
		}
	}

	// 5. Gu–Eisenstat weights (dlaed3): ŵ_i² r = −Δ_ii ∏_{k≠i} Δ_ik/(d_i − d_k).
	zh := e.wk.zhat[:K]
	for i := 0; i < K; i++ {
		p := q[i*K+i]
		row := q[i*K : i*K+K]
		for k, dik := range row {
			if k != i {
				p *= dik / (dl[i] - dl[k])
			}
		}
		zh[i] = math.Copysign(math.Sqrt(math.Max(-p, 0)), wl[i])
	}
	// Eigenvectors q_k ∝ ŵ_j / Δ_jk, normalised.
	for k := 0; k < K; k++ {
		ss := blas64.Vector{N: K, Inc: K, Data: q[k:]}
		for j := 0; j < K; j++ {
			q[j*K+k] = zh[j] / q[j*K+k]
		}
		nrm := blas64.Nrm2(ss)
		if !(nrm > 0) || !eigFinite(nrm) {
			return false
		}
		blas64.Scal(1/nrm, ss)
	}

	// 6. U ← U·Q on the non-deflated columns.
	if K > 0 {
		ug := e.wk.ug[:n*K]
		for i := 0; i < n; i++ {
			for k, c := range nd {
				ug[i*K+k] = ud[i*n+col[c]]
			}
		}
		eigGemm(
			blas64.General{Rows: n, Cols: K, Stride: K, Data: ug},
			blas64.General{Rows: K, Cols: K, Stride: K, Data: q},
			blas64.General{Rows: n, Cols: K, Stride: K, Data: e.wk.prod[:n*K]})
	}

	// Merge: key holds the values in the secular (sign-flipped) order; roots
	// come first (src = k), then the deflated poles (src = K + t). A stable
	// insertion sort is O(n) on the nearly sorted concatenation and
	// O(n·#deflated) at worst, negligible next to the product.
	m := 0
	for k := 0; k < K; k++ {
		e.wk.key[m] = dl[e.wk.org[k]] + e.wk.tau[k]
		e.wk.src[m] = k
		m++
	}
	for t, p := range df {
		e.wk.key[m] = d[p]
		e.wk.src[m] = K + t
		m++
	}
	key, src := e.wk.key[:n], e.wk.src[:n]
	for i := 1; i < n; i++ {
		kv, sv := key[i], src[i]
		j := i - 1
		for j >= 0 && key[j] > kv {
			key[j+1], src[j+1] = key[j], src[j]
			j--
		}
		key[j+1], src[j+1] = kv, sv
	}
	// Position pos in ascending true order takes sorted entry m.
	for m := 0; m < n; m++ {
		p := m
		if sign < 0 {
			p = n - 1 - m
		}
		e.wk.vnew[p] = sign * key[m]
		e.wk.pos[p] = src[m]
	}
	un := e.wk.unew
	for i := 0; i < n; i++ {
		for p := 0; p < n; p++ {
			s := e.wk.pos[p]
			if s < K {
				un[i*n+p] = e.wk.prod[i*K+s]
			} else {
				un[i*n+p] = ud[i*n+col[df[s-K]]]
			}
		}
	}
	copy(ud, un)
	copy(e.vals, e.wk.vnew)
	return true
}

// eigSecularRoot computes the k-th smallest root μ_k (0-based) of the secular
// equation
//
//	g(μ) = 1/ρ + Σ_j w_j²/(d_j − μ) = 0,   ρ > 0, d strictly increasing,
//
// as μ_k = d_org + τ relative to the nearer pole, and writes
// delta[j] = (d_j − d_org) − τ = d_j − μ_k to full relative accuracy. It
// follows LAPACK dlaed4 (Ren-Cang Li, "Solving secular equations stably and
// efficiently", 1993): root k < K−1 lies in (d_k, d_{k+1}) and the origin is
// the pole on the side of the midpoint where it lies; the last root lies in
// (d_{K−1}, d_{K−1} + ρ‖w‖²]. Each step solves a two-pole rational model
// c + s/(d_i − μ) + S/(d_{i+1} − μ) matched to g and g′ at the iterate —
// for interior roots the fixed-weight model (the origin pole's exact weight)
// and, when it converges slowly, the middle way (s, S from the two sides'
// derivatives); for the last root the middle way on its two nearest poles —
// with a Newton step if the model step goes the wrong way, bisection of the
// bracket if it leaves it, and a bisection (geometric when the bracket
// excludes 0) after two slow steps. It stops when |g| is below its
// rounding-error bound (dlaed4's test), or when the iterate cannot move;
// ok == false after eigSecularMaxIter steps or on non-finite values.
// Without the geometric step a root 1e-11 from its pole, approached from a
// model guess of 1e-27, took 39 doubling steps; with it, 6.
func eigSecularRoot(k int, d, w []float64, rho float64, delta []float64) (org int, tau float64, ok bool) {
	K := len(d)
	rinv := 1 / rho
	if K == 1 {
		tau = rho * w[0] * w[0]
		delta[0] = -tau
		return 0, tau, eigFinite(tau) && tau > 0
	}
	last := k == K-1
	var i int // the model's poles are i and i+1
	// The bracket [lo, hi] of τ; a bound that is a pole (or an iterate
	// already evaluated) is excluded, the midpoint and ρ‖w‖² are not: a root
	// within an ulp of them must be reachable without crawling there by
	// bisection.
	var lo, hi float64
	var loIn, hiIn bool
	if !last {
		i = k
		gap := d[k+1] - d[k]
		mid := gap / 2
		g := rinv
		for j := 0; j < K; j++ {
			g += w[j] * w[j] / ((d[j] - d[k]) - mid)
		}
		if g > 0 {
			org, lo, hi, hiIn = k, 0, mid, true
		} else {
			org, lo, hi, loIn = k+1, -mid, 0, true
		}
	} else {
		i = K - 2
		org = K - 1
		sw := 0.0
		for _, x := range w {
			sw += x * x
		}
		lo, hi, hiIn = 0, rho*sw, true
	}
	do := d[org]
	for j := 0; j < K; j++ {
		delta[j] = d[j] - do
	}
	gap := delta[i+1] - delta[i]

	// Initial guess (dlaed4): the other poles' terms frozen at the bracket
	// midpoint, the two-pole equation c0 + w_i²/(δ_i−τ) + w_{i+1}²/(δ_{i+1}−τ) = 0
	// solved in closed form.
	tm := (lo + hi) / 2
	c0 := rinv
	for j := 0; j < K; j++ {
		if j != i && j != i+1 {
			c0 += w[j] * w[j] / (delta[j] - tm)
		}
	}
	wi2, wi12 := w[i]*w[i], w[i+1]*w[i+1]
	switch {
	case org == i: // c0 τ² − a τ + b = 0, root in (0, gap/2]
		a := c0*gap + wi2 + wi12
		b := wi2 * gap
		disc := math.Sqrt(math.Abs(a*a - 4*b*c0))
		if a > 0 {
			tau = 2 * b / (a + disc)
		} else {
			tau = (a - disc) / (2 * c0)
		}
	case !last: // c0 τ² − a τ − b = 0, root in [−gap/2, 0)
		a := -c0*gap + wi2 + wi12
		b := wi12 * gap
		disc := math.Sqrt(math.Abs(a*a + 4*b*c0))
		if a > 0 {
			tau = -2 * b / (a + disc)
		} else {
			tau = (a - disc) / (2 * c0)
		}
	default: // last root: c0 τ² − a τ − b = 0, the positive root
		// dlaed4 first locates the root in (0, tm) or [tm, hi] from the sign
		// of g(tm), and starts at hi when the model cannot place it.
		a := -c0*gap + wi2 + wi12
		b := wi12 * gap
		disc := math.Sqrt(math.Abs(a*a + 4*b*c0))
		if a >= 0 {
			tau = (a + disc) / (2 * c0)
		} else {
			tau = 2 * b / (disc - a)
		}
		if c0+wi2/(delta[i]-tm)+wi12/(delta[i+1]-tm) <= 0 {
			lo, loIn = tm, true
			if c0 <= wi2/(gap+hi)+wi12/hi {
				tau = hi
			}
		} else {
			hi, hiIn = tm, true
		}
	}
	inside := func(x float64) bool {
		return (x > lo || loIn && x == lo) && (x < hi || hiIn && x == hi)
	}
	if !inside(tau) {
		tau = (lo + hi) / 2
	}

	swtch := false
	prevG := 0.0
	nslow := 0
	for it := 0; it < eigSecularMaxIter; it++ {
		// g = 1/ρ + ψ + φ, ψ over the poles j ≤ i, φ over j > i, with the
		// rounding-error bound of dlaed4 (sums of the partial sums).
		var psi, dpsi, ep float64
		for j := 0; j <= i; j++ {
			t := w[j] / (delta[j] - tau)
			psi += w[j] * t
			dpsi += t * t
			ep += psi
		}
		var phi, dphi, eq float64
		for j := K - 1; j > i; j-- {
			t := w[j] / (delta[j] - tau)
			phi += w[j] * t
			dphi += t * t
			eq += phi
		}
		g := rinv + psi + phi
		dg := dpsi + dphi
		if !eigFinite(g) || !eigFinite(dg) {
			return org, tau, false
		}
		bound := 8*(math.Abs(psi)+math.Abs(phi)) + math.Abs(ep) + math.Abs(eq) + rinv + math.Abs(tau)*dg
		if math.Abs(g) <= eigEps*bound {
			break
		}
		// g is increasing in τ: shrink the bracket.
		if g <= 0 {
			if tau >= lo {
				lo, loIn = tau, false
			}
		} else {
			if tau <= hi {
				hi, hiIn = tau, false
			}
		}
		// Slow progress (|g| not reduced tenfold from the same side): switch
		// the model (dlaed4's SWTCH), and after two such steps bisect.
		if it > 0 && g*prevG > 0 && math.Abs(g) > math.Abs(prevG)/10 {
			nslow++
			if !last {
				swtch = !swtch
			}
		} else {
			nslow = 0
		}
		prevG = g

		// The two-pole model through (τ, g, g′): c η² − A η + B = 0.
		d1, d2 := delta[i]-tau, delta[i+1]-tau
		var c float64
		switch {
		case last || swtch: // middle way
			c = g - d1*dpsi - d2*dphi
		case org == i: // fixed weight w_i²
			c = g - d2*dg + gap*(w[i]/d1)*(w[i]/d1)
		default: // fixed weight w_{i+1}²
			c = g - d1*dg - gap*(w[i+1]/d2)*(w[i+1]/d2)
		}
		A := (d1+d2)*g - d1*d2*dg
		B := d1 * d2 * g
		var eta float64
		switch {
		case c == 0 && A == 0:
			eta = -g / dg
		case c == 0:
			eta = B / A
		default:
			disc := math.Sqrt(math.Abs(A*A - 4*B*c))
			switch {
			case last && A >= 0:
				eta = (A + disc) / (2 * c)
			case last:
				eta = 2 * B / (A - disc)
			case A <= 0:
				eta = (A - disc) / (2 * c)
			default:
				eta = 2 * B / (A + disc)
			}
		}
		if g*eta >= 0 || !eigFinite(eta) {
			eta = -g / dg // Newton
		}
		if !inside(tau + eta) {
			if g < 0 {
				eta = (hi - tau) / 2
			} else {
				eta = (lo - tau) / 2
			}
		}
		if nslow >= 2 {
			// Bisect, geometrically when the bracket does not contain 0:
			// from a far start (a root ~1e-11 from its pole approached from
			// 1e-27) rational and Newton steps only double the offset.
			nslow = 0
			t := (lo + hi) / 2
			if lo > 0 {
				t = math.Sqrt(lo) * math.Sqrt(hi)
			} else if hi < 0 {
				t = -math.Sqrt(-lo) * math.Sqrt(-hi)
			}
			if inside(t) {
				eta = t - tau
			}
		}
		if tau+eta == tau {
			break // the bracket has collapsed to adjacent floats
		}
		tau += eta
		if it == eigSecularMaxIter-1 {
			return org, tau, false
		}
	}
	for j := 0; j < K; j++ {
		delta[j] -= tau
	}
	return org, tau, true
}

// Residual returns
//
//	max(‖A·U − U·Λ‖_F, ‖UᵀU − I‖_F·‖A‖_F) / max(‖A‖_F, tiny),
//
// tiny the smallest positive float64, in O(n³), for tests and diagnostics.
// It uses the receiver's workspaces and does not allocate.
func (e *SymEigen) Residual() float64 {
	n := e.n
	if e.acquire() {
		defer e.release()
	}
	ud := e.u.RawMatrix().Data
	au := blas64.General{Rows: n, Cols: n, Stride: n, Data: e.wk.prod}
	eigGemm(blas64.General{Rows: n, Cols: n, Stride: n, Data: e.a.RawSymmetric().Data}, e.u.RawMatrix(), au)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			au.Data[i*n+j] -= ud[i*n+j] * e.vals[j]
		}
	}
	r1 := blas64.Nrm2(blas64.Vector{N: n * n, Inc: 1, Data: au.Data})
	// UᵀU − I, with Uᵀ formed explicitly so the serial product applies.
	ut := e.wk.ug
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			ut[j*n+i] = ud[i*n+j]
		}
	}
	eigGemm(blas64.General{Rows: n, Cols: n, Stride: n, Data: ut}, e.u.RawMatrix(), au)
	for i := 0; i < n; i++ {
		au.Data[i*n+i] -= 1
	}
	r2 := blas64.Nrm2(blas64.Vector{N: n * n, Inc: 1, Data: au.Data})
	na := e.normA()
	return math.Max(r1, r2*na) / math.Max(na, math.SmallestNonzeroFloat64)
}

// SymEigenState is a plain snapshot of a SymEigen: the exact matrix, the
// decomposition, the settings and the counters. SymEigenFromState restores
// it so that subsequent updates are bit-identical to the original's.
type SymEigenState struct {
	N            int
	A            []float64 // n×n row-major, symmetric
	Values       []float64 // ascending
	Vectors      []float64 // n×n row-major, column i ↔ Values[i]
	RefreshEvery int
	DriftTol     float64
	SinceRefresh int
	Updates      uint64
	Refreshes    uint64
}

// State returns a deep copy of the receiver's state, in O(n²).
func (e *SymEigen) State() SymEigenState {
	return SymEigenState{
		N:            e.n,
		A:            append([]float64(nil), e.a.RawSymmetric().Data...),
		Values:       append([]float64(nil), e.vals...),
		Vectors:      append([]float64(nil), e.u.RawMatrix().Data...),
		RefreshEvery: e.RefreshEvery,
		DriftTol:     e.DriftTol,
		SinceRefresh: e.sinceRefresh,
		Updates:      e.updates,
		Refreshes:    e.refreshes,
	}
}

// SymEigenFromState returns a decomposer restored from s (copied). It
// returns an error wrapping ErrSymEigenState if s is inconsistent: N < 1,
// wrong lengths, non-finite numbers, A not exactly symmetric, Values not
// ascending, a NaN DriftTol or a negative SinceRefresh. It does not check
// that the decomposition matches A (Residual does, in O(n³)).
func SymEigenFromState(s SymEigenState) (*SymEigen, error) {
	n := s.N
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: dimension %d", ErrSymEigenState, n)
	case len(s.A) != n*n:
		return nil, fmt.Errorf("%w: len(A) = %d, want %d", ErrSymEigenState, len(s.A), n*n)
	case len(s.Values) != n:
		return nil, fmt.Errorf("%w: len(Values) = %d, want %d", ErrSymEigenState, len(s.Values), n)
	case len(s.Vectors) != n*n:
		return nil, fmt.Errorf("%w: len(Vectors) = %d, want %d", ErrSymEigenState, len(s.Vectors), n*n)
	case !AllFinite(s.A) || !AllFinite(s.Values) || !AllFinite(s.Vectors):
		return nil, fmt.Errorf("%w: non-finite entries", ErrSymEigenState)
	case math.IsNaN(s.DriftTol):
		return nil, fmt.Errorf("%w: DriftTol is NaN", ErrSymEigenState)
	case s.SinceRefresh < 0:
		return nil, fmt.Errorf("%w: SinceRefresh = %d", ErrSymEigenState, s.SinceRefresh)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if s.A[i*n+j] != s.A[j*n+i] {
				return nil, fmt.Errorf("%w: A[%d,%d] != A[%d,%d]", ErrSymEigenState, i, j, j, i)
			}
		}
	}
	for i := 1; i < n; i++ {
		if s.Values[i] < s.Values[i-1] {
			return nil, fmt.Errorf("%w: Values not ascending at %d", ErrSymEigenState, i)
		}
	}
	e := NewSymEigen(n)
	copy(e.a.RawSymmetric().Data, s.A)
	copy(e.vals, s.Values)
	copy(e.u.RawMatrix().Data, s.Vectors)
	e.RefreshEvery = s.RefreshEvery
	e.DriftTol = s.DriftTol
	e.sinceRefresh = s.SinceRefresh
	e.updates = s.Updates
	e.refreshes = s.Refreshes
	return e, nil
}

// eigGemm sets c = a·b in tiles of eigGemmTile, so that gonum's Dgemm runs
// each tile serially: the Learner owns one core (DESIGN.md §6), and above
// 4 blocks of 64 Dgemm spawns goroutines, which allocate. The result is
// deterministic (each tile sums over k in a fixed order).
func eigGemm(a, b, c blas64.General) {
	m, k, n := a.Rows, a.Cols, b.Cols
	for i := 0; i < m; i += eigGemmTile {
		mi := min(eigGemmTile, m-i)
		for j := 0; j < n; j += eigGemmTile {
			nj := min(eigGemmTile, n-j)
			cs := eigSub(c, i, j, mi, nj)
			if k == 0 {
				for r := 0; r < mi; r++ {
					clear(cs.Data[r*cs.Stride : r*cs.Stride+nj])
				}
				continue
			}
			for l := 0; l < k; l += eigGemmTile {
				kl := min(eigGemmTile, k-l)
				beta := 1.0
				if l == 0 {
					beta = 0
				}
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, eigSub(a, i, l, mi, kl), eigSub(b, l, j, kl, nj), beta, cs)
			}
		}
	}
}

// eigSub returns the r×c block of g at (i, j), sharing storage.
func eigSub(g blas64.General, i, j, r, c int) blas64.General {
	return blas64.General{Rows: r, Cols: c, Stride: g.Stride, Data: g.Data[i*g.Stride+j : (i+r-1)*g.Stride+j+c]}
}

func eigVec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

func eigFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// SizeBytes returns the bytes held by the receiver's own buffers (the
// matrix A, the eigenvectors U and the eigenvalues), excluding Go object
// headers. The update workspaces are shared (see SymEigen) and not counted;
// WorkspaceBytes gives their size.
func (e *SymEigen) SizeBytes() int {
	return 8 * (cap(e.a.RawSymmetric().Data) + cap(e.u.RawMatrix().Data) + cap(e.vals))
}

// WorkspaceBytes returns the size of one shared update workspace for the
// receiver's dimension: what each goroutine concurrently updating
// decomposers of this dimension adds once to the process, not per
// decomposer.
func (e *SymEigen) WorkspaceBytes() int {
	w := eigPool.Get(e.n)
	defer eigPool.Put(e.n, w)
	f := 0
	for _, b := range [][]float64{w.probe, w.z, w.d, w.w, w.dl, w.wl, w.zhat, w.tau, w.delta, w.key, w.vnew,
		w.p1, w.p2, w.p3, w.ug, w.q, w.prod, w.unew, w.syevWork} {
		f += cap(b)
	}
	for _, b := range [][]int{w.col, w.org, w.nd, w.df, w.src, w.pos} {
		f += cap(b)
	}
	return 8 * f
}
