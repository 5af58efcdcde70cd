package online

import "math"

// ValueStats is what a series' values have been since its first record
// (since its last re-choice's kept values: each re-choice counts those
// again, cleaned): their count, mean and sum of squared deviations
// (Welford's recurrences, bit for bit the same given the order of the
// values), lowest and highest. The values are the ones learned: a gross
// error's prediction stands in for it, as in the samples kept for the
// re-choices. They bound the plausible forecasts (Learner.plausible) and
// give the fallback forecast where the model's is not (the series' marginal
// distribution). Values so large that the mean or the sum of squares
// would overflow (beyond about 1e154) disarm them for good: the series is
// then not judged, and its checkpoints stay valid.
//
// Arm is the count from which the statistics judge forecasts: 0 for a
// series they have followed from its first value; for a series restored
// from a snapshot written before them (version < 9) with no values kept,
// the count of values that are enough to know its range again (Warmup),
// since the few values after the restore do not.
type ValueStats struct {
	N        int64
	Mean, M2 float64
	Lo, Hi   float64
	Arm      int64
	// LoRef and HiRef are Lo and Hi as they were at count P/2, LoNext
	// and HiNext as they were at count P, where P ≤ N < 2P is a power of
	// two: the bounds before the later half of the values (or more),
	// against which the later values show whether the series goes beyond
	// what it has done (extended, plausible).
	LoRef, HiRef, LoNext, HiNext float64 `snapshot:"20"`
}

// countValues returns the statistics of ys, counted in order, armed from
// arm values on. O(len(ys)).
func countValues(ys []float64, arm int64) ValueStats {
	s := ValueStats{Arm: arm}
	for _, y := range ys {
		s.add(y)
	}
	return s
}

// add counts the finite value y. O(1).
func (s *ValueStats) add(y float64) {
	s.N++
	if s.N == 1 {
		s.Mean, s.M2, s.Lo, s.Hi = y, 0, y, y
		s.LoRef, s.HiRef, s.LoNext, s.HiNext = y, y, y, y
		return
	}
	s.Lo, s.Hi = min(s.Lo, y), max(s.Hi, y)
	if s.N&(s.N-1) == 0 {
		s.LoRef, s.HiRef, s.LoNext, s.HiNext = s.LoNext, s.HiNext, s.Lo, s.Hi
	}
	d := y - s.Mean
	mean := s.Mean + d/float64(s.N)
	m2 := s.M2 + d*(y-mean)
	if math.IsInf(d, 0) || math.IsInf(m2, 0) || math.IsNaN(m2) {
		s.Arm = math.MaxInt64 // never armed; the moments stay finite
		return
	}
	s.Mean, s.M2 = mean, m2
}

// armed reports whether the statistics judge forecasts: enough values
// counted (Arm), and a range that is not empty.
func (s *ValueStats) armed() bool {
	return s.N >= max(s.Arm, 2) && s.Hi > s.Lo
}

// extended reports whether the later values have taken the lowest
// (low) or the highest value more than recordStep of the range beyond the
// bound as it was at count P/2 (LoRef, HiRef).
func (s *ValueStats) extended(low bool) bool {
	step := recordStep * (s.Hi - s.Lo)
	if low {
		return s.Lo < s.LoRef-step
	}
	return s.Hi > s.HiRef+step
}

// unknownRefs sets the bounds' references for statistics restored from a
// snapshot that did not keep them (version < 20): each at the opposite
// bound, so that both bounds count as extended (plausible) until the
// count has passed two more powers of two and the references are the
// values' own.
func (s *ValueStats) unknownRefs() {
	s.LoRef, s.HiRef, s.LoNext, s.HiNext = s.Hi, s.Lo, s.Hi, s.Lo
}

// plausible reports whether a forecast step of point forecast mean and
// band [lo, hi] stays within what the values have shown
// (Learner.plausible): a band at most implausibleRanges times their range
// wide, and a point forecast at most that far beyond them, and at most
// recordRanges of it beyond a bound the later half of the values or more
// have not extended (extended); any step while they do not judge
// (armed); never a step that is not finite.
func (s *ValueStats) plausible(mean, lo, hi float64) bool {
	if math.IsNaN(mean) || math.IsInf(mean, 0) || math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return false
	}
	if !s.armed() {
		return true
	}
	r := s.Hi - s.Lo
	k := implausibleRanges * r
	if mean < s.Lo-recordRanges*r && !s.extended(true) || mean > s.Hi+recordRanges*r && !s.extended(false) {
		return false
	}
	return hi-lo <= k && mean <= s.Hi+k && mean >= s.Lo-k
}

// sd is the standard deviation of the values (n − 1 in the denominator).
func (s *ValueStats) sd() float64 {
	if s.N < 2 {
		return 0
	}
	return math.Sqrt(s.M2 / float64(s.N-1))
}

// z returns y's distance from the values' mean in their standard
// deviations; 0 while they do not judge (armed).
func (s *ValueStats) z(y float64) float64 {
	sd := s.sd()
	if !s.armed() || !(sd > 0) {
		return 0
	}
	return math.Abs(y-s.Mean) / sd
}

// valid reports whether restored statistics are ones add could have
// produced: finite, ordered, M2 ≥ 0, the bounds' references ordered as
// the bounds only widen, Lo ≤ LoNext ≤ LoRef ≤ Hi and Lo ≤ HiRef ≤ HiNext
// ≤ Hi (unknownRefs' included).
func (s *ValueStats) valid() bool {
	if s.N < 0 || s.Arm < 0 {
		return false
	}
	if s.N == 0 {
		return true
	}
	for _, v := range [...]float64{s.Mean, s.M2, s.Lo, s.Hi, s.LoRef, s.HiRef, s.LoNext, s.HiNext} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return s.M2 >= 0 && s.Lo <= s.Hi && (s.N > 1 || s.M2 == 0) &&
		s.Lo <= s.LoNext && s.LoNext <= s.LoRef && s.LoRef <= s.Hi && s.Lo <= s.HiRef && s.HiRef <= s.HiNext && s.HiNext <= s.Hi
}

// recordRanges bounds, in ranges of its values, how far a point forecast
// may go beyond a bound the later half of the series' values (or more)
// have not extended (ValueStats.extended; plausible). Such a series has
// shown itself bounded on that side, as stationary series are: of n
// exchangeable values the next is a new record with probability
// 2/(n + 1), and it passes the old bound by half the range about never
// (a normal series' range is 2√(2 ln n) of its stds). An iterated
// forecast that does is the model extrapolating off its attractor (the
// Santa Fe laser's 20-step forecasts stayed at −634 for 17 steps on
// values in [0, 255]; docs/benchmarks.md, "Forecasts off the attractor").
// A series that trends extends its range all along and is not held by it;
// nor is a random walk's point forecast, its last value, which is within
// the range.
const recordRanges = 0.5

// recordStep is how much of the range the later values must add to a
// bound to extend it (ValueStats.extended): a trend adds half its range
// or more, while a stationary series' extremes creep (the laser's lowest
// value, 2 at count 512 and 0 at 9 840, on a range of 255).
const recordStep = 0.05
