package online

import (
	"math"
	"slices"

	"github.com/streamd/streamd/internal/narx"
)

// Growth lets a re-choice (grow), and a settled series' test at 2, 4, 8, …
// × Warmup samples (growSettled), give a series a larger working set than
// Model.Size where its level-3 evidence pays for one. The model's
// settings that follow from its size — Window, NoiseEvery, the entropy
// search's Patience — are derived again from the grown size when the
// configuration derived them from Model.Size (the Auto* rules below).
type Growth struct {
	// Max is the largest working set a series may grow to, doubling from
	// the ranking's size (TuneSize, else Model.Size); ≤ Model.Size: none.
	Max int
	// Window, NoiseEvery and Patience: the grown model's are AutoWindow,
	// AutoNoiseEvery and AutoPatience of its size; false keeps the
	// configured value.
	Window, NoiseEvery, Patience bool
}

// AutoWindow is the window of W retained samples for a working set of M
// and forgetting λ: max(min(6·M, 1600), 4·M, 200), and with λ < 1 at least
// ⌈5/(1−λ)⌉ (capped at 10⁴). The more samples a swap re-expresses exactly,
// the less it loses (docs/benchmarks.md, "The online core against
// KRLS-T"), at W·n numbers per series and O(W·M) per swap, which beyond
// 1600 samples sets the mean cost; with forgetting, the samples a swap
// drops from the statistics weigh less than λ^W ≈ e⁻⁵ of the newest.
func AutoWindow(M int, forgetting float64) int {
	w := max(min(6*M, 1600), 4*M, 200)
	if forgetting < 1 {
		w = max(w, int(min(math.Ceil(5/(1-forgetting)), 1e4)))
	}
	return w
}

// AutoNoiseEvery is the level-2 refresh period for a working set of M:
// 10·M. A refresh is O(M³) and an update O(M²), so a period proportional to
// M keeps the amortised refresh cost a fixed fraction of the update
// (docs/benchmarks.md, "Level-2 refresh").
func AutoNoiseEvery(M int) int { return 10 * M }

// AutoPatience is the entropy search's patience for a working set of M:
// max(4·M, 100) consecutive rejections, by which time a random
// member–candidate pair rarely raises the entropy.
func AutoPatience(M int) int { return max(4*M, 100) }

// resize returns c with working set size and the settings derived from it.
func (g Growth) resize(c narx.Config, size int) narx.Config {
	c.Size = size
	if g.Window {
		c.Window = AutoWindow(size, c.Forgetting)
	}
	if g.NoiseEvery {
		c.NoiseEvery = AutoNoiseEvery(size)
	}
	if g.Patience {
		c.Select.Patience = AutoPatience(size)
	}
	return c
}

// growMinGain is the log-evidence gain per target (nats) that a doubled
// working set must bring to be kept: about what the one-step predictive
// density gains where the budget binds (the Santa Fe laser: 0.16 nats per
// target from 100 to 200 members on 500 values, 1.2 on 1 000; Mackey–Glass
// 0.012, the monthly sunspots −0.01: docs/benchmarks.md, "The working set
// binds"), where each doubling costs about four times the update.
const growMinGain = 0.05

// growTargets: a working set of M is ranked on at least growTargets·M
// targets. Closer to one sample per member the Nyström map interpolates
// the samples it was chosen from, and the evidence of the larger set
// rises with little to forecast from.
const growTargets = 2

// rankFunc ranks c in form d at working-set size size (choose's try).
type rankFunc func(d formData, c narx.Config, how rankHow, size int) (structure, error)

