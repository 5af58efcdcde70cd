package online

import (
	"math"
	"slices"

	"github.com/streamd/streamd/internal/recursive"
)

// horizonCal calibrates the bands of forecast steps h ≥ 2 on the series'
// own realised errors (docs/design.md, "Calibration over the horizon").
//
// The bands before it are formulas: the model's propagated variance, the
// theta method's σ√(1 + (h−1)α²) (unless its growth was measured,
// partnerGrowth), and, combined, the average of the two
// bands' quantiles. Each is right under its own assumptions only (on the
// half-hourly load the model's band is too narrow a day ahead, the theta
// method's far too wide). So every spacing() learned samples the Learner
// forecasts H steps from its current state as it would publish them (the
// record's planned rows, the calendar computed, the other inputs held: a
// shadow, never published), and as the steps' values arrive scores each by
// r = |y − mean| / (its band's half-width on y's side, in the units apply
// scales it in). The Level-quantile of the recent r's is the
// factor that would have given those bands the nominal coverage; the
// published half-widths are multiplied by it, shrunk towards 1 while the
// r's are few.
//
// Steps are pooled in bins of h − 1 ∈ [2^b, 2^(b+1)) (b = 0, 1, …), whose
// factors are interpolated in log h: the errors of nearby steps are alike,
// and a bin takes up to calPerBin scores from each shadow where one step
// would take one. Step 1 is left as it is: it is
// Observe's one-step prediction, which the model's own calibration (κ,
// narx) and the theta method's one-step σ already fit.
//
// The same shadows weigh the combination with the theta method (weigh):
// with both forecasters' point forecasts kept, every averaged step scores
// each candidate weight's absolute error, and from weighMin shadows on the
// model's weight from step 2 on is the candidate of the smallest.
//
// Cost: a shadow every H to 2H learned samples, O(H·M·n) (the cost of a
// published forecast), so about one prediction per sample; O(1) per sample
// to score; a sort of at most calWindow·calPerBin scores per bin when a
// shadow completes. State: 7H numbers and at most calWindow·calPerBin per
// bin (log₂H + 1 bins, the first ones of fewer steps hold fewer),
// allocated once.
type horizonCal struct {
	H     int     // the steps calibrated: 2..H; 0 (or 1) for none
	level float64 // the bands' level (Config.Level)
	// logS is each bin's log factor, applied from the completion of the
	// shadow that set it.
	logS []float64
	// r holds each bin's last scores, bin b's a ring at r[off[b]:off[b+1]]
	// of calWindow shadows' (binSteps); n counts those filled, pos the
	// next slot; seen counts the bin's scores since the reset, those the
	// ring has dropped too (the prior's worth is weighed against them).
	// off and centre (each bin's mean log₂(h−1) over the steps it scores,
	// where its factor is its own) are functions of H, not part of the
	// state, and never change.
	r                 []float64
	n, pos, off, seen []int
	centre            []float64
	// shadow is the live shadow's steps, step h's shadowStride numbers
	// from shadowStride·(h−1): its mean, lo, hi and kind (shadowLinear,
	// shadowLog, shadowNone), then the model's and the theta method's
	// point forecasts and whether they were averaged (1, else 0).
	shadow []float64
	live   bool
	origin int64
	// due is the learned count at which the next shadow is issued; issued
	// counts the shadows, and sets their spacing.
	due, issued int64
	// sorted is scratch for the quantiles.
	sorted []float64
	// The combination's weight (Learner.blend): weight is the model's in
	// the average from step 2 on, one of combWeights; wSum and wN the live
	// shadow's absolute errors by candidate weight and their count, wErr
	// their per-step means discounted over shadows, wShadows the shadows
	// that scored any.
	weight     float64
	wSum, wErr []float64
	wN         int
	wShadows   int64
}

// combWeights are the model's weights the combination chooses from, in
// the order ties are broken: the equal weights first, then nearest them.
var combWeights = [...]float64{0.5, 0.375, 0.625, 0.25, 0.75, 0.125, 0.875, 0, 1}

// weighMin is how many shadows the weights' errors need before the
// combination leaves the equal weights; before, forecasts of series seen
// for a few horizons would follow a handful of paths.
const weighMin = 16

// shadowStride is the numbers a shadow keeps per step.
const shadowStride = 7

