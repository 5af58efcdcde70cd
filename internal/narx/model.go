package narx

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/streamd/streamd/internal/recursive"
)

// Config fixes a fixed-size LS-SVM NARX model. Validate reports bad values.
type Config struct {
	Embedding Embedding
	Kernel    Kernel
	// Size is the working-set size M ≥ 1. A fit on N < M samples uses M = N.
	Size int
	// Gamma is the regularisation constant γ > 0 of the primal ridge.
	Gamma float64
	// Forgetting is λ ∈ (0, 1]; sample k of N carries weight v_k·λ^{N−k}.
	Forgetting float64
	// Cutoff ε ∈ [0, 1): eigenpairs of Ω with λ_i ≤ ε·λ_max are dropped from the
	// Nyström map (they carry rounding noise amplified by λ_i^{-1/2}).
	Cutoff float64
	// Window is the number W ≥ 1 of most recent samples retained to re-express the
	// statistics in the new features after a working-set swap. Samples older than
	// the window leave the statistics at a swap; with λ < 1 choose W ≳ 5/(1−λ).
	Window int
	// SwapInterval is the minimum number of samples between accepted swaps
	// online: once that many samples have passed since the last accepted
	// swap, every sample is a candidate (an O(M) test) until one is accepted.
	// 0 freezes the working set after the fit. A swap costs
	// O(M³ + W·M·(n+M)), so this bounds the amortised cost.
	SwapInterval int
	// Select tunes the batch entropy search of Fit.
	Select SelectOptions
	// NoiseEvery runs the level-2 inference (noise level, d_eff and, with
	// AutoGamma, γ) every K learned samples: O(M³), amortised O(M³/K) per
	// sample; 0 means only at the fit and after swaps.
	NoiseEvery int
	// AutoGamma infers γ by level 2 (maximum evidence) instead of using Gamma,
	// which is then only the value before the first inference.
	AutoGamma bool
	// Seed seeds the RNG that draws swap members; its state is part of State.
	Seed uint64
	// IntervalLevel ∈ (0, 1) is the level of the prediction intervals the
	// variance is calibrated for (calibrate.go); 0 means 0.95.
	IntervalLevel float64
	// Summed: the caller sums the forecast's steps (it models increments),
	// so Forecast fills Step.CumVar; otherwise CumVar is 0 and its cost (a
	// quadratic form per step) is saved.
	Summed bool
}

// Validate reports the first problem with c, or nil.
func (c Config) Validate() error {
	if err := c.Embedding.Validate(); err != nil {
		return err
	}
	if err := c.Kernel.Validate(); err != nil {
		return err
	}
	switch {
	case c.Size < 1:
		return fmt.Errorf("working set size must be ≥ 1 (got %d)", c.Size)
	case !(c.Gamma > 0) || math.IsInf(c.Gamma, 0):
		return fmt.Errorf("gamma must be finite and > 0 (got %v)", c.Gamma)
	case !(c.Forgetting > 0 && c.Forgetting <= 1):
		return fmt.Errorf("forgetting must be in (0, 1] (got %v)", c.Forgetting)
	case !(c.Cutoff >= 0 && c.Cutoff < 1):
		return fmt.Errorf("eigenvalue cutoff must be in [0, 1) (got %v)", c.Cutoff)
	case c.Window < 1:
		return fmt.Errorf("window must be ≥ 1 (got %d)", c.Window)
	case c.SwapInterval < 0 || c.NoiseEvery < 0:
		return fmt.Errorf("swap interval and noise interval must be ≥ 0")
	case c.Select.MaxIter < 0 || c.Select.Patience < 0:
		return fmt.Errorf("selection limits must be ≥ 0")
	case !(c.IntervalLevel >= 0 && c.IntervalLevel < 1):
		return fmt.Errorf("interval level must be in (0, 1) (got %v)", c.IntervalLevel)
	}
	return nil
}

// ErrNotFitted is returned by methods that need a fitted model.
var ErrNotFitted = errors.New("narx: model is not fitted")

