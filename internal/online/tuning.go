package online

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/robust"
)

// This file holds the structure searches other than the evidence's ranking
// (structure.go): by iterated validation (TuneIterated) and by robust
// cross-validation (TuneRobustCV), the fit of a trial structure at its
// working-set size, and the periodic level-3 retune of the width.

// chooseByIteratedValidation implements TuneIterated: with H the horizon and
// N the warm-up length, origins N−H−k·max(H/4, 1) (k = 4..0). Each lag
// candidate is fitted on the targets before the first origin at TuneSize (σ²
// and γ by evidence), then forecasts H steps iterated from every origin (true
// values only up to the origin); the smallest total squared error wins.
//
// The winner is deployed as validated: its lags, its σ² and — with AutoGamma —
// its γ, which the final fit at the full working-set size then holds instead
// of re-inferring it (narx.Model.SetGamma; level 2 keeps re-estimating the
// noise level at it). γ = ζ/μ, the ratio of noise to prior precision, means
// the same for every M — the Nyström map approximates one kernel, one prior —
// but its evidence optimum grows with the number of features: on the Santa Fe
// laser (lags 30) γ_ev ≈ 950 at the validated M = 200, 4100 when refitted at
// M = 600, where d_eff reaches 489 of 970 samples. Re-inferring it deployed a
// model no validation had scored (the test points 1001–1100 afterwards:
// NMSE 0.038 at 4100, 0.025 at the held 950).
//
// Only lags (and through them σ² and γ by evidence) are validated: searching
// σ² and γ over wide grids by this criterion overfits the five validation
// windows (test NMSE 0.038 → 0.117). Spreading the origins over the second
// half of the warm-up with rolling refits makes the total hinge on the few
// windows that hold an intensity collapse, where every candidate fails to
// time it, and picked lags 1..10 (test NMSE 0.61).
func (l *Learner) chooseByIteratedValidation(cfg *narx.Config, cands [][]int, ys, us []float64) error {
	N, H := len(ys), l.cfg.tuneHorizon()
	origins := make([]int, 5)
	step := max(H/4, 1) // five distinct origins even for H < 4
	for k := range origins {
		origins[k] = N - H - (4-k)*step
	}
	train := origins[0]
	bestSSE := math.Inf(1)
	var best narx.Config
	steps := make([]narx.Step, H)
	inputs := make([][]float64, H)
	for _, c := range cands {
		trial := *cfg
		trial.Embedding.YLags = c
		l.tuneSize(&trial)
		depth := trial.Embedding.Depth()
		if train-depth < minTargets(trial.Embedding.Dim()) {
			continue
		}
		X, y := embed(trial.Embedding, ys[:train], us[:train*l.nu], l.nu, depth)
		sigma2, _, err := l.fitStructure(&trial, X, y)
		if err != nil {
			return err
		}
		trial.Kernel.Sigma2 = sigma2
		m, err := l.fitCandidate(trial, X, y, nil)
		if err != nil {
			return err
		}
		if l.tuneGamma() {
			trial.Gamma, trial.AutoGamma = m.Info().Gamma, false
		}
		var sse float64
		for _, o := range origins {
			h := narx.NewHistory(trial.Embedding)
			for k := max(0, o-depth-1); k < o; k++ {
				h.Push(ys[k], us[k*l.nu:(k+1)*l.nu])
			}
			for i := range inputs {
				inputs[i] = us[(o+i)*l.nu : (o+i+1)*l.nu]
			}
			m.Forecast(steps, h, inputs)
			for i, st := range steps {
				d := ys[o+i] - st.Mean
				sse += d * d
			}
		}
		if math.IsNaN(sse) {
			sse = math.Inf(1)
		}
		if sse < bestSSE || best.Size == 0 {
			bestSSE, best = sse, trial
		}
	}
	if best.Size == 0 {
		return errTuningSamples
	}
	best.Size = cfg.Size
	*cfg = best
	return nil
}

