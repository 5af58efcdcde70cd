package main

import (
	"encoding/json"
	"math"
	"strconv"
)

// z95 is the standard normal quantile of 0.975: the one-step-bar baseline's
// coverage scores mean ± z95·baseStd. The forecast's own coverage scores the
// band [lo, hi] it reports (at forecast.level, 0.95 by default).
const z95 = 1.959963984540054

// score accumulates the errors of predictions (mean, std) of targets y.
// The zero value is empty and ready.
type score struct {
	n          int
	yMean, yM2 float64 // Welford running mean and Σ(y − ȳ)² of the targets
	sse, sae   float64 // Σ(y − μ)², Σ|y − μ|
	covered    int     // targets inside the band [lo, hi]
	nlpd       float64 // Σ −log p(y): the Gaussian's ½log(2πσ²) + (y − μ)²/(2σ²), or the Student-t's
	// The same two scores for the one-step-bar baseline: the same mean with
	// the one-step bar (step 1's level-1 std) reused at every step.
	baseCovered int
	baseNLPD    float64
}

// add scores the prediction of y: its band [lo, hi] (the exact quantiles the
// forecast reports, which a transformed form makes asymmetric), its point
// forecast mean and its density d about mean at std, and the baseline
// N(mean, baseStd²). A zero std gives an infinite log density term when
// y ≠ mean.
func (s *score) add(y, mean, std, baseStd, lo, hi float64, d density) {
	s.n++
	dy := y - s.yMean
	s.yMean += dy / float64(s.n)
	s.yM2 += dy * (y - s.yMean)
	e := y - mean
	s.sse += e * e
	s.sae += math.Abs(e)
	if lo <= y && y <= hi {
		s.covered++
	}
	s.nlpd += d.nlpd(e, std)
	if math.Abs(e) <= z95*baseStd {
		s.baseCovered++
	}
	s.baseNLPD += gaussNLPD(e, baseStd)
}

// A density is the family of a step's predictive distribution about its
// point forecast, in units of the step's std: Student's t with df degrees
// of freedom at scale scale·std, or for df = 0 the normal of standard
// deviation std (scale 1).
type density struct{ df, scale float64 }

// normal is the Gaussian N(mean, std²).
var normal = density{0, 1}

// tOfVariance is the Student's t of df > 2 degrees of freedom scaled to
// variance std² (scale std·√((df−2)/df)): a calibrated model's predictive,
// model.df; for df = 0 the normal.
func tOfVariance(df float64) density {
	if df == 0 {
		return normal
	}
	return density{df, math.Sqrt((df - 2) / df)}
}

// tOfScale is the Student's t of df > 0 degrees of freedom at scale std,
// whose band is mean ∓ t_df·std: a young series' (online.Learner.YoungDF).
func tOfScale(df float64) density { return density{df, 1} }

// nlpd is −log p(e) for the prediction error e of a step of std std.
func (d density) nlpd(e, std float64) float64 {
	s := d.scale * std
	if d.df == 0 {
		return gaussNLPD(e, s)
	}
	v := d.df * s * s // ν·scale²
	lg1, _ := math.Lgamma((d.df + 1) / 2)
	lg2, _ := math.Lgamma(d.df / 2)
	return lg2 - lg1 + 0.5*math.Log(math.Pi*v) + (d.df+1)/2*math.Log1p(e*e/v)
}

// gaussNLPD is −log N(e; 0, std²).
func gaussNLPD(e, std float64) float64 {
	v := std * std
	return 0.5*math.Log(2*math.Pi*v) + e*e/(2*v)
}

// metrics are the summary statistics of a score. NaN (no targets; or, for
// NMSE, targets of zero variance) encodes as JSON null.
type metrics struct {
	N    int       `json:"n"`
	NMSE jsonFloat `json:"nmse"`
	RMSE jsonFloat `json:"rmse"`
	MAE  jsonFloat `json:"mae"`
	// Coverage95 is the share of targets in their [lo, hi] band, at
	// forecast.level: the 95 % band of the default level, whose name the
	// field keeps.
	Coverage95 jsonFloat `json:"coverage95"`
	NLPD       jsonFloat `json:"nlpd"`
	// The one-step-bar baseline (same means, step 1's level-1 std at every step).
	Coverage95OneStepBar jsonFloat `json:"coverage95_one_step_bar"`
	NLPDOneStepBar       jsonFloat `json:"nlpd_one_step_bar"`
}

// metrics returns, over the n scored targets:
//
//	NMSE = Σ(y−μ)² / (n·var(y)), var with ddof 0 over the same targets
//	RMSE = √(Σ(y−μ)²/n),  MAE = Σ|y−μ|/n
//	coverage95 = #{lo ≤ y ≤ hi}/n, the band at forecast.level
//	NLPD = Σ −log p(y)/n, p each step's density (density)
//
// and the last two again for the one-step-bar baseline, whose density is
// the Gaussian N(μ, σ₁²).
func (s *score) metrics() metrics {
	if s.n == 0 {
		nan := jsonFloat(math.NaN())
		return metrics{NMSE: nan, RMSE: nan, MAE: nan, Coverage95: nan, NLPD: nan,
			Coverage95OneStepBar: nan, NLPDOneStepBar: nan}
	}
	n := float64(s.n)
	nmse := math.NaN()
	if s.yM2 > 0 {
		nmse = s.sse / s.yM2 // Σ(y−μ)²/(n·var) with n·var = Σ(y−ȳ)²
	}
	return metrics{
		N:          s.n,
		NMSE:       jsonFloat(nmse),
		RMSE:       jsonFloat(math.Sqrt(s.sse / n)),
		MAE:        jsonFloat(s.sae / n),
		Coverage95: jsonFloat(float64(s.covered) / n),
		NLPD:       jsonFloat(s.nlpd / n),

		Coverage95OneStepBar: jsonFloat(float64(s.baseCovered) / n),
		NLPDOneStepBar:       jsonFloat(s.baseNLPD / n),
	}
}

// jsonFloat is a float64 that encodes NaN and ±Inf, which JSON lacks, as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = jsonFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

// percentile returns the p-quantile (0 ≤ p ≤ 1) of sorted by the nearest-rank
// method: the smallest value with at least a fraction p of the data at or
// below it. 0 for no data.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
