package narx

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

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
	// Cutoff ε ∈ [0, 1): a member whose kernel function is within a
	// squared distance ε·K(s, s) of the span of the other members' is not
	// kept at the fit, nor admitted by a swap (it would add rounding noise
	// amplified by the inverse distance, and nothing a ridge could use).
	Cutoff float64
	// Window is the number W ≥ 1 of most recent samples retained to give
	// the new member's feature its exact values after a working-set swap;
	// older samples keep their say through the Nyström projection (swap.go).
	// With λ < 1 choose W ≳ 5/(1−λ).
	Window int
	// SwapInterval is the minimum number of samples between accepted swaps
	// online: once that many samples have passed since the last accepted
	// swap, every sample is a candidate (an O(M) test) until one is accepted.
	// 0 freezes the working set after the fit. A swap costs
	// O(M² + W·M·n) (swap.go).
	SwapInterval int
	// SwapRule decides which member a candidate replaces and whether.
	SwapRule SwapRule
	// Select tunes the batch entropy search of Fit.
	Select SelectOptions
	// NoiseEvery runs the level-2 inference (noise level, d_eff and, with
	// AutoGamma, γ) every K learned samples: O(M³), amortised O(M³/K) per
	// sample; 0 means only at the fit.
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
	case !(c.IntervalLevel >= 0 && c.IntervalLevel <= MaxIntervalLevel):
		return fmt.Errorf("interval level must be in (0, %v] (got %v)", MaxIntervalLevel, c.IntervalLevel)
	}
	return nil
}

// MaxIntervalLevel is the highest level of a prediction interval: its
// band, ±4.9 standard deviations of a normal, is already beyond what a
// window of a few hundred residuals can calibrate, and from 1 − 1e-16 on
// the quantile rounds to infinity and the calibration's τ to NaN.
const MaxIntervalLevel = 0.999999

// SwapRule is how the working set changes online.
type SwapRule int

const (
	// SwapEntropy: the book's rule — a random member, replaced when that
	// raises the quadratic Rényi entropy of the working set.
	SwapEntropy SwapRule = iota
	// SwapGain: every SwapInterval samples the most promising sample
	// since the last test (swapNovel) replaces the member the fitted
	// function needs least, if that lowers the ridge objective's minimum
	// on the statistics by more than swapMinGainNoise noise variances
	// (swap.go).
	SwapGain
)

// ErrNotFitted is returned by methods that need a fitted model.
var ErrNotFitted = errors.New("narx: model is not fitted")

// Model is a fixed-size LS-SVM in primal form (book §6.2; docs/design.md, "The model"):
//
//	ŷ(x) = wᵀφ(x) + b,  φ(x) = F k_S(x),  F Ω Fᵀ = I,  θ = [w; b] = (A + D/γ)⁻¹ r,
//
// with A, r the forgetting-weighted statistics kept by recursive.RLS, and the
// working set S chosen at the fit (Config.Selection) and kept current by
// swaps (Config.SwapRule), each of which changes F, A and the inverse of
// A + D/γ by low-rank terms (swap.go).
//
// A Model is not safe for concurrent use: it is owned by one goroutine.
type Model struct {
	cfg Config
	n   int // regressor dimension
	m   int // working-set size actually used

	ws  *WorkingSet
	fm  *featureMap
	rls *recursive.RLS
	pcg *rand.PCG
	rng *rand.Rand
	win *window

	fitted bool
	preparedSample
	swapState
	level2State
	calibrationState
}

// preparedSample holds the per-sample buffers, allocated at the fit: the
// prepared regressor, its kernel column and features (kept from Observe to
// Learn). Workspaces of the rare operations (swap, calibration refit) are
// borrowed from a shared pool per call (see recursive.GetFloats), not kept
// per model.
type preparedSample struct {
	x, k, psi []float64
	prepared  bool
	kxx       float64
	// nextReady: x, k, ψ and kxx hold the first step of the last Forecast,
	// computed there for the regressor the next Observe will most likely
	// get (Observe reuses them if its x is bit-identical).
	nextReady bool
}

