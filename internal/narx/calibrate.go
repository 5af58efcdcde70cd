package narx

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/recursive"
	"github.com/streamd/streamd/internal/robust"
)

// Calibration of the predictive distribution.
//
// Level 1 gives the one-step variance as three parts: the noise ζ⁻¹, the
// parameters' ζ⁻¹ψᵀ(A + D/γ)⁻¹ψ, and the prior variance μ⁻¹(K(x,x) − ‖φ(x)‖²)
// of the part of f the Nyström map cannot represent. Their sizes come from a
// model that is only approximately right: level 2's noise level is the
// average squared residual over the whole record, so where a series is easy
// (most of a laser's cycles) the band is too wide and where it is hard (its
// collapses) too narrow, while the two input-dependent parts are what says
// which is which; and the Nyström part's scale is not tied to μ by anything
// (on the Santa Fe laser at M = 200 it averages 10–25× the squared one-step
// error). So each part gets a scale of its own, and the errors a Student-t
// shape: the predictive distribution of y is
//
//	y ~ ŷ + √(σ²(ν−2)/ν)·t_ν,   σ² = τ·κ·(s_n·noise + s_p·param + s_b·prior),
//
// whose variance is σ². s = (s_n, s_p, s_b) and ν maximise the prequential
// Student-t log-likelihood of the last calWindow one-step residuals e_k, each
// with the three parts the model predicted before seeing y_k: honest
// out-of-sample errors, which the online learner has for free. ν is chosen
// from calDF (calGaussian: a normal); for each, s is fitted by EM for the
// scale mixture (weights (ν+1)/(ν + e²/scale²)) with multiplicative
// variance-component updates. The scales start at 1, ν at the normal, and
// are re-fitted every calRefitEvery samples once calMin residuals are in;
// bars still widen away from the working set, where K − ‖φ‖² grows, and
// where the parameters are uncertain.
//
// Second, the whole variance is scaled by τ so that the band at the
// configured level holds that fraction of the recent residuals: τ is the
// ratio of the level-quantile of e_k²/σ_k² to that of the fitted
// distribution. When the fit is right τ ≈ 1; it corrects what the family
// cannot (a conformal-style calibration of the interval's scale). That τ is
// an estimate, and the band's coverage is concave in it, so it is raised by
// its expected shortfall (tauBias): by about 1 % for independent
// residuals, by 5–10 % where the errors come in runs.
//
// Third, what the window cannot see: the variance is also scaled by κ, fed
// back from the band's coverage out of sample. Each residual is judged by
// the band issued for it (before it was seen); at each refit, ln κ moves by
// calFeedbackGain times the step that would have put the coverage of the
// residuals judged since the last refit at the level. tauBias's batch means
// miss the longest runs (a noiseless Lorenz system's one-step errors: the
// 95 % band held 0.936 out of sample, the 68 % band 0.635, every quantile of
// |e|/σ 5–10 % above the fitted one); κ corrects what is systematic in
// that, and averages over refits what is noise.
const (
	calWindow = 512
	calMin    = 64
	// calRefitEvery is the refit period in learned samples: an eighth of
	// the window, so that τ follows a drifting error scale (refitting
	// every 256 left the Santa Fe laser's 68 % and 95 % bands 0.5–1.5
	// points short out of sample at M = 400; docs/benchmarks.md). A refit
	// costs a few EM steps (warm-started) and an O(n) selection over the
	// window, for every ν of calDF about once per window and for the
	// current ν between: a few µs per sample amortised.
	calRefitEvery = 64
	// calMinWeight: residuals of samples learned with a smaller weight are
	// left out of the calibration.
	calMinWeight = 0.5
	// calIters caps the EM steps per ν (warm-started from the previous ν's
	// scales, ν decreasing); they stop once no scale moves by more than
	// calConverged (relative).
	calIters     = 30
	calConverged = 1e-3
	// calGaussian stands for ν = ∞ in calDF and in calibration.df.
	calGaussian = 0
	// τ bounds: a band off by more than √10 in either direction points at a
	// broken model, not at tails to calibrate.
	calMinTau, calMaxTau = 0.1, 10
	// calMaxBias caps tauBias: at δ = 0.5 the ratio's standard deviation
	// is already 0.64 at the 95 % level (near 1 at 68 %), beyond what a
	// second-order expansion describes.
	calMaxBias = 0.5
	// calBatches is the number of blocks of tauBias's batch means: 8 blocks
	// of 8 at calMin, of 64 when the window is full.
	calBatches = 8
	// calFeedbackGain is the share of the Newton step on ln κ each refit
	// takes (see κ above). The residuals between two refits are few and
	// come in runs, so the full step chases noise: on the KRLS-T suite
	// (docs/benchmarks.md) a gain of 1 left Lorenz's 95 % band at
	// 0.928–0.940, 0.3 put MG30's 68 % band at 0.712, and 0.15 kept every
	// band of Lorenz, MG30 and the Santa Fe laser at M = 50–400 within
	// 0.03 of its level. The step is lopsided — after a refit whose
	// residuals mostly missed, up by as much as gain·level/G1 (+1.24 in
	// ln κ at 95 %), down by at most gain·(1−level)/G1 (−0.066) — so the
	// clamp at calMaxKappa cuts rare large steps up, and where errors come
	// in long runs leaves a small shortfall (0.0025 at ρ = 0.97;
	// TestFeedbackHoldsCoverageOfCorrelatedResiduals).
	calFeedbackGain = 0.15
	// calFeedbackMin is the fewest residuals judged since the last refit
	// that move κ.
	calFeedbackMin = 32
	// κ bounds, as τ's: a band off by more than √2 out of sample after τ
	// points at a model the window does not describe.
	calMinKappa, calMaxKappa = 0.5, 2
)

