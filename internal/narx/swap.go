package narx

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/streamd/streamd/internal/recursive"
)

// swap replaces member j by the prepared x in O(M² + W·(M + n)), W the
// window (whose kernel columns are kept: window).
//
// The features are an orthonormal basis of the span of the members' kernel
// functions (featureMap). The swap is Gram–Schmidt in feature space:
//
//  1. x joins: its kernel function's component orthogonal to the span,
//     of norm d = √(K(x,x) − ‖φ(x)‖²), is a new feature
//     e(z) = (K(z,x) − φ(x)ᵀφ(z))/d, so F⁺ = [[F, 0], [−zᵀ/d, 1/d]] with
//     z = Fᵀφ(x) = Ω⁻¹k_S(x);
//  2. a reflection H of the M+1 features turns the one column of F⁺ that
//     reads K(·, s_j) into the last feature alone;
//  3. that feature is dropped: the other M no longer read s_j, and x takes
//     its place as member j.
//
// Each step is exact for a sample whose e is known. The samples still in
// the window get their exact e (K(x_i, x) is evaluated, W kernel
// evaluations, φ(x)ᵀφ(x_i) = zᵀk_S(x_i) from their kept columns); for older ones
// only their statistics survive, and e = 0 is their Nyström projection:
// K(z, x) ≈ φ(z)ᵀφ(x), what the old features can say about the new member.
// So the statistics gain a border (Σ c φ e, Σ c e², Σ c e y over the
// window), and the RLS applies border, reflection and drop to A, r and the
// inverse of A + D/γ as low-rank changes (recursive.RLS.ExchangeFeature).
// x's own sample is learned after the swap, in the new features.
//
// It returns false, changing nothing, when x lies (to the cut-off) in the
// span of the members — it would add nothing but rounding —, when the
// exchange would lower the ridge objective's minimum by less than minGain
// (−Inf: any exchange goes), or when the statistics refuse the exchange
// (counted in SwapFailures).
func (m *Model) swap(j int, minGain float64) bool {
	return m.swapIn(j, minGain, newcomer{x: m.x, k: m.k, phi: m.psi[:m.m], kxx: m.kxx})
}

// newcomer is a sample a swap may make a member: its regressor x, its
// kernel column against the members k, its features φ = F k and K(x,x).
// The prepared sample, or one the window holds (then k is its kept column,
// which the swap rewrites).
type newcomer struct {
	x, k, phi []float64
	kxx       float64
}

// swapIn is swap with the newcomer x given: the prepared sample, or one in
// the window, already learned, which is then its own sample in the border
// (with e = d, its component outside the span) like the window's others;
// the prepared sample is learned after the swap either way.
func (m *Model) swapIn(j int, minGain float64, x newcomer) bool {
	M, n := m.m, m.n
	phi := x.phi
	kxx := x.kxx
	d2 := kxx - floats.Dot(phi, phi)
	if !(d2 > m.cfg.Cutoff*kxx) || !(d2 > 0) || math.IsInf(d2, 0) {
		return false
	}
	d := math.Sqrt(d2)
	w := m.win
	buf := recursive.GetFloats(4*M + 2*(M+2) + 3*w.cap)
	defer recursive.PutFloats(buf)
	z, g, kc, col := buf[:M], buf[M:2*M], buf[2*M:3*M], buf[3*M:4*M]
	a, u := buf[4*M:5*M+1], buf[5*M+1:6*M+3]
	rest := buf[6*M+3:]
	kx := rest[:w.cap]            // K(x_i, x) by window slot
	cw := rest[w.cap : 2*w.cap]   // c_i, then c_i e_i, by slot
	ew := rest[2*w.cap : 3*w.cap] // k_S(x_i)ᵀz, then e_i, by slot
	f := m.fm.f

	// z = Fᵀφ(x).
	clear(z)
	for r := 0; r < M; r++ {
		floats.AddScaled(z, phi[r], f[r*M:(r+1)*M])
	}
	// The border from the window: e_i = (K(x_i, x) − k_S(x_i)ᵀz)/d and
	// g = Σ c e k_S(x_i), so that Σ c φ(x_i) e_i = F g. The samples held
	// are the slots [lo, hi) of the ring (all of it once full, else the
	// ones pushed since slot 0), so both sums are products of the kept
	// columns with a vector (two W×M passes of the assembly kernels).
	lo, hi := 0, w.cap
	if w.count < w.cap {
		lo, hi = 1, w.count+1
	}
	lam := m.cfg.Forgetting
	c := 1.0
	for age := 0; age < w.count; age++ { // c by age, newest first
		slot := w.slot(age)
		cw[slot] = w.v[slot] * c
		c *= lam
	}
	var bias, diag, rhs float64
	if rows := hi - lo; rows > 0 {
		// The kernel is symmetric bit for bit (sqDist and dot square or
		// multiply the same pairs in the same order), so this is entry j
		// of each sample's column once x is member j: the window's new
		// column, what a restore recomputes.
		m.cfg.Kernel.Column(kx[lo:hi], w.x[lo*n:hi*n], x.x)
		kw := blas64.General{Rows: rows, Cols: M, Stride: M, Data: w.k[lo*M : hi*M]}
		blas64.Gemv(blas.NoTrans, 1, kw, blas64.Vector{N: M, Inc: 1, Data: z}, 0, blas64.Vector{N: rows, Inc: 1, Data: ew[lo:hi]})
		for i := lo; i < hi; i++ {
			e := (kx[i] - ew[i]) / d
			ce := cw[i] * e
			ew[i], cw[i] = e, ce
			bias += ce
			diag += ce * e
			rhs += ce * w.y[i]
		}
		blas64.Gemv(blas.Trans, 1, kw, blas64.Vector{N: rows, Inc: 1, Data: cw[lo:hi]}, 0, blas64.Vector{N: M, Inc: 1, Data: g})
	} else {
		clear(g)
	}
	m.fm.apply(a[:M], g)
	a[M] = bias

	// The Householder vector of column j of F⁺, v = [F_{·j}; −z_j/d]:
	// H v = −sign(v_M)‖v‖ e_M.
	var nv float64
	for r := 0; r < M; r++ {
		u[r] = f[r*M+j]
		nv += u[r] * u[r]
	}
	vM := -z[j] / d
	nv = math.Sqrt(nv + vM*vM)
	sg := 1.0
	if vM < 0 {
		sg = -1
	}
	u[M+1] = vM + sg*nv // u in the RLS's coordinates [features; bias; new]
	u[M] = 0
	if nv == 0 {
		// Only the dead basis of a fit on all-zero kernel values, F = [0]
		// (M = 1), has a zero column: exchange its feature for the new one.
		u[0], u[M+1] = 1, -1
	}
	un := math.Sqrt(floats.Dot(u[:M], u[:M]) + u[M+1]*u[M+1])
	floats.Scale(1/un, u)
	if gain, ok := m.rls.ExchangeFeature(a, diag, rhs, u, minGain); !ok {
		if math.IsNaN(gain) { // refused, not merely short of minGain
			m.swapFailures++
		}
		return false
	}

	// F' = the first M rows of H F⁺, column j dropped and the new member's
	// column M moved into it: with t = uᵀF⁺, F'_rc = F_rc − 2u_r t_c and
	// F'_rj = −2u_r t_M (F⁺_rM = 0 for r < M).
	uM := u[M+1]
	t := kc // reused: t_c for c < M
	clear(t)
	for r := 0; r < M; r++ {
		floats.AddScaled(t, u[r], f[r*M:(r+1)*M])
	}
	floats.AddScaled(t, -uM/d, z)
	tM := uM / d
	for r := 0; r < M; r++ {
		row := f[r*M : (r+1)*M]
		floats.AddScaled(row, -2*u[r], t)
		row[j] = -2 * u[r] * tM
	}

	m.ws.Swap(j, x.x, x.k, kxx, col)
	for age := 0; age < w.count; age++ {
		slot := w.slot(age)
		w.k[slot*M+j] = kx[slot]
	}
	m.alphaFresh = false
	m.prepareFeatures()
	m.swaps++
	m.sinceSwap = 0
	if m.swaps%basisRefreshSwaps(M) == 0 {
		m.refreshBasis()
	}
	return true
}

