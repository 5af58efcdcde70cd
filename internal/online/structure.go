package online

import (
	"errors"
	"math"
	"reflect"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/theta"
)

// Form is how the observed series y becomes the series the NARX model learns:
// z = ln y with Log (only for series whose values so far are all positive: it
// stabilises a variance that grows with the level and makes multiplicative
// seasonality additive), then w_t = z_t − z_{t−1} with Diff (a drifting level
// or a trend: an RBF model does not extrapolate, the sum of increments does),
// else w = z; w is standardised for the model. Forecasts are carried back
// exactly: the increments' means and covariances summed (narx.Step.CumVar),
// then the quantiles through exp, which is monotone.
type Form struct {
	Log  bool
	Diff bool
}

func (f Form) String() string {
	switch {
	case f.Log && f.Diff:
		return "log+diff"
	case f.Log:
		return "log"
	case f.Diff:
		return "diff"
	}
	return "none"
}

// FirstFit is the number of samples at which a new series is first fitted.
// The structure (form, lags, kernel, width, normalisation) is chosen again
// on every sample seen so far every FirstFit samples below richMinSamples,
// where a re-choice ranks linear models only and costs little, then at each
// doubling below Config.Warmup, at Warmup, and for a long season a last
// time at Config.lastFit; besides, when the time step's season first joins
// the lag sets, at 2(s + 3) values (Learner.schedule); the model learns
// online in between. From richMinSamples on, the re-choices cost about
// twice the last one in all.
const FirstFit = 16

// FirstFitAt is the count of values at which a series is first fitted:
// FirstFit, or Warmup when it is smaller. With inputs the fit may need more
// values (MinWarmup) and is then tried again at the next re-choice.
func (c Config) FirstFitAt() int { return min(FirstFit, c.Warmup) }

// FirstForecast is the count of values after which a series can first be
// forecast (by Learner.Forecast; its periodic forecasts also wait for
// Every, and there are none with Horizon 0): theta.MinValues with the theta
// combination (the young forecast, Learner.youngForecast), else its first
// fit's, FirstFitAt.
func (c Config) FirstForecast() int {
	if c.Combine != CombineNone {
		return min(theta.MinValues, c.FirstFitAt())
	}
	return c.FirstFitAt()
}

// nextFit returns the sample count of the re-choice after n samples, or 0
// when the last one (at last ≥ Warmup, Config.lastFit) is done: the
// schedule up to Warmup, then last.
func (c Config) nextFit(n, last int) int {
	switch {
	case n >= last:
		return 0
	case n >= c.Warmup:
		return last
	case n < richMinSamples:
		return min((n/FirstFit+1)*FirstFit, c.Warmup) // FirstFitAt first
	}
	k := richMinSamples
	for k <= n {
		k *= 2
	}
	return min(k, c.Warmup)
}

// seasonCycles is how many cycles of its longest seasonal period a series
// has when its structure is chosen a last time. A seasonal lag s joins the
// lag sets once it leaves enough targets (2(s+3) values, lagSets), but the
// evidence and the validation rank it well only on a few cycles more: a
// half-hourly series (periods 48 and 336) chosen at the default Warmup of
// 500 values has no weekly lag at all, and at four weeks its day-ahead
// forecasts beat the weekly seasonal naive one (docs/benchmarks.md,
// "Half-hourly load"). One more than the cycles a moving profile of one
// level averages (profileCycles), so that the combination's validation
// fits a full profile before its origins (one of two levels averages the
// cycles there are): at four, the load's calendar model was chosen to
// forecast alone, where its average with the profile forecasts better (the
// same page).
const seasonCycles = oneLevelCycles + 1

// maxLastFit bounds the re-choice for a long season: every sample it ranks on
// is kept until then, and in the checkpoint. Quarter-hourly values (a week
// of 672) fit within it; a configured season of thousands does not hold
// up the samples of every series for tens of thousands of values.
const maxLastFit = 4096

// lastFit is the sample count of the last re-choice of a series whose kept
// samples are at times ts (timed: Unix milliseconds, else sequence
// numbers) and whose latest re-choice proposed periods:
// Warmup, or seasonCycles times the longest seasonal period known before
// any value is looked at (Season, else the periods of the sampling step
// when t is a time, knownPeriods), at most maxLastFit, when that is more.
// With none known, the week of a detected main period that is a day
// (weekOf) extends it likewise, so that values without a time get the
// weekly period their timed twins get. Other detected periods do not: a
// longer one joins the lag sets once it fits two cycles, at a doubling or
// at Warmup, and is ranked on what there is.
func (c Config) lastFit(ts []int64, timed bool, periods []int) int {
	last := c.Warmup
	known := c.knownPeriods(ts, timed)
	for _, s := range known {
		last = max(last, min(seasonCycles*s, maxLastFit))
	}
	if len(known) == 0 && c.Season == 0 && len(periods) > 0 {
		if w := weekOf(periods[0]); w > 0 {
			last = max(last, min(seasonCycles*w, maxLastFit))
		}
	}
	return last
}

// knownPeriods returns the seasonal periods known before any value is
// looked at, for samples at times ts (timed as for lastFit): the
// configured Season, none with Season < 0, else the calendar periods of
// the sampling step (stepPeriods; none for fewer than two samples or
// sequence numbers).
func (c Config) knownPeriods(ts []int64, timed bool) []int {
	switch {
	case c.Season > 0:
		return []int{c.Season}
	case c.Season < 0 || len(ts) < 2:
		return nil
	}
	return stepPeriods(spacingOf(ts, c.Calendar.Location, timed))
}

// keptMax is the most raw samples kept for the re-choices: Warmup, or, while
// a fitted series waits for a re-choice beyond it (lastFit), that one's count.
func (c Config) keptMax(fitted bool, nextFit int64) int {
	if fitted && nextFit > int64(c.Warmup) {
		return int(nextFit)
	}
	return c.Warmup
}

// minTargets is the fewest targets a structure of regressor dimension n is
// ranked on: two per parameter, and at least 8, so that level 2 has residual
// degrees of freedom (n_c > d_eff) to estimate a noise level from.
func minTargets(n int) int { return max(8, 2*(n+1)) }

// rbfMinGain is the log-evidence margin (nats) by which the best RBF
// structure must beat the best linear one to be chosen: the RBF width is
// searched, and its Occam factor is not in the evidence; 2 nats is
// "positive" evidence on Kass and Raftery's scale.
const rbfMinGain = 2

// richMinSamples is the fewest samples on which the re-choice ranks more
// than linear autoregressions in levels (of y or ln y): an RBF kernel
// (with kernel auto) and differenced forms (with difference auto). On
// fewer, the width and γ of an RBF fit the few samples closely, and a
// differenced form's drift is a noisy mean of few increments that the
// forecast extrapolates; the evidence and the validation near the end both
// choose them where they forecast worse (measured on training data only:
// docs/benchmarks.md, "Real series").
const richMinSamples = 128

// formData is the series in one form, standardised, with its inputs.
type formData struct {
	form       Form
	loc, scale float64
	// ws[k] is the standardised w of sample k+off (off = 1 with Diff: the
	// first sample has no increment); us the standardised inputs of the
	// same samples, row-major.
	ws, us []float64
	off    int
	// jac[k] is ln |dw_std/dy| of sample k+off: the change of variables
	// that makes the evidence of different forms comparable.
	jac []float64
}

// transformed returns z of y under f (the floor keeps ln finite for a value
// at or below zero arriving after a Log form was chosen).
func (f Form) transformed(y, floor float64) float64 {
	if !f.Log {
		return y
	}
	return math.Log(logArg(y, floor))
}

// logArg is what a Log form takes the logarithm of: y itself when
// positive, however small (a series that decays far below the values its
// form was chosen on keeps being followed: clipped at a floor, its model
// saw a constant and its forecasts stalled there), else the floor.
func logArg(y, floor float64) float64 {
	if y > 0 {
		return y
	}
	return floor
}

