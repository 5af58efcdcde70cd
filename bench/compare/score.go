package main

import (
	"math"
	"slices"
)

// The scoring of every suite. All of it is pure arithmetic on slices so that
// score_test.go can check it against hand-computed values.

// sAPE is the symmetric absolute percentage error of one forecast f of y, in
// percent: 200·|y−f|/(|y|+|f|), which is 100·|y−f| / ((|y|+|f|)/2). It is 0
// when y = f = 0 and NaN when f is not finite.
func sAPE(y, f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return math.NaN()
	}
	d := math.Abs(y) + math.Abs(f)
	if d == 0 {
		return 0
	}
	return 200 * math.Abs(y-f) / d
}

// aPE is the absolute percentage error 100·|y−f|/|y| (EUNITE's MAPE term).
func aPE(y, f float64) float64 { return 100 * math.Abs(y-f) / math.Abs(y) }

// band states whether y lies in a forecast's central interval.
type band int8

const (
	noBand    band = iota // the forecast has no interval (counts as not covered)
	inBand                // lo ≤ y ≤ hi
	outOfBand             // y outside [lo, hi], or a bound is not finite
)

func bandOf(y, lo, hi float64, has bool) band {
	switch {
	case !has:
		return noBand
	case isFinite(lo) && isFinite(hi) && lo <= y && y <= hi:
		return inBand
	default:
		return outOfBand
	}
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// forecast is one method's multi-step forecast of one series: Mean[h−1] for
// h = 1..H, and the central 95 % interval [Lo[h−1], Hi[h−1]] when the method
// gave one (Lo and Hi nil otherwise).
type forecast struct {
	Mean, Lo, Hi []float64
}

// naiveForecast repeats the last training value over h steps, without a band.
func naiveForecast(train []float64, h int) forecast {
	f := forecast{Mean: make([]float64, h)}
	for i := range f.Mean {
		f.Mean[i] = train[len(train)-1]
	}
	return f
}

// seriesScore is the score of one forecast against the test values y: the
// per-step errors (index h−1) and their summaries over the steps.
type seriesScore struct {
	SAPE  []float64 // per step, %
	APE   []float64 // per step, %
	AE    []float64 // per step, |y−ŷ|
	Band  []band    // per step
	SMAPE float64   // mean of SAPE over the steps
	MAPE  float64   // mean of APE over the steps
	MaxAE float64   // max of AE over the steps
	// Covered counts the steps inside their interval; Banded those that had
	// an interval.
	Covered, Banded int
}

// scoreSeries scores f against the test values y over min(len(y), len(f.Mean))
// steps.
func scoreSeries(y []float64, f forecast) seriesScore {
	n := min(len(y), len(f.Mean))
	s := seriesScore{SAPE: make([]float64, n), APE: make([]float64, n), AE: make([]float64, n), Band: make([]band, n)}
	hasBand := f.Lo != nil && f.Hi != nil
	for i := range n {
		s.SAPE[i] = sAPE(y[i], f.Mean[i])
		s.APE[i] = aPE(y[i], f.Mean[i])
		s.AE[i] = math.Abs(y[i] - f.Mean[i])
		var lo, hi float64
		if hasBand {
			lo, hi = f.Lo[i], f.Hi[i]
		}
		s.Band[i] = bandOf(y[i], lo, hi, hasBand)
		if s.Band[i] != noBand {
			s.Banded++
		}
		if s.Band[i] == inBand {
			s.Covered++
		}
	}
	s.SMAPE = mean(s.SAPE)
	s.MAPE = mean(s.APE)
	s.MaxAE = math.NaN()
	if n > 0 {
		s.MaxAE = slices.Max(s.AE)
	}
	return s
}

// horizonSummary aggregates step h over series.
type horizonSummary struct {
	H          int
	N          int     // series with a forecast for step h
	MeanSMAPE  float64 // mean over those series, %
	MeanAPE    float64 // mean APE over those series, %
	Covered    int     // values inside their interval
	Coverage   float64 // Covered / N (a value without interval counts as not covered)
	BandedOnly float64 // Covered / values with an interval
}

// methodSummary aggregates a method's series scores.
type methodSummary struct {
	Series int // series scored
	Values int // (series, step) pairs scored
	// MeanSMAPE is the mean of sAPE over all (series, step) pairs: with the
	// same number of steps for every series, the mean of the series' sMAPE.
	MeanSMAPE float64
	// MedianSMAPE and P90SMAPE are quantiles of the per-series sMAPE
	// (linear interpolation between order statistics, R's type 7).
	MedianSMAPE, P90SMAPE float64
	MeanMAPE              float64
	MaxAE                 float64
	// Coverage is Covered / Values: values without an interval count as not
	// covered. BandedCoverage is Covered / Banded.
	Covered, Banded          int
	Coverage, BandedCoverage float64
	ByH                      []horizonSummary
}

// summarize pools the series scores of one method.
func summarize(scores []seriesScore) methodSummary {
	var m methodSummary
	var sape, ape, perSeries []float64
	m.MaxAE = math.NaN()
	for _, s := range scores {
		if len(s.SAPE) == 0 {
			continue
		}
		m.Series++
		perSeries = append(perSeries, s.SMAPE)
		sape = append(sape, s.SAPE...)
		ape = append(ape, s.APE...)
		m.Covered += s.Covered
		m.Banded += s.Banded
		if math.IsNaN(m.MaxAE) || s.MaxAE > m.MaxAE {
			m.MaxAE = s.MaxAE
		}
		for i := range s.SAPE {
			for len(m.ByH) <= i {
				m.ByH = append(m.ByH, horizonSummary{H: len(m.ByH) + 1})
			}
			hs := &m.ByH[i]
			hs.N++
			hs.MeanSMAPE += s.SAPE[i]
			hs.MeanAPE += s.APE[i]
			if s.Band[i] == inBand {
				hs.Covered++
			}
			if s.Band[i] != noBand {
				hs.BandedOnly++ // a count until divided below
			}
		}
	}
	m.Values = len(sape)
	m.MeanSMAPE, m.MeanMAPE = mean(sape), mean(ape)
	slices.Sort(perSeries)
	m.MedianSMAPE, m.P90SMAPE = quantile(perSeries, 0.5), quantile(perSeries, 0.9)
	m.Coverage, m.BandedCoverage = ratio(m.Covered, m.Values), ratio(m.Covered, m.Banded)
	for i := range m.ByH {
		hs := &m.ByH[i]
		hs.MeanSMAPE /= float64(hs.N)
		hs.MeanAPE /= float64(hs.N)
		hs.Coverage = ratio(hs.Covered, hs.N)
		hs.BandedOnly = ratio(hs.Covered, int(hs.BandedOnly))
	}
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// mean of x; NaN when x is empty.
func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// quantile of sorted x at p in [0, 1] by linear interpolation between order
// statistics (R's default, type 7): x[(n−1)p] interpolated. NaN when empty.
func quantile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	pos := p * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

// oneStep is a one-step forecast of a target in the cold-start protocol.
type oneStep struct {
	Mean, Lo, Hi float64
}

// coldScore is the cold-start score of one series.
type coldScore struct {
	// First is the 1-based index of the first value with a forecast; 0 when
	// none has one.
	First int
	// Targets counts the values from the From-th on; Scored those with a
	// forecast, Missing those without.
	From, Targets, Scored, Missing int
	// SAPESum and NaiveSAPESum are the sums of the streamd and of the naive
	// (last value) forecasts' sAPE over the scored targets; Covered counts the
	// scored targets inside their interval.
	SAPESum, NaiveSAPESum float64
	Covered               int
	// NonFinite counts scored forecasts with a non-finite mean, lo or hi;
	// Wide those whose (finite) band hi − lo exceeds 10× the range (max −
	// min) of the values before the target.
	NonFinite, Wide int
}

// wideFactor: a band wider than this many times the range of the values seen
// so far counts as blown up.
const wideFactor = 10

// scoreColdstart scores the one-step forecasts fc (by 1-based target index)
// of the series y from its from-th value on.
func scoreColdstart(y []float64, fc map[int]oneStep, from int) coldScore {
	s := coldScore{From: from}
	for k := range fc {
		if k >= 1 && k <= len(y) && (s.First == 0 || k < s.First) {
			s.First = k
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1) // range of y[0:j-1]
	for j := 1; j <= len(y); j++ {
		if j >= 2 {
			lo, hi = math.Min(lo, y[j-2]), math.Max(hi, y[j-2])
		}
		if j < from {
			continue
		}
		s.Targets++
		f, ok := fc[j]
		if !ok {
			s.Missing++
			continue
		}
		s.Scored++
		yj := y[j-1]
		if !isFinite(f.Mean) || !isFinite(f.Lo) || !isFinite(f.Hi) {
			s.NonFinite++
		}
		e := sAPE(yj, f.Mean)
		if math.IsNaN(e) {
			e = 200 // a non-finite forecast scores the worst sAPE
		}
		s.SAPESum += e
		if j >= 2 {
			s.NaiveSAPESum += sAPE(yj, y[j-2])
		} else {
			s.NaiveSAPESum += 200 // no value to repeat
		}
		if bandOf(yj, f.Lo, f.Hi, true) == inBand {
			s.Covered++
		}
		if j >= 2 && isFinite(f.Lo) && isFinite(f.Hi) && f.Hi-f.Lo > wideFactor*(hi-lo) {
			s.Wide++
		}
	}
	return s
}

// coldSummary pools cold-start scores over series.
type coldSummary struct {
	Series, ByFrom  int // series; series with a forecast by their from-th value
	Targets, Scored int
	SMAPE, Naive    float64 // pooled mean sAPE, %
	Covered         int
	Coverage        float64
	NonFinite, Wide int
	MedianFirst     float64 // median first-forecast index over series that got one
}

func summarizeCold(scores []coldScore) coldSummary {
	var c coldSummary
	var sum, naive float64
	var first []float64
	for _, s := range scores {
		c.Series++
		if s.First > 0 && s.First <= s.From {
			c.ByFrom++
		}
		if s.First > 0 {
			first = append(first, float64(s.First))
		}
		c.Targets += s.Targets
		c.Scored += s.Scored
		sum += s.SAPESum
		naive += s.NaiveSAPESum
		c.Covered += s.Covered
		c.NonFinite += s.NonFinite
		c.Wide += s.Wide
	}
	c.SMAPE, c.Naive = math.NaN(), math.NaN()
	if c.Scored > 0 {
		c.SMAPE, c.Naive = sum/float64(c.Scored), naive/float64(c.Scored)
	}
	c.Coverage = ratio(c.Covered, c.Scored)
	slices.Sort(first)
	c.MedianFirst = quantile(first, 0.5)
	return c
}