// grow returns best (choose's winner, ranked at the ranking's size) with
// its working set doubled while the doubled set's level-3 evidence on the
// same targets beats the current one's by growMinGain per target, up to
// Growth.Max and while there are growTargets targets per member; after each
// doubling kept, the lag sets are ranked again at the new size (a larger
// working set resolves other lags: on the laser lags 1..16 at 100 members,
// 1..10 at 200). Only a kernel with an RBF part whose width is searched
// grows: a linear kernel's features are its regressors. A doubling is
// probed at the current width and the two octaves below (three fits,
// rankProbe); only when that gains are the lag sets ranked at the doubled
// size, each probed likewise around the current width scaled by its
// regressor dimension (the median squared distance of standardised
// regressors grows with it), and the best kept (it gains at least as much
// as the current lags' probe); its width is then searched on all its
// targets (finishChoice). Probes, not searches, rank the lag sets: a
// search per set (19 fits each) would double a growing series' re-choice
// (docs/benchmarks.md, "The working set binds").
func (l *Learner) grow(best structure, sets [][]int, rank rankFunc) (structure, error) {
	size := l.cfg.Model.Size
	if l.cfg.TuneSize > 0 {
		size = l.cfg.TuneSize
	}
	if l.cfg.Growth.Max <= l.cfg.Model.Size || !best.searched || !best.cfg.Kernel.Type.HasRBF() ||
		math.IsInf(best.score, 0) || best.atBound {
		return best, nil
	}
	cur := best
	gains := func(st structure) bool {
		return st.fits && !st.atBound && st.score-cur.score > growMinGain*float64(st.targets)
	}
	for size *= 2; size <= l.cfg.Growth.Max && cur.targets >= growTargets*size; size *= 2 {
		st, err := rank(cur.data, cur.cfg, rankProbe, size)
		if err != nil || !gains(st) {
			return cur, err
		}
		for _, s := range sets {
			if slices.Equal(s, cur.cfg.Embedding.YLags) {
				continue
			}
			c := cur.cfg
			c.Embedding.YLags = s
			c.Kernel.Sigma2 *= float64(c.Embedding.Dim()) / float64(cur.cfg.Embedding.Dim())
			t, err := rank(cur.data, c, rankProbe, size)
			if err != nil {
				return structure{}, err
			}
			if t.better(st) {
				st = t
			}
		}
		cur = st
	}
	return cur, nil
}

// growDue reports whether a series tests a doubling of its working set at
// its n-th sample once settled (its last re-choice done, its values
// released): at n = Warmup·2^k, k ≥ 1, while the model's kernel has an RBF
// part whose width is inferred and twice its size is within Growth.Max.
// A re-choice ranks on the values it keeps, which end at the last one; a
// stream goes on, and where the working set binds, more samples let more
// members gain (the laser: 0.16 nats per target from 100 to 200 members on
// 500 values, 0.076 from 200 to 400 on 1 000; docs/benchmarks.md). The
// schedule is the sample count's alone, so a restore keeps it; doubling, it
// costs a bounded number of tests over a series' life.
func (l *Learner) growDue(n int64) bool {
	w := int64(l.cfg.Warmup)
	if l.nextFit != 0 || w < 1 || n < 2*w || n%w != 0 || (n/w)&(n/w-1) != 0 || !l.model.Fitted() || !l.cfg.AutoSigma2 {
		return false
	}
	c := l.model.Config()
	return 2*c.Size <= l.cfg.Growth.Max && c.Kernel.Type.HasRBF()
}

// growSettled is a settled series' test of a doubled working set on the
// samples its model's window holds (narx.Model.Window, in the model's
// units), its lags kept. Both sizes are probed at the model's width and
// the two octaves below (probeWidths) and, when the doubled set's best
// beats the current size's by growMinGain per sample, both widths are
// searched; when the doubled set's searched evidence beats the current
// size's as much, the model is refitted on the window at the doubled size
// and its width, as a retune refits: what it learned from samples before
// the window is dropped. Both sizes get the same widths: the samples of
// the window may have drifted from those the model's width was chosen on,
// and a comparison with the model as it is would credit the doubling with
// a better width (the monthly sunspots grew to 200 members with a width a
// sixteenth of its own, for a worse forecast). It needs growTargets
// samples per member of the doubled set. Cost: six fits, O(W·M²) each,
// and 38 more and the refit when the probe gains. It reports whether the
// model was replaced.
func (l *Learner) growSettled() bool {
	cfg := l.model.Config()
	X, y, v := l.model.Window()
	big := l.cfg.Growth.resize(cfg, 2*cfg.Size)
	if len(y) < growTargets*big.Size {
		return false
	}
	gains := func(now, doubled narx.WidthSearch, err error) bool {
		return err == nil && doubled.Best.LogEvidence-now.Best.LogEvidence > growMinGain*float64(len(y))
	}
	now, err := l.probeWidths(cfg, X, y)
	if err != nil {
		return false
	}
	doubled, err := l.probeWidths(big, X, y)
	if !gains(now, doubled, err) {
		return false
	}
	if now, err = l.searchSigma2(cfg, X, y); err != nil {
		return false
	}
	doubled, err = l.searchSigma2(big, X, y)
	if !gains(now, doubled, err) {
		return false
	}
	return l.refitOnWindow(big, doubled.Best.Sigma2, X, y, v)
}