// makeForm builds the standardised series of form f from the raw samples.
func (l *Learner) makeForm(f Form, ys, us []float64, floor float64) formData {
	N := len(ys)
	d := formData{form: f}
	if f.Diff {
		d.off = 1
	}
	w := make([]float64, 0, N)
	prev := 0.0
	for k, y := range ys {
		z := f.transformed(y, floor)
		if f.Diff && k == 0 {
			prev = z
			continue
		}
		if f.Diff {
			w = append(w, z-prev)
			prev = z
		} else {
			w = append(w, z)
		}
	}
	d.loc, d.scale = scaleOf(w, l.cfg.Scale)
	d.ws = w
	d.jac = make([]float64, len(w))
	for k := range w {
		d.ws[k] = standardise(w[k], d.loc, d.scale)
		j := -math.Log(d.scale)
		if f.Log {
			j -= math.Log(logArg(ys[k+d.off], floor))
		}
		d.jac[k] = j
	}
	d.us = us[d.off*l.nu:]
	return d
}

// structure is a candidate's choice.
type structure struct {
	data     formData
	cfg      narx.Config
	score    float64 // log evidence of the original values on the common targets
	searched bool    // cfg.Kernel.Sigma2 was inferred on the common targets
	// atBound: its γ ended at a bound of the level-2 search. Such a
	// candidate is chosen only when no other fits.
	atBound bool
	// fits: the candidate had the targets it needs and its fit succeeded,
	// whether or not its evidence is finite (a constant series fits
	// exactly, and has none).
	fits bool
	// targets is the number of common targets it was ranked on.
	targets int
	// theta: the winner's forecasts are averaged with a theta forecaster's
	// of seasonal period period, or, when profile > 0, one adjusted by a
	// moving seasonal profile of that period and the shorter period sub
	// (chooseTheta).
	theta   bool
	period  int
	partner partner
	// periods are the seasonal periods the re-choice proposed (periods),
	// which the schedule of the next one follows (Config.lastFit).
	periods []int
}

// knownSeason reports whether s's own lags of y hold its seasonal period
// (a seasonal lag set, or an order that reaches it): the period was
// proposed (by the configuration, the time step or the increments' test,
// periods) and the evidence chose a model that forecasts with the value a
// season back, so the season is established and the theta partner
// estimates its indices without thetaf's test (theta.Fit's known). On
// three cycles of a monthly series the test misses seasons whose peak is
// many times their trough (the large autocorrelations of the shorter lags,
// which the season makes, inflate the standard error of the seasonal
// one); the model then forecast the season and the partner a flat line,
// and their average half the season. Counting only seasonal lag sets (an
// order below s − 1) measured worse on NN3's training split
// (docs/benchmarks.md, "A season the model found").
func (s structure) knownSeason() bool {
	return s.period > 1 && slices.Contains(s.cfg.Embedding.YLags, s.period)
}

// better reports whether s ranks above t: a candidate that fits first, then
// one whose γ is inside its bounds, then the score.
func (s structure) better(t structure) bool {
	switch {
	case s.fits != t.fits:
		return s.fits
	case s.atBound != t.atBound:
		return !s.atBound && !math.IsInf(s.score, -1)
	}
	return s.score > t.score
}

// errNoStructure says that no candidate structure can be ranked on the
// samples so far: too few for any of them. The series waits for the next
// re-choice.
var errNoStructure = errors.New("online: too few samples for any structure")

// lagSets returns the lag sets the re-choice ranks on N samples, each of
// which fits them: its depth + 2 at most half the samples, and enough
// targets left (minTargets) with the inputs' lags. With configured lags:
// the longest prefix of those lags that fits, lag 1 if none does; the rest
// join as the series grows. With LagCandidates: the orders 1..p that fit
// (lag 1 if none does), and with proposed periods s (periods) the seasonal
// sets 1..p ∪ {s} and 1..p ∪ {s, s+1} (p = 1, 2, 3), an autoregression on
// the season's previous values as a seasonal ARIMA's, and with a second
// period s2 the sets 1..p ∪ {s, s+1, s2}, those that fit.
func (l *Learner) lagSets(N int, periods []int, inputLags [][]int) [][]int {
	fits := func(ylags []int) bool {
		return N >= MinWarmup(narx.Embedding{YLags: ylags, InputLags: inputLags}, 0)
	}
	if len(l.cfg.LagCandidates) == 0 {
		lags := l.cfg.Model.Embedding.YLags
		var ok []int
		for _, a := range lags {
			if set := append(ok[:len(ok):len(ok)], a); fits(set) {
				ok = set
			}
		}
		switch {
		case len(ok) == len(lags):
			return [][]int{lags}
		case len(ok) == 0:
			return [][]int{{1}}
		}
		return [][]int{ok}
	}
	var sets [][]int
	add := func(set []int) {
		if fits(set) {
			sets = append(sets, set)
		}
	}
	for _, p := range l.cfg.LagCandidates {
		add(narx.Lags(p))
	}
	if len(sets) == 0 {
		sets = append(sets, []int{1})
	}
	if len(periods) == 0 {
		return sets
	}
	s := periods[0]
	for p := 1; p <= 3 && p < s-1; p++ {
		add(append(narx.Lags(p), s))
		add(append(narx.Lags(p), s, s+1))
		if len(periods) > 1 && periods[1] > s+1 {
			add(append(narx.Lags(p), s, s+1, periods[1]))
		}
	}
	return sets
}

// inputLags returns the input lags the re-choice ranks on N samples: the
// configured ones less those too deep for the samples so far (as for y's),
// and, while lag 1 of y with them would leave a fit fewer targets than
// minTargets, less whole inputs from the last on (the calendar's columns
// come after the user's inputs, so they go first). They join as the series
// grows: a series with many inputs forecasts from its first values on the
// lags of y and the inputs its samples can carry.
func (l *Learner) inputLags(N int) [][]int {
	return l.fitInputs(N, l.cfg.Model.Embedding.InputLags)
}

// fitInputs is inputLags for the input lags cfg (every input's, the
// calendar's columns included).
func (l *Learner) fitInputs(N int, cfg [][]int) [][]int {
	out := make([][]int, len(cfg))
	for i, ls := range cfg {
		for _, a := range ls {
			if 2*(a+2) <= N { // its depth, as for y's
				out[i] = append(out[i], a)
			}
		}
	}
	e := narx.Embedding{InputLags: out}
	if len(l.cfg.Model.Embedding.YLags) > 0 || len(l.cfg.LagCandidates) > 0 {
		e.YLags = []int{1}
	}
	for i := len(out) - 1; i >= 0 && N < MinWarmup(e, 0); i-- {
		if e.Dim() == len(out[i]) {
			break // the last regressor stays: a static regression needs one
		}
		out[i] = nil
	}
	return out
}

// inputLagSets returns the input lags the re-choice ranks on N samples:
// inputLags(N) alone, or with Config.InputLagOrders, the configured lags
// cut to the first k of every user input's (k = 1..InputLagOrders; the
// calendar's columns as configured), each then fitted to the samples as
// inputLags fits the configured ones, so that many inputs keep their
// first lags where their deeper ones do not fit. The first set is the
// k = 2 one, which the y lags are ranked with. Sets that the samples cut
// to the same are ranked once.
func (l *Learner) inputLagSets(N int) [][][]int {
	if l.cfg.InputLagOrders == 0 {
		return [][][]int{l.inputLags(N)}
	}
	cfg := l.cfg.Model.Embedding.InputLags
	var out [][][]int
	add := func(k int) {
		set := slices.Clone(cfg)
		for i := range l.nUser {
			set[i] = cfg[i][:min(k, len(cfg[i]))]
		}
		set = l.fitInputs(N, set)
		if !slices.ContainsFunc(out, func(o [][]int) bool { return slices.EqualFunc(o, set, slices.Equal) }) {
			out = append(out, set)
		}
	}
	add(min(2, l.cfg.InputLagOrders))
	for k := 1; k <= l.cfg.InputLagOrders; k++ {
		add(k)
	}
	return out
}

