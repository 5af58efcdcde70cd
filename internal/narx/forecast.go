package narx

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/streamd/streamd/internal/recursive"
)

// Step is one step of an iterated forecast, in the model's (standardised) units.
type Step struct {
	Mean float64
	// Var is the predictive variance of y at this step: the level-1 one-step
	// variance at the fed-back regressor plus the propagated variance of the
	// fed-back predictions.
	Var float64
	// OneStepVar is the level-1 variance of step 1, the same at every step:
	// what a one-step bar reused at every horizon would claim.
	OneStepVar float64
	// CumVar is the variance of the sum of the forecast errors of steps 1..h,
	// the covariances between steps included: the variance of a level
	// forecast when the model forecasts increments (a differenced series is
	// integrated back by summing the steps).
	CumVar float64
}

// forecastWorkspace holds what Forecast needs. Its storage is one buffer
// borrowed from the shared pool (recursive.GetFloats) for the duration of
// one Forecast, not kept per model: nothing in it outlives the call.
type forecastWorkspace struct {
	hist History   // the caller's history, copied, advanced with the predictions
	x, g []float64 // regressor and ∂ŷ/∂x, len n
	k    []float64 // kernel column, len M
	psi  []float64 // features, len M+1
	cov  []float64 // d×d covariance of the last d fed-back values, row-major
	next []float64 // scratch for the shifted covariance
	sc   []float64 // Cov(S, fed-back value at lag l), S the sum of the errors so far
	sv   float64   // Var(S)
	// The parameters' part of the errors: jr holds ∂ŷ/∂θ of the last d
	// fed-back values (a ring of d rows of len r+1, row jHead the newest),
	// jh that of the current step, js their sum over the steps.
	jr, jh, js []float64
	jHead      int
	d          int   // largest y lag
	yIdx       []int // y lag of each y coordinate of x
	buf        []float64
}

// borrow lays out the workspace for embedding e and working-set size m in
// a pooled buffer, with hist's content copied and the covariance zero.
func (fw *forecastWorkspace) borrow(e Embedding, m int, hist *History) {
	n := e.Dim()
	d := 0
	if len(e.YLags) > 0 {
		d = e.YLags[len(e.YLags)-1]
	}
	w := 1 + e.Inputs()
	nb := e.Depth() * w
	fw.buf = recursive.GetFloats(2*n + 2*m + 1 + 2*d*d + d + (d+2)*(m+1) + nb + w - 1)
	b := fw.buf
	next := func(l int) []float64 {
		s := b[:l:l]
		b = b[l:]
		return s
	}
	fw.hist = History{emb: e, width: w, buf: next(nb), lastU: next(w - 1)}
	fw.hist.CopyFrom(hist)
	fw.x, fw.g, fw.k, fw.psi = next(n), next(n), next(m), next(m+1)
	fw.cov, fw.next, fw.sc = next(d*d), next(d*d), next(d)
	fw.jr, fw.jh, fw.js = next(d*(m+1)), next(m+1), next(m+1)
	clear(fw.cov)
	clear(fw.next)
	clear(fw.sc)
	clear(fw.js)
	fw.sv, fw.jHead = 0, 0
	fw.d, fw.yIdx = d, e.YLags
}

func (fw *forecastWorkspace) release() {
	recursive.PutFloats(fw.buf)
	*fw = forecastWorkspace{}
}

// Forecast writes len(dst) iterated predictions starting after the last record
// of hist (book eq. 8.12: each prediction is pushed into the lag vector for the
// next step). inputs[h] gives the exogenous inputs u_{t+1+h} for step h+1
// (len n_u each; nil or empty rows when n_u = 0). hist is not modified.
//
// Uncertainty is propagated by linearisation (first-order Taylor expansion of
// the predictor around the mean input, Girard et al. 2003), in two parts.
// The noise (with the Nyström residual) is new at each step: with
// g = ∂ŷ/∂x = Σ α_i ∂K(s_i,x)/∂x and C the covariance of the fed-back noise
// errors, N_h = σ²_n(x̄_h) + g_yᵀ C g_y and Cov(y_h, y_{h−l}) = Σ_a g_a C_{a,l}.
// The parameters' error δθ is one error seen by every step, through
// J_h = ∂ŷ_h/∂θ = ψ(x̄_h) + Σ_a g_a J_{h−a}: Var_h = N_h + J_hᵀ Var(δθ) J_h,
// Var(δθ) = ζ⁻¹(A + D/γ)⁻¹ as in level 1 (counting it afresh at each step
// would make the bars grow too slowly with the horizon). With cfg.Summed the
// same recursions carry the summed errors S_h = Σ_{j≤h} e_j (Step.CumVar):
// Var(S_h) = Var(S_{h−1}) + 2 Cov(S_{h−1}, e_h) + N_h for the noise, with
// Cov(S_{h−1}, e_h) = Σ_a g_a Cov(S_{h−1}, y_{h−a}), plus (Σ_j J_j)ᵀ Var(δθ)
// (Σ_j J_j). Each part carries its calibrated scale, as in the level-1
// variance (calibrate.go).
// Cost O(H·(M·(n+r) + r² + d² + d·r)), d the largest y lag. No allocation.
func (m *Model) Forecast(dst []Step, hist *History, inputs [][]float64) {
	m.ForecastOffset(dst, hist, inputs, 0)
}

