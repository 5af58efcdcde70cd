// Package theta is the theta method of Assimakopoulos and Nikolopoulos
// (2000) in the form of Hyndman and Billah (2003), as R's forecast::thetaf
// computes it: simple exponential smoothing of the series, seasonally
// adjusted by a classical multiplicative decomposition when its seasonal
// autocorrelation is significant or the caller knows the season (an
// additive one for a series with a value at or below zero, which thetaf
// cannot adjust), with half the slope
// of a least-squares line through it as drift. It is a strong, cheap forecaster of short
// trending and seasonal series (the M3 competition's winner), whose errors
// differ from a NARX model's: docs/benchmarks.md prices the combination of
// the two on NN3.
//
// The package is numerics only. Fit is O(n·(m + optimisation steps));
// Update, which folds in one more value with α and the seasonal indices
// held, is O(1), so a fitted Model follows a stream. FitProfile adjusts
// for a moving seasonal profile instead (long seasons, two of them); its
// Update is O(values averaged). FitDamped replaces the line's drift by
// Holt's damped local trend on the same seasonal adjustment (ets's
// additive damped form), for series whose trend bends; its Update is O(1).
// FitAR and FitProfileAR replace the smoothing by an autoregression about
// the adjusted values' mean (R's ar()), for series that wander about a
// level or a season and come back; its Update is O(p). FitYoung keeps
// the drift only where a t test finds it, for series too short to
// validate it.
package theta

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Model is a fitted theta forecaster.
type Model struct {
	// Alpha is the smoothing weight in [AlphaMin, AlphaMax]; Level the
	// smoothed (seasonally adjusted) level after the last value.
	Alpha, Level float64
	// Drift is Weight times the least-squares slope per step of the
	// adjusted series: half of it (Weight 0.5, θ = 2) as thetaf.
	Drift, Weight float64
	// Phi > 0: a damped local trend (Holt's damped method, FitDamped)
	// instead of the line's drift (Drift and Weight 0): Trend is the
	// smoothed slope b after the last value, Beta its smoothing weight,
	// Phi the damping; the level and slope follow ℓ ← ℓ + φb + αe,
	// b ← φb + βe on each one-step error e.
	Phi, Beta, Trend float64
	// AR, when not empty, replaces the smoothing by an autoregression of
	// the adjusted values about their mean ARMean (FitAR): the next value
	// is ARMean + Σ AR[j]·(x_{t−j} − ARMean), x_{t−1} the last adjusted
	// value. hist holds the last len(AR) adjusted values, the newest last.
	// AR's elements are never written after the fit (a message may share
	// the slice); FromState and Clone copy it.
	AR     []float64
	ARMean float64
	hist   []float64
	// N is the number of values fitted.
	N int
	// Sigma2 is the one-step error variance of the smoothing, its sum of
	// squared errors over DF (N − 2 for the smoothing, as forecast 8.20's
	// ets counts α and the initial level).
	Sigma2 float64
	// Growth, when Measured, is the smoothing's h-step error variance's
	// growth per step in units of the one-step variance, measured on
	// forecasts out of sample (SetGrowth): the band of step h is then
	// σ√(1 + (h−1)·Growth), not the local-level model's σ√(1 + (h−1)α²).
	// Not used by the damped trend or an autoregression, whose bands are
	// their own models'.
	Growth   float64
	Measured bool
	// Season holds the multiplicative indices of one period, Season[(Phase
	// + k) mod len] that of step k+1 after the last value; nil when the
	// series is not treated as seasonal. With Additive they are added,
	// not multiplied: the seasonal components of an additive
	// decomposition, of mean 0.
	Season   []float64
	Phase    int
	Additive bool
	// HW: Holt–Winters' method (FitHW), a damped trend (Phi, Beta, Trend)
	// beside a season (Season, Phase) that is smoothed by HWGamma at every
	// value, where the other kinds keep their indices as fitted. With
	// b the trend and s the index of the value's phase, on each value y:
	// ℓ' = α·y/s + (1 − α)(ℓ + φb), b' = β(ℓ' − ℓ) + (1 − β)φb,
	// s' = γ·y/ℓ' + (1 − γ)s (differences in place of ratios with
	// Additive).
	HW      bool
	HWGamma float64

	// Profile is the period of a moving seasonal profile (FitProfile), 0
	// for none; Sub its shorter period (0: none); Cycles is how many of its
	// last cycles it averages. recent holds the last Profile·Cycles values
	// less their short-period part (the values themselves without Sub),
	// recentY the last Profile values with Sub (nil without): rings in
	// which the value t steps after the fit's first is at t mod their
	// length, pos that of the next value mod Profile·Cycles, filled the
	// values observed, at most Profile·Cycles.
	Profile, Sub, Cycles int
	recent, recentY      []float64
	pos, filled          int

	// The drift's least-squares line through the adjusted values against
	// their time index t (0..N−1 at the fit; nextT is the next value's,
	// ahead of N after Skip): the means of t and of the values, and the
	// co-moments Σ(t − t̄)² and Σ(t − t̄)(x − x̄), updated by Welford's
	// recurrences. sse is the smoothing's sum of squared one-step errors.
	meanT, meanX, stt, stx, sse, nextT float64
}

// Smoothing weight bounds: forecast::ets's for α.
const (
	AlphaMin = 1e-4
	AlphaMax = 0.9999
)

// seasonalZ is the one-sided 95 % normal quantile of thetaf's test of the
// lag-m autocorrelation.
const seasonalZ = 1.6448536269514722

// minIndex: indices this close to zero make the adjusted series explode;
// thetaf then forecasts without seasonality.
const minIndex = 1e-4

// MinValues is the fewest values Fit fits: the variance has two degrees of
// freedom beside α and the initial level. (thetaf smooths fewer than 7
// values by Holt–Winters' own fit instead of ets; Fit does not.)
const MinValues = 4

// ErrTooShort is Fit's error for fewer than MinValues values.
var ErrTooShort = fmt.Errorf("theta: fewer than %d values", MinValues)

// Fit fits the theta method to x with seasonal period m (m ≤ 1: none).
// The series is seasonal when it is longer than 2m, not constant (to a
// relative 1.5e-8, as R's all.equal), and, unless known, |r_m| exceeds
// seasonalZ times √((1 + 2Σ_{k<m} r_k²)/n), r the sample autocorrelations
// (thetaf's test, Seasonal); its seasonal indices are then used unless one
// is within minIndex of zero (multiplicative, when every value is
// positive; else additive, Model.Additive, whose components may be
// anything). known says the caller has established the season by other
// means (a model whose evidence keeps the lag m): on three or four cycles
// the test misses strong seasons, since the autocorrelations of the
// shorter lags that a season itself makes large inflate its standard
// error. Values too large for the squared errors (about 1e155) give
// ErrOverflow, as they do to FitDamped and FitProfile.
func Fit(x []float64, m int, known bool) (*Model, error) {
	f, _, err := fit(x, m, known)
	return f, err
}

