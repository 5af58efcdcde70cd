package online

import "math"

// shiftState watches a model's one-step residuals for a location shift the
// model has not learned (docs/benchmarks.md, "Level shifts"): the exact,
// non-fading RLS moves its intercept as a running mean does, so after a
// step in the level the forecasts stay biased by about N/(N + n) of it n
// samples later, N the samples learned before. Once the residuals show the
// bias, the forecasts are corrected by it (an intercept correction, after
// Clements and Hendry's robustified forecasts), in the model's standardised
// output units: added to every step's mean and fed back
// (narx.Model.ForecastOffset), so that a level form's forecast moves to the
// new level and a differenced form's drift by the bias.
//
// The test is an exponentially weighted moving average E (weight
// shiftAlpha) of the standardised residuals u = (w − ŵ)/s, each clipped to
// ±shiftClip, so that one burst of large errors (a chaotic series'
// collapse, a glitch) moves it little: five residuals at the clip take E
// to 0.55. With uncorrelated residuals of unit variance E's standard
// deviation is at most √(α/(2 − α)) = 0.18 (shiftSD). The correction
// starts when |E| exceeds shiftLevel of those (0.90, about 5.3 deviations
// of clipped normal residuals; a shift of two residual deviations or more
// passes after 10 samples) and stops when |E| falls below shiftRelease of
// them (0.36). The start is not lower because the Santa Fe laser's
// collapses, runs of one-sided errors, pass 4 deviations; the release is
// lower than the start because level 2 re-estimates the noise on the
// biased residuals, s grows, and with one bound the correction flickered
// off while the bias stayed (docs/benchmarks.md, "Level shifts"). When
// the correction starts the Learner restarts the calibration over the
// horizon, as after a re-choice: its scores, kept for a thousand samples
// or more, are of the forecasts the shift made wrong.
//
// The correction is C, the exponentially weighted average (weight
// shiftCAlpha, faster than the test's, so that it has followed most of
// the shift when the test passes) of the unclipped residuals w − ŵ; it
// follows the remaining bias as the model learns it away. Residuals
// correlated from one sample to the next pass the test more often; the
// correction is then their recent mean, which the next ones are near. A
// seasonal structure is not watched (Learner.seasonal). Every new model (a
// re-choice, a refit) starts afresh and tests nothing before 1/shiftAlpha
// residuals, whose average is still dominated by its start at 0. Cost
// O(1) per sample.
type shiftState struct {
	E, C float64 // weighted averages of the clipped standardised and the raw residuals
	N    int64   // residuals seen since the model was set
	On   bool    // the correction applies
}

const (
	shiftAlpha   = 1.0 / 16
	shiftCAlpha  = 1.0 / 8
	shiftClip    = 2.0
	shiftLevel   = 5.0
	shiftRelease = 2.0
)

// shiftSD is the standard deviation of E under uncorrelated residuals of
// unit variance, clipped or not (clipping only lowers it).
var shiftSD = math.Sqrt(shiftAlpha / (2 - shiftAlpha))

// update takes the residual r = w − ŵ of the model's one-step prediction
// and the prediction's standard deviation sd (both standardised units),
// and reports whether the correction starts with it.
func (s *shiftState) update(r, sd float64) (started bool) {
	if !(sd > 0) || math.IsNaN(r) || math.IsInf(r, 0) {
		return false
	}
	s.E += shiftAlpha * (max(-shiftClip, min(shiftClip, r/sd)) - s.E)
	s.C += shiftCAlpha * (r - s.C)
	s.N++
	switch e := math.Abs(s.E); {
	case float64(s.N) < 1/shiftAlpha:
	case !s.On && e > shiftLevel*shiftSD:
		s.On = true
		return true
	case s.On && e < shiftRelease*shiftSD:
		s.On = false
	}
	return false
}

// correction is the offset to add to the model's predictions now: C while
// the test finds a shift, else 0.
func (s *shiftState) correction() float64 {
	if !s.On {
		return 0
	}
	return s.C
}

// valid reports whether a restored state is usable.
func (s shiftState) valid() bool {
	return !math.IsNaN(s.C) && !math.IsInf(s.C, 0) && math.Abs(s.E) <= shiftClip && s.N >= 0 &&
		(!s.On || float64(s.N) >= 1/shiftAlpha)
}