// ForecastOffset is Forecast with an intercept correction: offset (in the
// model's output units) is added to every step's mean, and the corrected
// mean is what is fed back into the lags, as a shifted intercept of the
// model would be. For a linear autoregression with coefficients summing to
// a, a one-step bias b so corrected moves the forecast's long-run level by
// b/(1 − a): the correction of a location shift the model has not learned
// yet. The variances are Forecast's (a constant does not change the
// linearisation's gradients, only where they are taken).
func (m *Model) ForecastOffset(dst []Step, hist *History, inputs [][]float64, offset float64) {
	if !m.fitted {
		panic(ErrNotFitted)
	}
	nu := m.cfg.Embedding.Inputs()
	if nu > 0 && len(inputs) < len(dst) {
		panic(fmt.Sprintf("narx: Forecast: %d input rows for %d steps", len(inputs), len(dst)))
	}
	var fw forecastWorkspace
	fw.borrow(m.cfg.Embedding, m.m, hist)
	defer fw.release()
	// The dual coefficients (O(r·M) when stale) only for the gradients of
	// the fed-back steps: a one-step forecast needs none.
	var alpha []float64
	pts := m.ws.Points()
	n, r, d := m.n, m.fm.r, fw.d
	var noInputs [0]float64
	var oneStep float64 // the level-1 variance of step 1
	for h := range dst {
		u := noInputs[:]
		if nu > 0 {
			u = inputs[h]
		}
		// Step 1's regressor is the one the next Observe will most likely
		// see (the same lags; the same inputs unless they change): computed
		// in the model's own buffers, Observe reuses it. Not between Observe
		// and Learn, which need those buffers.
		x, k, psi := fw.x, fw.k, fw.psi
		first := h == 0 && !m.prepared
		if first {
			x, k, psi = m.x, m.k, m.psi
		}
		fw.hist.Regressor(x, u)
		m.cfg.Kernel.Column(k, pts, x)
		m.fm.apply(psi[:r], k)
		psi[r] = 1
		mean := m.rls.Predict(psi[:r+1]) + offset
		kxx := m.cfg.Kernel.Eval(x, x)
		if first {
			m.kxx, m.nextReady = kxx, true
		}
		noise, prior := m.noiseVar, m.priorPart(psi[:r+1], kxx)
		if h == 0 {
			_, param, _ := m.varianceParts(psi[:r+1], kxx)
			oneStep = m.cal.variance(noise, param, prior)
		}
		// The noise (and Nyström) part is new at every step; the parameters'
		// part is one error δθ seen through every step, carried by
		// J_h = ∂ŷ_h/∂θ = ψ_h + Σ_a g_a J_{h−a} (jh): Var = J_hᵀ Var(δθ) J_h.
		vn := m.cal.variance(noise, 0, prior)
		jh := fw.jh[:r+1]
		copy(jh, psi[:r+1])
		propagated, cs := 0.0, 0.0
		if d > 0 {
			// Step 1 sees only observed lags: nothing to propagate yet. At
			// step h+1 only the fed-back values, lags 1..h, are uncertain:
			// the covariance is zero outside its leading h×h block, so only
			// the gradient's coordinates of the y lags ≤ h (the first c, the
			// lags increasing) are needed; the others would add products
			// with zero (see propagate).
			if h > 0 {
				c := fw.uncertain(h)
				g := fw.g[:c]
				clear(g)
				if c > 0 {
					if alpha == nil {
						alpha, _ = m.Dual()
					}
					for i, a := range alpha {
						if a != 0 {
							m.cfg.Kernel.GradAdd(g, a, k[i], pts[i*n:(i+1)*n], x)
						}
					}
				}
				propagated = fw.propagate(c)
				for i, a := range fw.yIdx[:c] {
					cs += fw.g[i] * fw.sc[a-1]
					if gi := fw.g[i]; gi != 0 {
						row := ((fw.jHead-(a-1))%d + d) % d
						floats.AddScaled(jh, gi, fw.jr[row*(r+1):(row+1)*(r+1)])
					}
				}
			}
			fw.shiftSum(cs, vn+propagated)
			fw.shift(vn+propagated, h)
			fw.jHead = (fw.jHead + 1) % d
			copy(fw.jr[fw.jHead*(r+1):(fw.jHead+1)*(r+1)], jh)
		}
		pv := m.cal.variance(0, m.noiseVar, 0)
		fw.sv = max(fw.sv+2*cs+vn+propagated, 0)
		// At step 1, jh = ψ: the quadratic form is the one varianceParts
		// just computed, and RLS returns it from its cache.
		dst[h] = Step{Mean: mean, Var: vn + propagated + pv*max(m.rls.QuadForm(jh), 0), OneStepVar: oneStep}
		if m.cfg.Summed {
			js := fw.js[:r+1]
			floats.Add(js, jh)
			dst[h].CumVar = fw.sv + pv*max(m.rls.QuadForm(js), 0)
		}
		fw.hist.Push(mean, u)
	}
}