// fit is Fit, returning the seasonally adjusted values too (x itself when
// not seasonal).
func fit(x []float64, m int, known bool) (*Model, []float64, error) {
	n := len(x)
	if n < MinValues {
		return nil, nil, ErrTooShort
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, errors.New("theta: a value is not finite")
		}
	}
	adj := x
	var season []float64
	// Ratios to a trend need positive values: a series with a value at or
	// below zero is adjusted by differences to it.
	additive := slices.ContainsFunc(x, func(v float64) bool { return !(v > 0) })
	if m > 1 && n > 2*m && ((known && !constant(x)) || Seasonal(x, m)) {
		if idx, ok := decompose(x, m, additive); ok {
			adj = make([]float64, n)
			for t := range x {
				adj[t] = deseason(x[t], idx[t%m], additive)
			}
			// Rotated so that the phase of the step after the last
			// value is 0.
			season = make([]float64, m)
			for k := range season {
				season[k] = idx[(n+k)%m]
			}
		}
	}
	f := &Model{Season: season, Additive: additive && season != nil}
	f.smooth(adj)
	if !f.finite() {
		return nil, nil, ErrOverflow
	}
	return f, adj, nil
}

// FitYoung is Fit (thetaf's test of the season) for a series too short
// for its forecasts to be validated: its drift is the line's only where
// the adjusted values' mean increment differs from zero at the 5 % level
// (DriftEvident), else none, which is simple exponential smoothing. On a
// few values the slope of the line through them is mostly their noise:
// on NN3's columns and R's data sets cut to 6–14 values, thetaf forecast
// 6 steps worse than smoothing alone, but lost a steady growth's trend
// without it (docs/benchmarks.md, "Short series"). O(n) beside Fit.
func FitYoung(x []float64, m int) (*Model, error) {
	f, adj, err := fit(x, m, false)
	if err != nil {
		return nil, err
	}
	if !DriftEvident(adj) {
		f.SetWeight(0)
	}
	return f, nil
}

// DriftEvident reports whether the mean of x's increments differs from
// zero by Student's two-sided test at the 5 % level: |mean| over its
// standard error beyond the 0.975 quantile of t with k − 1 degrees of
// freedom, k = len(x) − 1 increments; the test of a random walk's drift.
// Increments that never vary have a drift when they are not zero; fewer
// than three values have none. O(len(x)), no allocation beside the
// quantile's.
func DriftEvident(x []float64) bool {
	k := len(x) - 1
	if k < 2 {
		return false
	}
	var mean, m2 float64 // Welford's recurrences over the increments
	for i := 1; i <= k; i++ {
		d := x[i] - x[i-1]
		delta := d - mean
		mean += delta / float64(i)
		m2 += delta * (d - mean)
	}
	if m2 == 0 {
		return mean != 0
	}
	se := math.Sqrt(m2 / float64(k-1) / float64(k))
	return math.Abs(mean)/se > distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(0.975)
}

// ErrOverflow says that the values are too large for the method: its
// squared errors or its line's moments overflow.
var ErrOverflow = errors.New("theta: the values are too large: the fit overflows")

// finite reports whether every number of f's state is finite.
func (f *Model) finite() bool {
	for _, v := range [...]float64{f.Alpha, f.Level, f.Drift, f.Weight, f.Phi, f.Beta, f.Trend, f.Sigma2,
		f.meanT, f.meanX, f.stt, f.stx, f.sse, f.nextT, f.ARMean, f.HWGamma} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return allFinite(f.AR) && allFinite(f.hist) && allFinite(f.Season)
}

// allFinite reports whether every value of x is finite.
func allFinite(x []float64) bool {
	return !slices.ContainsFunc(x, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
}

// FitDamped fits Holt's damped trend method (additive, as ets's "AAdN")
// to x seasonally adjusted as Fit adjusts it: α, β and φ by the least
// one-step squared error on a grid (φ from 0.8 to 0.98, β a share of α up
// to a half, as ets bounds them), from the first value and the mean of the
// first three increments; σ² over DF. The theta line's statistics are
// kept (FromState needs them) with weight 0. It needs at least
// MinDamped values. O(n · grid), 275 passes.
func FitDamped(x []float64, m int, known bool) (*Model, error) {
	if len(x) < MinDamped {
		return nil, ErrTooShort
	}
	f, adj, err := fit(x, m, known)
	if err != nil {
		return nil, err
	}
	best := math.Inf(1)
	var bA, bB, bP float64
	for _, phi := range []float64{0.8, 0.85, 0.9, 0.95, 0.98} {
		for _, a := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99} {
			for _, bf := range []float64{0.01, 0.05, 0.1, 0.2, 0.5} {
				b := a * bf
				if s, _, _ := holt(adj, a, b, phi); s < best {
					best, bA, bB, bP = s, a, b, phi
				}
			}
		}
	}
	sse, l, tr := holt(adj, bA, bB, bP)
	f.Alpha, f.Beta, f.Phi, f.Level, f.Trend, f.sse = bA, bB, bP, l, tr, sse
	if f.DF() < 2 { // a season's indices took what MinDamped left σ²
		return nil, fmt.Errorf("theta: %d values for a damped trend on a season of %d: %w", len(x), len(f.Season), ErrTooShort)
	}
	f.Sigma2 = sse / f.DF()
	f.Weight, f.Drift = 0, 0
	if !f.finite() {
		return nil, ErrOverflow
	}
	return f, nil
}

// MinDamped is the fewest values FitDamped fits: three increments start
// the slope, and σ² keeps two degrees of freedom beside α, β, φ and the
// initial state (and the season's indices: DF; FitDamped refuses fewer).
const MinDamped = 6

// holt runs Holt's damped recursions on x from ℓ = x0, b = the mean of
// the first three increments, and returns the one-step SSE of x1.. and the
// final level and trend.
func holt(x []float64, a, b, phi float64) (sse, l, tr float64) {
	l, tr = x[0], (x[3]-x[0])/3
	for _, v := range x[1:] {
		p := l + phi*tr
		e := v - p
		sse += e * e
		l = p + a*e
		tr = phi*tr + b*e
	}
	return sse, l, tr
}

// FitAR fits an autoregression about a mean to x seasonally adjusted as Fit
// adjusts it, as R's ar() does by default: the order p by AIC among
// 0..arMaxOrder(n) and the coefficients by Yule–Walker (the
// Durbin–Levinson recursion on the sample autocovariances, sums over n as
// R's acf), whose process is always stationary. Its forecasts return to the
// mean and its band to the process's spread, where the smoothing's level
// follows each wander as if it lasted and its band grows without bound: it
// is the partner of series that wander about a level or a season and come
// back. σ² is the fitted recursion's one-step squared error over the values
// from the p-th on, over DF (p coefficients and the mean estimated). The
// theta line's statistics are kept with weight 0, as FitDamped keeps them. An order of 0 (no autocorrelation AIC keeps)
// returns ErrNoAR: the partner would be the mean. It needs at least MinAR
// values. O(n·arMaxOrder(n)).
func FitAR(x []float64, m int, known bool) (*Model, error) {
	if len(x) < MinAR {
		return nil, fmt.Errorf("theta: %d values for an autoregression, want at least %d: %w", len(x), MinAR, ErrTooShort)
	}
	f, adj, err := fit(x, m, known)
	if err != nil {
		return nil, err
	}
	return f.autoregress(adj)
}