// retunePhase offsets the retunes in the period n, in [0, n): a hash of the
// frozen normalisation. Series that start together (a fleet onboarded at
// once, a daemon started on a backlog) would otherwise retune at the same
// sample for ever after, and a daemon serving them would stall on all their
// retunes at once (about 20 fits each). It depends only on the warm-up data,
// which the checkpoint keeps, so a backtest and a restored Learner retune at
// the same samples as the daemon.
func (l *Learner) retunePhase(n int64) int64 {
	h := (math.Float64bits(l.yLoc) ^ bits.RotateLeft64(math.Float64bits(l.yScale), 32)) * 0x9e3779b97f4a7c15
	return int64((h >> 32) % uint64(n))
}

// retune is the periodic level-3 re-run: the width search of the fit
// (SearchSigma2 around the median squared distance) on the model's window
// of recent samples, with the lags kept. When the best width beats the
// current one by retuneMinGain in log evidence on those samples, the model
// is refitted on them at that width: what it learned from older samples is
// dropped — the price of following a drifting series — and the lag history
// is kept. It costs about 20 fits on W samples and runs on the caller's
// goroutine, every RetuneEvery learned samples from a per-series phase
// (retunePhase).
func (l *Learner) retune() bool {
	cfg := l.model.Config()
	X, y, v := l.model.Window()
	if len(y) < 2*cfg.Size {
		return false
	}
	search, err := l.searchSigma2(cfg, X, y)
	if err != nil {
		return false
	}
	cur, err := l.fitCandidate(cfg, X, y, nil)
	if err != nil || search.Best.LogEvidence < cur.LogEvidence()+retuneMinGain {
		return false
	}
	return l.refitOnWindow(cfg, search.Best.Sigma2, X, y, v)
}

// refitOnWindow replaces the model by cfg at width sigma2 fitted on the
// samples of its window (X, y, v: narx.Model.Window), dropping what it
// learned from older ones, and keeps a validated γ (tuneGamma); false,
// the model kept, when the fit fails. O(W·M² + M³).
func (l *Learner) refitOnWindow(cfg narx.Config, sigma2 float64, X, y, v []float64) bool {
	cfg.Kernel.Sigma2 = sigma2
	m, err := l.fitModel(cfg, X, y, v)
	if err != nil {
		return false
	}
	if l.tuneGamma() {
		_ = m.SetGamma(l.model.Info().Gamma) // the validated γ stays
	}
	l.model = m
	l.shift = shiftState{}
	return true
}

// tuneSize sets the working-set size used while ranking structures.
func (l *Learner) tuneSize(trial *narx.Config) {
	if l.cfg.TuneSize > 0 {
		trial.Size = l.cfg.TuneSize
	}
}

// fitStructure returns the kernel width to use for trial on (X, y) — by the
// level-3 search when asked, else the configured one — and the log evidence
// of the fit.
func (l *Learner) fitStructure(trial *narx.Config, X, y []float64) (sigma2, logEv float64, err error) {
	if l.cfg.AutoSigma2 && trial.Kernel.Type == narx.RBF {
		res, err := l.searchSigma2(*trial, X, y)
		if err != nil {
			return 0, 0, err
		}
		return res.Best.Sigma2, res.Best.LogEvidence, nil
	}
	m, err := l.fitCandidate(*trial, X, y, nil)
	if err != nil {
		return 0, 0, err
	}
	return trial.Kernel.Sigma2, m.LogEvidence(), nil
}

// errTuningSamples says that the samples so far are too few for the
// configured Tuning to rank the candidates (a fold's training rows, or the
// targets before the first validation origin, fewer than a fit needs): the
// evidence's choice stands until a later re-choice.
var errTuningSamples = errors.New("online: too few samples for the configured tuning")

