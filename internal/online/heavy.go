package online

import "github.com/streamd/streamd/internal/narx"

// Heavy reports whether the next accepted Observe, of o, may run one of the
// Learner's rare costly steps: the first fit or a re-choice of the
// structure (fit, at the sample counts schedule sets: every FirstFit
// samples, then each doubling, then Warmup, for a long season once more
// (Config.lastFit), when the time step's season first joins the lag sets
// (2(s + 3) values), and for a series still without a model a retry a
// quarter of Warmup later), or the periodic
// level-3 retune (retune, every RetuneEvery learned samples from the
// series' retunePhase), or a settled series' test of a larger working set
// (growSettled, at Warmup·2^k samples), or the re-choice of a series whose
// latest one saw y or an input never vary, when o varies there
// (Learner.flat). Each costs from a few to hundreds of milliseconds
// (seconds for a large working set or warm-up); every other Observe is
// the O(M²) online update and the periodic forecast.
//
// It restates Observe's conditions for the sample after the last one:
// Observe counts the sample (seen+1) and fits when it reaches nextFit;
// otherwise a fitted Learner learns it (learned+1) and retunes when that
// count plus the phase is a multiple of RetuneEvery. A rejected
// observation runs neither, so Heavy may be true of an Observe that turns
// out cheap, never false of one that is not. It reads the Learner only,
// and, like every method, must not run concurrently with one that changes
// it.
func (l *Learner) Heavy(o Observation) bool {
	if l.nextFit > 0 && l.seen+1 >= l.nextFit || l.varies(o) {
		return true
	}
	if !l.model.Fitted() {
		return false
	}
	if l.growDue(l.seen + 1) {
		return true
	}
	n := int64(l.cfg.RetuneEvery)
	return n > 0 && (l.learned+1+l.retunePhase(n))%n == 0
}

// ObserveYielding is Observe, calling yield (when not nil) on the calling
// goroutine between the steps of a heavy Observe (Heavy): before each fit
// of a structure search, a width search's trials included, each
// milliseconds of CPU at the defaults' sizes where a whole re-choice takes
// up to seconds (docs/benchmarks.md, "Onboarding under load"). yield may
// block: it is how a caller that shares its CPUs with more urgent work
// paces a long re-choice. It must not use l. The result is Observe's, bit
// for bit.
func (l *Learner) ObserveYielding(o Observation, yield func()) (Result, error) {
	l.yield = yield
	defer func() { l.yield = nil }()
	return l.Observe(o)
}

// pause calls ObserveYielding's yield, if any.
func (l *Learner) pause() {
	if l.yield != nil {
		l.yield()
	}
}

// fitCandidate is fitModel for a model that is only ranked or forecast
// from, never updated: its window holds the samples of the fit, not
// cfg.Window (a window serves the online updates' swaps; at the defaults'
// W = 600 with its kernel columns it would be most of what a re-choice
// allocates). The fit is the same bits either way: the window holds the
// last min(N, W) samples.
func (l *Learner) fitCandidate(cfg narx.Config, X, y, v []float64) (*narx.Model, error) {
	cfg.Window = candidateWindow(cfg.Window, len(y))
	return l.fitModel(cfg, X, y, v)
}

// candidateWindow is a candidate's window for W and N samples.
func candidateWindow(W, N int) int { return max(min(W, N), 1) }

// fitModel returns cfg fitted on (X, y) with weights v (nil: all 1), after
// a pause: every fit of the heavy steps goes through it, fitCandidate or
// searchSigma2.
func (l *Learner) fitModel(cfg narx.Config, X, y, v []float64) (*narx.Model, error) {
	l.pause()
	m, err := narx.NewModel(cfg)
	if err != nil {
		return nil, err
	}
	if err := m.Fit(X, y, v); err != nil {
		return nil, err
	}
	return m, nil
}

// probeWidths is the level-3 evidence of cfg at its width σ² and at σ²/2
// and σ²/4 on (X, N×n y), the working set selected at σ² (narx.TryWidths):
// three fits where a search takes about 19. A larger working set resolves
// narrower kernels, so grow tests a doubling there; its best is a lower
// bound of the search's. Its trials are candidates (fitCandidate).
func (l *Learner) probeWidths(cfg narx.Config, X, y []float64) (narx.WidthSearch, error) {
	cfg.Window = candidateWindow(cfg.Window, len(y))
	s := cfg.Kernel.Sigma2
	return narx.TryWidths(cfg, X, y, s, []float64{s, s / 2, s / 4}, l.pause)
}

// searchSigma2 is the level-3 width search of cfg's RBF part on (X, N×n y)
// around the median squared distance of the regressors, pausing before each
// trial; its trials are candidates (fitCandidate).
func (l *Learner) searchSigma2(cfg narx.Config, X, y []float64) (narx.WidthSearch, error) {
	cfg.Window = candidateWindow(cfg.Window, len(y))
	return narx.SearchSigma2(cfg, X, y, narx.MedianSqDist(X, cfg.Embedding.Dim(), 2000, cfg.Seed), l.pause)
}