// FitProfileAR is FitAR on the values adjusted by FitProfile's moving
// profile instead of Fit's indices: an autoregression of the deviations
// from the last cycles' shape, for long seasons whose values wander about
// it (hourly loads, a day's sensor cycle). It needs m + MinAR values.
func FitProfileAR(x []float64, m, s, k int) (*Model, error) {
	f, adj, err := fitProfile(x, m, s, k)
	if err != nil {
		return nil, err
	}
	if len(adj) < MinAR {
		return nil, fmt.Errorf("theta: %d values for an autoregression on a profile of period %d, want at least %d: %w", len(x), m, m+MinAR, ErrTooShort)
	}
	return f.autoregress(adj)
}

// autoregress replaces f's smoothing, fitted to the adjusted values adj,
// by FitAR's autoregression of them.
func (f *Model) autoregress(adj []float64) (*Model, error) {
	n := len(adj)
	pmax := arMaxOrder(n, f.seasonFree())
	mu, acv := autocov(adj, pmax)
	for k := range acv {
		acv[k] /= float64(n)
	}
	if !(acv[0] > 0) {
		return nil, ErrNoAR
	}
	// Durbin–Levinson: phi[1..k] the order-k coefficients, v its
	// innovation variance, from prev (order k−1).
	phi := make([]float64, pmax+1)
	prev := make([]float64, pmax+1)
	v, bestAIC := acv[0], float64(n)*math.Log(acv[0])
	var best []float64
	for k := 1; k <= pmax; k++ {
		num := acv[k]
		for j := 1; j < k; j++ {
			num -= prev[j] * acv[k-j]
		}
		a := num / v
		phi[k] = a
		for j := 1; j < k; j++ {
			phi[j] = prev[j] - a*prev[k-j]
		}
		if v *= 1 - a*a; !(v > 0) {
			break // a perfect fit: the autocovariances of a line or a sine
		}
		if aic := float64(n)*math.Log(v) + 2*float64(k); aic < bestAIC {
			bestAIC, best = aic, slices.Clone(phi[1:k+1])
		}
		copy(prev, phi)
	}
	p := len(best)
	if p == 0 {
		return nil, ErrNoAR
	}
	var sse float64
	for t := p; t < n; t++ {
		e := adj[t] - arNext(best, mu, adj[t-p:t])
		sse += e * e
	}
	f.AR, f.ARMean, f.hist = best, mu, slices.Clone(adj[n-p:])
	f.sse, f.Sigma2 = sse, sse/f.DF()
	f.Weight, f.Drift = 0, 0
	if !f.finite() {
		return nil, ErrOverflow
	}
	return f, nil
}

// stationary reports whether the autoregression of coefficients ar is
// stationary, as Yule–Walker's always is: the step-down (reverse
// Durbin–Levinson) recursion's partial autocorrelations κ_p, …, κ_1 all
// within (−1, 1). O(p²).
func stationary(ar []float64) bool {
	phi := slices.Clone(ar)
	prev := make([]float64, len(ar))
	for k := len(phi); k >= 1; k-- {
		a := phi[k-1]
		if !(math.Abs(a) < 1) {
			return false
		}
		for j := 1; j < k; j++ {
			prev[j-1] = (phi[j-1] + a*phi[k-j-1]) / (1 - a*a)
		}
		copy(phi, prev[:k-1])
	}
	return true
}

// MinAR is the fewest values FitAR fits.
const MinAR = 8

// ErrNoAR is FitAR's error for values whose autocorrelation the AIC does
// not keep (or a constant): an autoregression of order 0.
var ErrNoAR = errors.New("theta: no autoregression: the values are not autocorrelated")

// arMaxOrder is the highest order FitAR tries on n values adjusted by s
// free seasonal indices (seasonFree): R's ar() default, ⌊10·log₁₀ n⌋, at
// most (n − 3 − s)/2 so that σ² keeps two degrees of freedom (DF), and
// below n.
func arMaxOrder(n, s int) int {
	return max(min(int(10*math.Log10(float64(n))), (n-3-s)/2, n-1), 0)
}

// arNext returns the autoregression's prediction of the value after last
// (the len(ar) values before it, the newest last): mu + Σ ar[j−1]·(last[p−j] − mu).
func arNext(ar []float64, mu float64, last []float64) float64 {
	p := len(ar)
	v := mu
	for j := 1; j <= p; j++ {
		v += ar[j-1] * (last[p-j] - mu)
	}
	return v
}

// arPaths writes the autoregression's forecasts of the adjusted values of
// steps 1..len(mean) and, when sd is not nil, their standard deviations
// σ·√(Σ_{j<h} ψ_j²), ψ the process's moving-average weights (ψ_0 = 1,
// ψ_j = Σ_{i=1}^{min(j,p)} AR[i−1]·ψ_{j−i}). Both are built in place: the
// deviations from the mean first, then the mean added.
func (f *Model) arPaths(mean, sd []float64) {
	p := len(f.AR)
	for i := range mean {
		var d float64
		for j := 1; j <= p; j++ {
			x := f.hist[min(max(p+i-j, 0), p-1)] - f.ARMean
			if i >= j {
				x = mean[i-j]
			}
			d += f.AR[j-1] * x
		}
		mean[i] = d
	}
	for i := range mean {
		mean[i] += f.ARMean
	}
	if sd == nil {
		return
	}
	for i := range sd {
		psi := 1.0
		if i > 0 {
			psi = 0
			for j := 1; j <= min(i, p); j++ {
				psi += f.AR[j-1] * sd[i-j]
			}
		}
		sd[i] = psi
	}
	var cum float64
	for i, psi := range sd {
		cum += psi * psi
		sd[i] = math.Sqrt(f.Sigma2 * cum)
	}
}

// smooth fits the smoothing and the drift to the adjusted values adj (at
// least MinValues): α and the initial level by ses, the level after the
// last value, σ² over DF, the line through them and half its slope.
func (f *Model) smooth(adj []float64) {
	n := len(adj)
	alpha, l0, sse := ses(adj)
	level := l0
	for _, v := range adj {
		level += alpha * (v - level)
	}
	f.Alpha, f.Level, f.N, f.sse, f.nextT = alpha, level, n, sse, float64(n)
	f.Sigma2 = sse / f.DF()
	f.meanT, f.meanX, f.stt, f.stx = line(adj)
	f.Weight = DefaultWeight
	f.Drift = f.stx / f.stt * f.Weight
}

// SetGrowth makes the smoothing's band of step h σ√(1 + (h−1)·g), g the
// h-step error variance's growth per step measured on forecasts out of
// sample (Growth), in [0, MaxGrowth]; it panics outside. The local-level
// model's α² is the growth of a series that is a random walk plus noise;
// one that returns towards a level or a season (a load about its weekly
// profile) errs less at long horizons, and its band would grow as if it
// wandered. It panics too on a damped trend or an autoregression, whose
// bands are their own models'.
func (f *Model) SetGrowth(g float64) {
	if !(g >= 0 && g <= MaxGrowth) {
		panic(fmt.Sprintf("theta: growth %v outside [0, %v]", g, MaxGrowth))
	}
	if f.Phi > 0 || len(f.AR) > 0 {
		panic("theta: a growth set on a damped trend (Holt–Winters included) or an autoregression")
	}
	f.Growth, f.Measured = g, true
}

// MaxGrowth bounds a measured growth: a random walk's, whose h-step error
// variance is h one-step ones (α = 1).
const MaxGrowth = 1.0

// DefaultWeight is the drift's share of the line's slope in thetaf (θ = 2).
const DefaultWeight = 0.5

