package online

import (
	"math"
	"slices"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/robust"
)

// This file holds the robust reweighting of the samples a series learns
// (docs/design.md, "The model"): the weight of a new sample, the warm-up's
// weighted refits and the robust fit of a trial structure.

// weigh returns the robust weight of a one-step residual e (model units) with
// predictive variance variance, whether it is an outlier, and records e in
// the residual scale. Weight 1 and no outlier when robust reweighting is off.
func (l *Learner) weigh(e, variance float64) (v float64, outlier bool) {
	if l.rscale == nil {
		return 1, false
	}
	s := math.Sqrt(variance)
	n := l.rscale.Len()
	if n >= robustMinResiduals {
		if rs := l.rscale.Scale(); rs > 0 {
			s = rs
		}
	}
	r := e / s
	l.rscale.Add(e)
	if n < robustMinResiduals && l.learned < int64(l.cfg.Warmup) {
		// A model fitted on the first values predicts its own noise level
		// too low, and flagging by it would clean most of the next values
		// away; until the residuals' robust scale exists, only gross errors
		// are stopped (grossError).
		return 1, false
	}
	return l.cfg.Robust.Weights.Weight(r), !(math.Abs(r) <= l.cfg.Robust.Weights.C2)
}

// grossError applies the gate (gross errors and glitches, see grossZ) to
// the standardised value y, observed as raw, with one-step prediction mean
// and variance (model units), counting the run; zY is its distance in the
// series' own units, in standard deviations (the larger of the values'
// spread and the theta forecaster's one-step band, 0 with neither). A
// surprise that recurs within glitchMemory of the glitch gated before it,
// or any surprise right after it, gives it back to the values kept for the
// re-choices.
func (l *Learner) grossError(raw, y, mean, variance, zY float64) bool {
	e, sd := math.Abs(y-mean), math.Sqrt(variance)
	gross := e > grossZ*sd || math.Abs(y) > grossZ || zY > grossZ
	big := (e > glitchZ*sd || zY > glitchZ) && !gross
	if l.flatY {
		// Values that never varied have no spread to judge by: the model's
		// is the floor, and every change would be thousands of its
		// standard deviations, gated as a glitch until it recurs (the
		// predictions then keep the floor's band). The constant's own
		// magnitude is the only scale: a change beyond it (a spike on a
		// stuck sensor) is gross, gated until grossRun arrive in a row; a
		// smaller one, or any change of a constant 0, which has no scale,
		// is the series starting to vary.
		c := l.flatValue()
		gross, big = c != 0 && math.Abs(raw-c) > flatGross*math.Abs(c), false
	}
	// A surprise right after a gated glitch is the series moving on (a
	// trend whose slope turns, its noise small): with the glitch's
	// prediction in its lags the second looks worse to the model than the
	// first, even a gross error, and gating both would leave the model
	// fitting its own predictions. It is learned, as a recurring surprise
	// is — unless it is a gross error in the series' own units, which no
	// prediction in the lags made worse.
	moved := (big || gross && zY <= grossZ) && l.glitchSeen > 0 && l.glitchSeen == l.seen-1
	recurs := moved || big && l.lastBig > 0 && l.seen-l.lastBig <= glitchMemory
	if big {
		l.lastBig = l.seen
	}
	if recurs && l.glitchSeen > 0 && l.seen-l.glitchSeen <= glitchMemory {
		// Every observation since the glitch was kept after it.
		if k := len(l.warmY) - int(l.seen-l.glitchSeen); k >= 0 && k < len(l.warmY) {
			l.warmY[k] = l.glitchY
		}
	}
	glitch := big && !recurs
	if recurs || glitch {
		l.glitchSeen = 0 // the glitch before is the series' own, or too old to be
	}
	if recurs || !gross && !glitch {
		l.gross = 0
		return false
	}
	l.gross++
	gated := l.gross < grossRun
	if gated && glitch {
		l.glitchSeen, l.glitchY = l.seen, raw
	}
	return gated
}