// calDF are the degrees of freedom tried, the normal first. ν > 2 keeps the
// variance finite, so the std reported is the distribution's.
var calDF = [...]float64{calGaussian, 30, 10, 6, 4, 3, 2.5}

// calBounds bound the scales of the noise, parameter and Nyström parts.
// The noise part may shrink far (a laser's calm cycles have errors a
// hundredth of its average) but not vanish; the parameter part may grow
// far (ζ⁻¹ψᵀ(A + D/γ)⁻¹ψ shrinks as 1/n_c even when the model is wrong);
// the Nyström part keeps a floor so that bars always widen away from the
// working set (docs/design.md, "The model"), however well the recent residuals, which come
// from near it, are explained without it, and a ceiling beyond which the
// data would be saying that the prior variance of f is far too small, which
// level 2 should fix instead.
var calBounds = [3][2]float64{{1e-4, 10}, {1e-3, 1e4}, {1e-3, 10}}

// validCalDF reports whether df is one of calDF.
func validCalDF(df float64) bool {
	for _, d := range calDF {
		if df == d {
			return true
		}
	}
	return false
}

type calibration struct {
	// Ring of the last calWindow residuals: e², and the noise, parameter
	// and Nyström parts of the variance predicted for each.
	e2, n, p, b []float64
	head, count int
	s           [3]float64 // scales of the three parts
	df          float64    // ν of the Student-t predictive; calGaussian for a normal
	tau         float64    // τ
	level       float64    // the interval level τ is calibrated for
	kappa       float64    // κ
	// covered and judged count the residuals since the last refit that the
	// band issued for them held, and all of them.
	covered, judged int
	// zq2 is the squared half-width of the band at level in standard
	// deviations for ν = df (StandardQuantile), kept with df.
	zq2 float64
}

func newCalibration(level float64) *calibration {
	c := &calibration{e2: make([]float64, calWindow), n: make([]float64, calWindow),
		p: make([]float64, calWindow), b: make([]float64, calWindow),
		s: [3]float64{1, 1, 1}, df: calGaussian, tau: 1, level: level, kappa: 1}
	c.setDF(calGaussian)
	return c
}