// chooseByRobustCV implements TuneRobustCV. Candidates are compared on the
// same targets (those after the largest candidate lag) and the same folds.
func (l *Learner) chooseByRobustCV(cfg *narx.Config, cands [][]int, ys, us []float64) error {
	from := 0
	for _, c := range cands {
		e := cfg.Embedding
		e.YLags = c
		from = max(from, e.Depth())
	}
	N := len(ys) - from
	if N < 2*cvFolds {
		return errTuningSamples
	}
	// Fold assignment, shared by all candidates. Without lags of y the
	// samples are exchangeable: a seeded shuffle per repeat. With lags, a
	// validation target also sits in the regressors of the next depth rows,
	// so folds are contiguous blocks (shifted between repeats) and training
	// rows within depth of the block are left out (blocked CV).
	gap := 0
	for _, c := range cands {
		if len(c) > 0 {
			gap = max(gap, c[len(c)-1])
		}
	}
	folds := make([][]int, cvRepeats)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xcf))
	for r := range folds {
		folds[r] = make([]int, N)
		if gap == 0 {
			for i, p := range rng.Perm(N) {
				folds[r][p] = i % cvFolds
			}
			continue
		}
		shift := r * N / (cvFolds * cvRepeats)
		for i := range folds[r] {
			folds[r][i] = ((i + shift) % N) * cvFolds / N
		}
	}
	// The fewest training rows a fold leaves (the same for every
	// candidate: the folds and the gap are shared).
	minTrain := N
	for _, fr := range folds {
		for f := 0; f < cvFolds; f++ {
			rows := 0
			for i, fi := range fr {
				if fi != f && !(gap > 0 && nearFold(fr, i, f, gap)) {
					rows++
				}
			}
			minTrain = min(minTrain, rows)
		}
	}
	best, bestScore := narx.Config{}, math.Inf(1)
	var sq, scratch []float64
	for _, c := range cands {
		trial := *cfg
		trial.Embedding.YLags = c
		if minTrain < minTargets(trial.Embedding.Dim()) {
			continue // too many parameters for the folds' rows
		}
		l.tuneSize(&trial)
		X, y := embed(trial.Embedding, ys, us, l.nu, from)
		n := trial.Embedding.Dim()
		widths := []float64{trial.Kernel.Sigma2}
		if l.cfg.AutoSigma2 && trial.Kernel.Type == narx.RBF {
			center := narx.MedianSqDist(X, n, 2000, trial.Seed)
			widths = widths[:0]
			for k := -3; k <= 3; k++ {
				widths = append(widths, center*math.Pow(2, float64(k)))
			}
		}
		for _, w := range widths {
			t := trial
			t.Kernel.Sigma2 = w
			sq = sq[:0]
			for r := range folds {
				for f := 0; f < cvFolds; f++ {
					var Xt, yt, Xv, yv []float64
					fr := folds[r]
					for i, fi := range fr {
						switch {
						case fi == f:
							Xv, yv = append(Xv, X[i*n:(i+1)*n]...), append(yv, y[i])
						case gap > 0 && nearFold(fr, i, f, gap):
							// within the lag window of the validation block
						default:
							Xt, yt = append(Xt, X[i*n:(i+1)*n]...), append(yt, y[i])
						}
					}
					m, err := l.fitRobustly(t, Xt, yt)
					if err != nil {
						return err
					}
					for i, v := range yv {
						d := v - m.Predict(Xv[i*n:(i+1)*n])
						sq = append(sq, d*d)
					}
				}
			}
			if cap(scratch) < len(sq) {
				scratch = make([]float64, len(sq))
			}
			if score := robust.TrimmedMean(sq, scratch, 0, cvTrim); score < bestScore || best.Size == 0 {
				bestScore, best = score, t
			}
		}
	}
	if best.Size == 0 {
		return errTuningSamples
	}
	best.Size = cfg.Size
	*cfg = best
	return nil
}

// nearFold reports whether row i lies within gap rows of a row of fold f.
func nearFold(folds []int, i, f, gap int) bool {
	for j := max(0, i-gap); j <= min(len(folds)-1, i+gap); j++ {
		if folds[j] == f {
			return true
		}
	}
	return false
}