// SetWeight sets the drift's share w of the line's slope: 1 − 1/θ for the
// theta line of coefficient θ, 0 simple exponential smoothing, 1 the whole
// slope (the long-run trend line's). w must be in [0, 1].
func (f *Model) SetWeight(w float64) {
	f.Weight = w
	f.Drift = f.stx / f.stt * w
}

// FitProfile fits the theta method to x seasonally adjusted by a moving
// profile of period m, additive (as STL's seasonal components) and
// following a seasonal shape that drifts, where Fit's classical indices are
// the average over all cycles and stay as fitted. Without a shorter period
// (s = 0) the profile at t is the mean of the values at t − jm, j = 1..k,
// the same phase in up to k cycles before it. With one (0 < s < m, a day in
// a week), it is D_t + W_t: D_t the mean of the m/s values at t − js, the
// short period's phase over the last long cycle (the last 7 days' values at
// the half-hour), and W_t the mean of y − D at t − jm, j = 1..k, the long
// cycle's deviation from it (the weekday's); D averages 7 times as many
// values as a weekly profile of one level, and W what is left, the smaller
// part. Only values observed count (fewer near the start). The adjusted
// values from t = m on are smoothed and given a drift as Fit's are. It is
// for long seasons and series of two, which Fit's one multiplicative
// season does not carry. x must hold at least m + MinValues values, m ≥ 2,
// k ≥ 1, and s = 0 or a divisor of m below it (so that a ring of m values
// keeps both phases). O(n·(k + m/s)) plus the smoothing's fit.
func FitProfile(x []float64, m, s, k int) (*Model, error) {
	f, _, err := fitProfile(x, m, s, k)
	return f, err
}

// fitProfile is FitProfile, returning the adjusted values too.
func fitProfile(x []float64, m, s, k int) (*Model, []float64, error) {
	n := len(x)
	switch {
	case m < 2 || k < 1 || s < 0 || s >= m || (s > 0 && m%s != 0):
		return nil, nil, fmt.Errorf("theta: profile period %d, shorter period %d, cycles %d: want m ≥ 2, s 0 or a divisor of m below it, k ≥ 1", m, s, k)
	case n < m+MinValues:
		return nil, nil, fmt.Errorf("theta: %d values for a profile of period %d: want at least %d", n, m, m+MinValues)
	}
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil, errors.New("theta: a value is not finite")
		}
	}
	f := &Model{Profile: m, Sub: s, Cycles: k, recent: make([]float64, m*k)}
	if s > 0 {
		f.recentY = make([]float64, m)
	}
	adj := make([]float64, 0, n-m)
	for t, v := range x {
		d := f.short(0)
		if t >= m {
			adj = append(adj, v-d-f.long(0))
		}
		f.push(v, d)
	}
	f.smooth(adj)
	if !f.finite() {
		return nil, nil, ErrOverflow
	}
	return f, adj, nil
}

// profile returns the moving profile's value i steps after the next value
// (i = 0: the next): short(i) + long(i).
func (f *Model) profile(i int) float64 { return f.short(i) + f.long(i) }

// long returns W, the mean of the last Cycles entries of recent observed at
// the long period's phase i steps after the next value. At least one is:
// filled ≥ Profile after FitProfile.
func (f *Model) long(i int) float64 {
	return ringMean(f.recent, f.pos, f.filled, f.Profile, i, f.Cycles)
}

// short returns D, the mean of the last Profile/Sub values observed at the
// short period's phase i steps after the next value; 0 without Sub.
func (f *Model) short(i int) float64 {
	if f.Sub == 0 {
		return 0
	}
	return ringMean(f.recentY, f.pos, min(f.filled, len(f.recentY)), f.Sub, i, f.Profile/f.Sub)
}

// ringMean returns the mean of the last up to k values of ring observed at
// period p's phase i steps after the next value (0 if none), the next value
// going to ring[pos mod len(ring)] and the filled values before it being
// observed. The value j periods back from step i is d = j·p − i values
// before the next; the first j with d ≥ 1 is i/p + 1.
func ringMean(ring []float64, pos, filled, p, i, k int) float64 {
	n := len(ring)
	var sum float64
	cnt := 0
	for j := i/p + 1; cnt < k; j++ {
		d := j*p - i
		if d > filled {
			break
		}
		sum += ring[((pos-d)%n+n)%n]
		cnt++
	}
	if cnt == 0 {
		return 0
	}
	return sum / float64(cnt)
}

// push stores y, whose short-period part was d (short(0) before it), as the
// next value of the profile's rings. A value with no short-period part yet
// (the first Sub values fitted) deviates by 0 from its own: stored as y,
// the level would count twice in the long cycle's deviation, W.
func (f *Model) push(y, d float64) {
	if f.Sub > 0 && f.filled < f.Sub {
		d = y
	}
	f.recent[f.pos] = y - d
	if f.recentY != nil {
		f.recentY[f.pos%len(f.recentY)] = y
	}
	f.pos = (f.pos + 1) % len(f.recent)
	f.filled = min(f.filled+1, len(f.recent))
}

// Update folds in the value y observed after the last: the level is
// smoothed with the fitted α (its one-step error counted in σ²), the
// least-squares line and so the drift take the value in, and the season
// moves on a step; α and the seasonal indices stay as fitted. It is the
// recursions Fit ran, continued: Fit on the values with y appended would
// also re-estimate α, the indices and the initial level. With a moving
// profile the value is adjusted by the profile before it, then joins its
// rings. An autoregression (AR) predicts the adjusted value from its
// history instead of the level, its coefficients and mean held, and takes
// it into the history. Holt–Winters (HW) runs its own recursions (hwStep),
// which smooth its indices too. O(1), or O(Cycles + Profile/Sub) with a
// profile, plus O(p) with an autoregression of order p; y must be finite.
func (f *Model) Update(y float64) {
	if f.HW {
		e := f.hwStep(y)
		f.sse += e * e
		f.line(y)
		return
	}
	v := y
	if m := len(f.Season); m > 0 {
		v = deseason(y, f.Season[f.Phase], f.Additive)
		f.Phase = (f.Phase + 1) % m
	}
	if f.Profile > 0 {
		d := f.short(0)
		v = y - d - f.long(0)
		f.push(y, d)
	}
	switch {
	case f.Phi > 0:
		p := f.Level + f.Phi*f.Trend
		e := v - p
		f.sse += e * e
		f.Level = p + f.Alpha*e
		f.Trend = f.Phi*f.Trend + f.Beta*e
	case len(f.AR) > 0:
		e := v - arNext(f.AR, f.ARMean, f.hist)
		f.sse += e * e
		f.pushAR(v)
	default:
		e := v - f.Level
		f.sse += e * e
		f.Level += f.Alpha * e
	}
	f.line(v)
}

// line takes the adjusted value v into the line's moments and the count,
// and sets the drift and σ² from them.
func (f *Model) line(v float64) {
	t := f.nextT
	f.nextT++
	f.N++
	n := float64(f.N)
	dt := t - f.meanT
	f.meanT += dt / n
	f.meanX += (v - f.meanX) / n
	f.stt += dt * (t - f.meanT)
	f.stx += dt * (v - f.meanX)
	f.Drift = f.stx / f.stt * f.Weight
	f.Sigma2 = f.sse / f.DF()
}

