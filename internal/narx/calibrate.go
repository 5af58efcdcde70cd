package narx

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/recursive"
)

// Calibration of the Nyström-residual variance.
//
// Level 1 adds μ⁻¹(K(x,x) − ‖φ(x)‖²) to the predictive variance: the prior
// variance of the part of f the Nyström map cannot represent. The level-2 μ is
// inferred for the weights of the r represented directions, and nothing ties
// the size of the unrepresented remainder to it: on the Santa Fe laser (M = 200,
// 20 lags) the term averages 10–25× the actual squared one-step error, while
// noise + parameter variance alone fall short of it. So its scale is a
// hyperparameter of its own: the variance used is
//
//	σ²(x) = ζ⁻¹(1 + ψᵀ(A + D/γ)⁻¹ψ) + ρ·μ⁻¹(K(x,x) − ‖φ(x)‖²),
//
// and ρ maximises the prequential Gaussian log-likelihood
// Σ_k −½ ln(a_k + ρ b_k) − e_k²/(2(a_k + ρ b_k)) of the last calWindow one-step
// residuals e_k, each with the parts a_k (noise + parameter) and b_k (the
// prior Nyström term) the model predicted before seeing y_k. These are honest
// out-of-sample errors, which the online learner has for free. ρ starts at 1
// (the prior) and is re-fitted every calRefitEvery samples once calMin
// residuals are in; bars still widen away from the working set, where
// K − ‖φ‖² grows.
//
// Second, the whole variance is scaled by τ so that the band at the
// configured level holds that fraction of the recent residuals: τ = q/z²,
// with q the level-quantile of e_k²/(a_k + ρ b_k) and z the Gaussian quantile.
// With Gaussian residuals τ ≈ 1. With heavy tails (a laser's intensity
// collapses) the likelihood-optimal variance is inflated by the rare large
// errors and the band over-covers the bulk; τ < 1 corrects that (and τ > 1
// the opposite), a conformal-style calibration of the interval's scale.
const (
	calWindow = 512
	calMin    = 64
	// calRefitEvery is the refit period in learned samples: a refit costs
	// about 40 passes over the window, ~1 µs per sample amortised.
	calRefitEvery = 256
	// calMinWeight: residuals of samples learned with a smaller weight are
	// left out of the calibration.
	calMinWeight = 0.5
	// calMaxScale bounds ρ: beyond it the data would be saying that the
	// prior variance of f is far too small, which level 2 should fix instead.
	calMaxScale = 10
	// calMinScale keeps the Nyström term from vanishing, so bars always widen
	// away from the working set (DESIGN §3), however well the recent
	// residuals, which come from near it, are explained without it.
	calMinScale = 1e-3
	// τ bounds: a band off by more than √10 in either direction points at a
	// broken model, not at tails to calibrate.
	calMinTau, calMaxTau = 0.1, 10
)

type calibration struct {
	e2, a, b    []float64 // ring of the last calWindow residuals and their variance parts
	head, count int
	scale       float64 // ρ
	tau         float64 // τ
	level       float64 // the interval level τ is calibrated for
}

func newCalibration(level float64) *calibration {
	return &calibration{e2: make([]float64, calWindow), a: make([]float64, calWindow),
		b: make([]float64, calWindow), scale: 1, tau: 1, level: level}
}

// add records a one-step residual e with the variance parts predicted for it
// and reports whether it was kept. Non-finite values are dropped.
func (c *calibration) add(e, a, b float64) bool {
	if math.IsNaN(e) || math.IsInf(e, 0) || !(a > 0) || !(b >= 0) || math.IsInf(a+b, 0) {
		return false
	}
	c.e2[c.head], c.a[c.head], c.b[c.head] = e*e, a, b
	c.head = (c.head + 1) % calWindow
	if c.count < calWindow {
		c.count++
	}
	return true
}

func (c *calibration) logLik(rho float64) float64 {
	var l float64
	for i := 0; i < c.count; i++ {
		v := c.a[i] + rho*c.b[i]
		l -= 0.5 * (math.Log(v) + c.e2[i]/v)
	}
	return l
}

// phase is where in the refit period the refits after the first fall, in
// [0, calRefitEvery): a hash of the first residual kept. Series that start
// together (a fleet onboarded at once, a daemon started on a backlog) would
// otherwise refit at the same sample for ever after, and a daemon serving
// them would stall on all their refits at once — 400 series at M = 50 are a
// 0.1 s burst. The phase depends only on the data, so a backtest and a
// restored Learner refit at the same samples as the daemon did.
func (c *calibration) phase() int {
	h := math.Float64bits(c.e2[0]) * 0x9e3779b97f4a7c15 // Fibonacci hashing: every bit moves the top ones
	return int((h >> 32) % calRefitEvery)
}

// refit re-estimates ρ and τ once calMin residuals are in: ρ on a grid in
// ln ρ over [calMinScale, calMaxScale], refined by golden section around the
// best grid point; then τ. O(calWindow · 60).
func (c *calibration) refit() {
	if c.count < calMin {
		return
	}
	const grid = 24
	lo, hi := math.Log(calMinScale), math.Log(calMaxScale)
	step := (hi - lo) / (grid - 1)
	best, bestL := 0.0, math.Inf(-1)
	bestI := -1
	for i := 0; i < grid; i++ {
		rho := math.Exp(lo + float64(i)*step)
		if l := c.logLik(rho); l > bestL || bestI < 0 {
			best, bestL, bestI = rho, l, i
		}
	}
	{
		a := lo + float64(max(bestI-1, 0))*step
		b := lo + float64(min(bestI+1, grid-1))*step
		const invPhi = 0.6180339887498949
		x1, x2 := b-invPhi*(b-a), a+invPhi*(b-a)
		f1, f2 := c.logLik(math.Exp(x1)), c.logLik(math.Exp(x2))
		for b-a > 1e-3 {
			if f1 > f2 {
				b, x2, f2 = x2, x1, f1
				x1 = b - invPhi*(b-a)
				f1 = c.logLik(math.Exp(x1))
			} else {
				a, x1, f1 = x1, x2, f2
				x2 = a + invPhi*(b-a)
				f2 = c.logLik(math.Exp(x2))
			}
		}
		if l := c.logLik(math.Exp((a + b) / 2)); l > bestL {
			best = math.Exp((a + b) / 2)
		}
	}
	if math.IsNaN(best) {
		return
	}
	// exp(ln ρ) can round just outside the bounds it was searched within;
	// a restored state is checked against them.
	c.scale = min(max(best, calMinScale), calMaxScale)
	// Scratch for the sorted ratios, borrowed for this refit only.
	z2 := recursive.GetFloats(c.count)
	defer recursive.PutFloats(z2)
	for i := 0; i < c.count; i++ {
		z2[i] = c.e2[i] / (c.a[i] + best*c.b[i])
	}
	slices.Sort(z2)
	q := z2[min(int(math.Ceil(c.level*float64(len(z2))))-1, len(z2)-1)]
	zg := distuv.UnitNormal.Quantile(0.5 + c.level/2)
	c.tau = min(max(q/(zg*zg), calMinTau), calMaxTau)
}