// swapState counts the working set's swaps: accepted, refused by the
// statistics (swapFailures), samples since the last test, and feature-map
// refreshes.
type swapState struct {
	swaps        int
	sinceSwap    int
	swapFailures int
	basisRefresh int
}

// level2State is the level-2 inference (evidence.go): the noise variance
// and effective degrees of freedom of the last refresh, the samples since
// it, and the dual coefficients Dual caches (alphaFresh: valid for the
// current θ).
type level2State struct {
	noiseVar   float64
	dEff       float64
	sinceNoise int
	level2     Level2
	alpha      []float64
	alphaFresh bool
	// logEv is LogEvidence as the last level-2 refresh computed it, valid
	// while the RLS is logEvRLS at version logEvAt: a width search asks for
	// it right after each trial's fit, whose refresh has just decomposed
	// the same statistics (an O(r³) saved per trial).
	logEv    float64
	logEvRLS *recursive.RLS
	logEvAt  uint64
}

// calibrationState is the calibration of the predictive variance
// (calibrate.go), the samples since its last refit, and the prediction of
// the last Observe it is fed with.
type calibrationState struct {
	cal                           *calibration
	sinceCal                      int
	lastMean, lastN, lastP, lastB float64
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

// Fit is the batch fit (book §6.2.2, Algorithm 6.2): a working set selected
// (Config.Selection) from the N rows of X (N×n row-major), Nyström features, and the weighted ridge
// statistics of all N samples (weights v, nil meaning 1, times λ^{N−k}).
// O(N·M·(n+M) + M³ + trials·M·n). Non-finite data is an error and leaves m
// unchanged, as are a length mismatch and a negative weight; a failure
// further on (a ridge system that is not positive definite) leaves m
// unfitted.
func (m *Model) Fit(X, y, v []float64) error {
	return m.fit(X, y, v, nil)
}

// fit is Fit with the working set given as rows of X (nil: selected by
// Config.Select).
func (m *Model) fit(X, y, v []float64, rows []int) error {
	n := m.n
	N := len(y)
	if N == 0 || len(X) != N*n || (v != nil && len(v) != N) {
		return fmt.Errorf("narx: Fit: X is %d values for %d targets of dimension %d", len(X), N, n)
	}
	if !recursive.AllFinite(X) || !recursive.AllFinite(y) || (v != nil && !recursive.AllFinite(v)) {
		return fmt.Errorf("narx: Fit: non-finite data")
	}
	if v != nil && slices.ContainsFunc(v, func(w float64) bool { return w < 0 }) {
		return fmt.Errorf("narx: Fit: a negative weight")
	}
	// From here on the model's structures are replaced: a failure leaves
	// it unfitted, not fitted with statistics it never loaded.
	m.fitted = false
	if rows == nil {
		rows = SelectWorkingSet(m.cfg.Kernel, X, n, m.cfg.Size, m.rng, m.cfg.Select).Index
	}
	M := len(rows)
	// The fit's transient matrices come from the shared scratch pool: a
	// daemon fits series while holding thousands, and garbage of the sizes
	// the series keep fragments the heap.
	pts := recursive.GetFloats(M * n)
	defer recursive.PutFloats(pts)
	for k, i := range rows {
		copy(pts[k*n:(k+1)*n], X[i*n:(i+1)*n])
	}
	omega := recursive.GetFloats(M * M) // every entry is set
	defer recursive.PutFloats(omega)
	ws := NewWorkingSet(m.cfg.Kernel, n, pts, omega)
	keep, f := nystromBasis(omega, M, m.cfg.Cutoff)
	if len(keep) == 0 {
		// Every kernel function is zero on the data (a linear kernel on a
		// constant series): one member with a dead feature, F = [0], is a
		// bias-only model, and its first swap gives the feature life.
		keep, f = []int{0}, []float64{0}
	}
	if len(keep) < M {
		// keep is increasing: compacting in place reads each point before
		// it is overwritten.
		for a, j := range keep {
			copy(pts[a*n:(a+1)*n], pts[j*n:(j+1)*n])
		}
		M = len(keep)
		ws = NewWorkingSet(m.cfg.Kernel, n, pts[:M*n], nil)
	}
	m.m, m.ws = M, ws
	m.fm = &featureMap{m: M, r: M, f: f}
	m.x, m.k, m.alpha = make([]float64, n), make([]float64, M), make([]float64, M)
	m.psi = make([]float64, M+1)
	m.win = newWindow(n, M, m.cfg.Window)
	for i := max(0, N-m.cfg.Window); i < N; i++ {
		m.cfg.Kernel.Column(m.k, m.ws.Points(), X[i*n:(i+1)*n])
		m.win.push(X[i*n:(i+1)*n], y[i], weightAt(v, i), m.k, 0) // never a newcomer: older than any test
	}
	m.rls = recursive.NewRLS(m.fm.r+1, m.cfg.Gamma, m.cfg.Forgetting)
	if err := m.loadStats(X, y, v); err != nil {
		return err
	}
	m.cal = newCalibration(m.cfg.IntervalLevel)
	m.fitted, m.alphaFresh, m.prepared, m.nextReady = true, false, false, false
	m.sinceSwap, m.sinceNoise = 0, 0
	m.refreshNoise()
	if m.cfg.NoiseEvery > 0 {
		m.sinceNoise = m.noisePhase()
	}
	return nil
}

// noisePhase is how far into the period NoiseEvery the model's level-2
// refreshes fall, in [0, NoiseEvery/noisePhaseSpan): a hash of the fitted
// noise level. The first refresh comes NoiseEvery − phase samples after the
// fit (sinceNoise starts at phase), later ones every NoiseEvery, so that no
// estimate is older than NoiseEvery samples. Series that start together (a
// fleet onboarded at once, a daemon started on a backlog) would otherwise
// all refresh at the same sample for ever after — a swap does not refresh
// level 2, so it does not break the lockstep —, an O(r³) burst per series
// at once that stalls every series of the daemon behind it
// (docs/benchmarks.md, "Latency"). It depends only on the data, so a
// backtest and a restored model refresh at the same samples as the daemon.
func (m *Model) noisePhase() int {
	h := math.Float64bits(m.noiseVar) * 0x9e3779b97f4a7c15 // Fibonacci hashing, as calibration.phase
	return int((h >> 32) % uint64(max(m.cfg.NoiseEvery/noisePhaseSpan, 1)))
}

// noisePhaseSpan: the phases span a sixteenth of the period, which spreads
// a fleet's refreshes over that many samples (62 at M = 100 and the default
// period of 10·M) and moves each series' refreshes by at most as many: the
// prequential scores of a long series move with where its refreshes fall
// (docs/benchmarks.md, "The online core against KRLS-T").
const noisePhaseSpan = 16

func weightAt(v []float64, i int) float64 {
	if v == nil {
		return 1
	}
	return v[i]
}

// loadStats recomputes A, r, s, n_c in the current features from the samples
// (X, y, v) in time order and loads them into the RLS. The window must hold
// the last samples of (X, y, v), as fit has just pushed them: their kernel
// columns are taken from it. O(N·M·(n+r) + N·r²).
func (m *Model) loadStats(X, y, v []float64) error {
	N, n, r := len(y), m.n, m.fm.r
	w := m.win
	if w.count != min(N, w.cap) {
		panic(fmt.Sprintf("narx: loadStats: the window holds %d samples, not the last %d of the fit", w.count, min(N, w.cap)))
	}
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
		k := m.k
		if age := N - 1 - i; age < w.count {
			slot := w.slot(age)
			k = w.k[slot*w.m : (slot+1)*w.m]
		} else {
			m.cfg.Kernel.Column(k, m.ws.Points(), X[i*n:(i+1)*n])
		}
		m.fm.apply(row, k)
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
	if !m.nextReady || !recursive.SameBits(m.x, x) {
		copy(m.x, x)
		m.prepareFeatures()
	}
	m.nextReady = false
	m.prepared = true
	psi := m.psi[:m.fm.r+1]
	noise, param, prior := m.varianceParts(psi, m.kxx)
	m.lastMean, m.lastN, m.lastP, m.lastB = m.rls.Predict(psi), noise, param, prior
	return m.lastMean, m.cal.variance(noise, param, prior)
}

// prepareFeatures fills k, ψ and K(x,x) for m.x.
func (m *Model) prepareFeatures() {
	m.cfg.Kernel.Column(m.k, m.ws.Points(), m.x)
	m.kxx = m.cfg.Kernel.Eval(m.x, m.x)
	r := m.fm.r
	m.fm.apply(m.psi[:r], m.k)
	m.psi[r] = 1
}

// varianceAt is the level-1 predictive variance (docs/design.md, "The model"):
// σ²(x) = ζ⁻¹(1 + ψᵀ(A + D/γ)⁻¹ψ) + μ⁻¹(K(x,x) − ‖φ(x)‖²), with ζ⁻¹ the noise
// variance and μ⁻¹ = γζ⁻¹ (γ = ζ/μ). The last term is the prior variance of the
// part of f the Nyström map cannot represent, so bars widen off the working set.
func (m *Model) varianceAt(psi []float64, kxx float64) float64 {
	noise, param, prior := m.varianceParts(psi, kxx)
	return m.cal.variance(noise, param, prior)
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
	return m.cal.variance(noise, 0, 0), m.cal.variance(0, param, 0), m.cal.variance(0, 0, prior)
}

// Learn applies target y with weight v ≥ 0 to the regressor given to the
// last Observe (LearnOffset with offset 0): every SwapInterval samples the
// swap test of Config.SwapRule (the gain rule's newcomer among the samples
// since its last test O(SwapInterval + M²), its member O(M²) and its
// border O(W·M); the entropy rule's O(M)), then the RLS update O(r²) and
// the sample's swap score O(r). Returns whether a swap was accepted.
// Non-finite y or v (which the caller should have rejected) leave the
// model unchanged.
// No allocation unless a swap is accepted (once the shared pools hold the
// scratch space of the RLS update; see recursive.Pool).
func (m *Model) Learn(y, v float64) (swapped bool) { return m.LearnOffset(y, v, 0) }

// LearnOffset is Learn for a caller that published the prediction of the
// last Observe plus offset (in the model's output units; ForecastOffset's
// intercept correction): the model learns y as Learn does, and the
// calibration of the bars scores y against the prediction as published:
// against the uncorrected mean, the bars of a corrected prediction would
// keep the width of the bias the offset removes (docs/benchmarks.md, "The
// online core against KRLS-T"). Offset 0 is Learn to the bit.
func (m *Model) LearnOffset(y, v, offset float64) (swapped bool) {
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
	if v >= calMinWeight && m.cal.add(y-(m.lastMean+offset), m.lastN, m.lastP, m.lastB) {
		reachedMin = m.cal.count == calMin
	}
	m.sinceCal++
	if m.sinceCal >= calRefitEvery || reachedMin {
		m.cal.refit(reachedMin)
		m.sinceCal = 0
		if reachedMin {
			m.sinceCal = m.cal.phase()
		}
	}
	m.sinceSwap++
	// Scored before a swap changes the members: the next test ranks it
	// against members that have not changed since (swapNovel).
	score := m.swapScore(y, v)
	if j, ok := m.swapCandidate(); ok {
		if m.cfg.SwapRule == SwapEntropy {
			swapped = m.swap(j, m.swapMinGain())
		} else {
			swapped = m.swapNovel(j, score)
		}
	}
	m.learnPrepared(y, v, score)
	return swapped
}

// swapCandidate proposes the member a newcomer would replace, once
// SwapInterval samples have passed since the last swap (SwapEntropy: since
// the last accepted one; SwapGain: since the last test). SwapEntropy: a
// random member, accepted by the O(M) entropy test. SwapGain: the member
// whose kernel function the fitted function needs least, the smallest
// α_j²/[Ω⁻¹]_jj — the squared RKHS norm f loses when s_j is dropped and f
// is projected onto the others (O(M²)) — put to the gain test of swap
// with the newcomer swapNovel picks.
func (m *Model) swapCandidate() (j int, accept bool) {
	if m.cfg.SwapInterval == 0 || m.sinceSwap < m.cfg.SwapInterval {
		return 0, false
	}
	if m.cfg.SwapRule == SwapEntropy {
		j = m.rng.IntN(m.m)
		return j, m.ws.SwapGain(j, m.k, m.kxx) < 0
	}
	m.sinceSwap = 0
	alpha, _ := m.Dual()
	M, f := m.m, m.fm.f
	// q_c = [Ω⁻¹]_cc = ‖F e_c‖², summed row by row: F is row-major, and a
	// column walk strides through M² numbers (at M = 400 it cost more than
	// the rest of the test).
	q := recursive.GetFloats(M)
	clear(q)
	for r := 0; r < M; r++ {
		row := f[r*M : (r+1)*M]
		for c, v := range row {
			q[c] += v * v
		}
	}
	best := math.Inf(1)
	for c := 0; c < M; c++ {
		if l := alpha[c] * alpha[c] / q[c]; l < best {
			best, j = l, c
		}
	}
	recursive.PutFloats(q)
	return j, true
}

// swapNovel puts to the gain test the exchange of member j for the most
// promising of the samples since the last test — the prepared one, whose
// swap score is score, and the last SwapInterval − 1 the window holds —,
// by their swap scores v·e²·(K(x,x) − ‖φ(x)‖²)/K(x,x) (swapScore): the
// weighted squared residual times the share of its kernel function outside
// the members' span, the first-order gain of the feature it would bring
// (an outlier the robust weighting discounts brings little: its own sample
// counts for little in the gain test). Every candidate's residual is its prediction error, made
// before it was learned: the window's samples were scored so when they
// were learned (Learn; the window keeps the score), with the members of
// now — none has changed since the last test —, so a window sample is
// ranked exactly as it would have been had it been the one at the test. A
// sample that arrives between two tests so still gets its chance to join,
// as every sample does in KRLS-T. The scan is O(SwapInterval), and the
// features of the winner, if from the window, O(M²). What it gains over
// testing only the prepared sample is in docs/benchmarks.md ("The online
// core against KRLS-T").
func (m *Model) swapNovel(j int, score float64) bool {
	M, r := m.m, m.fm.r
	best := newcomer{x: m.x, k: m.k, phi: m.psi[:M], kxx: m.kxx}
	bestScore := score
	w := m.win
	bestSlot := -1
	if n := min(m.cfg.SwapInterval-1, w.count); r == M {
		for age := range n {
			if slot := w.slot(age); w.s[slot] > bestScore {
				bestSlot, bestScore = slot, w.s[slot]
			}
		}
	}
	if bestSlot < 0 {
		return m.swapIn(j, m.swapMinGain(), best)
	}
	phi := recursive.GetFloats(M)
	defer recursive.PutFloats(phi)
	x, k := w.x[bestSlot*m.n:(bestSlot+1)*m.n], w.k[bestSlot*M:(bestSlot+1)*M]
	m.fm.apply(phi, k)
	return m.swapIn(j, m.swapMinGain(), newcomer{x: x, k: k, phi: phi, kxx: m.cfg.Kernel.Eval(x, x)})
}

// swapScore is the prepared sample's score as a swap's newcomer, with
// target y and weight v: v·e²·(K(x,x) − ‖φ(x)‖²)/K(x,x), e its prediction
// error (swapNovel). O(r).
func (m *Model) swapScore(y, v float64) float64 {
	e := y - m.lastMean
	return v * novelty(m.psi[:m.fm.r], m.kxx) * e * e
}

// novelty is (K(x,x) − ‖φ(x)‖²)/K(x,x): the share of x's kernel function
// outside the members' span; 0 when K(x,x) is not positive, or when
// rounding makes ‖φ(x)‖² exceed K(x,x) for x in the span.
func novelty(phi []float64, kxx float64) float64 {
	if !(kxx > 0) {
		return 0
	}
	return max((kxx-dot(phi, phi))/kxx, 0)
}

// swapMinGain is the gain a swap must bring (recursive.RLS.ExchangeFeature):
// none with SwapEntropy, a positive one with SwapGain.
func (m *Model) swapMinGain() float64 {
	if m.cfg.SwapRule == SwapEntropy {
		return math.Inf(-1)
	}
	return swapMinGainNoise * m.noiseVar
}

// swapMinGainNoise is the gain, in noise variances, a SwapGain swap must
// bring: any new direction lowers the residual energy of the window by one
// noise variance on average by chance alone (a χ²₁ term), so a swap must
// beat that. On the Santa Fe laser (M = 100, one-step NMSE after 9 000
// samples) 2 measured best of 0, 2, 10 and 50 (docs/benchmarks.md).
const swapMinGainNoise = 2

// learnPrepared is the RLS update with the prepared features; score is
// the sample's swap score (swapScore), kept in the window. O(r²).
func (m *Model) learnPrepared(y, v, score float64) {
	if !m.rls.Update(m.psi[:m.fm.r+1], y, v) {
		return
	}
	m.win.push(m.x, y, v, m.k, score)
	m.alphaFresh = false
	m.sinceNoise++
	if m.cfg.NoiseEvery > 0 && m.sinceNoise >= m.cfg.NoiseEvery {
		if m.cfg.AutoGamma || !m.refreshNoiseHeld() {
			m.refreshNoise()
		}
	}
}

// refreshNoiseHeld is the periodic level-2 refresh at a held γ in O(r²):
// the noise level and d_eff need no spectrum there, only the ridge
// solution and the inverse the RLS keeps (level2Held). It returns false,
// changing nothing, where the RLS's inverse is not exact at this moment;
// refreshNoise's O(r³) decomposition then runs. LogEvidence decomposes
// afresh when next asked: no search asks between refreshes online.
func (m *Model) refreshNoiseHeld() bool {
	l2, ok := m.level2Held()
	if !ok {
		return false
	}
	m.sinceNoise = 0
	m.logEvRLS = nil
	m.applyLevel2(l2)
	return true
}

// level2Held evaluates level 2 at the RLS's γ without the eigenvalues of
// evidence.at: with P = (A + D/γ)⁻¹ and the ridge solution θ = [w; b],
//
//	E_W = ½‖w‖²,  E_D = ½ Σ c (y − ψᵀθ)²,  d_eff = 1 + r − tr(D P)/γ,
//
// the same quantities as at's sums over G's eigenpairs (w_i = p_i/(λ_i + 1/γ)
// in G's eigenbasis, and D P's block is (G + I/γ)⁻¹), so μ and ζ follow as
// there (level2At). Cost stays NaN: it needs log det(I + γG). ok is false
// when recursive.RLS.FeatureTrace is, or with too little data. O(r²).
func (m *Model) level2Held() (l2 Level2, ok bool) {
	trace, ok := m.rls.FeatureTrace()
	if !ok {
		return l2, false
	}
	_, rv, s, nc := m.rls.Stats()
	m.rls.ReleaseStats()
	if !(nc > 1) {
		return l2, false
	}
	r := len(rv) - 1
	gamma := m.rls.Gamma()
	theta := m.rls.Theta()
	ew := 0.5 * dot(theta[:r], theta[:r])
	ed := 0.5 * m.rls.ResidualEnergy()
	sc := max(s-rv[r]*rv[r]/nc, 0)
	return level2At(gamma, nc, sc, ew, ed, 1+float64(r)-trace/gamma, math.NaN()), true
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
		m.logEv = ev.logEvidence(l2)
		if l2.Gamma != m.rls.Gamma() && !m.rls.SetGamma(l2.Gamma) {
			l2 = ev.at(m.rls.Gamma())
		}
	} else {
		l2 = ev.at(m.rls.Gamma())
		m.logEv = ev.logEvidence(l2)
	}
	// SetGamma leaves the statistics as they were (bit for bit: it only
	// applies the pending forgetting factor, as Stats does), so the value
	// holds at the version after it.
	m.logEvRLS, m.logEvAt = m.rls, m.rls.Version()
	m.alphaFresh = false // SetGamma may have changed θ
	m.applyLevel2(l2)
}