// Model is a fixed-size LS-SVM in primal form (book §6.2; DESIGN §3):
//
//	ŷ(x) = wᵀφ(x) + b,  φ(x) = Λ_r^{-1/2} U_rᵀ k_S(x),  θ = [w; b] = (A + D/γ)⁻¹ r,
//
// with A, r the forgetting-weighted statistics kept by recursive.RLS, and the
// working set S kept current by the entropy swap test, its kernel matrix's
// eigendecomposition by rank-one updates.
//
// A Model is not safe for concurrent use: it is owned by one goroutine.
type Model struct {
	cfg Config
	n   int // regressor dimension
	m   int // working-set size actually used

	ws  *WorkingSet
	eig *recursive.SymEigen
	fm  *featureMap
	rls *recursive.RLS
	pcg *rand.PCG
	rng *rand.Rand
	win *window

	// Per-sample buffers, allocated at the fit: the prepared regressor, its
	// kernel column and features (kept from Observe to Learn), and the dual
	// coefficients cached by Dual. Workspaces of the rare operations (swap,
	// calibration refit) are borrowed from a shared pool per call (see
	// recursive.Pool), not kept per model.
	x, k, psi, alpha []float64
	prepared         bool
	kxx              float64
	// nextReady: x, k, ψ and kxx hold the first step of the last Forecast,
	// computed there for the regressor the next Observe will most likely
	// get (Observe reuses them if its x is bit-identical).
	nextReady bool

	fitted       bool
	swaps        int
	eigRefresh   int
	sinceSwap    int
	sinceNoise   int
	noiseVar     float64
	dEff         float64
	alphaFresh   bool
	swapFailures int
	level2       Level2

	// Calibration of the Nyström-residual variance (calibrate.go) and the
	// prediction of the last Observe it is fed with.
	cal                    *calibration
	sinceCal               int
	lastMean, lastA, lastB float64
}

// NewModel returns an unfitted model.
func NewModel(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Embedding = cfg.Embedding.Clone()
	if cfg.IntervalLevel == 0 {
		cfg.IntervalLevel = 0.95
	}
	pcg := rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)
	return &Model{cfg: cfg, n: cfg.Embedding.Dim(), pcg: pcg, rng: rand.New(pcg)}, nil
}