// basisRefreshSwaps is the number of swaps after which the features are
// re-orthonormalised (refreshBasis): each swap's reflection and border add
// rounding to F Ω Fᵀ = I, and an O(M³) refresh every 4M swaps costs O(M²)
// per swap amortised, no more than a swap itself.
func basisRefreshSwaps(M int) int { return 4 * M }

// refreshBasis recomputes F from the Cholesky factor of Ω and re-expresses
// the statistics exactly in the new features, φ' = Tφ with T = F'F⁻¹ (both
// maps of the same k_S(x), so the change is exact for every sample; only the
// ridge, ‖w‖² in the old features, becomes the RKHS norm again). O(M³). It
// reports whether it did; on failure (a member whose pivot rounding has
// taken below the cut-off) the drifted basis stays, which is still a basis.
func (m *Model) refreshBasis() bool {
	M := m.m
	omega := make([]float64, M*M)
	col := make([]float64, M)
	for j := 0; j < M; j++ {
		m.cfg.Kernel.Column(col, m.ws.Points(), m.ws.Point(j))
		for i, v := range col {
			omega[i*M+j] = v
		}
	}
	keep, fNew := nystromBasis(omega, M, 0)
	if len(keep) != M {
		return false
	}
	// T Fold = Fnew  ⇔  Foldᵀ Tᵀ = Fnewᵀ.
	var tt mat.Dense
	if err := tt.Solve(mat.NewDense(M, M, m.fm.f).T(), mat.NewDense(M, M, fNew).T()); err != nil {
		return false
	}
	text := mat.NewDense(M+1, M+1, nil)
	for i := 0; i < M; i++ {
		for k := 0; k < M; k++ {
			text.Set(i, k, tt.At(k, i))
		}
	}
	text.Set(M, M, 1)
	a, rv, s, nc := m.rls.Stats()
	var ta, tat mat.Dense
	ta.Mul(text, a)
	tat.Mul(&ta, text.T())
	an := mat.NewSymDense(M+1, nil)
	for i := 0; i <= M; i++ {
		for k := i; k <= M; k++ {
			an.SetSym(i, k, 0.5*(tat.At(i, k)+tat.At(k, i)))
		}
	}
	var rn mat.VecDense
	rn.MulVec(text, mat.NewVecDense(M+1, rv))
	if !m.rls.Reload(an, rn.RawVector().Data, s, nc) {
		return false
	}
	copy(m.fm.f, fNew)
	m.basisRefresh++
	m.alphaFresh = false
	m.prepareFeatures()
	return true
}