// setDF sets ν and the band's half-width that goes with it.
func (c *calibration) setDF(df float64) {
	c.df = df
	zq := StandardQuantile(df, c.level)
	c.zq2 = zq * zq
}

// variance is the calibrated variance σ² of parts (noise, param, prior).
func (c *calibration) variance(noise, param, prior float64) float64 {
	return c.tau * c.kappa * (c.s[0]*noise + c.s[1]*param + c.s[2]*prior)
}

// add records a one-step residual e with the variance parts predicted for it
// and reports whether it was kept. Non-finite values are dropped.
func (c *calibration) add(e, noise, param, prior float64) bool {
	if math.IsNaN(e) || math.IsInf(e, 0) || !(noise > 0) || !(param >= 0) || !(prior >= 0) || math.IsInf(noise+param+prior, 0) {
		return false
	}
	c.judged++
	if e*e <= c.zq2*c.variance(noise, param, prior) {
		c.covered++
	}
	c.e2[c.head], c.n[c.head], c.p[c.head], c.b[c.head] = e*e, noise, param, prior
	c.head = (c.head + 1) % calWindow
	if c.count < calWindow {
		c.count++
	}
	return true
}

// v is the uncalibrated-τ variance of residual i under scales s.
func (c *calibration) v(s *[3]float64, i int) float64 {
	return s[0]*c.n[i] + s[1]*c.p[i] + s[2]*c.b[i]
}

// logLik is the Student-t (ν = df; calGaussian: normal) log-likelihood of the
// window's residuals with variances v under scales s (τ aside).
func (c *calibration) logLik(s *[3]float64, df float64) float64 {
	var l float64
	if df == calGaussian {
		for i := 0; i < c.count; i++ {
			v := c.v(s, i)
			l -= 0.5 * (math.Log(v) + c.e2[i]/v)
		}
		return l - 0.5*math.Log(2*math.Pi)*float64(c.count)
	}
	// ln t_ν(e; scale² = v(ν−2)/ν), with ν·scale² = (ν−2)·v.
	lg1, _ := math.Lgamma((df + 1) / 2)
	lg2, _ := math.Lgamma(df / 2)
	k := lg1 - lg2 - 0.5*math.Log(math.Pi*(df-2))
	for i := 0; i < c.count; i++ {
		v := c.v(s, i)
		l += k - 0.5*math.Log(v) - (df+1)/2*math.Log1p(c.e2[i]/((df-2)*v))
	}
	return l
}

// fitScales runs calIters EM steps for the scales at ν = df from s. In the
// variance parametrisation (the t's scale² is v(ν−2)/ν) the E-step weighs
// each squared residual by w = (ν+1)/(ν − 2 + e²/v) (1 for a normal), and the
// M-step is the multiplicative fixed point of the variance-component
// likelihood with e² replaced by w·e², s_c ← s_c·Σ x_c w e²/v² / Σ x_c/v,
// clamped to calBounds. A part that is zero on the whole window keeps its
// scale.
func (c *calibration) fitScales(s *[3]float64, df float64) {
	n := c.count
	e2, pn, pp, pb := c.e2[:n], c.n[:n], c.p[:n], c.b[:n]
	for range calIters {
		var num, den [3]float64
		// Two divisions per residual: 1/v, and w's; the loop runs up to
		// calIters times over the window at each refit.
		for i, sq := range e2 { // sq = e_i²
			x0, x1, x2 := pn[i], pp[i], pb[i]
			iv := 1 / (s[0]*x0 + s[1]*x1 + s[2]*x2)
			r := sq * iv // e²/v
			a := r * iv  // w·e²/v², w = 1 for a normal
			if df != calGaussian {
				a *= (df + 1) / (df - 2 + r)
			}
			num[0] += x0 * a
			num[1] += x1 * a
			num[2] += x2 * a
			den[0] += x0 * iv
			den[1] += x1 * iv
			den[2] += x2 * iv
		}
		moved := 0.0
		for j := range s {
			if den[j] > 0 && num[j] > 0 {
				next := min(max(s[j]*num[j]/den[j], calBounds[j][0]), calBounds[j][1])
				moved = max(moved, math.Abs(next/s[j]-1))
				s[j] = next
			}
		}
		if moved <= calConverged {
			return
		}
	}
}