// seasonFree is the number of seasonal indices fitted to the values: m − 1
// of a season of period m (its indices' mean is 1, or 0 added), 0 without.
// A moving profile (FitProfile) is not counted: it is an average of the
// last cycles, not fitted to every value.
func (f *Model) seasonFree() int { return max(len(f.Season)-1, 0) }

// DF is the residual degrees of freedom Sigma2 is estimated with: N − 2
// for the smoothing (α and the initial level estimated), N − 4 for the
// damped trend (α, β, φ and the level), N − 5 for Holt–Winters, less its
// season's m − 1 below: N − m − 4, its errors those of the values after
// the first season, less α, β, γ and φ (its start is the first two
// seasons' means, not fitted), N − 2p − 1 for an autoregression
// of order p (p coefficients and the mean, on the N − p values it
// predicts); each less a season's m − 1 free indices (seasonFree), fitted
// to the same values: on 30 monthly values the residuals of the adjusted
// series understate the noise's variance by two fifths, and the bands of
// short seasonal series fell short (docs/benchmarks.md, "Short series").
// Every fit keeps it at 2 or more. A noise level estimated from ν of them,
// integrated out, makes the one-step predictive Student's t with ν degrees
// of freedom.
func (f *Model) DF() float64 {
	s := f.seasonFree()
	switch {
	case f.HW:
		return float64(f.N - 5 - s)
	case f.Phi > 0:
		return float64(f.N - 4 - s)
	case len(f.AR) > 0:
		return float64(f.N - 2*len(f.AR) - 1 - s)
	}
	return float64(f.N - 2 - s)
}

// Skip moves the model past k values that were never observed (a gap
// in the series): the season advances k steps and the line's time index
// with it, so the next value meets its own season's index; the level, the
// drift and σ² are left as they are (smoothing has nothing to smooth, and
// the next value's error absorbs the gap's movement). A moving profile
// takes each missing value as its own value at that phase, so that its
// rings stay in phase; an autoregression's history takes each as its
// forecast (pushAR), so the next value is predicted k + 1 steps ahead.
// O(1), or O(min(k, Profile·Cycles)·(Cycles + Profile/Sub)) with a
// profile, plus O(min(k, arSkipMax)·p) with an autoregression of order p.
func (f *Model) Skip(k uint64) {
	if m := len(f.Season); m > 0 {
		f.Phase = (f.Phase + int(k%uint64(m))) % m
	}
	if f.Profile > 0 {
		// Each missing value is the profile's forecast of it. Past a full
		// ring the slots keep their phases whatever the rotation (a phase
		// is the slot's index mod Profile, and Sub divides Profile), so
		// the rest of the gap only rotates: a gap longer than the ring
		// continues the profile from one ring of filled values. With Sub
		// those move D a little as they go (W's mean over a long cycle
		// joins D), so two gaps are not one gap of their total length.
		for range min(k, uint64(len(f.recent))) {
			d := f.short(0)
			f.push(d+f.long(0), d)
		}
		if ring := uint64(len(f.recent)); k > ring {
			f.pos = int((uint64(f.pos) + (k-ring)%ring) % ring)
		}
	}
	if len(f.AR) > 0 {
		// Each missing value is the autoregression's forecast of it, up
		// to arSkipMax of them; a longer gap ends at the mean, the limit
		// of the forecasts (a fitted process is stationary), so that a
		// gap of any length costs O(arSkipMax·p).
		for range min(k, arSkipMax) {
			f.pushAR(arNext(f.AR, f.ARMean, f.hist))
		}
		if k > arSkipMax {
			for i := range f.hist {
				f.hist[i] = f.ARMean
			}
		}
	}
	f.nextT += float64(k)
}

// pushAR appends v to the autoregression's history, dropping its oldest.
func (f *Model) pushAR(v float64) {
	copy(f.hist, f.hist[1:])
	f.hist[len(f.hist)-1] = v
}

// arSkipMax bounds the missing values Skip feeds an autoregression.
const arSkipMax = 1 << 12

// Forecast writes the forecasts of steps 1..len(mean) and their standard
// deviations. The mean is ℓ + b·(h − 1 + (1 − (1−α)^N)/α), times the
// step's seasonal index (plus it, Additive), or plus the moving profile at the step's phase
// (from the values observed before the next: FitProfile); the deviation
// σ·√(1 + (h−1)α²) is that of the smoothing's h-step error, not
// re-seasonalised (as thetaf's intervals), or σ·√(1 + (h−1)·Growth) where
// the growth was measured (SetGrowth). With an autoregression (FitAR)
// its forecast and deviation (arPaths) replace the smoothing's. sd may be
// nil.
func (f *Model) Forecast(mean, sd []float64) {
	if f.HW {
		f.hwForecast(mean, sd)
		return
	}
	ar := len(f.AR) > 0
	a, start := f.Alpha, 0.0
	if ar {
		f.arPaths(mean, sd)
	} else {
		start = (1 - math.Pow(1-a, float64(f.N))) / a
	}
	damp, phiJ, cum := 0.0, 1.0, 0.0
	for i := range mean {
		h := float64(i)
		v := f.Level + f.Drift*(h+start)
		if f.Phi > 0 {
			phiJ *= f.Phi
			damp += phiJ // φ + … + φ^(i+1)
			v = f.Level + f.Trend*damp
		}
		if ar {
			v = mean[i]
		}
		if m := len(f.Season); m > 0 {
			if c := f.Season[(f.Phase+i)%m]; f.Additive {
				v += c
			} else {
				v *= c
			}
		}
		if f.Profile > 0 {
			v += f.profile(i)
		}
		mean[i] = v
		if sd != nil && !ar {
			if f.Measured {
				sd[i] = math.Sqrt(f.Sigma2 * (1 + h*f.Growth))
			} else {
				sd[i] = math.Sqrt(f.Sigma2 * (1 + h*a*a)) // (h·α)·α, as ever: the same bits
			}
			if f.Phi > 0 {
				sd[i] = math.Sqrt(f.Sigma2 * (1 + cum))
				c := f.Alpha + f.Beta*damp
				cum += c * c
			}
		}
	}
}

// ACF returns the sample autocorrelations r_1..r_m of x (deviations from
// the mean, sums over n, as R's acf), 0 beyond the lags x holds; all 0 for
// a constant x. O(n·m).
func ACF(x []float64, m int) []float64 {
	_, c := autocov(x, m)
	r := make([]float64, m)
	if c[0] == 0 {
		return r
	}
	for k := 1; k <= m; k++ {
		r[k-1] = c[k] / c[0]
	}
	return r
}

// autocov returns the mean of x and its sums of lagged products about it,
// c_k = Σ_{t≥k} (x_t − μ)(x_{t−k} − μ) for k = 0..m (0 beyond the lags x
// holds): n times the sample autocovariances. O(n·m).
func autocov(x []float64, m int) (mu float64, c []float64) {
	n := len(x)
	for _, v := range x {
		mu += v
	}
	mu /= float64(n)
	c = make([]float64, m+1)
	for k := range c {
		for t := k; t < n; t++ {
			c[k] += (x[t] - mu) * (x[t-k] - mu)
		}
	}
	return mu, c
}