const (
	// calWindow is how many shadows each bin keeps the scores of: three
	// months of day-ahead forecasts of half-hourly values, short enough to
	// follow a season's change of noise. A shadow's
	// scores are correlated, so a bin's quantile rests on about calWindow
	// independent values, and a noisy factor costs coverage where the
	// formulas' bands were right (docs/benchmarks.md, "Calibration over
	// the horizon": half as long a window cost Mackey–Glass more).
	calWindow = 64
	// calPerBin is the most scores a bin takes from one shadow, evenly
	// spaced over its steps: the scores of neighbouring steps of one
	// forecast are strongly correlated, and more of them add little.
	calPerBin = 4
	// calPrior is the scores' worth of the prior factor 1 (the formulas'
	// band), a quarter of a full window of four steps: log s =
	// m/(m + calPrior)·log q̂, m the scores seen since the reset. It holds a
	// young bin's factor near 1 while its quantile rests on a few shadows;
	// weighed against the window's w scores alone it would hold a settled
	// series' factor calPrior/(w + calPrior) of the way back to 1 for ever
	// (a fifth for bins of four steps, half for the first), a band the
	// formulas make too wide staying too wide (docs/benchmarks.md,
	// "Calibration over the horizon").
	calPrior = 64
	// calMaxLog bounds |log s|: a band at most 5 times narrower or wider
	// than its formula's. A series whose errors vanish (a constant) would
	// otherwise narrow its band to nothing.
	calMaxLog = 1.6094379124341003 // ln 5
	// calMaxR caps a score: a band of zero width, missed, scores this.
	calMaxR = 1e3
)

// The kinds of a shadow's step: how it is scored, as apply scales it.
const (
	shadowLinear = 0 // in y
	shadowLog    = 1 // in ln y (inLogs)
	shadowNone   = 2 // not scored: the step was not finite
)

// newHorizonCal returns the calibration of steps 2..H (none for H < 2) of
// bands at level.
func newHorizonCal(H int, level float64) horizonCal {
	if H < 2 {
		return horizonCal{H: H, level: level, weight: 0.5}
	}
	nb := calBin(H) + 1
	c := horizonCal{H: H, level: level, logS: make([]float64, nb), n: make([]int, nb), seen: make([]int, nb), pos: make([]int, nb),
		off: make([]int, nb+1), centre: make([]float64, nb), shadow: make([]float64, shadowStride*H),
		sorted: make([]float64, calWindow*calPerBin),
		weight: 0.5, wSum: make([]float64, len(combWeights)), wErr: make([]float64, len(combWeights))}
	for b := range nb {
		stride, k := c.binSteps(b)
		c.off[b+1] = c.off[b] + calWindow*k
		for j := range k {
			c.centre[b] += math.Log2(float64(1<<b+j*stride)) / float64(k)
		}
	}
	c.r = make([]float64, c.off[nb])
	return c
}

// binSteps returns the stride of the steps bin b scores and how many it
// scores from a shadow: of its size steps (h − 1 from 2^b to
// min(2^(b+1), H) − 1), one every ⌈size/calPerBin⌉, at most calPerBin.
func (c *horizonCal) binSteps(b int) (stride, k int) {
	first := 1 << b
	size := min(first<<1, c.H) - first
	stride = (size + calPerBin - 1) / calPerBin
	return stride, (size + stride - 1) / stride
}

// calBin returns the bin of step h ≥ 2: ⌊log₂(h−1)⌋.
func calBin(h int) int {
	b := 0
	for k := h - 1; k > 1; k >>= 1 {
		b++
	}
	return b
}

// on reports whether any steps are calibrated.
func (c *horizonCal) on() bool { return c.H >= 2 }

// floats counts the numbers c holds (Learner.SizeBytes).
func (c *horizonCal) floats() int {
	return len(c.logS) + len(c.r) + len(c.n) + len(c.seen) + len(c.pos) + len(c.off) + len(c.centre) + len(c.shadow) + len(c.sorted) + len(c.wSum) + len(c.wErr) + 8
}