// phase is where in the refit period the refits after the first fall, in
// [0, calRefitEvery): a hash of the first residual kept. Series that start
// together (a fleet onboarded at once, a daemon started on a backlog) would
// otherwise refit at the same sample for ever after, and a daemon serving
// them would stall on all their refits at once. The phase depends only on the
// data, so a backtest and a restored Learner refit at the same samples as the
// daemon did.
func (c *calibration) phase() int {
	h := math.Float64bits(c.e2[0]) * 0x9e3779b97f4a7c15 // Fibonacci hashing: every bit moves the top ones
	return int((h >> 32) % calRefitEvery)
}

// refit re-estimates the scales, ν and τ once calMin residuals are in: for
// each ν of calDF the scales by EM from the previous ν's, then the τ that
// puts the level's share of the residuals inside that ν's band; the ν (with
// its scales and τ) whose τ-scaled distribution — the one the band and the
// std report — gives the window the largest likelihood is kept. Ranking ν
// before τ would rank distributions other than the ones used: a heavy tail
// fits a few large residuals, and τ then narrows its centre to hold the
// level's share, so that the central bands cover too little.
//
// ν is re-chosen at every refit while the ring fills, then about once per
// window of residuals: whenever the ring's head is in its first
// calRefitEvery slots (the head advances at most calRefitEvery between
// refits, so every pass of the ring has one such refit; the head and the
// count are state, so a restored model refits alike). The refits between
// keep ν and re-fit its scales and τ: the costly part is the EM for all of
// calDF, and τ is what follows a drifting error scale.
// O(calWindow·len(calDF)·calIters) with ν, O(calWindow·calIters) without;
// a few EM steps per ν in the steady state (warm-started).
func (c *calibration) refit(first bool) {
	if c.count < calMin {
		return
	}
	dfs := calDF[:]
	if !first && c.count == calWindow && c.head >= calRefitEvery {
		dfs = []float64{c.df}
	}
	// Scratch for the ratios τ selects from, borrowed for this refit only.
	z2 := recursive.GetFloats(c.count)
	defer recursive.PutFloats(z2)
	s := c.s
	bestS, bestDF, bestTau, bestL := s, c.df, c.tau, math.Inf(-1)
	for _, df := range dfs {
		c.fitScales(&s, df)
		tau := c.tauFor(&s, df, z2)
		scaled := [3]float64{tau * s[0], tau * s[1], tau * s[2]}
		if l := c.logLik(&scaled, df); l > bestL {
			bestS, bestDF, bestTau, bestL = s, df, tau, l
		}
	}
	if math.IsNaN(bestL) || math.IsInf(bestL, 0) {
		return
	}
	// κ from the bands as issued, before ν, the scales and τ change; the
	// first refit's residuals were judged by an uncalibrated band.
	if !first && c.judged >= calFeedbackMin {
		_, g1 := coverageSlopes(c.df, math.Sqrt(c.zq2)) // d coverage / d ln(τκ) at the level
		shortfall := c.level - float64(c.covered)/float64(c.judged)
		c.kappa = min(max(c.kappa*math.Exp(calFeedbackGain*shortfall/g1), calMinKappa), calMaxKappa)
	}
	c.covered, c.judged = 0, 0
	c.s, c.tau = bestS, min(bestTau*(1+c.tauBias(&bestS, bestDF, bestTau)), calMaxTau)
	c.setDF(bestDF)
}