// Seasonal reports thetaf's test of seasonality at period m (see Fit);
// false for a constant x. x must hold more than m values.
func Seasonal(x []float64, m int) bool {
	if constant(x) {
		return false
	}
	r := ACF(x, m)
	return math.Abs(r[m-1])/SeasonSE(r[:m-1], len(x)) > seasonalZ
}

// constant reports whether x is constant to a relative 1.5e-8 (R's
// all.equal): it has no season to test or to estimate.
func constant(x []float64) bool {
	lo, hi, scale := x[0], x[0], 0.0
	for _, v := range x {
		lo, hi, scale = min(lo, v), max(hi, v), scale+math.Abs(v)
	}
	return hi-lo <= 1.5e-8*scale/float64(len(x))
}

// SeasonSE is the standard error of the autocorrelation r_m of n values in
// the M3 theta method's test of a season m, given r_1..r_{m−1} (r):
// √((1 + 2Σ r_k²)/n), Bartlett's under an MA(m−1).
func SeasonSE(r []float64, n int) float64 {
	var s float64
	for _, v := range r {
		s += v * v
	}
	return math.Sqrt((1 + 2*s) / float64(n))
}

// decompose returns the seasonal indices of the classical multiplicative
// decomposition (R's decompose): idx[t%m] for the value at t, the mean
// ratio of x to its centred moving average (of order 2×m for even m) at
// each position, normalised to mean 1; with additive, of the additive one
// (R's decompose type "additive"): the mean difference, normalised to mean
// 0. ok is false when a multiplicative index is below minIndex or a
// position has no ratio.
func decompose(x []float64, m int, additive bool) (idx []float64, ok bool) {
	n := len(x)
	half := m / 2
	sum := make([]float64, m)
	cnt := make([]int, m)
	for t := half; t+half < n; t++ {
		var trend float64
		if m%2 == 0 {
			trend = 0.5*x[t-half] + 0.5*x[t+half]
			for k := t - half + 1; k < t+half; k++ {
				trend += x[k]
			}
		} else {
			for k := t - half; k <= t+half; k++ {
				trend += x[k]
			}
		}
		trend /= float64(m)
		if additive {
			sum[t%m] += x[t] - trend
		} else {
			sum[t%m] += x[t] / trend
		}
		cnt[t%m]++
	}
	idx = make([]float64, m)
	var mean float64
	for k := range idx {
		if cnt[k] == 0 {
			return nil, false
		}
		idx[k] = sum[k] / float64(cnt[k])
		mean += idx[k]
	}
	mean /= float64(m)
	for k := range idx {
		if additive {
			idx[k] -= mean
			continue
		}
		idx[k] /= mean
		if math.Abs(idx[k]) < minIndex {
			return nil, false
		}
	}
	return idx, true
}

// deseason removes the seasonal index c from y: y − c, or y/c.
func deseason(y, c float64, additive bool) float64 {
	if additive {
		return y - c
	}
	return y / c
}

// line returns the means of t = 0..n−1 and of x and the co-moments
// Σ(t − t̄)² and Σ(t − t̄)(x − x̄) of the least-squares line of x against
// t, whose slope is stx/stt.
func line(x []float64) (tm, xm, stt, stx float64) {
	n := float64(len(x))
	tm = (n - 1) / 2
	for _, v := range x {
		xm += v
	}
	xm /= n
	for t, v := range x {
		d := float64(t) - tm
		stt += d * d
		stx += d * (v - xm)
	}
	return tm, xm, stt, stx
}

// State is a Model's complete state, for checkpoints.
type State struct {
	Alpha, Level, Drift, Sigma2        float64
	N, Phase                           int
	Season                             []float64
	MeanT, MeanX, STT, STX, SSE, NextT float64

	// The moving profile (FitProfile): absent from the learner's
	// snapshots before version 12, whose theta methods have none.
	Profile     int       `snapshot:"12"`
	Sub         int       `snapshot:"12"`
	Cycles      int       `snapshot:"12"`
	Recent      []float64 `snapshot:"12"`
	RecentY     []float64 `snapshot:"12"`
	Pos, Filled int       `snapshot:"12"`

	// Weight is the drift's share of the slope (Model.Weight): absent
	// before the learner's version 17, whose theta methods have
	// DefaultWeight; the learner's decoder sets it. Phi, Beta and Trend
	// are the damped trend's (Model.Phi), 0 before version 17.
	Weight           float64 `snapshot:"17"`
	Phi, Beta, Trend float64 `snapshot:"17"`

	// Additive says Season is added (Model.Additive): false before the
	// learner's version 18, whose seasons are all multiplicative.
	Additive bool `snapshot:"18"`

	// The autoregression (Model.AR, FitAR) and its last values: absent
	// before the learner's version 21, whose partners have none.
	AR     []float64 `snapshot:"21"`
	ARMean float64   `snapshot:"21"`
	Hist   []float64 `snapshot:"21"`

	// The measured growth (Model.Growth, SetGrowth): absent before the
	// learner's version 22, whose bands grow by α².
	Growth   float64 `snapshot:"22"`
	Measured bool    `snapshot:"22"`

	// Holt–Winters (Model.HW, FitHW): absent before the learner's version
	// 23, whose partners are never one.
	HW      bool    `snapshot:"23"`
	HWGamma float64 `snapshot:"23"`
}

// State returns f's state; Season is copied.
func (f *Model) State() State {
	return State{Alpha: f.Alpha, Level: f.Level, Drift: f.Drift, Sigma2: f.Sigma2, N: f.N, Phase: f.Phase,
		Season: slices.Clone(f.Season), MeanT: f.meanT, MeanX: f.meanX, STT: f.stt, STX: f.stx, SSE: f.sse, NextT: f.nextT,
		Profile: f.Profile, Sub: f.Sub, Cycles: f.Cycles, Recent: slices.Clone(f.recent), RecentY: slices.Clone(f.recentY),
		Pos: f.pos, Filled: f.filled, Weight: f.Weight, Phi: f.Phi, Beta: f.Beta, Trend: f.Trend, Additive: f.Additive,
		AR: slices.Clone(f.AR), ARMean: f.ARMean, Hist: slices.Clone(f.hist), Growth: f.Growth, Measured: f.Measured,
		HW: f.HW, HWGamma: f.HWGamma}
}