// flatGross is how many times its own magnitude a value may differ from
// the constant of a series whose values never varied before it is a gross
// error (grossError): a tenfold spike is, noise of a fifth of the level is
// not.
const flatGross = 1

// fitWeighted fits cfg on the warm-up window. With robust reweighting it is
// the book's weighted LS-SVM (§5.2): fit, robust scale of the residuals,
// weights, refit, until no weight moves by more than 1e-3 (at most
// robustFitIter fits). With Clean, a value flagged as an outlier is replaced
// by its fitted value in the later regressors' lags, and ys is updated in
// place so that the lag history is primed with cleaned values. Targets stay
// as observed: their weights bound them. (A cleaned target would come back
// with weight 1 at the next fit, its residual gone, and pin the fit to the
// contaminated fit it was taken from: on the noisy sinc with 3 gross
// outliers it cost seeds 5, 7 and 10 53 %, 14 % and 14 % of RMSE,
// TestWarmupCleaningKeepsOutliersWeighted.)
// Each fit re-decides the cleaning from the observed values.
func (l *Learner) fitWeighted(cfg narx.Config, ys, us []float64) (*narx.Model, error) {
	depth := cfg.Embedding.Depth()
	var v, observed []float64
	for iter := 0; ; iter++ {
		X, y := embed(cfg.Embedding, ys, us, l.nu, depth)
		if observed != nil {
			copy(y, observed[depth:])
		}
		m, err := l.fitModel(cfg, X, y, v)
		if err != nil {
			return nil, err
		}
		// Fewer residuals than robustMinResiduals give no robust scale to
		// judge them by (a fit on the first values nearly interpolates them).
		if !l.cfg.Robust.Enabled || iter == robustFitIter-1 || len(y) < robustMinResiduals {
			return m, nil
		}
		next, e, s, moved := l.reweigh(m, X, y, v)
		if !(s > 0) {
			return m, nil // a perfect fit: nothing to reweigh
		}
		if l.cfg.Robust.Clean {
			if observed == nil {
				observed = slices.Clone(ys)
			}
			for k := range e {
				ys[depth+k] = observed[depth+k]
				if !(math.Abs(e[k]/s) <= l.cfg.Robust.Weights.C2) {
					ys[depth+k] -= e[k] // the fitted value
				}
			}
		}
		v = next
		if moved < 1e-3 {
			return m, nil
		}
	}
}

// reweigh returns the robust weights of m's in-sample residuals on (X, y),
// the residuals, their robust scale ŝ (0 for a perfect fit) and the largest
// change of a weight from prev (nil meaning all 1).
func (l *Learner) reweigh(m *narx.Model, X, y, prev []float64) (v, e []float64, s, moved float64) {
	n := len(X) / max(len(y), 1)
	e = make([]float64, len(y))
	for k := range y {
		e[k] = y[k] - m.Predict(X[k*n:(k+1)*n])
	}
	if l.cfg.Robust.Scale == robust.ScaleMAD {
		s = robust.MADScale(e, nil)
	} else {
		s = robust.IQRScale(e, nil)
	}
	if !(s > 0) {
		return nil, e, 0, 0
	}
	v = make([]float64, len(y))
	for k := range e {
		v[k] = l.cfg.Robust.Weights.Weight(e[k] / s)
		p := 1.0
		if prev != nil {
			p = prev[k]
		}
		moved = max(moved, math.Abs(v[k]-p))
	}
	return v, e, s, moved
}

// fitRobustly fits cfg on (X, y), reweighted as in fitWeighted when robust
// weighting is on (without cleaning: the folds' regressors are fixed).
func (l *Learner) fitRobustly(cfg narx.Config, X, y []float64) (*narx.Model, error) {
	var v []float64
	for iter := 0; ; iter++ {
		m, err := l.fitCandidate(cfg, X, y, v)
		if err != nil {
			return nil, err
		}
		if !l.cfg.Robust.Enabled || iter == robustFitIter-1 {
			return m, nil
		}
		next, _, s, moved := l.reweigh(m, X, y, v)
		if !(s > 0) {
			return m, nil
		}
		v = next
		if moved < 1e-3 {
			return m, nil
		}
	}
}