// applyLevel2 takes the noise level and d_eff of a level-2 result, unless
// they are not finite.
func (m *Model) applyLevel2(l2 Level2) {
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
	BasisRefresh  int     // re-orthonormalisations of the features (swap.go)
	SamplesWeight float64 // n_c = Σ c_k
	Entropy       float64
	// Scales of the noise, parameter and Nyström parts of the variance and
	// the interval scale τκ: the window's τ times the out-of-sample
	// feedback κ (calibrate.go).
	Scales        [3]float64
	IntervalScale float64
	// DF is ν of the Student-t predictive distribution (0: a normal).
	DF float64
	// SwapFailures counts swaps the statistics refused (a system that
	// rounding made indefinite); the member was then not replaced.
	SwapFailures int
}

// Info returns diagnostics; zero if not fitted.
func (m *Model) Info() Info {
	if !m.fitted {
		return Info{}
	}
	nc := m.rls.SumWeights()
	return Info{M: m.m, Rank: m.fm.r, Gamma: m.rls.Gamma(), NoiseVar: m.noiseVar, DEff: m.dEff,
		Swaps: m.swaps, BasisRefresh: m.basisRefresh, SamplesWeight: nc, Entropy: m.ws.Entropy(),
		Scales: m.cal.s, IntervalScale: m.cal.tau * m.cal.kappa, DF: m.cal.df, SwapFailures: m.swapFailures}
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

// window is a ring of the W most recent learned samples (x, y, v) with
// their kernel columns against the working set, k (W×M, kept current by
// the swaps): a swap needs them all (swap.go), and recomputing them there
// would cost W·M kernel evaluations per swap instead of W. The columns are
// not part of the state: they are a function of the samples and the
// working set, recomputed bit for bit on a restore (fillColumns).
type window struct {
	n, m, cap   int
	x, y, v, k  []float64
	s           []float64 // swap scores (Model.swapScore) at learning
	head, count int
}

func newWindow(n, m, capacity int) *window {
	return &window{n: n, m: m, cap: capacity, x: make([]float64, n*capacity),
		y: make([]float64, capacity), v: make([]float64, capacity), k: make([]float64, m*capacity), s: make([]float64, capacity)}
}

// slot returns the ring slot of the sample age pushes ago (0: the newest).
func (w *window) slot(age int) int { return ((w.head-age)%w.cap + w.cap) % w.cap }

// push adds sample (x, y, v) whose kernel column against the working set
// is k and whose swap score is s.
func (w *window) push(x []float64, y, v float64, k []float64, s float64) {
	w.head = (w.head + 1) % w.cap
	copy(w.x[w.head*w.n:(w.head+1)*w.n], x)
	copy(w.k[w.head*w.m:(w.head+1)*w.m], k)
	w.y[w.head], w.v[w.head], w.s[w.head] = y, v, s
	if w.count < w.cap {
		w.count++
	}
}

// resized returns a window of capacity W holding w's newest min(count, W)
// samples (their x, y, v and swap scores, oldest first as push would have
// placed them); the kernel columns are left to fillColumns. O(W·n).
func (w *window) resized(W int) *window {
	r := newWindow(w.n, w.m, W)
	for age := min(w.count, W) - 1; age >= 0; age-- {
		slot := w.slot(age)
		r.push(w.x[slot*w.n:(slot+1)*w.n], w.y[slot], w.v[slot], nil, w.s[slot]) // no column: fillColumns
	}
	return r
}

// fillColumns recomputes the kernel columns of the samples held, as
// Kernel.Column computes them. O(W·M·n).
func (w *window) fillColumns(kern Kernel, points []float64) {
	for age := 0; age < w.count; age++ {
		slot := w.slot(age)
		kern.Column(w.k[slot*w.m:(slot+1)*w.m], points, w.x[slot*w.n:(slot+1)*w.n])
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
		slot := w.slot(w.count - 1 - i)
		copy(cx[i*w.n:(i+1)*w.n], w.x[slot*w.n:(slot+1)*w.n])
		cy[i], cv[i] = w.y[slot], w.v[slot]
	}
	return cx[:w.count*w.n], cy[:w.count], cv[:w.count]
}