// FromState returns the Model of a state State returned, or an error when
// the state could not have been: non-finite numbers, α out of its bounds,
// fewer than 4 values, a time index behind them or beyond 2^53, a phase outside the
// season, a seasonal index within minIndex of zero, a profile whose ring
// does not hold its cycles or fewer than one of them, both kinds of
// season, an autoregression beside another trend or without its last
// values, or a growth outside [0, MaxGrowth] (one not measured that is
// not 0, one measured on a damped trend or an autoregression).
func FromState(s State) (*Model, error) {
	finite := func(v ...float64) bool { return allFinite(v) }
	switch {
	case !finite(s.Alpha, s.Level, s.Drift, s.Sigma2, s.MeanT, s.MeanX, s.STT, s.STX, s.SSE, s.NextT, s.ARMean) || !finite(s.Season...) || !finite(s.Recent...) || !finite(s.RecentY...) ||
		!finite(s.AR...) || !finite(s.Hist...):
		return nil, errors.New("theta: state is not finite")
	case s.Alpha < AlphaMin || s.Alpha > AlphaMax || s.N < MinValues || !(s.STT > 0) || s.Sigma2 < 0 || s.SSE < 0 || s.NextT < float64(s.N) || s.NextT > maxIndex || math.Abs(s.MeanT) > maxIndex ||
		!(s.Weight >= 0 && s.Weight <= 1) || !finite(s.Trend) || s.Phi != 0 && !(s.Phi > 0 && s.Phi < 1 && s.Beta >= 0 && (s.Beta <= s.Alpha || s.HW && s.Beta <= 1) && s.Weight == 0 && s.Profile == 0):
		return nil, errors.New("theta: state is not a fitted model's")
	case s.HW && (len(s.Season) < 2 || s.Phi == 0 || !(s.HWGamma >= 0 && s.HWGamma <= 1-s.Alpha) || len(s.AR) > 0 || s.Measured),
		!s.HW && s.HWGamma != 0:
		return nil, errors.New("theta: state's Holt–Winters season is not a fitted one's")
	case !s.Additive && slices.ContainsFunc(s.Season, func(v float64) bool { return math.Abs(v) < minIndex }):
		return nil, errors.New("theta: state has a seasonal index near zero")
	case s.Additive && len(s.Season) == 0:
		return nil, errors.New("theta: state has an additive season without indices")
	case s.Phase < 0 || (len(s.Season) == 0 && s.Phase != 0) || (len(s.Season) > 0 && s.Phase >= len(s.Season)):
		return nil, errors.New("theta: state's seasonal phase is out of range")
	case s.Profile == 0 && (s.Sub != 0 || s.Cycles != 0 || len(s.Recent) != 0 || len(s.RecentY) != 0 || s.Pos != 0 || s.Filled != 0),
		s.Profile != 0 && (s.Profile < 2 || s.Cycles < 1 || len(s.Season) > 0 || len(s.Recent)%s.Profile != 0 || len(s.Recent)/s.Profile != s.Cycles ||
			s.Pos < 0 || s.Pos >= len(s.Recent) || s.Filled < s.Profile || s.Filled > len(s.Recent)),
		s.Profile != 0 && (s.Sub < 0 || s.Sub >= s.Profile || (s.Sub == 0) != (len(s.RecentY) == 0) || (s.Sub > 0 && (len(s.RecentY) != s.Profile || s.Profile%s.Sub != 0))):
		return nil, errors.New("theta: state's seasonal profile is not a fitted one's")
	case len(s.Hist) != len(s.AR), len(s.AR) > 0 && (s.Phi != 0 || s.Weight != 0 || len(s.AR) > arMaxOrder(s.N, 0) || !stationary(s.AR)):
		return nil, errors.New("theta: state's autoregression is not a fitted one's")
	case !(s.Growth >= 0 && s.Growth <= MaxGrowth) || !s.Measured && s.Growth != 0 || s.Measured && (s.Phi != 0 || len(s.AR) > 0):
		return nil, errors.New("theta: state's growth is out of range")
	}
	var season []float64
	if len(s.Season) > 0 {
		season = slices.Clone(s.Season)
	}
	var recent, recentY []float64
	if s.Profile > 0 {
		recent = slices.Clone(s.Recent)
	}
	if s.Sub > 0 {
		recentY = slices.Clone(s.RecentY)
	}
	// The drift is the line's slope times the weight, and σ² the squared
	// errors over DF, as Fit and Update compute them (bit for bit): a state
	// whose Drift or Sigma2 says otherwise (one written before the season's
	// indices were counted) would change its forecasts at the next Update.
	f := &Model{Alpha: s.Alpha, Level: s.Level, Drift: s.STX / s.STT * s.Weight, Weight: s.Weight, Phi: s.Phi, Beta: s.Beta, Trend: s.Trend,
		N: s.N, Phase: s.Phase, Season: season, Additive: s.Additive,
		Profile: s.Profile, Sub: s.Sub, Cycles: s.Cycles, recent: recent, recentY: recentY, pos: s.Pos, filled: s.Filled,
		meanT: s.MeanT, meanX: s.MeanX, stt: s.STT, stx: s.STX, sse: s.SSE, nextT: s.NextT,
		AR: cloneOrNil(s.AR), ARMean: s.ARMean, hist: cloneOrNil(s.Hist), Growth: s.Growth, Measured: s.Measured,
		HW: s.HW, HWGamma: s.HWGamma}
	if !(f.DF() > 0) {
		return nil, fmt.Errorf("theta: state has %d values for %v residual degrees of freedom, none left", s.N, f.DF())
	}
	f.Sigma2 = f.sse / f.DF()
	return f, nil
}

// cloneOrNil returns a copy of x, nil when x is empty.
func cloneOrNil(x []float64) []float64 {
	if len(x) == 0 {
		return nil
	}
	return slices.Clone(x)
}

// maxIndex bounds the time index of a restored state (2^53, the integers a
// float64 holds exactly): a series of more values than that is a corrupt
// state, whose line's moments would overflow.
const maxIndex = 1 << 53

// Clone returns a deep copy of f.
func (f *Model) Clone() *Model {
	c := *f
	c.Season = slices.Clone(f.Season)
	c.recent = slices.Clone(f.recent)
	c.recentY = slices.Clone(f.recentY)
	c.AR = slices.Clone(f.AR)
	c.hist = slices.Clone(f.hist)
	return &c
}

// ses fits simple exponential smoothing to x by least squares, α in
// [AlphaMin, AlphaMax] and the initial level ℓ₀ free: for a given α the
// one-step errors are affine in ℓ₀ (e_t = u_t − (1−α)^t·ℓ₀), so ℓ₀ has a
// closed form (sesSSE); α is taken from a grid of sesGrid points and
// refined by golden-section search between its neighbours. This is the
// criterion of forecast::ses (ets "ANN" with opt.crit = "mse"). The
// smoothing runs on x less its mean, which shifts ℓ₀ and leaves the errors
// alone: on raw values far from zero, Σu² − Σuw·ℓ₀ would cancel
// catastrophically (a level of 1e6 with unit noise).
func ses(x []float64) (alpha, l0, sse float64) {
	var mu float64
	for _, v := range x {
		mu += v
	}
	mu /= float64(len(x))
	xc := make([]float64, len(x))
	for i, v := range x {
		xc[i] = v - mu
	}
	alpha, l0, sse = sesCentred(xc)
	return alpha, l0 + mu, sse
}