// ForecastCopy returns a model that forecasts exactly as m does now and
// shares nothing m changes: the working set's points, the feature map, the
// RLS statistics, the dual coefficients and the calibration's scales are
// copied; the retained window and the calibration's residuals, which only
// learning needs, are left out. So a forecast that takes milliseconds can
// run on the copy, on another goroutine, while m goes on learning.
// The copy supports Forecast, Predict, Dual, Info and Config only; it must
// not Observe, Learn or be refitted. O(M² + M·n); it allocates.
func (m *Model) ForecastCopy() *Model {
	c := &Model{cfg: m.cfg, n: m.n, m: m.m, fitted: m.fitted} // no RNG: the copy draws nothing
	c.cfg.Embedding = m.cfg.Embedding.Clone()
	if !m.fitted {
		return c
	}
	ws := *m.ws
	ws.points, ws.rowSum, ws.diag = slices.Clone(ws.points), slices.Clone(ws.rowSum), slices.Clone(ws.diag)
	c.ws = &ws
	c.fm = &featureMap{m: m.fm.m, r: m.fm.r, f: slices.Clone(m.fm.f)}
	c.rls = m.rls.Clone()
	c.x, c.k, c.psi = make([]float64, m.n), make([]float64, len(m.k)), make([]float64, len(m.psi))
	c.level2State = m.level2State
	c.logEvRLS = nil // the kept evidence is keyed on the original's RLS: recomputed if asked
	c.alpha = slices.Clone(m.alpha)
	c.swapState = m.swapState
	c.cal = &calibration{s: m.cal.s, df: m.cal.df, tau: m.cal.tau, level: m.cal.level, kappa: m.cal.kappa, zq2: m.cal.zq2}
	return c
}

// uncertain returns how many y lags are ≤ h: the leading coordinates of the
// regressor that hold fed-back values at step h+1.
func (fw *forecastWorkspace) uncertain(h int) int {
	c := 0
	for c < len(fw.yIdx) && fw.yIdx[c] <= h {
		c++
	}
	return c
}

// propagate returns g_yᵀ C g_y and leaves Cov(y_h, y_{h−l}) = Σ_a g_a C_{a,l}
// in next[0][l] (l = 1..d−1) for shift, over the first c y lags (g[:c]):
// the rows and columns of C of the other lags are zero, so their terms are
// products with zero, which leave the sums unchanged (for a finite g; a sum
// of non-zero terms is never −0, so adding ±0 cannot flip its sign either).
// O(c·d).
func (fw *forecastWorkspace) propagate(c int) float64 {
	d := fw.d
	// cross[l−1] = Σ_a g_a C[a−1][l−1] over the y lags a; stored in next row 0
	// shifted by one (row 0 of the next matrix is the new value).
	cross := fw.next[:d]
	for l := range cross {
		cross[l] = 0
	}
	yIdx := fw.yIdx[:c]
	for i, a := range yIdx {
		ga := fw.g[i]
		if ga == 0 {
			continue
		}
		row := fw.cov[(a-1)*d : a*d]
		for l, c := range row {
			cross[l] += ga * c
		}
	}
	var v float64
	for i, a := range yIdx {
		v += fw.g[i] * cross[a-1]
	}
	return max(v, 0)
}

// shiftSum moves Cov(S, ·) to the next step, before shift moves C: the new
// value e_h (variance vh, Cov(S_{h−1}, e_h) = cs, Cov(e_h, y_{h−l}) in next
// from propagate) becomes lag 1, so Cov(S_h, e_h) = cs + vh and
// Cov(S_h, lag l+1) = Cov(S_{h−1}, lag l) + Cov(e_h, lag l). O(d).
func (fw *forecastWorkspace) shiftSum(cs, vh float64) {
	d := fw.d
	cross := fw.next[:d]
	for l := d - 1; l >= 1; l-- {
		fw.sc[l] = fw.sc[l-1] + cross[l-1]
	}
	fw.sc[0] = cs + vh
}

// shift makes the new value (variance vh, cross-covariances in next[0:d] from
// propagate, or zero) the lag-1 entry of the covariance, at step h+1 (h ≥ 0).
// Before it only the leading h×h block of C can be non-zero (the fed-back
// values so far), so only that block moves; everything outside it is zero
// and stays zero. O(h²).
func (fw *forecastWorkspace) shift(vh float64, h int) {
	d := fw.d
	cross := fw.next[:d]
	// New C'[0][0] = vh; C'[0][l] = C'[l][0] = cross[l−1]; C'[a][b] = C[a−1][b−1].
	b := min(h, d-1) // C'[a][1..b] ← C[a−1][0..b−1] for a = b..1
	for a := b; a >= 1; a-- {
		copy(fw.cov[a*d+1:a*d+1+b], fw.cov[(a-1)*d:(a-1)*d+b])
	}
	for l := d - 1; l >= 1; l-- {
		c := cross[l-1]
		fw.cov[l] = c
		fw.cov[l*d] = c
	}
	fw.cov[0] = vh
	for l := range cross {
		cross[l] = 0
	}
}