// forms returns the forms the re-choice ranks: Config.Forms, less Log when a
// value is not positive, and, where both are candidates, less the
// differenced forms below richMinSamples.
func (l *Learner) forms(ys []float64) []Form {
	cands := l.cfg.Forms
	if len(cands) == 0 {
		cands = []Form{{}}
	}
	positive := !slices.ContainsFunc(ys, func(y float64) bool { return !(y > 0) })
	levels := slices.ContainsFunc(cands, func(f Form) bool { return !f.Diff })
	var out []Form
	for _, f := range cands {
		if (!f.Log || positive) && (!f.Diff || !levels || len(ys) >= richMinSamples) {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = append(out, Form{Diff: cands[0].Diff})
	}
	return out
}

// periods returns the seasonal periods the re-choice proposes, the main
// one first: the configured Season; else those of the sampling step when t
// is a time (stepPeriods) and the samples hold them; else those detected
// from the data (detectPeriods). Season < 0 proposes none.
func (l *Learner) periods(ys []float64) []int { return l.periodsOf(ys, l.fitT) }

// periodsOf is periods for the samples ys at times ts.
func (l *Learner) periodsOf(ys []float64, ts []int64) []int {
	switch {
	case l.cfg.Season > 0:
		return []int{l.cfg.Season}
	case l.cfg.Season < 0:
		return nil
	}
	if len(ts) == len(ys) {
		var out []int
		for _, s := range l.cfg.knownPeriods(ts, l.timed) {
			if 2*(s+3) <= len(ys) {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return detectPeriods(ys)
}

// stepPeriods returns the calendar periods of a sampling spacing, main one
// first, when the samples' t are times (spacing.timed). A step that
// divides a day: the day in steps while two of its cycles fit in
// maxLastFit values, so that a re-choice can rank its lag (a second: none),
// and the week while seasonCycles of its cycles do, so that the weekly
// profile can be validated and averages a few weeks at least: quarter-hourly
// 96 and 672, half-hourly 48 and 336, hourly 24 and 168, twenty minutes 72
// and 504; five minutes 288 alone (its week, 2 016, would hold every
// sample until the re-choice at 4 096, where two weeks cannot validate a
// weekly profile, and a profile ring of 12 weeks: 24 192 numbers); daily
// (7, 365; with days off, the working days of a week and a year: 5 and
// 261 for business days); weekly (52); monthly (12); quarterly (4).
func stepPeriods(sp spacing) []int {
	if !sp.timed {
		return nil
	}
	switch step := sp.step; {
	case step < day && day%step == 0:
		var out []int
		if d := int64(sp.perDay()); 2*(d+3) <= maxLastFit {
			out = append(out, int(d))
			if w := int64(sp.week()) * d; seasonCycles*w <= maxLastFit {
				out = append(out, int(w))
			}
		}
		return out
	case step == day:
		w := sp.week()
		return []int{w, int(365.25*float64(w)/7 + 0.5)}
	case step == 7*day:
		return []int{52}
	case calendarMonths(step) == 1:
		return []int{12}
	case calendarMonths(step) == 3:
		return []int{4}
	}
	return nil
}

// commonPeriods are the periods of the calendar at the usual sampling
// steps: monthly (12), daily (7), hourly (24, 168), quarterly (4),
// half-hourly (48, 336), weekly (52). They are tested first, in this order:
// a short series' autocorrelation has spurious peaks, and a period that is
// both common and significant is far more often the true one. (A day of 96
// quarter-hours is left to the search for peaks, which may find it a lag
// off in noisy values: as a common period it passes on the monthly
// sunspots, whose cycle is 130 months.)
var commonPeriods = []int{12, 7, 24, 4, 48, 52, 168, 336}

// weekOf returns the week of a day-long period s, the longer period the
// calendar gives a series sampled hourly (24), half-hourly (48) or
// quarter-hourly (96), as stepPeriods does when t is a time; 0 for any
// other period.
func weekOf(s int) int {
	switch s {
	case 24, 48, 96:
		return 7 * s
	}
	return 0
}

// incrementACF returns r[0..maxLag], r[s] the autocorrelation of the
// increments of ys at lag s (r[0] = 1; 0 beyond the increments there are;
// theta.ACF); nil for fewer than two values or increments that do not
// vary. O(N·maxLag) for N values.
func incrementACF(ys []float64, maxLag int) []float64 {
	N := len(ys) - 1
	if N < 1 {
		return nil
	}
	d := make([]float64, N)
	varies := false
	for k := range d {
		d[k] = ys[k+1] - ys[k]
		varies = varies || d[k] != d[0]
	}
	if !varies {
		return nil
	}
	return append([]float64{1}, theta.ACF(d, maxLag)...)
}

// seasonBound is the bound r_s must pass in the M3 theta method's test of
// a season s, for the autocorrelation r of N increments, at the normal
// quantile crit: crit times the standard error of r_s (theta.SeasonSE).
func seasonBound(r []float64, s, N int, crit float64) float64 {
	return crit * theta.SeasonSE(r[1:s], N)
}

// domination is how many times a later common period's autocorrelation
// must exceed the first candidate's to be proposed instead. The order of
// commonPeriods is for short series, whose spurious peaks are as large as
// their seasons; a long series passes the test with a few hundredths of
// correlation: hourly load without times at 12 (r = 0.07) before its day
// (0.56), half-hourly at 12 (0.05) before 48 (0.30). Twice keeps every
// choice on the NN3 series, at every size they are re-chosen at, where a
// later period is stronger by up to 1.7 times (24 over 12).
const domination = 2

// detectPeriods returns the seasonal periods the data propose, the main
// one first. A period s of the increments is a candidate when its
// autocorrelation r_s passes the seasonality test of the M3 theta method,
// r_s > b_s = 1.645·√((1 + 2Σ_{k<s} r_k²)/N) (Bartlett's variance of r_s
// under an MA(s−1), one-sided 5 %; seasonBound), and rises above the
// smallest r_k of a shorter lag k ≥ 2 by b_s too: a lag on the first
// decline of the autocorrelation is the series' smoothness, not a season
// (lag 1 aside, where the increments of measurement noise correlate
// negatively), and noise makes small rises on the decline. The main period
// is the first of commonPeriods that is a candidate and fits two cycles,
// unless a later one's r_s is more than domination times its; else the
// strongest local peak in [4, N/3] that passes the test at 5 % over all
// those lags; none if none does. A main period that is a day (weekOf) is
// followed by its week when that fits two cycles and the day passes the
// test at the search's level too, as the calendar of a time step proposes
// both: the autocorrelation at a multiple of the day cannot tell a week
// from the day repeated, and the evidence can; but a week holds the values
// for five of its cycles (Config.lastFit), which a day that noise passes at
// 5 % does not earn (hourly and half-hourly loads pass at 4.4 to 14
// standard errors from 256 values on, against a level of 3.2 to 3.6). (The
// search for peaks takes the strongest, which may be a lag off a day of 96
// in noisy values, and then proposes no week.) It only proposes: the lag
// sets then hold the seasonal lags (see lagSets) and the evidence ranks
// them. O(N²) for N samples.
func detectPeriods(ys []float64) []int {
	N := len(ys) - 1
	// A common period needs two cycles and its lag set's depth (lagSets);
	// another period, three cycles.
	maxCommon, maxS := (N+1)/2-3, min(N/3, 400)
	if maxCommon < 4 {
		return nil
	}
	r := incrementACF(ys, max(maxS, maxCommon)+1)
	if r == nil {
		return nil
	}
	passes := func(s int, crit float64) bool { return r[s] > seasonBound(r, s, N, crit) }
	main := 0
	for _, s := range commonPeriods { // each ≥ 4: r[2:s] holds a lag
		if s > maxCommon {
			continue
		}
		if b := seasonBound(r, s, N, 1.645); r[s] > b && r[s]-slices.Min(r[2:s]) > b && (main == 0 || r[s] > domination*r[main]) {
			main = s
		}
	}
	// Any other lag in [4, maxS] is one of maxS − 3 tests: the 5 % level is
	// split among them (Bonferroni), or peaks of noise would pass.
	crit := distuv.UnitNormal.Quantile(1 - 0.05/float64(max(maxS-3, 1)))
	if main == 0 {
		for s, bestR := 4, 0.0; s <= maxS; s++ {
			if r[s] > bestR && r[s] >= r[s-1] && r[s] >= r[s+1] && passes(s, crit) {
				main, bestR = s, r[s]
			}
		}
	}
	switch w := weekOf(main); {
	case main == 0:
		return nil
	case w > 0 && w <= maxCommon && passes(main, crit):
		return []int{main, w}
	}
	return []int{main}
}

// choose ranks the candidate structures on the raw samples ys (with inputs
// us, N×n_u): every form and lag set with the linear kernel, then — when
// the RBF kernel is a candidate — RBF widths for the best linear form and
// the plain form. Every candidate is scored on the same targets by its log
// evidence plus the log Jacobian of its form, so that it is the evidence of
// the observed values: comparable across forms (a change of variables) and
// kernels. A candidate whose γ ends at a bound of the level-2 search is
// passed over: a structure the evidence cannot fit. With Tuning other than
// TuneEvidence, the lags and width are then ranked by that criterion within
// the winner's form and kernel.
func (l *Learner) choose(ys, us []float64) (structure, error) {
	N := len(ys)
	floor := l.logFloor(ys)
	inSets := l.inputLagSets(N)
	inLags := inSets[0]
	periods := l.periods(ys)
	sets := l.lagSets(N, periods, inSets[0])
	forms := l.forms(ys)
	kernels := l.cfg.Kernels
	if len(kernels) == 0 {
		kernels = []narx.KernelType{l.cfg.Model.Kernel.Type}
	}
	// The common targets: samples from the deepest candidate on.
	from := 0
	for _, s := range sets {
		for _, in := range inSets {
			e := narx.Embedding{YLags: s, InputLags: in}
			for _, f := range forms {
				from = max(from, e.Depth()+boolInt(f.Diff))
			}
		}
	}
	data := make([]formData, len(forms))
	for i, f := range forms {
		data[i] = l.makeForm(f, ys, us, floor)
	}
	// try ranks c on d's common targets, its width fixed, searched or
	// probed (rankHow), at the ranking's working-set size (TuneSize; the
	// model's is then Model.Size), or at size when > 0 (a grown working
	// set, grow: ranked and run at that size).
	try := func(d formData, c narx.Config, how rankHow, size int) (structure, error) {
		c.Summed = d.form.Diff // its forecasts are summed back to levels
		X, y := embed(c.Embedding, d.ws, d.us, l.nu, from-d.off)
		if len(y) < minTargets(c.Embedding.Dim()) {
			return structure{score: math.Inf(-1)}, nil
		}
		l.tuneSize(&c)
		if size > 0 {
			c.Size = size
		}
		ev, bound := math.Inf(-1), false
		switch how {
		case rankSearch, rankProbe:
			s2, e, b, err := l.searchWidth(c, X, y, how == rankProbe)
			if err != nil {
				return structure{}, err
			}
			c.Kernel.Sigma2, ev, bound = s2, e, b
		default:
			m, err := l.fitCandidate(c, X, y, nil)
			if err != nil {
				return structure{}, err
			}
			bound = c.AutoGamma && narx.GammaAtBound(m.Info().Gamma)
			ev = m.LogEvidence()
		}
		for _, j := range d.jac[from-d.off:] {
			ev += j
		}
		c.Size = l.cfg.Model.Size
		if size > 0 {
			c = l.cfg.Growth.resize(c, size)
		}
		return structure{data: d, cfg: c, score: ev, searched: how != rankFit, atBound: bound, fits: true, targets: len(y)}, nil
	}
	// rankInputs returns the best of best and best with each of the
	// inputs' other lag sets (its y lags and kernel kept).
	rankInputs := func(d formData, best structure, how rankHow) (structure, error) {
		for _, in := range inSets[1:] {
			if !best.fits {
				break
			}
			c := best.cfg
			c.Embedding.InputLags = in
			st, err := try(d, c, how, 0)
			if err != nil {
				return structure{}, err
			}
			if st.better(best) {
				best = st
			}
		}
		return best, nil
	}
	base := l.cfg.Model
	base.Embedding.InputLags = inLags
	none := structure{score: math.Inf(-1), atBound: true}
	perForm := make([]structure, len(data))
	for i := range perForm {
		perForm[i] = none
	}
	if slices.Contains(kernels, narx.Linear) || !slices.Contains(kernels, narx.RBF) {
		base.Kernel.Type = kernels[0]
		if slices.Contains(kernels, narx.Linear) {
			base.Kernel.Type = narx.Linear
		}
		for i, d := range data {
			for _, s := range sets {
				c := base
				c.Embedding.YLags = s
				st, err := try(d, c, rankFit, 0)
				if err != nil {
					return structure{}, err
				}
				if st.better(perForm[i]) {
					perForm[i] = st
				}
			}
			// The inputs' other lag sets, on the form's best y lags.
			var err error
			if perForm[i], err = rankInputs(d, perForm[i], rankFit); err != nil {
				return structure{}, err
			}
		}
	}
	lead := none
	for _, st := range perForm {
		if st.better(lead) {
			lead = st
		}
	}
	if lead.fits {
		// The RBF stage ranks y's lags with the inputs' the linear one
		// chose (without one, it ranks the inputs' itself, below).
		base.Embedding.InputLags = lead.cfg.Embedding.InputLags
	}
	if slices.Contains(kernels, narx.RBF) && (N >= richMinSamples || !slices.Contains(kernels, narx.Linear)) {
		// After a linear stage, the RBF ranks the plain form (a nonlinear
		// autoregression in levels, the classic NARX) and the best linear
		// form; alone, every form.
		for i, d := range data {
			if !math.IsInf(lead.score, -1) && d.form != (Form{}) && d.form != lead.data.form {
				continue
			}
			margin := 0.0
			if !math.IsInf(perForm[i].score, -1) {
				margin = rbfMinGain
			}
			bestRBF := none
			for _, s := range sets {
				c := base
				c.Kernel.Type = narx.RBF
				c.Embedding.YLags = s
				st, err := try(d, c, l.widthRank(), 0)
				if err != nil {
					return structure{}, err
				}
				if st.better(bestRBF) {
					bestRBF = st
				}
			}
			// Without a linear stage the inputs' other lag sets are
			// ranked here, on the best RBF y lags.
			if !slices.Contains(kernels, narx.Linear) {
				var err error
				if bestRBF, err = rankInputs(d, bestRBF, l.widthRank()); err != nil {
					return structure{}, err
				}
			}
			// The sum of the linear and RBF kernels, on the best RBF lags:
			// a nonlinear model that still extrapolates a level or trend.
			if slices.Contains(kernels, narx.Linear) && bestRBF.fits {
				c := bestRBF.cfg
				c.Kernel.Type = narx.LinearRBF
				st, err := try(data[i], c, l.widthRank(), 0)
				if err != nil {
					return structure{}, err
				}
				if st.better(bestRBF) {
					bestRBF = st
				}
			}
			handicapped := bestRBF
			handicapped.score -= margin
			if handicapped.better(perForm[i]) {
				perForm[i] = bestRBF
			}
		}
	}
	v, ok := l.planValidation(ys)
	best, paths := l.validateForms(perForm, ys, v, ok)
	if !best.fits {
		return best, errNoStructure
	}
	cfg := best.cfg // the structure paths validated
	best, err := l.grow(best, sets, try)
	if err != nil {
		return structure{}, err
	}
	if err := l.finishChoice(&best, sets); err != nil {
		return structure{}, err
	}
	if l.cfg.Combine != CombineNone {
		if !reflect.DeepEqual(cfg, best.cfg) {
			paths = nil // validate the structure that runs
		}
		best.period = l.thetaPeriod(periods, ys)
		best.theta, best.partner = l.chooseTheta(best, paths, ys, periods, v, ok)
	}
	best.periods = periods
	return best, nil
}

// Form validation: forecasts from origins near the end, at least
// formOrigins of them and as many more as make formErrors step errors in
// all, as long as the fitting part keeps half the samples: one-step
// validation from five origins would rank forms on five errors. The
// origins are H apart, so that no two paths share a target, when the
// fitting part still keeps half the samples; else (short series) max(H/4, 1)
// apart. Paths that overlap share most of their targets, and a few runs of
// errors would rank the forms (co2 in docs/benchmarks.md, "Other series").
const (
	formOrigins = 5
	formErrors  = 100
)

// formHorizon is the horizon of the form validation on N samples: the
// forecast horizon, at most a quarter of the samples.
func (l *Learner) formHorizon(N int) int {
	return max(min(l.cfg.tuneHorizon(), N/4), 1)
}

// validation is the plan of the forecasts a re-choice validates on: from
// origins origin(o) = train + o·step, o < origins, H steps each, the
// fitting part the samples before train; mase is the mean absolute one-step
// change of the fitting part, the scale of the errors (MASE).
type validation struct {
	H, step, origins, train int
	mase                    float64
}

// planValidation returns the validation plan of the samples ys, or false
// when they are too few for one (a fitting part shorter than FirstFit) or
// their fitting part is constant (no scale).
func (l *Learner) planValidation(ys []float64) (validation, bool) {
	N := len(ys)
	H := l.formHorizon(N)
	step := max(H/4, 1)
	origins := max(formOrigins, min((formErrors+H-1)/H, (N-N/2-H)/step+1))
	if N-H-(origins-1)*H >= N/2 {
		step = H
	}
	v := validation{H: H, step: step, origins: origins, train: N - H - (origins-1)*step}
	if v.train < FirstFit {
		return v, false
	}
	for k := 1; k < v.train; k++ {
		v.mase += math.Abs(ys[k] - ys[k-1])
	}
	v.mase /= float64(v.train - 1)
	return v, v.mase > 0
}

// dense returns v's horizon planned over the N samples' second half
// (after).
func (v validation) dense(N int, periods ...int) validation { return v.after(N, N/2, periods...) }

// after returns v's horizon planned after the first train of N samples:
// the fitting part those, and an origin every step from there to the last
// that leaves a full path, at most maxDenseOrigins of them, evenly spaced
// by a step that shares no factor with the seasonal periods
// (coprimeStep).
func (v validation) after(N, train int, periods ...int) validation {
	v.train = train
	span := v.span(N)
	v.step = coprimeStep(max(1, (span+maxDenseOrigins-1)/maxDenseOrigins), periods...)
	v.origins = max((span+v.step-1)/v.step, 0)
	return v
}

// span returns how many origins of N samples leave a full path after v's
// fitting part: the origins of a plan every sample.
func (v validation) span(N int) int { return N - v.H - v.train + 1 }

// maxDenseOrigins bounds a dense plan's origins: each costs a forecast of
// the horizon.
const maxDenseOrigins = 256

// score returns the summed scaled absolute errors of the forecast paths
// (origins × H, in the series' units) against ys: crps of point forecasts.
func (v validation) score(ys, paths []float64) float64 { return v.crps(ys, paths, nil, nil) }

// validationPaths returns st's forecasts (origins × H, in the series'
// units) of the plan v: st's structure fitted on the samples before the
// first origin forecasts H steps from each (true values up to the origin,
// future inputs as observed), and their predictive standard deviations in
// the form's transformed units (z = y or ln y; a differenced form's the
// summed increments', covariances included), logs[k] telling a log form's
// step (nil: none is). A log form's forecast is the median exp(z). As in
// a published forecast (Learner.combine), a step that leaves the plausible
// of the values before its origin (ValueStats.plausible, its band the
// interval's quantiles), and every later step of its path, is the
// fallback instead: the normal of those values' mean and standard
// deviation: not the fitting part's values alone, which a growing series
// outgrows within the validation (its later paths would score as the
// marginal where a published forecast stands; docs/benchmarks.md,
// "Exponential growth"). So a form is validated on what it would
// publish: an iterated
// chaotic forecast whose linearised variance outgrows the attractor scores
// as the marginal distribution, not as its band of ±20 000 (Santa Fe,
// docs/benchmarks.md). nil when st cannot be fitted there.
func (l *Learner) validationPaths(st structure, ys []float64, v validation) (paths, sds []float64, logs []bool) {
	d, c := st.data, st.cfg
	depth := c.Embedding.Depth()
	if v.train-d.off-depth < minTargets(c.Embedding.Dim()) {
		return nil, nil, nil
	}
	l.tuneSize(&c)
	X, y := embed(c.Embedding, d.ws[:v.train-d.off], d.us[:(v.train-d.off)*l.nu], l.nu, depth)
	m, err := l.fitCandidate(c, X, y, nil)
	if err != nil {
		return nil, nil, nil
	}
	vals, floor, at := countValues(ys[:v.train], 0), l.logFloor(ys), v.train
	steps := make([]narx.Step, v.H)
	inputs := make([][]float64, v.H)
	paths = make([]float64, 0, v.origins*v.H)
	sds = make([]float64, 0, v.origins*v.H)
	if d.form.Log {
		logs = make([]bool, 0, v.origins*v.H)
	}
	for o := range v.origins {
		origin := v.train + o*v.step // first forecast sample
		wo := origin - d.off         // its index in the form's series
		for ; at < origin; at++ {
			vals.add(ys[at]) // the values a forecast from the origin has seen
		}
		h := narx.NewHistory(c.Embedding)
		for k := max(0, wo-depth-1); k < wo; k++ {
			h.Push(d.ws[k], d.us[k*l.nu:(k+1)*l.nu])
		}
		for i := range inputs {
			inputs[i] = d.us[(wo+i)*l.nu : (wo+i+1)*l.nu]
		}
		m.Forecast(steps, h, inputs)
		level := 0.0
		if d.form.Diff {
			level = d.form.transformed(ys[origin-1], floor)
		}
		fallen := false
		for _, s := range steps {
			z := d.loc + d.scale*s.Mean
			vz := s.Var
			if d.form.Diff {
				level += z
				z = level
				vz = s.CumVar
			}
			sd := d.scale * math.Sqrt(max(vz, 0))
			f, lo, hi := z, z-l.z*sd, z+l.z*sd
			if d.form.Log {
				f, lo, hi = math.Exp(min(z, 700)), math.Exp(min(lo, 700)), math.Exp(min(hi, 700))
			}
			fallen = fallen || !vals.plausible(f, lo, hi)
			if fallen {
				f, sd = vals.Mean, vals.sd()
			}
			paths = append(paths, f)
			sds = append(sds, sd)
			if logs != nil {
				logs = append(logs, !fallen)
			}
		}
	}
	return paths, sds, logs
}

// crps returns the summed continuous ranked probability scores of the
// forecast paths (origins × H, in the series' units) against ys, each
// divided by the plan's mean absolute one-step change: each step's
// predictive a normal of mean paths[k] and standard deviation sds[k], or
// where logs[k] a lognormal of median paths[k] and log-scale sds[k]
// (crpsNormal, crpsLogNormal; logs nil: none is); sds nil means point
// forecasts. The CRPS of a point forecast is its absolute error, so a form
// ranks by its accuracy and by how well its band's width and shape fit its
// errors.
func (v validation) crps(ys, paths, sds []float64, logs []bool) float64 {
	var sum float64
	for o := range v.origins {
		origin := v.train + o*v.step
		for i := range v.H {
			k := o*v.H + i
			y, f, s, logForm := ys[origin+i], paths[k], 0.0, logs != nil && logs[k]
			if sds != nil {
				s = sds[k]
			}
			c := math.Abs(y - f)
			switch {
			case !(s > 0) || math.IsInf(s, 0):
			case logForm && y > 0 && f > 0:
				c = crpsLogNormal(y, math.Log(f), s)
			case !logForm:
				c = crpsNormal(y, f, s)
			}
			if math.IsNaN(c) || math.IsInf(c, 0) {
				c = math.Abs(y - f)
			}
			sum += c / v.mase
		}
	}
	return sum
}

// crpsNormal is the CRPS of the normal N(mu, s²) at y, in closed form
// (Gneiting and Raftery 2007): s·(z(2Φ(z) − 1) + 2φ(z) − 1/√π), z = (y − mu)/s.
func crpsNormal(y, mu, s float64) float64 {
	z := (y - mu) / s
	return s * (z*(2*distuv.UnitNormal.CDF(z)-1) + 2*distuv.UnitNormal.Prob(z) - 1/math.Sqrt(math.Pi))
}

// crpsLogNormal is the CRPS at y > 0 of the lognormal whose logarithm is
// N(mu, s²), in closed form (Baran and Lerch 2015): y(2Φ(w) − 1) −
// 2e^{mu+s²/2}(Φ(w − s) + Φ(s/√2) − 1), w = (ln y − mu)/s.
func crpsLogNormal(y, mu, s float64) float64 {
	w := (math.Log(y) - mu) / s
	Phi := distuv.UnitNormal.CDF
	return y*(2*Phi(w)-1) - 2*math.Exp(mu+s*s/2)*(Phi(w-s)+Phi(s/math.Sqrt2)-1)
}

// validateForms picks among the best structure of each form. The evidence
// compares forms on one-step likelihood, which does not say how a
// differenced or a level model extrapolates; so with two forms or more,
// each form's structure forecasts the validation's paths (validationPaths,
// planValidation: formHorizon steps from origins near the end, at least
// formOrigins of them and as many more as make formErrors step errors in
// all, as long as the fitting part keeps half the samples: one-step
// validation from five origins would rank forms on five errors), scored
// in the series' own units by the CRPS of each step's predictive (crps:
// the absolute error of a point forecast, so the forms' bands count
// beside their accuracy) scaled by the mean absolute one-step change of
// the fitting samples (as MASE); the smallest total wins. With too few
// samples for it, the evidence decides; so it does when the evidence's
// winner cannot be fitted on the validation's fitting part (its lags too
// deep for it, or its fit failing there): the forms that can would
// otherwise win by default, a random walk's differences over a sine's
// thirty lags whose evidence was 22 nats ahead (docs/benchmarks.md,
// "Forms too deep to validate"). It returns the winner and, when it was
// validated, its paths.
func (l *Learner) validateForms(perForm []structure, ys []float64, v validation, ok bool) (structure, []float64) {
	best := structure{score: math.Inf(-1), atBound: true}
	var cands []structure
	lead := -1 // the evidence's winner among cands
	for _, st := range perForm {
		if st.better(best) {
			best, lead = st, -1
			if !math.IsInf(st.score, -1) {
				lead = len(cands)
			}
		}
		if !math.IsInf(st.score, -1) {
			cands = append(cands, st)
		}
	}
	if len(cands) < 2 || !ok {
		return best, nil
	}
	// The evidence's winner first: without paths, the others need none.
	var leadPaths, leadSds []float64
	var leadLogs []bool
	if lead >= 0 {
		if leadPaths, leadSds, leadLogs = l.validationPaths(cands[lead], ys, v); leadPaths == nil {
			return best, nil
		}
	}
	bestErr, bestPaths := math.Inf(1), []float64(nil)
	for i, st := range cands {
		paths, sds, logs := leadPaths, leadSds, leadLogs
		if i != lead {
			paths, sds, logs = l.validationPaths(st, ys, v)
		}
		if paths == nil {
			continue
		}
		if e := v.crps(ys, paths, sds, logs); e < bestErr {
			bestErr, best, bestPaths = e, st, paths
		}
	}
	return best, bestPaths
}

// chooseTheta decides whether the forecasts of the structure best (after
// finishChoice), whose validation paths are paths (nil: not computed yet),
// are averaged with a theta forecaster's (Config.Combine), and with which:
// the theta method of period best.period (profile 0), drifting by half its
// line's slope as thetaf or, when that validates better by slopeMargin, by
// the whole slope (weight, theta.Model.SetWeight); or, when the re-choice
// proposes two seasonal periods, the one adjusted by a moving profile of
// the longer and the shorter (profile and sub, theta.FitProfile; half the
// slope) if its average validates better; or Holt's damped local trend
// on the same seasonal adjustment when its average validates better than
// the theta method's by dampedMargin; or, where best.period is a season
// of the calendar (calendarSeason), Holt–Winters' method (theta.FitHW: a
// damped trend and a season smoothed at every value) when its average
// validates better than the partner chosen so far. Each is fitted on the
// fitting part, then updated (theta.Model.Update) up to each origin. An
// autoregression about the adjusted mean (theta.FitAR) then replaces the
// chosen partner where its average errs less on a dense plan (arMargin,
// below); a smoothing partner that will be averaged has its band's growth
// measured where the values allow (partnerGrowth, growthPaths). With
// CombineAuto the average is
// used unless the structure's validation error alone is below
// 1 − thetaMargin times the average's; too few samples for a validation,
// or a structure that cannot be validated, combine with the theta method.
// With more than one seasonal period proposed (periods) the margin is 0:
// the theta method removes one season and forecasts the others as noise,
// so the average must validate better to be used. With CombineTheta the
// forecasts are always averaged, the partner still chosen by validation
// (it costs the validation paths at every re-choice, as CombineAuto).
func (l *Learner) chooseTheta(best structure, paths, ys []float64, periods []int, v validation, ok bool) (combine bool, p partner) {
	p.weight = theta.DefaultWeight
	if l.cfg.Combine == CombineNone {
		return false, p
	}
	forced := l.cfg.Combine == CombineTheta
	if !ok {
		return true, p
	}
	if paths == nil {
		if paths, _, _ = l.validationPaths(best, ys, v); paths == nil {
			return true, p
		}
	}
	avg, found := math.Inf(1), false
	if th := fitPartner(ys[:v.train], p, best); th != nil {
		avg, found = partnerScore(th.Clone(), paths, ys, v), true
		th.SetWeight(1)
		if e := partnerScore(th, paths, ys, v); e < (1-slopeMargin)*avg {
			avg, p.weight = e, 1
		}
	}
	if th := fitPartner(ys[:v.train], partner{damped: true}, best); th != nil {
		if e := partnerScore(th, paths, ys, v); e < (1-dampedMargin)*avg {
			avg, found, p = e, true, partner{damped: true}
		}
	}
	if best.period > 1 && l.calendarSeason(best.period) {
		if th := fitPartner(ys[:v.train], partner{hw: true}, best); th != nil {
			if e := partnerScore(th, paths, ys, v); e < avg {
				avg, found, p = e, true, partner{hw: true}
			}
		}
	}
	if pp, ps := profilePeriods(periods); pp > 0 && v.train >= 2*pp {
		pr := partner{profile: pp, sub: ps, weight: theta.DefaultWeight}
		if th := fitPartner(ys[:v.train], pr, best); th != nil {
			if e := partnerScore(th, paths, ys, v); e < avg {
				avg, found, p = e, true, pr
			}
		}
	}
	if dv := v.dense(len(ys), best.period, p.profile, p.sub); dv.span(len(ys)) >= max(arPaths*v.H, formErrors) && dv.train >= 2*p.profile {
		ar := partner{profile: p.profile, sub: p.sub, ar: true} // on the same adjustment (Holt–Winters': the classical indices)
		cur, th := fitPartner(ys[:dv.train], p, best), fitPartner(ys[:dv.train], ar, best)
		if cur != nil && th != nil {
			if dpaths, _, _ := l.validationPaths(best, ys, dv); dpaths != nil &&
				partnerScore(th, dpaths, ys, dv) < (1-arMargin)*partnerScore(cur, dpaths, ys, dv) {
				if th = fitPartner(ys[:v.train], ar, best); th != nil {
					avg, found, p = partnerScore(th, paths, ys, v), true, ar
				}
			}
		}
	}
	if !found {
		return forced, p
	}
	combine = forced || combines(v.score(ys, paths), avg, len(periods))
	if !combine || p.ar || p.damped || p.hw || v.H < 2 {
		return combine, p
	}
	gv := v.after(len(ys), max(len(ys)/2, 2*p.profile), best.period, p.profile, p.sub)
	if gv.span(len(ys)) >= max(growthPaths*v.H, formErrors) {
		if th := fitPartner(ys[:gv.train], p, best); th != nil {
			p.growth, p.measured = partnerGrowth(th, ys, gv)
		}
	}
	return combine, p
}

// calendarSeason reports whether the period s is one of the calendar's:
// a common period (commonPeriods), the time step's or the configured
// season (Config.knownPeriods). Holt–Winters' partner smooths a season
// that repeats at its period; a cycle the increments' test found at
// another lag (lynx's 10 years, the sunspots' 11) is not one whose shape
// repeats at that lag, and its smoothed "season" forecast the yearly lynx
// 35 % worse (docs/benchmarks.md, "Holt–Winters' partner").
func (l *Learner) calendarSeason(s int) bool {
	return slices.Contains(commonPeriods, s) || slices.Contains(l.cfg.knownPeriods(l.fitT, l.timed), s)
}

// growthPaths is how many horizons the plan of a partner's growth
// (partnerGrowth) must span: origins a step apart share most of their
// targets, and on a random walk a growth measured on about two paths' worth
// often fell to half its value (docs/benchmarks.md, "A measured growth").
const growthPaths = 4

// coprimeStep returns the least step ≥ step that shares no factor with any
// of the periods (those below 2 ignored): origins spaced by a multiple of a
// season's divisor visit a few of its phases only, and the one-step error
// of those phases would stand for the series'.
func coprimeStep(step int, periods ...int) int {
	for ; ; step++ {
		ok := true
		for _, p := range periods {
			if p >= 2 && gcd(step, p) != 1 {
				ok = false
			}
		}
		if ok {
			return step
		}
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// partner is the theta forecaster a re-choice chooses (chooseTheta): the
// theta method drifting by weight of its line's slope, or, when profile >
// 0, adjusted by a moving seasonal profile of that period and the shorter
// period sub, or, when damped, Holt's damped local trend
// (theta.FitDamped), or, when ar, an autoregression about the adjusted
// values' mean instead of the smoothing (theta.FitAR, FitProfileAR).
type partner struct {
	profile, sub int
	weight       float64
	damped, ar   bool
	hw           bool // Holt–Winters (theta.FitHW)
	// growth, when measured, is the smoothing's band growth per step
	// (theta.Model.SetGrowth, partnerGrowth).
	growth   float64
	measured bool
}

// An autoregression (theta.FitAR) replaces the partner the validation
// chose when the average with it errs less than with that partner by
// arMargin over a dense plan (validation.dense: fitted on the first half,
// an origin at every sample of the second) of at least arPaths horizons
// and formErrors origins, so about arPaths independent paths and as many
// errors as the validation scores. An autoregression returns to its mean
// and a smoothed level stays where it is; which is right for a series is a
// question of its long run, and the validation's few paths near the end
// answer it by chance: judged on them, or on fewer paths' worth, the
// choice cost NN3's short monthly series accuracy, and no NN3 series holds
// such a plan (docs/benchmarks.md, "An autoregressive partner"). The
// margin keeps out series whose average gains less than the plan's noise.
const (
	arMargin = 0.1
	arPaths  = 8
)

// dampedMargin is how much better the average with a damped local trend
// (Holt's damped method, theta.FitDamped) must validate than with the
// theta method for it to be the partner. The theta line's drift is the
// slope of all the values; a damped trend follows the recent slope and
// flattens it over the horizon, as ets's damped forms do, where a series'
// trend bends (R's WWWusage, JohnsonJohnson: docs/benchmarks.md, "More of
// R's data sets"). On the NN3 training split the damped partner chosen at
// margins 0 and 0.1 cost 0.10 and 0.03 of sMAPE; from 0.15 on the split is
// unchanged.
const dampedMargin = 0.2

// slopeMargin is how much better the average with a theta partner drifting
// by its line's whole slope must validate than with thetaf's half of it
// for the whole slope to be used. thetaf's half slope damps a trend that
// may not last; on a series as smooth as a population count it lags the
// trend by half, and the average with it loses to the model alone (R's
// austres: 86.8 against 43.8 for the model alone, docs/benchmarks.md,
// "More of R's data sets"). Five or more paths near the end of a short
// series are a noisy judge of a trend's persistence: at margins up to 0.2
// the whole slope was chosen on NN3 training columns whose trend then
// turned, and their split lost 0.04–0.09 of sMAPE; from 0.3 on it is
// unchanged.
const slopeMargin = 0.3

// profileCycles returns how many long cycles a moving seasonal profile
// with shorter period sub (0: none) averages (theta.FitProfile's k): its
// noise falls as 1/k while it lags a drifting season by about k/2 cycles.
// Alone, the profile is the whole season, and four cycles (a month of a
// weekly season, two weeks behind it; four years of a yearly one) follow
// it. Under a shorter period it is only the long cycle's deviation from
// the last long cycle's short-period shape (the weekday's from the last
// seven days'), a small and steady part that the shape already keeps
// current: twelve cycles (a quarter of weekly ones) average its noise down
// three times as far. On the EUNITE loads of 1997, the training year, the
// partner's day-ahead MAE from 22 midnights with k = 2, 4, 8, 12, 16 was
// 23.4, 21.4, 20.9, 20.2, 20.3 half-hourly and 21.8, 19.2, 18.7, 18.2, 18.5
// hourly (docs/benchmarks.md, "Half-hourly load").
func profileCycles(sub int) int {
	if sub > 0 {
		return twoLevelCycles
	}
	return oneLevelCycles
}

const (
	oneLevelCycles = 4
	twoLevelCycles = 12
)

// profilePeriods returns the periods of the moving profile the combination
// may use: the longer of two proposed periods, and the shorter when it
// divides the longer (a day in a week: the profile is then the last week's
// days at the phase plus the weekday's deviation, theta.FitProfile), else
// 0 (daily values' 7 and 365: the profile is the mean of the last years'
// values on the same day of the year); 0, 0 with fewer than two.
func profilePeriods(periods []int) (long, short int) {
	if len(periods) < 2 {
		return 0, 0
	}
	long, short = slices.Max(periods), slices.Min(periods)
	if long%short != 0 {
		short = 0
	}
	return long, short
}

// fitPartner returns partner p fitted to ys with the seasonal period of
// the structure st (the profile's periods are p's own; an autoregression
// is of the values adjusted by the profile when p has one, else by the
// period's indices), or nil when it cannot be (too few values, no
// autoregression to fit). The period's indices are estimated without
// thetaf's test when st's own lags hold it (knownSeason).
func fitPartner(ys []float64, p partner, st structure) *theta.Model {
	var th *theta.Model
	var err error
	period, known := st.period, st.knownSeason()
	switch {
	case p.profile > 0 && p.ar:
		th, err = theta.FitProfileAR(ys, p.profile, p.sub, profileCycles(p.sub))
	case p.profile > 0:
		th, err = theta.FitProfile(ys, p.profile, p.sub, profileCycles(p.sub))
	case p.hw:
		th, err = theta.FitHW(ys, period)
	case p.damped:
		th, err = theta.FitDamped(ys, period, known)
	case p.ar:
		th, err = theta.FitAR(ys, period, known)
	default:
		if th, err = theta.Fit(ys, period, known); err == nil {
			th.SetWeight(p.weight)
		}
	}
	if err != nil {
		return nil
	}
	return th
}

// partnerGrowth returns the growth per step of the h-step error variance
// of th, fitted on the samples before the plan's first origin and updated
// to each (theta.Model.SetGrowth): with MSE_h the mean squared error of
// step h over the plan's origins, the least-squares g of
// MSE_h/MSE_1 = 1 + (h−1)·g through step 1, within [0, theta.MaxGrowth];
// false when the plan has fewer than two steps or its one-step errors
// vanish. th is consumed. O(origins·H) plus the updates.
//
// The smoothing's own band, σ√(1 + (h−1)α²), is the local-level model's:
// a series that returns towards its level or season errs less at long
// horizons, and the average's band, the mean of the two forecasters'
// bands, was wider than the errors called for (a series about its day and
// week, docs/benchmarks.md, "A measured growth") until the calibration
// over the horizon had scored enough shadows to narrow it. The
// errors are out of sample, the partner fitted on the first part only: on
// the values it was fitted on, the fitted α and drift make them smaller
// than a forecast's, most of all on a trend.
func partnerGrowth(th *theta.Model, ys []float64, v validation) (float64, bool) {
	sum := make([]float64, v.H)
	for k, m := range partnerPaths(th, ys, v) {
		o, i := k/v.H, k%v.H
		e := ys[v.train+o*v.step+i] - m
		sum[i] += e * e
	}
	if !(sum[0] > 0) || math.IsInf(sum[0], 1) || v.H < 2 {
		return 0, false // no scale, or one that overflowed (Inf/Inf)
	}
	var num, den float64
	for h := 1; h < v.H; h++ {
		k := float64(h)
		num += k * (sum[h]/sum[0] - 1)
		den += k * k
	}
	g := num / den
	if math.IsNaN(g) {
		return 0, false
	}
	return min(max(g, 0), theta.MaxGrowth), true
}

// partnerPaths returns the forecasts of th (origins × H, as validation
// paths) of the plan v, th fitted on the samples before the first origin
// and updated to each; th is consumed.
func partnerPaths(th *theta.Model, ys []float64, v validation) []float64 {
	paths := make([]float64, v.origins*v.H)
	at := v.train
	for o := range v.origins {
		for ; at < v.train+o*v.step; at++ {
			th.Update(ys[at])
		}
		th.Forecast(paths[o*v.H:(o+1)*v.H], nil)
	}
	return paths
}

// partnerScore returns the validation error (validation.score) of the
// average of the paths and the forecasts of th, fitted on the samples
// before the first origin and updated to each; th is consumed.
func partnerScore(th *theta.Model, paths, ys []float64, v validation) float64 {
	avg := partnerPaths(th, ys, v)
	for k, m := range avg {
		avg[k] = (paths[k] + m) / 2
	}
	return v.score(ys, avg)
}

// combines is chooseTheta's rule on the validation errors of the model
// alone and of the average, with nPeriods seasonal periods proposed.
func combines(alone, avg float64, nPeriods int) bool {
	margin := thetaMargin
	if nPeriods > 1 {
		margin = 0
	}
	return alone >= (1-margin)*avg
}

// thetaMargin is how much better than the average of the two the model's
// validated forecasts must be for it to forecast alone. An average of two
// forecasters whose errors differ seldom loses much to the better one,
// while a choice on a hundred step errors is noisy; the margin was chosen
// on the NN3 training columns' last 18 values, against always averaging
// and choosing the better (docs/benchmarks.md, "NN3"). Chaotic series,
// which the model forecasts many times better than the theta method,
// still refuse it: the Santa Fe laser and Mackey–Glass do.
const thetaMargin = 0.2

// thetaPeriod is the seasonal period of the theta forecaster (its
// decomposition multiplicative when every value is positive, else
// additive: theta.Fit), unless the configuration rules a season out
// (Season < 0; 1, none): the main
// one the re-choice proposes (periods), as thetaf is given the frequency
// of its series; when none is proposed, the first of commonPeriods that
// passes thetaf's own seasonality test on the values (theta.Seasonal)
// and whose autocorrelation is a peak there (acfPeak). The test alone, on
// levels and two-sided, passes on persistent series without a season at
// any lag (a random walk's autocorrelation declines slowly through every
// common period) and on a strong anti-correlation (a sine of period 21 at
// lag 12); a season's autocorrelation peaks at its period. The increments'
// test of the lags (detectPeriods) misses seasons the levels' finds on
// short series, so the levels' test stays, at thetaf's level: a stricter
// one over the periods tried loses real seasons (docs/benchmarks.md,
// "NN3", "The theta partner's period").
func (l *Learner) thetaPeriod(periods []int, ys []float64) int {
	if l.cfg.Season < 0 {
		return 1
	}
	if len(periods) > 0 {
		return periods[0]
	}
	for _, s := range commonPeriods {
		if len(ys) > 2*s && theta.Seasonal(ys, s) && acfPeak(ys, s) {
			return s
		}
	}
	return 1
}

// acfPeak reports whether the autocorrelation of ys at lag s is a local
// peak: at least that at s − 1 and s + 1. A trend or a random walk
// correlates at every lag, decreasingly, and passes thetaf's test at any s.
func acfPeak(ys []float64, s int) bool {
	r := theta.ACF(ys, s+1)
	return r[s-1] >= r[s-2] && r[s-1] >= r[s]
}

// finishChoice completes the winner: with TuneIterated or TuneRobustCV the
// lags and width are ranked by that criterion within its form and kernel
// when the samples allow it (else the evidence's choice stands), else an
// inferred width is searched again on all the winner's targets (the
// ranking used the targets common to every candidate, which the deepest
// lags cut short) with the model's own working-set size, not the ranking's
// (Config.TuneSize): the evidence of a smaller working set prefers wider
// kernels, and the width must suit the model that runs.
func (l *Learner) finishChoice(best *structure, sets [][]int) error {
	d := best.data
	if l.cfg.Tuning != TuneEvidence && l.tuningFits(len(d.ws)) {
		cfg := best.cfg
		err := l.chooseStructureTuned(&cfg, sets, d.ws, d.us, &best.cfg)
		if !errors.Is(err, errTuningSamples) {
			return err
		}
	}
	if !best.searched {
		return nil
	}
	c := best.cfg
	X, y := embed(c.Embedding, d.ws, d.us, l.nu, c.Embedding.Depth())
	res, err := l.searchSigma2(c, X, y)
	if err != nil {
		return err
	}
	best.cfg.Kernel.Sigma2 = res.Best.Sigma2
	return nil
}

// tuningFits reports whether the configured Tuning can rank structures on
// n samples (TuneIterated needs three horizons; TuneRobustCV a few folds).
func (l *Learner) tuningFits(n int) bool {
	if l.cfg.Tuning == TuneIterated {
		return n >= 3*l.cfg.tuneHorizon()
	}
	return n >= 4*cvFolds
}

// chooseStructureTuned runs the configured Tuning over the lag sets with
// cfg's kernel, writing the result to dst.
func (l *Learner) chooseStructureTuned(cfg *narx.Config, sets [][]int, ys, us []float64, dst *narx.Config) error {
	var err error
	switch l.cfg.Tuning {
	case TuneIterated:
		err = l.chooseByIteratedValidation(cfg, sets, ys, us)
	default:
		err = l.chooseByRobustCV(cfg, sets, ys, us)
	}
	if err == nil {
		*dst = *cfg
	}
	return err
}

// logFloor is the floor of y under a Log form: half the smallest value, so
// that a later value at or below zero maps to a finite, very low level.
func (l *Learner) logFloor(ys []float64) float64 {
	lo := math.Inf(1)
	for _, y := range ys {
		if y > 0 {
			lo = min(lo, y)
		}
	}
	if math.IsInf(lo, 1) {
		return 1
	}
	return halfFloor(lo)
}

// halfFloor is half of y > 0, and never 0: half the smallest subnormal
// rounds to 0, whose ln is −∞.
func halfFloor(y float64) float64 { return max(y/2, math.SmallestNonzeroFloat64) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rankHow says how a ranking treats a candidate's RBF width: fixed (the
// configured σ²), searched (searchSigma2), or probed at its current width
// and the two octaves below it (probeWidths: grow's test of a doubling).
type rankHow int

const (
	rankFit rankHow = iota
	rankSearch
	rankProbe
)

// widthRank is how the re-choice ranks an RBF width: searched when it is
// inferred (AutoSigma2), else fixed.
func (l *Learner) widthRank() rankHow {
	if l.cfg.AutoSigma2 {
		return rankSearch
	}
	return rankFit
}

// searchWidth is the level-3 width search (searchSigma2) for c's lags on
// (X, y), or with probe only c's width and the two octaves below it
// (probeWidths): the best width and its log evidence, and whether that
// width's γ ended at a bound.
func (l *Learner) searchWidth(c narx.Config, X, y []float64, probe bool) (sigma2, logEv float64, bound bool, err error) {
	var res narx.WidthSearch
	if probe {
		res, err = l.probeWidths(c, X, y)
	} else {
		res, err = l.searchSigma2(c, X, y)
	}
	if err != nil {
		return 0, 0, false, err
	}
	return res.Best.Sigma2, res.Best.LogEvidence, c.AutoGamma && narx.GammaAtBound(res.Best.Gamma), nil
}