// tauBias is the relative amount δ by which τ, estimated from the window
// for scales s at ν = df, falls short on average of the τ whose band holds
// the level's share of the next residuals; refit uses τ·(1+δ).
//
// τ̂ = τ·r with r a noisy ratio of mean ≈ 1, and the coverage of the band,
// G(r) = 2F(c√r) − 1 with F the fitted unit-variance distribution and c its
// level half-width, is concave in r there: with G1, G2 its first and second
// derivatives at 1, E[G(r)] ≈ level + ½·G2·Var r, which a raise of
// δ = −½(G2/G1)·Var r puts back; −G2/G1 = ½ + ½(ν+1)c²/(ν−2+c²) (normal:
// ½(1+c²)), from the density's log-derivative −(ν+1)x/(ν−2+x²). τ̂ is the
// level-quantile of the ratios e²/v, whose relative variance is
// Var(p̂)/(c·f(c))², p̂ the share of the window beyond the band's edge and
// f(c)/c the density of e²/v there (the quantile's asymptotic variance).
// Var(p̂) comes from batch means, so that it counts the runs the residuals
// come in: a deterministic series' one-step errors have a lag-1
// autocorrelation above 0.9 (the Lorenz system's 0.94), 512 of them carry
// the information of a few dozen, and the band calibrated on them held
// 0.932 of the next ones where 0.95 was asked (docs/benchmarks.md). Batch
// means see only part of the longest runs' effect (at ρ = 0.97 the raise
// gives back 0.010 of a 0.018 shortfall; TestTauBiasRaisesCoverageOfCorrelatedResiduals);
// for 512 independent residuals δ ≈ 0.01 at the 95 % level, for an
// AR(1) with ρ = 0.9–0.97 0.05–0.10. δ is capped at
// calMaxBias, where the expansion no longer holds. O(window).
func (c *calibration) tauBias(s *[3]float64, df, tau float64) float64 {
	n := c.count
	zq := StandardQuantile(df, c.level)
	q := tau * zq * zq // the ratio e²/v at the band's edge
	// Exceedance indicators in time order: the ring's oldest is at head
	// once it is full, at 0 before.
	start := 0
	if n == calWindow {
		start = c.head
	}
	blocks := calBatches
	size := n / blocks
	start += n - blocks*size // the last blocks·size residuals: the newest count
	// Batch means: the exceedance share of calBatches consecutive blocks.
	// Their spread gives the variance of the window's share with whatever
	// runs the residuals have (a lag-1 autocorrelation alone, as in an
	// AR(1), misses the long ones: on residuals with ρ = 0.97 it counted
	// three times too many independent ones).
	var k int
	var share [calBatches]float64
	for i := range blocks * size {
		j := (start + i) % calWindow
		if c.e2[j] > q*c.v(s, j) {
			share[i/size]++
			k++
		}
	}
	p := float64(k) / float64(blocks*size)
	var spread float64
	for _, x := range share {
		d := x/float64(size) - p
		spread += d * d
	}
	// Var of the window's share: the blocks' variance over their number.
	varP := spread / float64(blocks-1) / float64(blocks)
	nEff := float64(n)
	if varP > 0 {
		nEff = min(p*(1-p)/varP, float64(n))
	}
	curv, g1 := coverageSlopes(df, zq)
	varR := c.level * (1 - c.level) / (nEff * g1 * g1)
	return min(curv*varR/2, calMaxBias)
}

// coverageSlopes returns, for the band of half-width c (unit variance,
// ν = df, calGaussian: normal) scaled by √r, with G(r) = 2F(c√r) − 1 its
// coverage and G1, G2 G's first and second derivatives at r = 1: −G2/G1 =
// ½ + ½(ν+1)c²/(ν−2+c²) (normal: ½(1+c²)) and G1 = c·f(c), f the
// unit-variance density.
func coverageSlopes(df, c float64) (curv, g1 float64) {
	if df == calGaussian {
		return 0.5 + 0.5*c*c, c * distuv.UnitNormal.Prob(c)
	}
	f := distuv.StudentsT{Mu: 0, Sigma: math.Sqrt((df - 2) / df), Nu: df}.Prob(c)
	return 0.5 + 0.5*(df+1)*c*c/(df-2+c*c), c * f
}