// reset forgets the scores and factors, and any live shadow: after a
// re-choice the structure whose errors they measured is gone. The next
// shadow is issued at once.
func (c *horizonCal) reset(learned int64) {
	if !c.on() {
		return
	}
	clear(c.logS)
	clear(c.n)
	clear(c.seen)
	clear(c.pos)
	clear(c.wSum)
	clear(c.wErr)
	c.weight, c.wN, c.wShadows = 0.5, 0, 0
	c.live, c.due = false, learned
}

// sampled reports whether step h (2 ≤ h ≤ H) is scored: up to calPerBin
// steps evenly spaced over its bin.
func (c *horizonCal) sampled(h int) bool {
	b := calBin(h)
	stride, _ := c.binSteps(b)
	return (h-1-1<<b)%stride == 0
}

// score scores step h of the live shadow against y (when ok: an outlier is
// not scored), and completes the shadow at h ≥ H. Steps before 2, beyond
// H, not sampled or not finite are not scored.
func (c *horizonCal) score(h int, y float64, ok bool) {
	st := c.shadow[shadowStride*min(max(h-1, 0), c.H-1):]
	if ok && h >= 2 && h <= c.H && st[6] == 1 {
		m, th := st[4], st[5]
		for j, w := range combWeights {
			c.wSum[j] += math.Abs(y - (w*m + (1-w)*th))
		}
		c.wN++
	}
	if ok && h >= 2 && h <= c.H && c.sampled(h) {
		if r, scored := c.ratio(st, y); scored {
			b := calBin(h)
			w := c.off[b+1] - c.off[b]
			c.r[c.off[b]+c.pos[b]] = r
			c.pos[b] = (c.pos[b] + 1) % w
			c.n[b] = min(c.n[b]+1, w)
			c.seen[b]++
		}
	}
	if h >= c.H {
		c.live = false
		c.update()
		c.weigh()
	}
}

// weigh adds the completed shadow's errors by candidate weight to their
// discounted means (the discount 1/calWindow a shadow, the calibration's
// window) and chooses the weight of the smallest, from weighMin shadows
// on; ties go to the weight listed first in combWeights.
func (c *horizonCal) weigh() {
	if c.wN > 0 {
		for j := range c.wErr {
			c.wErr[j] = (1-1.0/calWindow)*c.wErr[j] + c.wSum[j]/float64(c.wN)
		}
		c.wShadows++
	}
	clear(c.wSum)
	c.wN = 0
	if c.wShadows < weighMin {
		return
	}
	best := 0
	for j := range c.wErr {
		if c.wErr[j] < c.wErr[best] {
			best = j
		}
	}
	c.weight = combWeights[best]
}

// ratio returns the score of y against a shadow's step (mean, lo, hi,
// kind): |y − mean| over the band's half-width on y's side, in the units
// apply scales the band in (in logs for shadowLog, where a value that is
// not positive misses by calMaxR), at most calMaxR; false for shadowNone.
func (c *horizonCal) ratio(st []float64, y float64) (float64, bool) {
	mean, lo, hi := st[0], st[1], st[2]
	switch st[3] {
	case shadowNone:
		return 0, false
	case shadowLog:
		if !(y > 0) {
			return calMaxR, true
		}
		mean, lo, hi, y = math.Log(mean), math.Log(lo), math.Log(hi), math.Log(y)
	}
	var r float64
	switch {
	case y > mean && hi > mean:
		r = (y - mean) / (hi - mean)
	case y < mean && lo < mean:
		r = (mean - y) / (mean - lo)
	case y != mean:
		r = calMaxR
	}
	return min(r, calMaxR), true
}

// update sets each bin's factor from its scores: the level-quantile q̂ of
// its n scores, log s = m/(m + calPrior)·log q̂ with m the scores seen
// since the reset (m = n until the ring is full), bounded by calMaxLog. q̂ is
// the ⌈level·(n+1)⌉-th smallest (the n-th when that exceeds n), as split
// conformal prediction takes it: a next score exchangeable with the n falls
// at or below it with probability ≥ level.
func (c *horizonCal) update() {
	for b := range c.logS {
		n := c.n[b]
		if n == 0 {
			continue
		}
		s := c.sorted[:n]
		copy(s, c.r[c.off[b]:c.off[b]+n])
		slices.Sort(s)
		k := min(max(int(math.Ceil(c.level*float64(n+1)))-1, 0), n-1)
		lq := -calMaxLog // a quantile of 0: the narrowest band, shrunk like any other
		if q := s[k]; q > 0 {
			lq = math.Log(q)
		}
		m := float64(c.seen[b])
		c.logS[b] = max(min(lq*m/(m+calPrior), calMaxLog), -calMaxLog)
	}
}

