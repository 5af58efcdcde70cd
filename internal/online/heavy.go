package online

// Heavy reports whether the next accepted Observe may run one of the
// Learner's rare costly steps: the first fit or a re-choice of the
// structure (fit, at the sample counts schedule sets: every FirstFit
// samples, then each doubling, then Warmup, for a long season once more
// (Config.lastFit), and for a series still without a model a retry a
// quarter of Warmup later), or the periodic
// level-3 retune (retune, every RetuneEvery learned samples from the
// series' retunePhase). Each costs from a few to hundreds of milliseconds
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
func (l *Learner) Heavy() bool {
	if l.nextFit > 0 && l.seen+1 >= l.nextFit {
		return true
	}
	if !l.model.Fitted() {
		return false
	}
	n := int64(l.cfg.RetuneEvery)
	return n > 0 && (l.learned+1+l.retunePhase(n))%n == 0
}