// tauFor is τ for scales s at ν = df: the ratio of the level-quantile of
// e_k²/v_k over the window to the fitted distribution's, within
// [calMinTau, calMaxTau]. z2 is scratch of c.count values.
func (c *calibration) tauFor(s *[3]float64, df float64, z2 []float64) float64 {
	for i := 0; i < c.count; i++ {
		z2[i] = c.e2[i] / c.v(s, i)
	}
	q := robust.Select(z2[:c.count], min(int(math.Ceil(c.level*float64(c.count)))-1, c.count-1))
	zq := StandardQuantile(df, c.level)
	return min(max(q/(zq*zq), calMinTau), calMaxTau)
}

// quantile is the (1+level)/2 quantile of the fitted distribution of
// (y − ŷ)/σ (unit variance): the half-width of the central interval at
// level in standard deviations.
func (c *calibration) quantile(level float64) float64 {
	return StandardQuantile(c.df, level)
}

// StandardQuantile is the half-width, in standard deviations, of the central
// interval at level of a Student-t with df degrees of freedom scaled to unit
// variance (df = 0: the normal).
func StandardQuantile(df, level float64) float64 {
	if df == calGaussian {
		return distuv.UnitNormal.Quantile(0.5 + level/2)
	}
	return TQuantile(df, 0.5+level/2) * math.Sqrt((df-2)/df)
}

// TQuantile is the p-quantile of Student's t with nu > 0 degrees of
// freedom, p ∈ [0.5, 1). It is a pure function of its arguments, like
// distuv.StudentsT.Quantile, which it matches to a relative 1e-12 below
// ν = tqSeriesNu, at a small fraction of the cost (BenchmarkTQuantile): forecasts ask for it at
// every sample, since ν = n − d_eff moves with every sample learned. From
// tqNewtonNu on it starts from the Cornish–Fisher expansion in 1/ν
// (Abramowitz & Stegun 26.7.5, error O(ν⁻⁵)); below tqSeriesNu it refines
// that by Newton steps on the CDF, each of which squares the relative
// error, and from tqSeriesNu on the expansion alone is exact to rounding
// (there distuv's inversion of the incomplete beta function is the less
// accurate of the two, by up to 1e-9). Below tqNewtonNu, where the
// expansion is a poor start, it is distuv's.
func TQuantile(nu, p float64) float64 {
	if !(nu >= tqNewtonNu) || !(p >= 0.5 && p < 1) {
		return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(p)
	}
	z := distuv.UnitNormal.Quantile(p)
	if math.IsInf(nu, 1) {
		return z
	}
	z2 := z * z
	g1 := z * (z2 + 1) / 4
	g2 := z * ((5*z2+16)*z2 + 3) / 96
	g3 := z * (((3*z2+19)*z2+17)*z2 - 15) / 384
	g4 := z * ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) / 92160
	r := 1 / nu
	t := z + r*(g1+r*(g2+r*(g3+r*g4)))
	if nu >= tqSeriesNu {
		return t
	}
	d := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}
	for range tqNewtonSteps {
		step := (d.CDF(t) - p) / d.Prob(t)
		t -= step
		// Quadratic convergence: a step of relative size δ leaves an error
		// of order δ², below 1e-14 once δ ≤ 1e-7.
		if math.Abs(step) <= 1e-7*t {
			break
		}
	}
	return t
}

// tqNewtonNu, tqSeriesNu and tqNewtonSteps: at ν = 3 the expansion's start
// is within a relative 0.3 of the 0.9995 quantile (within 3 % of the
// 0.975 one), and Newton's quadratic convergence takes that below 1e-12
// in at most 8 steps (2–3 for the usual levels); at ν = 1000 the
// expansion's next term is below 1e-15 of t for p ≤ 0.9995
// (TestTQuantileMatchesDistuv).
const (
	tqNewtonNu    = 3
	tqSeriesNu    = 1000
	tqNewtonSteps = 8
)