// factor returns the factor of step h ≥ 2: the bins' log factors
// interpolated linearly in log₂(h−1) between the bins' centres, constant
// before the first centre and from the last on (so every step from H on
// takes the last bin's).
func (c *horizonCal) factor(h int) float64 {
	x := math.Log2(float64(h - 1))
	last := len(c.logS) - 1
	if x <= c.centre[0] {
		return math.Exp(c.logS[0])
	}
	for b := range last {
		if x < c.centre[b+1] {
			f := (x - c.centre[b]) / (c.centre[b+1] - c.centre[b])
			return math.Exp((1-f)*c.logS[b] + f*c.logS[b+1])
		}
	}
	return math.Exp(c.logS[last])
}

// inLogs reports whether step st's band is scaled, and scored, in logs:
// with the Log form (logForm), a positive band that is not a fallback's
// (a fallback's is a normal's, mean ∓ z·std, and stays one).
func inLogs(st ForecastStep, logForm bool) bool {
	return logForm && !st.Fallback && st.Lo > 0 && st.Mean > 0
}

// apply scales the half-widths of steps 2.. of dst (step h at dst[h−1])
// about their point forecasts by the factors, and their stds with them.
// A band inLogs is scaled in logs: lo and hi move as mean·(lo/mean)^s and
// mean·(hi/mean)^s, so a widened band stays positive as the series is.
func (c *horizonCal) apply(dst []ForecastStep, logForm bool) {
	if !c.on() {
		return
	}
	for i := 1; i < len(dst); i++ {
		s := c.factor(i + 1)
		if s == 1 {
			continue
		}
		st := &dst[i]
		if inLogs(*st, logForm) {
			st.Lo = st.Mean * math.Pow(st.Lo/st.Mean, s)
			st.Hi = st.Mean * math.Pow(st.Hi/st.Mean, s)
		} else {
			// A log form's band whose lower bound is 0 (the theta
			// partner's censored at zero, its weight all or a fallback to
			// it: partnerBand) keeps it.
			censored := logForm && st.Lo == 0
			st.Lo = st.Mean - s*(st.Mean-st.Lo)
			st.Hi = st.Mean + s*(st.Hi-st.Mean)
			if censored {
				st.Lo = 0
			}
		}
		st.Std *= s
	}
}

// calState is a horizonCal's state in a snapshot.
type calState struct {
	H       int
	Level   float64
	LogS, R []float64
	N, Pos  []int
	// Seen is horizonCal.seen; a state of version 21 or before has none,
	// and its rings' counts N stand for it.
	Seen       []int `snapshot:"22"`
	Shadow     []float64
	Live       bool
	Origin     int64
	Due        int64
	Issued     int64
	Weight     float64
	WSum, WErr []float64
	WN         int
	WShadows   int64
}

func (c *horizonCal) state() calState {
	return calState{H: c.H, Level: c.level, LogS: slices.Clone(c.logS), R: slices.Clone(c.r), N: slices.Clone(c.n), Seen: slices.Clone(c.seen),
		Pos: slices.Clone(c.pos), Shadow: slices.Clone(c.shadow), Live: c.live, Origin: c.origin,
		Due: c.due, Issued: c.issued, Weight: c.weight, WSum: slices.Clone(c.wSum), WErr: slices.Clone(c.wErr),
		WN: c.wN, WShadows: c.wShadows}
}

// fits reports whether s is a state of a calibration like c (the same
// horizon and level): one of another is not restored but started afresh.
func (c *horizonCal) fits(s calState) bool { return s.H == c.H && s.Level == c.level }