// sesCentred is ses on values of mean zero.
func sesCentred(x []float64) (alpha, l0, sse float64) {
	const sesGrid = 50
	best, bestSSE := 0, math.Inf(1)
	grid := func(i int) float64 {
		return AlphaMin + (AlphaMax-AlphaMin)*float64(i)/sesGrid
	}
	for i := 0; i <= sesGrid; i++ {
		if s, _ := sesSSE(x, grid(i)); s < bestSSE {
			best, bestSSE = i, s
		}
	}
	lo, hi := grid(max(best-1, 0)), grid(min(best+1, sesGrid))
	const phi = 0.6180339887498949
	a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
	fa, _ := sesSSE(x, a)
	fb, _ := sesSSE(x, b)
	for range 60 {
		if fa <= fb {
			hi, b, fb = b, a, fa
			a = hi - phi*(hi-lo)
			fa, _ = sesSSE(x, a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + phi*(hi-lo)
			fb, _ = sesSSE(x, b)
		}
	}
	alpha = grid(best)
	if s, _ := sesSSE(x, (lo+hi)/2); s < bestSSE {
		alpha = (lo + hi) / 2
	}
	sse, l0 = sesSSE(x, alpha)
	return alpha, l0, sse
}

// sesSSE returns the smallest sum of squared one-step errors of simple
// exponential smoothing of x with weight alpha over the initial level, and
// that level. With ℓ₀ = 0 the level before x[t] is c_t, and ℓ₀ adds
// w_t·ℓ₀, w_t = (1−α)^t; the errors u_t − w_t·ℓ₀ (u_t = x[t] − c_t) are
// least squares in ℓ₀ at Σuw/Σw².
func sesSSE(x []float64, alpha float64) (sse, l0 float64) {
	c, w := 0.0, 1.0
	var suu, suw, sww float64
	for _, v := range x {
		u := v - c
		suu += u * u
		suw += u * w
		sww += w * w
		c += alpha * u
		w *= 1 - alpha
	}
	l0 = suw / sww
	return max(suu-suw*l0, 0), l0
}

// FitHW fits Holt–Winters' method with a damped trend and a smoothed
// season of period m to x (Model.HW): the season multiplicative for
// positive x, else additive; α, β, γ and φ on a grid (hwGrid) by the
// squared one-step errors of the values after the first season, the
// level, trend and indices started from the first two seasons' means.
// Where the theta method keeps the indices of a classical decomposition
// of every value, this follows a season whose amplitude or shape moves
// (a growing multiplicative season), and its trend is the recent one,
// damped, not a line through every value. It needs 3m + 4 values, and
// gives ErrTooShort below, as for m < 2; ErrOverflow where no grid
// point's errors are finite. O(len(hwGrid)·n).
func FitHW(x []float64, m int) (*Model, error) {
	n := len(x)
	if m < 2 || n < 3*m+4 {
		return nil, ErrTooShort
	}
	if !allFinite(x) {
		return nil, errors.New("theta: a value is not finite")
	}
	additive := slices.ContainsFunc(x, func(v float64) bool { return !(v > 0) })
	var m1, m2 float64
	for k := range m {
		m1 += x[k]
		m2 += x[m+k]
	}
	m1, m2 = m1/float64(m), m2/float64(m)
	if !additive && slices.ContainsFunc(x[:m], func(v float64) bool { return v/m1 < minIndex }) {
		return nil, errors.New("theta: a seasonal index near zero")
	}
	f := &Model{HW: true, Additive: additive, Season: make([]float64, m)}
	start := func() {
		f.Level, f.Trend, f.Phase = m1, (m2-m1)/float64(m), 0
		for k := range m {
			if additive {
				f.Season[k] = x[k] - m1
			} else {
				f.Season[k] = x[k] / m1
			}
		}
	}
	best, bestSSE := [4]float64{}, math.Inf(1)
	for _, p := range hwGrid {
		f.Alpha, f.Beta, f.HWGamma, f.Phi = p[0], p[1], p[2], p[3]
		start()
		var sse float64
		for _, y := range x[m:] {
			e := f.hwStep(y)
			sse += e * e
		}
		if sse < bestSSE {
			best, bestSSE = p, sse
		}
	}
	if math.IsInf(bestSSE, 1) {
		return nil, ErrOverflow
	}
	// The chosen point's run again, the line's moments counted over every
	// value (not used by the forecasts: they keep Update's bookkeeping
	// and FromState's checks as for the other kinds).
	f.Alpha, f.Beta, f.HWGamma, f.Phi = best[0], best[1], best[2], best[3]
	start()
	for t, y := range x {
		if t >= m {
			e := f.hwStep(y)
			f.sse += e * e
		}
		f.line(y)
	}
	if !f.finite() || !(f.DF() > 0) {
		return nil, ErrOverflow
	}
	return f, nil
}

// hwGrid are the 620 (α, β, γ, φ) FitHW tries: γ at most 1 − α, so that
// a season is never smoothed faster than the level keeps its past (ets's
// space, whose γ is this one's times 1 − α, allows up to 1); φ below 1, a
// trend that always flattens.
var hwGrid = func() [][4]float64 {
	var g [][4]float64
	for _, a := range []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9} {
		for _, b := range []float64{0, 0.02, 0.05, 0.1, 0.2} {
			for _, c := range []float64{0, 0.05, 0.1, 0.2, 0.4} {
				if c > 1-a {
					continue
				}
				for _, phi := range []float64{0.8, 0.9, 0.95, 0.98} {
					g = append(g, [4]float64{a, b, c, phi})
				}
			}
		}
	}
	return g
}()

// hwStep advances the Holt–Winters state (Model.HW) by the value y and
// returns its one-step error. A multiplicative season is a ratio to a
// positive level: from the first value, level or level-and-trend at or
// below zero on, it is frozen for good (HWGamma 0), as the theta method's
// indices are. Near zero the ratio y/ℓ' is unbounded, and indices smoothed
// toward it grew a thousandfold on a temperature that fell through zero,
// the forecasts with them (a read-only review's probe). An index is also
// smoothed only toward a ratio of at least minIndex.
func (f *Model) hwStep(y float64) float64 {
	s := f.Season[f.Phase]
	base := f.Level + f.Phi*f.Trend
	var pred, l float64
	if f.Additive {
		pred = base + s
		l = f.Alpha*(y-s) + (1-f.Alpha)*base
		f.Season[f.Phase] = f.HWGamma*(y-l) + (1-f.HWGamma)*s
	} else {
		pred = base * s
		l = f.Alpha*(y/s) + (1-f.Alpha)*base
		if !(y > 0 && l > 0 && base > 0) {
			f.HWGamma = 0
		}
		if r := y / l; f.HWGamma > 0 && r >= minIndex {
			f.Season[f.Phase] = f.HWGamma*r + (1-f.HWGamma)*s
		}
	}
	f.Trend = f.Beta*(l-f.Level) + (1-f.Beta)*f.Phi*f.Trend
	f.Level = l
	f.Phase = (f.Phase + 1) % len(f.Season)
	return y - pred
}

// hwForecast is Forecast for Holt–Winters: step h is (ℓ + (φ + … + φ^h)b)
// times (plus) the index of its phase; its standard deviation that of the
// additive-error state-space form's h-step error, σ√(1 + Σ_{j<h} c_j²),
// c_j = α + αβ(φ + … + φ^j) + γ(1 − α) where j is a whole number of
// seasons (Hyndman et al. 2008, table 6.1, with β and γ of the
// error-correction form), as a multiplicative season's approximation too.
func (f *Model) hwForecast(mean, sd []float64) {
	m := len(f.Season)
	damp, phiJ, cum := 0.0, 1.0, 0.0
	for i := range mean {
		phiJ *= f.Phi
		damp += phiJ // φ + … + φ^(i+1)
		base := f.Level + damp*f.Trend
		if s := f.Season[(f.Phase+i)%m]; f.Additive {
			mean[i] = base + s
		} else {
			mean[i] = base * s
		}
		if sd != nil {
			sd[i] = math.Sqrt(f.Sigma2 * (1 + cum))
			c := f.Alpha + f.Alpha*f.Beta*damp
			if (i+1)%m == 0 {
				c += f.HWGamma * (1 - f.Alpha)
			}
			cum += c * c
		}
	}
}