// SetKernel replaces the kernel of an unfitted model (e.g. a width inferred
// from the warm-up data). It returns an error if k is invalid or m is fitted.
func (m *Model) SetKernel(k Kernel) error {
	if m.fitted {
		return fmt.Errorf("narx: SetKernel on a fitted model")
	}
	if err := k.Validate(); err != nil {
		return err
	}
	m.cfg.Kernel = k
	return nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Fitted reports whether Fit has succeeded.
func (m *Model) Fitted() bool { return m.fitted }

// Fit is the batch fit (book §6.2.2, Algorithm 6.2): entropy-selected working set
// from the N rows of X (N×n row-major), Nyström features, and the weighted ridge
// statistics of all N samples (weights v, nil meaning 1, times λ^{N−k}).
// O(N·M·(n+M) + M³ + trials·M·n). Non-finite data is an error and leaves m
// unchanged; a failure further on (a decomposition that does not converge)
// leaves m unfitted.
func (m *Model) Fit(X, y, v []float64) error {
	n := m.n
	N := len(y)
	if N == 0 || len(X) != N*n || (v != nil && len(v) != N) {
		return fmt.Errorf("narx: Fit: X is %d values for %d targets of dimension %d", len(X), N, n)
	}
	if !recursive.AllFinite(X) || !recursive.AllFinite(y) || (v != nil && !recursive.AllFinite(v)) {
		return fmt.Errorf("narx: Fit: non-finite data")
	}
	sel := SelectWorkingSet(m.cfg.Kernel, X, n, m.cfg.Size, m.rng, m.cfg.Select)
	M := len(sel.Index)
	// The fit's transient matrices come from the shared scratch pool: a
	// daemon fits series while holding thousands, and garbage of the sizes
	// the series keep fragments the heap.
	pts := recursive.GetFloats(M * n)
	defer recursive.PutFloats(pts)
	for k, i := range sel.Index {
		copy(pts[k*n:(k+1)*n], X[i*n:(i+1)*n])
	}
	m.m = M
	omega := recursive.GetFloats(M * M) // every entry is set
	defer recursive.PutFloats(omega)
	m.ws = NewWorkingSet(m.cfg.Kernel, n, pts, omega)
	m.eig = recursive.NewSymEigen(M)
	if !m.eig.Factorize(mat.NewSymDense(M, omega)) {
		return fmt.Errorf("narx: Fit: eigendecomposition of the kernel matrix failed")
	}
	m.fm = newFeatureMap(M)
	m.fm.build(m.eig.Values(), m.eig.Vectors(), m.cfg.Cutoff)
	m.x, m.k, m.alpha = make([]float64, n), make([]float64, M), make([]float64, M)
	m.psi = make([]float64, M+1)
	m.win = newWindow(n, m.cfg.Window)
	for i := max(0, N-m.cfg.Window); i < N; i++ {
		m.win.push(X[i*n:(i+1)*n], y[i], weightAt(v, i))
	}
	m.rls = recursive.NewRLS(m.fm.r+1, m.cfg.Gamma, m.cfg.Forgetting)
	if err := m.loadStats(X, y, v); err != nil {
		return err
	}
	m.cal = newCalibration(m.cfg.IntervalLevel)
	m.fitted, m.alphaFresh, m.prepared, m.nextReady = true, false, false, false
	m.sinceSwap, m.sinceNoise = 0, 0
	m.refreshNoise()
	if m.cfg.SwapInterval == 0 && m.cfg.NoiseEvery > 0 {
		m.sinceNoise = m.noisePhase()
	}
	return nil
}

// noisePhase is where in the period NoiseEvery a frozen working set's level-2
// refreshes fall, in [0, NoiseEvery): a hash of the fitted noise level. Swaps
// desynchronise the refreshes of series that start together (each swap
// refreshes level 2); without swaps they would all refresh at the same
// sample for ever after, an O(r³) burst per series at once. It depends only
// on the data, so a backtest and a restored model refresh at the same
// samples as the daemon.
func (m *Model) noisePhase() int {
	h := math.Float64bits(m.noiseVar) * 0x9e3779b97f4a7c15 // Fibonacci hashing, as calibration.phase
	return int((h >> 32) % uint64(m.cfg.NoiseEvery))
}

func weightAt(v []float64, i int) float64 {
	if v == nil {
		return 1
	}
	return v[i]
}

// loadStats recomputes A, r, s, n_c in the current features from the samples
// (X, y, v) in time order and loads them into the RLS. O(N·M·(n+r) + N·r²).
func (m *Model) loadStats(X, y, v []float64) error {
	N, n, r := len(y), m.n, m.fm.r
	lam := m.cfg.Forgetting
	bp, br := recursive.GetFloats(N*(r+1)), recursive.GetFloats(N)
	defer recursive.PutFloats(bp)
	defer recursive.PutFloats(br)
	clear(bp) // rows of weightless samples stay zero
	clear(br)
	psi := mat.NewDense(N, r+1, bp)
	rhs := br
	var s, nc float64
	c := 1.0 // λ^{N−1−i}, built from the newest sample backwards
	for i := N - 1; i >= 0; i-- {
		ci := weightAt(v, i) * c
		c *= lam
		if ci == 0 {
			continue
		}
		row := psi.RawRowView(i)
		m.cfg.Kernel.Column(m.k, m.ws.Points(), X[i*n:(i+1)*n])
		m.fm.apply(row, m.k)
		row[r] = 1
		sq := math.Sqrt(ci)
		for j := range row {
			row[j] *= sq
		}
		rhs[i] = sq * y[i]
		s += ci * y[i] * y[i]
		nc += ci
	}
	ba, bv := recursive.GetFloats((r+1)*(r+1)), recursive.GetFloats(r+1)
	defer recursive.PutFloats(ba)
	defer recursive.PutFloats(bv)
	a := mat.NewSymDense(r+1, ba) // SymOuterK zeroes the upper triangle it fills
	a.SymOuterK(1, psi.T())
	rv := bv
	mat.NewVecDense(r+1, rv).MulVec(psi.T(), mat.NewVecDense(N, rhs))
	if !m.rls.Load(a, rv, s, nc) {
		return fmt.Errorf("narx: ridge system is not positive definite")
	}
	return nil
}

// Observe prepares the one-step prediction for regressor x (len n): it returns
// the predictive mean and variance and keeps x's kernel column and features for
// the Learn call that must follow. O(M·(n+r) + r²). No allocation.
func (m *Model) Observe(x []float64) (mean, variance float64) {
	if !m.fitted {
		panic(ErrNotFitted)
	}
	if !m.nextReady || !sameBits(m.x, x) {
		copy(m.x, x)
		m.prepareFeatures()
	}
	m.nextReady = false
	m.prepared = true
	psi := m.psi[:m.fm.r+1]
	noise, param, prior := m.varianceParts(psi, m.kxx)
	m.lastMean, m.lastA, m.lastB = m.rls.Predict(psi), noise+param, prior
	return m.lastMean, m.cal.tau * (noise + param + m.cal.scale*prior)
}

// prepareFeatures fills k, ψ and K(x,x) for m.x.
func (m *Model) prepareFeatures() {
	m.cfg.Kernel.Column(m.k, m.ws.Points(), m.x)
	m.kxx = m.cfg.Kernel.Eval(m.x, m.x)
	r := m.fm.r
	m.fm.apply(m.psi[:r], m.k)
	m.psi[r] = 1
}

// varianceAt is the level-1 predictive variance (DESIGN §3):
// σ²(x) = ζ⁻¹(1 + ψᵀ(A + D/γ)⁻¹ψ) + μ⁻¹(K(x,x) − ‖φ(x)‖²), with ζ⁻¹ the noise
// variance and μ⁻¹ = γζ⁻¹ (γ = ζ/μ). The last term is the prior variance of the
// part of f the Nyström map cannot represent, so bars widen off the working set.
func (m *Model) varianceAt(psi []float64, kxx float64) float64 {
	noise, param, prior := m.varianceParts(psi, kxx)
	return m.cal.tau * (noise + param + m.cal.scale*prior)
}

// varianceParts splits the level-1 variance into its noise ζ⁻¹, parameter
// ζ⁻¹ψᵀ(A + D/γ)⁻¹ψ and prior Nyström-residual μ⁻¹(K(x,x) − ‖φ(x)‖²) parts;
// the last enters the variance scaled by the calibrated ρ (calibrate.go).
func (m *Model) varianceParts(psi []float64, kxx float64) (noise, param, prior float64) {
	q := m.rls.QuadForm(psi)
	return m.noiseVar, m.noiseVar * max(q, 0), m.priorPart(psi, kxx)
}

// priorPart is the Nyström-residual part of varianceParts,
// μ⁻¹(K(x,x) − ‖φ(x)‖²) with μ⁻¹ = γζ⁻¹. O(r).
func (m *Model) priorPart(psi []float64, kxx float64) float64 {
	r := len(psi) - 1
	return m.noiseVar * m.rls.Gamma() * max(kxx-dot(psi[:r], psi[:r]), 0)
}

// VarianceParts returns the parts of the level-1 variance at the regressor
// given to the last Observe (or, after a Forecast or Predict, at the one
// they evaluated last), the Nyström part already scaled by ρ. For
// diagnostics.
func (m *Model) VarianceParts() (noise, param, nystrom float64) {
	noise, param, prior := m.varianceParts(m.psi[:m.fm.r+1], m.kxx)
	t := m.cal.tau
	return t * noise, t * param, t * m.cal.scale * prior
}

// Learn applies target y with weight v ≥ 0 to the regressor given to the last
// Observe: the O(M) entropy swap test (see SwapInterval), then the RLS update
// O(r²). Returns whether a swap was accepted. Non-finite y
// or v (which the caller should have rejected) leave the model unchanged.
// No allocation unless a swap is accepted (once the shared pools hold the
// scratch space of the RLS update; see recursive.Pool).
func (m *Model) Learn(y, v float64) (swapped bool) {
	if !m.prepared {
		panic("narx: Learn without Observe")
	}
	m.prepared = false
	if math.IsNaN(y) || math.IsInf(y, 0) || !(v >= 0) || math.IsInf(v, 0) {
		return false
	}
	// Samples a robust weighting discounts by more than half are outliers to
	// the calibration too: the bars describe the clean process.
	reachedMin := false
	if v >= calMinWeight && m.cal.add(y-m.lastMean, m.lastA, m.lastB) {
		reachedMin = m.cal.count == calMin
	}
	m.sinceCal++
	if m.sinceCal >= calRefitEvery || reachedMin {
		m.cal.refit()
		m.sinceCal = 0
		if reachedMin {
			m.sinceCal = m.cal.phase()
		}
	}
	m.sinceSwap++
	if j, ok := m.swapCandidate(); ok {
		swapped = m.swap(j)
	}
	m.learnPrepared(y, v)
	return swapped
}

// swapCandidate runs the O(M) entropy test of the prepared x against a random
// member, once SwapInterval samples have passed since the last accepted swap.
func (m *Model) swapCandidate() (j int, accept bool) {
	if m.cfg.SwapInterval == 0 || m.sinceSwap < m.cfg.SwapInterval {
		return 0, false
	}
	j = m.rng.IntN(m.m)
	return j, m.ws.SwapGain(j, m.k, m.kxx) < 0
}

// learnPrepared is the RLS update with the prepared features. O(r²).
func (m *Model) learnPrepared(y, v float64) {
	if !m.rls.Update(m.psi[:m.fm.r+1], y, v) {
		return
	}
	m.win.push(m.x, y, v)
	m.alphaFresh = false
	m.sinceNoise++
	if m.cfg.NoiseEvery > 0 && m.sinceNoise >= m.cfg.NoiseEvery {
		m.refreshNoise()
	}
}

// swap replaces member j by the prepared x: rank-2 eigen-update of Ω, new
// feature map, the statistics re-expressed in the new features, and x's
// features recomputed in the new map. O(M³ + W·M·(n+M)).
//
// Re-expressing the statistics: the samples still in the window are
// recomputed exactly in the new features. Older samples survive only as their
// share of A and r; they are carried over through the Nyström projection
// ψ' ≈ T_ext ψ (see swapTransform), which is exact when the new kernel
// function K(·, x) lies in the span of the old working set's kernel functions
// (e.g. a linear kernel with M ≥ n) and otherwise gives old data no say on the
// part of K(·, x) the old map could not see. So
//
//	A' = T_ext (A − A_win) T_extᵀ + A'_win,  r' = T_ext (r − r_win) + r'_win,
//
// with A_win, r_win the window's statistics in the old features and A'_win,
// r'_win in the new ones; s and n_c do not depend on the features.
func (m *Model) swap(j int) bool {
	M, rOld := m.m, m.fm.r
	var sw swapWorkspace
	sw.borrow(M, m.n, m.win.cap)
	defer sw.release()
	sw.fmOld.copyFrom(m.fm)
	copy(sw.phiX[:rOld], m.psi[:rOld]) // x's features in the old map
	copy(sw.oldPoint, m.ws.Point(j))
	aOld, rvOld, s, nc := m.rls.Stats()
	aPrev := mat.NewSymDense(rOld+1, sw.floats((rOld+1)*(rOld+1), false))
	aPrev.CopySym(aOld)
	rPrev := sw.floats(rOld+1, false)
	copy(rPrev, rvOld)
	m.rls.ReleaseStats()

	m.ws.Swap(j, m.x, m.k, m.kxx, sw.col)
	if m.eig.ReplaceRowCol(j, sw.col) {
		m.eigRefresh++
	}
	m.fm.build(m.eig.Values(), m.eig.Vectors(), m.cfg.Cutoff)
	rNew := m.fm.r

	X, y, v := m.win.chronological(sw.winX, sw.winY, sw.winV)
	wOld, rwOld, wNew, rwNew := m.windowStats(&sw, j, X, y, v)
	t := m.swapTransform(&sw, j)
	// A' = T_ext (A − A_win) T_extᵀ + A'_win and likewise r'.
	for i := 0; i <= rOld; i++ {
		for k := i; k <= rOld; k++ {
			aPrev.SetSym(i, k, aPrev.At(i, k)-wOld.At(i, k))
		}
	}
	for i := range rPrev {
		rPrev[i] -= rwOld[i]
	}
	tmp := mat.NewDense(rNew+1, rOld+1, sw.floats((rNew+1)*(rOld+1), false))
	tmp.Mul(t, aPrev)
	aNew := blas64.General{Rows: rNew + 1, Cols: rNew + 1, Stride: rNew + 1, Data: sw.floats((rNew+1)*(rNew+1), false)}
	recursive.SerialGemm(blas.NoTrans, blas.Trans, tmp.RawMatrix(), t.RawMatrix(), aNew) // T·(A − A_win)·Tᵀ
	a := mat.NewSymDense(rNew+1, sw.floats((rNew+1)*(rNew+1), false))
	an := aNew.Data
	for i := 0; i <= rNew; i++ {
		for k := i; k <= rNew; k++ {
			a.SetSym(i, k, 0.5*(an[i*(rNew+1)+k]+an[k*(rNew+1)+i])+wNew.At(i, k))
		}
	}
	rt := mat.NewVecDense(rNew+1, sw.floats(rNew+1, false))
	rt.MulVec(t, mat.NewVecDense(rOld+1, rPrev))
	rv := sw.floats(rNew+1, false)
	for i := range rv {
		rv[i] = rt.AtVec(i) + rwNew[i]
	}
	// Reload is a fresh RLS's Load in the old one's buffers (no garbage of
	// two r×r matrices per swap); on failure it leaves the old statistics.
	if !m.rls.Reload(a, rv, s, nc) {
		// The carried-over part made the system indefinite (it can only be
		// rounding of absurd data): fall back to the window alone.
		m.swapFailures++
		next := recursive.NewRLS(rNew+1, m.rls.Gamma(), m.cfg.Forgetting)
		old := m.rls
		m.rls = next
		if err := m.loadStats(X, y, v); err != nil {
			m.rls = old // keeps the old features' statistics; stale, but finite
		}
	}
	m.alphaFresh = false
	m.prepareFeatures()
	m.swaps++
	m.sinceSwap = 0
	m.refreshNoise()
	return true
}

// swapWorkspace holds what swap keeps from before the change, the window
// in time order and the swap's matrices. Its storage is borrowed from the
// shared pool for the duration of the swap (recursive.GetFloats): nothing
// in it outlives the swap.
type swapWorkspace struct {
	fmOld            featureMap
	phiX             []float64 // features of the new member in the old map
	oldPoint         []float64 // the member that left
	col              []float64 // the new column of Ω
	winX, winY, winV []float64 // the window, oldest first
	buf              []float64
	more             [24][]float64 // further buffers (floats)
	nMore            int
}

// floats borrows a buffer of length l for the rest of the swap, zeroed if
// zero is set.
func (sw *swapWorkspace) floats(l int, zero bool) []float64 {
	b := recursive.GetFloats(l)
	if zero {
		clear(b)
	}
	if sw.nMore < len(sw.more) {
		sw.more[sw.nMore] = b
		sw.nMore++
	} // else it is left to the garbage collector
	return b
}

// borrow lays the workspace of a working set of size M, dimension n and
// window W out in one pooled buffer.
func (sw *swapWorkspace) borrow(M, n, W int) {
	sw.buf = recursive.GetFloats(M*M + 3*M + n + W*(n+2))
	b := sw.buf
	next := func(l int) []float64 {
		s := b[:l:l]
		b = b[l:]
		return s
	}
	sw.fmOld = featureMap{m: M, f: next(M * M), vals: next(M)}
	sw.phiX, sw.oldPoint, sw.col = next(M), next(n), next(M)
	sw.winX, sw.winY, sw.winV = next(W*n), next(W), next(W)
}

func (sw *swapWorkspace) release() {
	recursive.PutFloats(sw.buf)
	for _, b := range sw.more[:sw.nMore] {
		recursive.PutFloats(b)
	}
	*sw = swapWorkspace{}
}

// windowStats returns the window's weighted statistics (A, r) in the old
// features and in the new ones, after member j was swapped. The window's
// kernel matrix against the new set is formed once; the old one differs in
// column j only. Both feature matrices are then one GEMM each:
// Φ = diag(√c)·K·Fᵀ. O(W·M·(n + r + r')).
func (m *Model) windowStats(sw *swapWorkspace, j int, X, y, v []float64) (aOld *mat.SymDense, rOld []float64, aNew *mat.SymDense, rNew []float64) {
	N, n, M := len(y), m.n, m.m
	ro, rn := sw.fmOld.r, m.fm.r
	rows := max(N, 1)
	kNew := mat.NewDense(rows, M, sw.floats(rows*M, true))
	kOld := mat.NewDense(rows, M, sw.floats(rows*M, true))
	sq := sw.floats(rows, true)
	yw := sw.floats(rows, true)
	lam := m.cfg.Forgetting
	c := 1.0
	for i := N - 1; i >= 0; i-- {
		ci := weightAt(v, i) * c
		c *= lam
		if ci == 0 {
			continue // a zero row: the sample carries no weight
		}
		x := X[i*n : (i+1)*n]
		rowN := kNew.RawRowView(i)
		m.cfg.Kernel.Column(rowN, m.ws.Points(), x)
		rowO := kOld.RawRowView(i)
		copy(rowO, rowN)
		rowO[j] = m.cfg.Kernel.Eval(sw.oldPoint, x)
		sq[i] = math.Sqrt(ci)
		yw[i] = sq[i] * y[i]
	}
	features := func(k *mat.Dense, fm *featureMap) *mat.Dense {
		r := fm.r
		psi := mat.NewDense(rows, r+1, sw.floats(rows*(r+1), false))
		if r > 0 {
			// Φ = K·Fᵀ, as mat's Mul computes it, without its goroutines.
			f := blas64.General{Rows: r, Cols: M, Stride: M, Data: fm.f[:r*M]}
			p := psi.RawMatrix()
			p.Cols = r
			recursive.SerialGemm(blas.NoTrans, blas.Trans, k.RawMatrix(), f, p)
		}
		for i := 0; i < rows; i++ {
			row := psi.RawRowView(i)
			row[r] = 1
			for l := range row {
				row[l] *= sq[i]
			}
		}
		return psi
	}
	po, pn := features(kOld, &sw.fmOld), features(kNew, m.fm)
	aOld = mat.NewSymDense(ro+1, sw.floats((ro+1)*(ro+1), false))
	aNew = mat.NewSymDense(rn+1, sw.floats((rn+1)*(rn+1), false))
	aOld.SymOuterK(1, po.T())
	aNew.SymOuterK(1, pn.T())
	rOld, rNew = sw.floats(ro+1, false), sw.floats(rn+1, false)
	yv := mat.NewVecDense(rows, yw)
	mat.NewVecDense(ro+1, rOld).MulVec(po.T(), yv)
	mat.NewVecDense(rn+1, rNew).MulVec(pn.T(), yv)
	return aOld, rOld, aNew, rNew
}

// swapTransform returns T_ext = [[T, 0], [0, 1]], (r'+1)×(r+1), the map from
// old to new features of the Nyström projection: for a sample x the old map
// sees, k_S(x) ≈ F⁺φ(x) with F⁺ = U_r Λ_r^{1/2} (the right inverse of
// F = Λ_r^{-1/2}U_rᵀ), and the new member's kernel value
// K(x, x_j') ≈ φ(x)ᵀφ(x_j'). Hence φ'(x) = F'k_S'(x) ≈ T φ(x) with
// T = F'(I − e_j e_jᵀ)F⁺ + F'e_j φ(x_j')ᵀ. O(r'·r·M).
func (m *Model) swapTransform(sw *swapWorkspace, j int) *mat.Dense {
	M := m.m
	ro, rn := sw.fmOld.r, m.fm.r
	t := mat.NewDense(rn+1, ro+1, sw.floats((rn+1)*(ro+1), true))
	td := t.RawMatrix().Data
	fo := sw.fmOld.f
	for a := 0; a < rn; a++ {
		fa := m.fm.f[a*M : (a+1)*M]
		row := td[a*(ro+1) : a*(ro+1)+ro]
		// d_i = Σ_{l≠j} F'_al·F_il, each a sequential sum over l as
		// written; four i at a time so that the four chains overlap.
		i := 0
		for ; i+4 <= ro; i += 4 {
			f0, f1, f2, f3 := fo[i*M:(i+1)*M], fo[(i+1)*M:(i+2)*M], fo[(i+2)*M:(i+3)*M], fo[(i+3)*M:(i+4)*M]
			var d0, d1, d2, d3 float64
			for l := 0; l < j; l++ {
				v := fa[l]
				d0 += v * f0[l]
				d1 += v * f1[l]
				d2 += v * f2[l]
				d3 += v * f3[l]
			}
			for l := j + 1; l < M; l++ {
				v := fa[l]
				d0 += v * f0[l]
				d1 += v * f1[l]
				d2 += v * f2[l]
				d3 += v * f3[l]
			}
			row[i] = sw.fmOld.vals[i]*d0 + fa[j]*sw.phiX[i]
			row[i+1] = sw.fmOld.vals[i+1]*d1 + fa[j]*sw.phiX[i+1]
			row[i+2] = sw.fmOld.vals[i+2]*d2 + fa[j]*sw.phiX[i+2]
			row[i+3] = sw.fmOld.vals[i+3]*d3 + fa[j]*sw.phiX[i+3]
		}
		for ; i < ro; i++ {
			fi := fo[i*M : (i+1)*M]
			var d float64
			for l := 0; l < j; l++ {
				d += fa[l] * fi[l]
			}
			for l := j + 1; l < M; l++ {
				d += fa[l] * fi[l]
			}
			row[i] = sw.fmOld.vals[i]*d + fa[j]*sw.phiX[i]
		}
	}
	t.Set(rn, ro, 1)
	return t
}

// refreshNoise runs level 2 (see evidence.go) on the current sufficient
// statistics: the noise variance 1/ζ and d_eff at the current γ, or at the
// evidence-optimal γ with AutoGamma (then applied to the RLS exactly). O(r³).
func (m *Model) refreshNoise() {
	m.sinceNoise = 0
	a, rv, s, nc := m.rls.Stats()
	ev, ok := newEvidence(a, rv, s, nc)
	m.rls.ReleaseStats() // ev holds what it needs
	if !ok {
		// Too little data for level 2: keep the previous estimate, or a unit
		// noise variance (the data are standardised) before the first.
		if m.noiseVar == 0 {
			m.noiseVar, m.dEff = 1, 1
		}
		return
	}
	defer ev.release()
	var l2 Level2
	if m.cfg.AutoGamma {
		l2 = ev.minimise()
		if l2.Gamma != m.rls.Gamma() && !m.rls.SetGamma(l2.Gamma) {
			l2 = ev.at(m.rls.Gamma())
		}
	} else {
		l2 = ev.at(m.rls.Gamma())
	}
	m.alphaFresh = false // SetGamma may have changed θ
	noiseVar := 1 / l2.Zeta
	if !(noiseVar >= 0) || math.IsInf(noiseVar, 0) || !(l2.DEff >= 1) || math.IsInf(l2.DEff, 0) {
		// Overflowing statistics (absurd data) must not reach the bars: keep
		// the previous estimate.
		if m.noiseVar == 0 {
			m.noiseVar, m.dEff = 1, 1
		}
		return
	}
	m.level2 = l2
	m.dEff = l2.DEff
	// A noiseless fit would give zero-width bars and an infinite log density;
	// the floor is far below any real noise in standardised units.
	m.noiseVar = max(noiseVar, minNoiseVar)
}

const minNoiseVar = 1e-12

// Info is a snapshot of the model's diagnostics.
type Info struct {
	M, Rank       int
	Gamma         float64
	NoiseVar      float64
	DEff          float64
	Swaps         int
	EigenRefresh  int
	SamplesWeight float64 // n_c = Σ c_k
	Entropy       float64
	// NystromScale ρ and IntervalScale τ of the variance calibration.
	NystromScale, IntervalScale float64
	// SwapFailures counts swaps whose re-expressed statistics could not be
	// loaded; the model then fell back to the window's statistics.
	SwapFailures int
}

// Info returns diagnostics; zero if not fitted.
func (m *Model) Info() Info {
	if !m.fitted {
		return Info{}
	}
	nc := m.rls.SumWeights()
	return Info{M: m.m, Rank: m.fm.r, Gamma: m.rls.Gamma(), NoiseVar: m.noiseVar, DEff: m.dEff,
		Swaps: m.swaps, EigenRefresh: m.eigRefresh, SamplesWeight: nc, Entropy: m.ws.Entropy(),
		NystromScale: m.cal.scale, IntervalScale: m.cal.tau, SwapFailures: m.swapFailures}
}

// WorkingSet returns the current working set (read-only).
func (m *Model) WorkingSet() *WorkingSet { return m.ws }

// Theta returns [w; b] (a view, valid until the next update).
func (m *Model) Theta() []float64 { return m.rls.Theta() }

// Predict returns the mean prediction at x (len n). O(M·(n+r)). No allocation.
func (m *Model) Predict(x []float64) float64 {
	if !m.fitted {
		panic(ErrNotFitted)
	}
	m.nextReady = false
	m.cfg.Kernel.Column(m.k, m.ws.Points(), x)
	r := m.fm.r
	m.fm.apply(m.psi[:r], m.k)
	m.psi[r] = 1
	return m.rls.Predict(m.psi[:r+1])
}

// Dual returns α (len M) and b with ŷ(x) = Σ α_i K(s_i, x) + b: the dual
// coefficients α = U_r Λ_r^{-1/2} w. Views valid until the next update.
func (m *Model) Dual() (alpha []float64, b float64) {
	th := m.rls.Theta()
	if !m.alphaFresh {
		m.fm.dual(m.alpha, th[:m.fm.r])
		m.alphaFresh = true
	}
	return m.alpha, th[m.fm.r]
}

// sameBits reports whether x and y (of equal length) are bit-identical.
func sameBits(x, y []float64) bool {
	y = y[:len(x)]
	for i, v := range x {
		if math.Float64bits(v) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}

// window is a ring of the W most recent learned samples (x, y, v).
type window struct {
	n, cap      int
	x, y, v     []float64
	head, count int
}

func newWindow(n, capacity int) *window {
	return &window{n: n, cap: capacity, x: make([]float64, n*capacity),
		y: make([]float64, capacity), v: make([]float64, capacity)}
}

func (w *window) push(x []float64, y, v float64) {
	w.head = (w.head + 1) % w.cap
	copy(w.x[w.head*w.n:(w.head+1)*w.n], x)
	w.y[w.head], w.v[w.head] = y, v
	if w.count < w.cap {
		w.count++
	}
}

// Window returns copies of the retained recent samples, oldest first: X
// (count×n), their targets y and weights v. count ≤ Config.Window.
func (m *Model) Window() (X, y, v []float64) {
	w := m.win
	return w.chronological(make([]float64, w.count*w.n), make([]float64, w.count), make([]float64, w.count))
}

// chronological copies the samples oldest first into cx (len ≥ W·n), cy and
// cv (len ≥ W) and returns the filled prefixes.
func (w *window) chronological(cx, cy, cv []float64) (X, y, v []float64) {
	for i := 0; i < w.count; i++ {
		slot := ((w.head-(w.count-1-i))%w.cap + w.cap) % w.cap
		copy(cx[i*w.n:(i+1)*w.n], w.x[slot*w.n:(slot+1)*w.n])
		cy[i], cv[i] = w.y[slot], w.v[slot]
	}
	return cx[:w.count*w.n], cy[:w.count], cv[:w.count]
}