// setState restores s into c, a horizonCal that s fits, of a Learner that
// has learned learned samples, the last at lastT; false, c unchanged, when
// s is not a state c could have reached.
func (c *horizonCal) setState(s calState, learned, lastT int64) bool {
	if !c.fits(s) || len(s.LogS) != len(c.logS) || len(s.R) != len(c.r) || len(s.N) != len(c.n) ||
		len(s.Pos) != len(c.pos) || (s.Seen != nil && len(s.Seen) != len(c.seen)) || len(s.Shadow) != len(c.shadow) || s.Issued < 0 ||
		s.Due < 0 || s.Due > learned+2*int64(c.H) || (s.Live && s.Origin > lastT) ||
		len(s.WSum) != len(c.wSum) || len(s.WErr) != len(c.wErr) || s.WN < 0 || s.WN > max(c.H-1, 0) || s.WShadows < 0 ||
		!slices.Contains(combWeights[:], s.Weight) || (s.Weight != 0.5 && (!c.on() || s.WShadows < weighMin)) {
		return false
	}
	if !recursive.AllFinite(s.WSum) || !recursive.AllFinite(s.WErr) {
		return false
	}
	for j := range s.WSum {
		if s.WSum[j] < 0 || s.WErr[j] < 0 {
			return false
		}
	}
	for b := range s.N {
		w := c.off[b+1] - c.off[b]
		if s.N[b] < 0 || s.N[b] > w || s.Pos[b] < 0 || s.Pos[b] >= w || !(math.Abs(s.LogS[b]) <= calMaxLog) ||
			(s.Seen != nil && s.Seen[b] < s.N[b]) {
			return false
		}
	}
	for _, v := range s.R {
		if !(v >= 0 && v <= calMaxR) {
			return false
		}
	}
	for i := 0; i < len(s.Shadow); i += shadowStride {
		st := s.Shadow[i : i+shadowStride]
		if !recursive.AllFinite(st) || (st[6] != 0 && st[6] != 1) {
			return false
		}
		if k := st[3]; k != shadowLinear && k != shadowNone && !(k == shadowLog && st[0] > 0 && st[1] > 0 && st[2] > 0) {
			return false
		}
	}
	copy(c.logS, s.LogS)
	copy(c.r, s.R)
	copy(c.n, s.N)
	copy(c.seen, s.N)
	copy(c.seen, s.Seen)
	copy(c.pos, s.Pos)
	copy(c.shadow, s.Shadow)
	c.live, c.origin, c.due, c.issued = s.Live, s.Origin, s.Due, s.Issued
	copy(c.wSum, s.WSum)
	copy(c.wErr, s.WErr)
	c.weight, c.wN, c.wShadows = s.Weight, s.WN, s.WShadows
	return true
}

// forecastCopy returns a copy that applies c's factors and shares nothing
// with c (ForecastCopy).
func (c *horizonCal) forecastCopy() horizonCal {
	return horizonCal{H: c.H, level: c.level, logS: slices.Clone(c.logS), off: c.off, centre: c.centre, weight: c.weight}
}

// spacing is the learned samples from a shadow's issue to the next's: H
// plus a part of H that moves by the golden ratio from shadow to shadow,
// so that the origins visit every phase of a season evenly whatever its
// period (spaced by H alone, day-ahead shadows of half-hourly values would
// all start at the same half-hour).
func (c *horizonCal) spacing() int64 {
	const phi = 0.6180339887498949
	_, f := math.Modf(float64(c.issued) * phi)
	return int64(c.H) + int64(f*float64(c.H))
}

// setShadow records dst, a shadow forecast's steps 1..H of a series of the
// Log form or not (logForm), for scoring: each step's kind says how apply
// would scale it, and a step that is not finite is not scored. model and
// theta are the two forecasters' point forecasts of the steps when they
// are averaged (theta nil when not): a step whose average stands (not a
// fallback's) weighs the combination.
func (c *horizonCal) setShadow(dst []ForecastStep, logForm bool, model, theta []float64) {
	for i, st := range dst {
		kind := shadowLinear
		switch {
		case !recursive.AllFinite([]float64{st.Mean, st.Lo, st.Hi}):
			st.Mean, st.Lo, st.Hi, kind = 0, 0, 0, shadowNone
		case inLogs(st, logForm) && st.Hi > 0:
			kind = shadowLog
		}
		m, th, weighs := 0.0, 0.0, 0.0
		if theta != nil && !st.Fallback && recursive.AllFinite([]float64{model[i], theta[i]}) {
			m, th, weighs = model[i], theta[i], 1
		}
		copy(c.shadow[shadowStride*i:shadowStride*(i+1)], []float64{st.Mean, st.Lo, st.Hi, float64(kind), m, th, weighs})
	}
}
