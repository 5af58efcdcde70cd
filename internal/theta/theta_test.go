package theta

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sesSSE's closed-form initial level against the recursion itself: the SSE
// at ℓ₀ is the minimum over ℓ₀ (a parabola: ℓ₀ ± 1e-3 both larger), and
// it equals the sum of squared errors of the recursion run from ℓ₀. The
// sums are of 60 terms, so agreement to 1e-9 relative leaves room for
// rounding (about 1e-15 relative per term).
func TestSESInitialLevelIsLeastSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 60)
	for i := range x {
		x[i] = 10 + 0.1*float64(i) + rng.NormFloat64()
	}
	run := func(alpha, l0 float64) float64 {
		var s float64
		l := l0
		for _, v := range x {
			s += (v - l) * (v - l)
			l += alpha * (v - l)
		}
		return s
	}
	for _, alpha := range []float64{AlphaMin, 0.1, 0.5, AlphaMax} {
		sse, l0 := sesSSE(x, alpha)
		if r := run(alpha, l0); math.Abs(r-sse) > 1e-9*r {
			t.Errorf("α = %v: closed-form SSE %v, recursion from ℓ₀ = %v gives %v", alpha, sse, l0, r)
		}
		if run(alpha, l0-1e-3) <= sse || run(alpha, l0+1e-3) <= sse {
			t.Errorf("α = %v: ℓ₀ = %v is not the minimum", alpha, l0)
		}
	}
}

// ses's α is the least-squares one: no α of a fine grid (2 000 points)
// does better than the fit by more than rounding.
func TestSESAlphaMinimisesSSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, phi := range []float64{0.2, 0.8} {
		// An ARIMA(0,1,1) with θ = −(1−φ): SES with α = φ is its optimum.
		x := make([]float64, 120)
		e0, level := 0.0, 100.0
		for i := range x {
			e := rng.NormFloat64()
			level += e - (1-phi)*e0
			x[i], e0 = level, e
		}
		alpha, _, sse := ses(x)
		for i := 0; i <= 2000; i++ {
			a := AlphaMin + (AlphaMax-AlphaMin)*float64(i)/2000
			if s, _ := sesSSE(x, a); s < sse*(1-1e-9) {
				t.Errorf("φ = %v: α = %v has SSE %v, below the fit's %v at α = %v", phi, a, s, sse, alpha)
				break
			}
		}
	}
}

// A series that is exactly a constant level times a period-4 pattern: the
// test finds the season, the decomposition's indices are the pattern
// normalised to mean 1 (exact up to rounding), and the forecast continues
// the pattern from where the series stops (42 values: not a whole number
// of periods, so the steps' indices must be the ones after the last
// value), with zero drift.
func TestSeasonalPatternIsRecovered(t *testing.T) {
	pattern := []float64{0.8, 1.3, 1.1, 0.8}
	x := make([]float64, 42)
	for i := range x {
		x[i] = 50 * pattern[i%4]
	}
	m, err := Fit(x, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Season == nil {
		t.Fatal("a pure period-4 pattern was not found seasonal")
	}
	mean := make([]float64, 8)
	m.Forecast(mean, nil)
	for h, v := range mean {
		if want := 50 * pattern[(42+h)%4]; math.Abs(v-want) > 1e-9*want {
			t.Errorf("step %d: forecast %v, want %v", h+1, v, want)
		}
	}
	if math.Abs(m.Drift) > 1e-12 {
		t.Errorf("drift %v on a level series, want 0", m.Drift)
	}
}

// The drift is half the least-squares slope and the forecast
// ℓ + b·(h − 1 + (1 − (1−α)^N)/α): for a straight line y = 3 + 2t with α at
// its upper bound, the level after the last value is the last value
// (to (1−α)-weighted terms of order 1e-4·2/α), b = 1, and step h forecasts
// y_N−1 + (h − 1 + 1/α·(1 − (1−α)^N)) ≈ y_N−1 + h.
func TestLineForecast(t *testing.T) {
	x := make([]float64, 30)
	for i := range x {
		x[i] = 3 + 2*float64(i)
	}
	m, err := Fit(x, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.Drift-1) > 1e-12 {
		t.Errorf("drift %v, want half the slope 2", m.Drift)
	}
	if m.Alpha < 0.99 {
		t.Errorf("α = %v on a line, want near its bound %v (the level must follow)", m.Alpha, AlphaMax)
	}
	mean, sd := make([]float64, 3), make([]float64, 3)
	m.Forecast(mean, sd)
	last := x[len(x)-1]
	for h, v := range mean {
		// Level within 2(1−α)/α of the last value, drift term within the
		// same of h: 1e-3 covers α ≥ 0.999.
		if want := last + float64(h+1); math.Abs(v-want) > 1e-3 {
			t.Errorf("step %d: %v, want ≈ %v", h+1, v, want)
		}
		if want := math.Sqrt(m.Sigma2 * (1 + float64(h)*m.Alpha*m.Alpha)); sd[h] != want {
			t.Errorf("step %d: sd %v, want %v", h+1, sd[h], want)
		}
	}
}

// SetWeight sets the drift's share of the line's slope, and Update keeps
// it: on the line 3 + 2t the drift is 2w for w = 0, 1 and thetaf's 0.5, and
// stays so as the line goes on. The slope of an exact line comes out of
// Welford's sums to a few ulps of 2: 1e-12.
func TestSetWeight(t *testing.T) {
	x := make([]float64, 30)
	for i := range x {
		x[i] = 3 + 2*float64(i)
	}
	for _, w := range []float64{0, DefaultWeight, 1} {
		m, err := Fit(x, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if m.Weight != DefaultWeight {
			t.Fatalf("Fit's weight %v, want thetaf's %v", m.Weight, DefaultWeight)
		}
		m.SetWeight(w)
		if math.Abs(m.Drift-2*w) > 1e-12 {
			t.Errorf("w = %v: drift %v, want %v", w, m.Drift, 2*w)
		}
		for i := 30; i < 40; i++ {
			m.Update(3 + 2*float64(i))
		}
		if m.Weight != w || math.Abs(m.Drift-2*w) > 1e-12 {
			t.Errorf("w = %v after 10 updates: weight %v, drift %v, want %v", w, m.Weight, m.Drift, 2*w)
		}
		c, err := FromState(m.State())
		if err != nil || c.Weight != w {
			t.Fatalf("w = %v restored: %v, weight %v", w, err, c.Weight)
		}
	}
}

// SetGrowth: the smoothing's band of step h becomes σ√(1 + (h−1)g) (the
// same expression, to the bit), the point forecasts stay
// as they were to the bit, σ² still follows the updates, the growth
// survives Update, Clone and the state's round trip, and a growth outside
// [0, MaxGrowth] (or one not measured that is not 0) is refused: by
// SetGrowth with a panic, by FromState with an error.
func TestSetGrowth(t *testing.T) {
	x := []float64{5, 9, 7, 4, 6, 10, 8, 5, 7, 11, 9, 6, 8, 12, 10, 7, 9, 13, 11, 8}
	m, err := Fit(x, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	before, sdBefore := make([]float64, 8), make([]float64, 8)
	m.Forecast(before, sdBefore)
	if a := m.Alpha; math.Abs(sdBefore[7]-math.Sqrt(m.Sigma2*(1+7*a*a))) > 1e-15*sdBefore[7] {
		t.Fatalf("unmeasured band %v, want the local-level model's", sdBefore[7])
	}
	const g = 0.05
	m.SetGrowth(g)
	for _, v := range []float64{10, 14, 12} {
		m.Update(v)
	}
	c, err := FromState(m.State())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*Model{m, m.Clone(), c} {
		mean, sd := make([]float64, 8), make([]float64, 8)
		f.Forecast(mean, sd)
		ref, refSD := make([]float64, 8), make([]float64, 8)
		u := *f
		u.Measured, u.Growth = false, 0
		u.Forecast(ref, refSD)
		for h := range sd {
			want := math.Sqrt(f.Sigma2 * (1 + float64(h)*g))
			if math.Float64bits(sd[h]) != math.Float64bits(want) || math.Float64bits(mean[h]) != math.Float64bits(ref[h]) {
				t.Fatalf("step %d: %v ± %v, want %v ± %v", h+1, mean[h], sd[h], ref[h], want)
			}
		}
	}
	for name, mutate := range map[string]func(*State){
		"above":        func(s *State) { s.Growth = MaxGrowth * 1.5 },
		"negative":     func(s *State) { s.Growth = -0.01 },
		"NaN":          func(s *State) { s.Growth = math.NaN() },
		"not measured": func(s *State) { s.Measured = false },
		"damped":       func(s *State) { s.Phi, s.Beta, s.Weight = 0.9, 0.1, 0 },
	} {
		s := m.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("growth %s: the state was accepted", name)
		}
	}
	for _, bad := range []float64{-0.1, MaxGrowth + 0.1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetGrowth(%v) did not panic", bad)
				}
			}()
			m.SetGrowth(bad)
		}()
	}
	ar, err := FitAR(append(x, x...), 4, false)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("SetGrowth on an autoregression did not panic")
		}
	}()
	ar.SetGrowth(0.1)
}

// FitDamped: Update continues Holt's damped recursions bit for bit
// (holt on the longer series with the fitted α, β, φ), Forecast is the
// closed form ℓ + b·Σ_{j≤h} φ^j with σ²(1 + Σ_{j<h} (α + β·Σ_{i≤j} φ^i)²)
// (to 1e-12 relative: sums of a few terms), the state round-trips, and
// states a fit cannot write are refused.
func TestFitDamped(t *testing.T) {
	x := make([]float64, 60)
	for i := range x {
		x[i] = 50 + 30*(1-math.Exp(-float64(i)/15)) + math.Sin(1.7*float64(i))
	}
	if _, err := FitDamped(x[:MinDamped-1], 1, false); err == nil {
		t.Error("fitted on fewer than MinDamped values")
	}
	m, err := FitDamped(x[:40], 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if !(m.Phi >= 0.8 && m.Phi < 1) || m.Beta > m.Alpha || m.Weight != 0 || m.Drift != 0 {
		t.Fatalf("fitted %+v", m)
	}
	for _, v := range x[40:] {
		m.Update(v)
	}
	sse, l, b := holt(x, m.Alpha, m.Beta, m.Phi)
	if m.Level != l || m.Trend != b || m.sse != sse {
		t.Errorf("after updates: level %v trend %v sse %v, holt %v %v %v", m.Level, m.Trend, m.sse, l, b, sse)
	}
	mean, sd := make([]float64, 5), make([]float64, 5)
	m.Forecast(mean, sd)
	damp, phiJ, cum := 0.0, 1.0, 0.0
	for h := range mean {
		phiJ *= m.Phi
		damp += phiJ
		want, wantSD := l+b*damp, math.Sqrt(m.Sigma2*(1+cum))
		if math.Abs(mean[h]-want) > 1e-12*math.Abs(want) || math.Abs(sd[h]-wantSD) > 1e-12*wantSD {
			t.Errorf("step %d: %v ± %v, want %v ± %v", h+1, mean[h], sd[h], want, wantSD)
		}
		c := m.Alpha + m.Beta*damp
		cum += c * c
	}
	c, err := FromState(m.State())
	if err != nil || c.Phi != m.Phi || c.Beta != m.Beta || c.Trend != m.Trend || c.Drift != 0 {
		t.Fatalf("restored %+v (%v), want %+v", c, err, m)
	}
	for name, mutate := range map[string]func(*State){
		"φ 1":          func(s *State) { s.Phi = 1 },
		"β above α":    func(s *State) { s.Beta = s.Alpha * 2 },
		"a drift too":  func(s *State) { s.Weight = 0.5 },
		"NaN trend":    func(s *State) { s.Trend = math.NaN() },
		"with profile": func(s *State) { s.Profile = 4 },
	} {
		s := m.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("%s: the state was accepted", name)
		}
	}
}

// Too short, not finite, not seasonal: errors and fallbacks.
func TestFitRefusesAndFallsBack(t *testing.T) {
	if _, err := Fit([]float64{1, 2, 3}, 1, false); err != ErrTooShort {
		t.Errorf("3 values: %v, want ErrTooShort", err)
	}
	if _, err := Fit([]float64{1, 2, math.NaN(), 4}, 1, false); err == nil {
		t.Error("a NaN was accepted")
	}
	// A positive seasonal pattern with an index near zero (its ratios to
	// the moving average 1.0000005 are about 1e-6, 2, 1, 1): adjusting by
	// it would divide by almost zero, so the forecast is not seasonal.
	x := make([]float64, 40)
	for i := range x {
		x[i] = []float64{1e-6, 2, 1, 1}[i%4]
	}
	if m, err := Fit(x, 4, false); err != nil {
		t.Errorf("seasonal series with a zero index: %v", err)
	} else if m.Season != nil {
		t.Errorf("seasonal series with a zero index: season %v, want none", m.Season)
	}
}

// A seasonal series with a value at or below zero is adjusted additively
// (R's decompose type "additive"): on a period-4 pattern on a line through
// zero the centred moving average is the line itself, so each component
// is the pattern less its mean exactly (1e-12: sums of a few values of
// order 10), rotated to the step after the last value; the adjusted
// series is the line, forecasts add the components back, and the state
// keeps Additive through State and FromState.
func TestFitAdditiveSeason(t *testing.T) {
	pattern := []float64{-3, 5, 1, -1} // mean 0.5
	x := make([]float64, 42)
	for i := range x {
		x[i] = -10 + 0.5*float64(i) + pattern[i%4]
	}
	m, err := Fit(x, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Additive || len(m.Season) != 4 {
		t.Fatalf("additive %v, season %v", m.Additive, m.Season)
	}
	for k, c := range m.Season {
		if want := pattern[(len(x)+k)%4] - 0.5; math.Abs(c-want) > 1e-12 {
			t.Errorf("component of step %d: %g, want %g", k+1, c, want)
		}
	}
	mean := make([]float64, 8)
	m.Forecast(mean, nil)
	plain := *m
	plain.Season = nil
	base := make([]float64, 8)
	plain.Forecast(base, nil)
	for h := range mean {
		if want := base[h] + m.Season[h%4]; math.Abs(mean[h]-want) > 1e-12 {
			t.Errorf("step %d: %g, want the unseasonal %g plus its component", h+1, mean[h], want)
		}
	}
	r, err := FromState(m.State())
	if err != nil || !r.Additive || !slices.Equal(r.Season, m.Season) {
		t.Errorf("restored: %v, additive %v, season %v", err, r != nil && r.Additive, r)
	}
	pos := make([]float64, len(x))
	for i := range x {
		pos[i] = x[i] + 100
	}
	if p, err := Fit(pos, 4, false); err != nil || p.Additive || len(p.Season) != 4 {
		t.Errorf("a positive series: %v, additive %v, season %v; want multiplicative", err, p != nil && p.Additive, p)
	}
}

// Sigma2 and Level against the smoothing recursion run independently from
// the fitted α and the least-squares ℓ₀: σ² = SSE/(N − 2) (forecast 8.20's
// ets: two parameters) and ℓ the level after the last value. A non-seasonal
// random walk with noise; 1e-9 relative, as in
// TestSESInitialLevelIsLeastSquares.
func TestSigma2AndLevelFollowTheRecursion(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, 80)
	level := 20.0
	for i := range x {
		level += 0.3 * rng.NormFloat64()
		x[i] = level + rng.NormFloat64()
	}
	m, err := Fit(x, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	_, l0 := sesSSE(x, m.Alpha)
	var sse float64
	l := l0
	for _, v := range x {
		sse += (v - l) * (v - l)
		l += m.Alpha * (v - l)
	}
	if want := sse / float64(len(x)-2); math.Abs(m.Sigma2-want) > 1e-9*want {
		t.Errorf("σ² = %v, want SSE/(N−2) = %v", m.Sigma2, want)
	}
	if math.Abs(m.Level-l) > 1e-9*math.Abs(l) {
		t.Errorf("level %v, want %v", m.Level, l)
	}
}

// Smoothing is translation-equivariant: the same series a million higher
// gets the same α and SSE (to 1e-6 relative: the centring leaves rounding
// of order 1e6·1e-16 per value in errors of order 1), where the uncentred
// sums would cancel to nothing.
func TestSESIsTranslationEquivariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, 100)
	hi := make([]float64, 100)
	level := 0.0
	for i := range x {
		level += 0.5 * rng.NormFloat64()
		x[i] = level + rng.NormFloat64()
		hi[i] = x[i] + 1e6
	}
	a, l0, s := ses(x)
	b, l1, s1 := ses(hi)
	if math.Abs(a-b) > 1e-6 || math.Abs(s-s1) > 1e-6*s || math.Abs(l1-l0-1e6) > 1e-6*1e6 {
		t.Errorf("α %v, ℓ₀ %v, SSE %v; a million higher: α %v, ℓ₀ − 1e6 %v, SSE %v", a, l0, s, b, l1-1e6, s1)
	}
}

// Update continues a fit exactly as the recursions would over the whole
// series with α and the seasonal indices held: the level is SES from the
// fit's ℓ₀ over every adjusted value, the drift half the least-squares
// slope of all of them, σ² their smoothing's SSE over N − 2, and the
// season's phase has moved on by the values added. Welford's updates and
// the direct sums round differently, by about 1e-15 relative per term over
// 90 terms of values near 100: 1e-9 relative leaves a wide margin and
// still fails for any wrong term (a wrong index or a missed update moves
// these by 1e-3 or more).
func TestUpdateContinuesTheFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	pattern := []float64{0.9, 1.2, 1.0, 0.9}
	x := make([]float64, 90)
	for i := range x {
		x[i] = (100 + 0.5*float64(i) + 2*rng.NormFloat64()) * pattern[i%4]
	}
	const n0 = 61
	m, err := Fit(x[:n0], 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Season == nil {
		t.Fatal("the seasonal pattern was not detected")
	}
	// The fitted indices by the phase of x's index.
	idx := make([]float64, 4)
	for k := range idx {
		idx[(n0+k)%4] = m.Season[k]
	}
	adj := make([]float64, len(x))
	for i := range x {
		adj[i] = x[i] / idx[i%4]
	}
	_, l0, _ := ses(adj[:n0])
	for _, v := range x[n0:] {
		m.Update(v)
	}
	level, drift, _ := checkSmoothing(t, m, adj, l0)
	if m.N != len(x) || m.Phase != (len(x)-n0)%4 {
		t.Errorf("N = %d, phase %d; want %d, %d", m.N, m.Phase, len(x), (len(x)-n0)%4)
	}
	// The next step's index is that of x's next position.
	mean := make([]float64, 4)
	m.Forecast(mean, nil)
	start := (1 - math.Pow(1-m.Alpha, float64(m.N))) / m.Alpha
	for h := range mean {
		want := (level + drift*(float64(h)+start)) * idx[(len(x)+h)%4]
		closeTo(t, "forecast", mean[h], want)
	}
}

// checkSmoothing checks m's level, drift and σ² against the smoothing
// recursion run from l0 with m's α over the adjusted values adj, and the
// line through them (1e-9 relative: sums of at most a few hundred terms),
// and returns the recursion's level, drift and σ²: the squared errors over
// N − 2, less a season's m − 1 free indices, estimated from the same values.
func checkSmoothing(t *testing.T, m *Model, adj []float64, l0 float64) (level, drift, sigma2 float64) {
	t.Helper()
	level, sse := l0, 0.0
	for _, v := range adj {
		sse += (v - level) * (v - level)
		level += m.Alpha * (v - level)
	}
	_, _, stt, stx := line(adj)
	drift, sigma2 = stx/stt/2, sse/float64(len(adj)-2-max(len(m.Season)-1, 0))
	closeTo(t, "level", m.Level, level)
	closeTo(t, "drift", m.Drift, drift)
	closeTo(t, "σ²", m.Sigma2, sigma2)
	return level, drift, sigma2
}

// closeTo reports got unless it is within 1e-9 relative of want (a NaN
// on either side is never close).
func closeTo(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !(math.Abs(got-want) <= 1e-9*math.Abs(want)) {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// A state round trip gives a model that forecasts and updates bit for bit
// as the original, and shares no storage with it; states that no fit
// could have produced are refused.
func TestStateRoundTrip(t *testing.T) {
	x := []float64{5, 9, 7, 4, 6, 10, 8, 5, 7, 11, 9, 6, 8, 12, 10, 7}
	m, err := Fit(x, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromState(m.State())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{9, 13, 11} {
		m.Update(v)
		c.Update(v)
	}
	sameForecasts(t, m, c, 6)
	if len(m.Season) > 0 {
		c.Season[0] = -1
		if m.Season[0] == -1 {
			t.Error("the restored model shares its season with the original")
		}
	}
	for name, mutate := range map[string]func(*State){
		"NaN level":     func(s *State) { s.Level = math.NaN() },
		"α above":       func(s *State) { s.Alpha = 1 },
		"three values":  func(s *State) { s.N = 3 },
		"phase outside": func(s *State) { s.Phase = len(s.Season) },
		"Inf index":     func(s *State) { s.Season = []float64{math.Inf(1), 1} },
		"weight above":  func(s *State) { s.Weight = 1.5 },
		"NaN weight":    func(s *State) { s.Weight = math.NaN() },
	} {
		s := m.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("%s: the state was accepted", name)
		}
	}
	cl := m.Clone()
	cl.Update(100)
	if cl.Level == m.Level {
		t.Error("Clone shares its state with the original")
	}
}

// Skip keeps the season and the line in time across a gap: a series that
// is exactly a level times a period-4 pattern, with values 42..46 never
// observed, forecasts the pattern at the phase of the true time; a series
// that is exactly a line 10 + 2t keeps the drift at half its slope, 1,
// only if the line's time index skips the gap too (counted by values, the
// slope would come out at about 1.4). Both closed forms are exact up to
// rounding of sums of a few dozen terms: 1e-9 relative.
func TestSkipKeepsTimeAcrossAGap(t *testing.T) {
	pattern := []float64{0.8, 1.3, 1.1, 0.8}
	x := make([]float64, 70)
	for i := range x {
		x[i] = 50 * pattern[i%4]
	}
	m, err := Fit(x[:42], 4, false)
	if err != nil || m.Season == nil {
		t.Fatalf("fit: %v, season %v", err, m.Season)
	}
	m.Skip(5)
	for _, v := range x[47:61] {
		m.Update(v)
	}
	mean := make([]float64, 6)
	m.Forecast(mean, nil)
	for h, f := range mean {
		if want := x[61+h]; math.Abs(f-want) > 1e-9*want {
			t.Errorf("after the gap, step %d forecasts %v, want %v", h+1, f, want)
		}
	}

	line := make([]float64, 60)
	for i := range line {
		line[i] = 10 + 2*float64(i)
	}
	l, err := Fit(line[:30], 1, false)
	if err != nil {
		t.Fatal(err)
	}
	l.Skip(10)
	for _, v := range line[40:] {
		l.Update(v)
	}
	if math.Abs(l.Drift-1) > 1e-9 {
		t.Errorf("drift %v after the gap, want 1 (half the slope 2)", l.Drift)
	}
}

// TestFitOverflow: values whose squared errors overflow (about 1e155 and
// beyond) are refused with ErrOverflow by every fit, rather than fitted to
// an infinite or NaN σ²; values of 1e150 (online.MaxAbsValue) fit to a
// finite state. A state with a time index beyond 2^53 is refused.
func TestFitOverflow(t *testing.T) {
	for _, scale := range []float64{1e160, 1e150} {
		x := make([]float64, 60)
		for i := range x {
			x[i] = scale * (2 + math.Sin(float64(i)))
		}
		fits := map[string]func() (*Model, error){
			"Fit":        func() (*Model, error) { return Fit(x, 12, false) },
			"FitDamped":  func() (*Model, error) { return FitDamped(x, 12, false) },
			"FitProfile": func() (*Model, error) { return FitProfile(x, 12, 0, 2) },
			"FitHW":      func() (*Model, error) { return FitHW(x, 12) },
		}
		for name, fit := range fits {
			f, err := fit()
			switch {
			case scale > 1e155 && !errors.Is(err, ErrOverflow):
				t.Errorf("%s at %g: %v, want ErrOverflow", name, scale, err)
			case scale <= 1e155 && (err != nil || !f.finite()):
				t.Errorf("%s at %g: %v", name, scale, err)
			}
		}
	}
	f, err := Fit([]float64{1, 2, 3, 4, 5, 6}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	s := f.State()
	s.NextT = 1e300
	if _, err := FromState(s); err == nil {
		t.Error("a state with a time index of 1e300 restored")
	}
}

// A season the test misses: three cycles of a sine whose peak is nine
// times its trough. The autocorrelations of the shorter lags, which the
// season itself makes large (r_k ≈ cos(2πk/12)·(n−k)/n), put the standard
// error of r_12 at 0.47, and r_12 = 24/36 is 1.41 of them, below 1.645:
// thetaf's test fails. With known the indices are the decomposition's, bit
// for bit, for every fit that adjusts (Fit, FitDamped, FitAR; on the sine
// times 1 plus an AR(1) of 0.7 with innovations of 1 %, so that the
// adjusted values have an autoregression to fit), and the forecast of the noise-free sine continues it: its
// adjusted values are the level 1000 to rounding, so the forecasts are
// the pattern to a relative 1e-12 (the decomposition's sums of 36 terms
// lose a few hundred ulps). A constant series has no season, known or
// not.
func TestKnownSeason(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 3))
	x, noisy := make([]float64, 36), make([]float64, 36)
	e := 0.0
	for i := range x {
		x[i] = 1000 * (1 + 0.8*math.Sin(2*math.Pi*float64(i)/12))
		e = 0.7*e + 0.01*rng.NormFloat64()
		noisy[i] = x[i] * (1 + e)
	}
	if Seasonal(x, 12) || Seasonal(noisy, 12) {
		t.Fatal("the test passes: the case does not test known")
	}
	tested, err := Fit(noisy, 12, false)
	if err != nil || tested.Season != nil {
		t.Fatalf("untested: %v, season %v; want none", err, tested.Season)
	}
	idx, ok := decompose(noisy, 12, false)
	if !ok {
		t.Fatal("no decomposition")
	}
	fit, err0 := Fit(noisy, 12, true)
	damped, err1 := FitDamped(noisy, 12, true)
	ar, err2 := FitAR(noisy, 12, true)
	if err := errors.Join(err0, err1, err2); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*Model{"Fit": fit, "FitDamped": damped, "FitAR": ar} {
		if len(m.Season) != 12 {
			t.Fatalf("%s: season %v, want 12 indices", name, m.Season)
		}
		for k, v := range m.Season {
			if want := idx[(36+k)%12]; v != want {
				t.Errorf("%s: index %d = %v, want the decomposition's %v", name, k, v, want)
			}
		}
	}
	known, err := Fit(x, 12, true)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, 12)
	known.Forecast(mean, nil)
	for h, v := range mean {
		if want := x[(36+h)%12]; math.Abs(v-want) > 1e-12*1000 {
			t.Errorf("step %d: %v, want the pattern's %v", h+1, v, want)
		}
	}
	flat := make([]float64, 36)
	for i := range flat {
		flat[i] = 7
	}
	if m, err := Fit(flat, 12, true); err != nil || m.Season != nil {
		t.Errorf("a constant series, known: %v, season %v; want none", err, m.Season)
	}
}

// TestDriftEvident: the test of a random walk's drift against Student's t
// in closed form. Increments μ ± 1 alternating, k = 6 of them, have mean μ
// and sample standard deviation √(k/(k−1)), so t = μ√(k−1) exactly; the
// 0.975 quantile of t with 5 degrees of freedom is 2.570581836614740
// (tables). μ 1e-6 relative on either side of q/√5 decides the test:
// Welford's sums of six terms err by about 1e-15 relative, far inside.
// Increments that never vary have a drift unless they are zero; two
// values have none.
func TestDriftEvident(t *testing.T) {
	const q5 = 2.570581836614740
	series := func(mu float64) []float64 {
		x := []float64{100}
		for i := range 6 {
			x = append(x, x[i]+mu+float64(1-2*(i%2)))
		}
		return x
	}
	at := q5 / math.Sqrt(5)
	if !DriftEvident(series(at * (1 + 1e-6))) {
		t.Errorf("t = q·(1 + 1e-6): no drift, want one")
	}
	if DriftEvident(series(at * (1 - 1e-6))) {
		t.Errorf("t = q·(1 − 1e-6): a drift, want none")
	}
	if !DriftEvident(series(-at * (1 + 1e-6))) {
		t.Errorf("t = −q·(1 + 1e-6): no drift, want one (two-sided)")
	}
	if !DriftEvident([]float64{1, 3, 5, 7}) || DriftEvident([]float64{4, 4, 4, 4}) || DriftEvident([]float64{1, 5}) {
		t.Errorf("a line, a constant, two values: want true, false, false")
	}
}

// TestFitYoung: FitYoung is Fit with the line's drift kept only where
// DriftEvident says so. Noise about a level (no drift) gives simple
// exponential smoothing: Weight and Drift 0, α, level and variance Fit's
// bit for bit; a line with small noise keeps thetaf's half slope, its
// forecast Fit's bit for bit.
func TestFitYoung(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	flat, line := make([]float64, 10), make([]float64, 10)
	for i := range flat {
		e := rng.NormFloat64()
		flat[i], line[i] = 50+e, 50+5*float64(i)+e
	}
	if DriftEvident(flat) || !DriftEvident(line) {
		t.Fatalf("the cases: drift evident %v for the level, %v for the line", DriftEvident(flat), DriftEvident(line))
	}
	for _, c := range []struct {
		name   string
		x      []float64
		weight float64
	}{{"level", flat, 0}, {"line", line, DefaultWeight}} {
		got, err := FitYoung(c.x, 1)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Fit(c.x, 1, false)
		want.SetWeight(c.weight)
		if got.Weight != c.weight || got.Alpha != want.Alpha || got.Level != want.Level || got.Sigma2 != want.Sigma2 {
			t.Errorf("%s: weight %v α %v level %v σ² %v, want %v, %v, %v, %v", c.name, got.Weight, got.Alpha, got.Level,
				got.Sigma2, c.weight, want.Alpha, want.Level, want.Sigma2)
		}
		gm, gs, wm, ws := make([]float64, 6), make([]float64, 6), make([]float64, 6), make([]float64, 6)
		got.Forecast(gm, gs)
		want.Forecast(wm, ws)
		if !slices.Equal(gm, wm) || !slices.Equal(gs, ws) {
			t.Errorf("%s: forecast %v ± %v, want %v ± %v", c.name, gm, gs, wm, ws)
		}
	}
}

// sameForecasts fails t unless the restored model c forecasts n steps, mean
// and standard deviation, to the bit as the original m.
func sameForecasts(t *testing.T, m, c *Model, n int) {
	t.Helper()
	a, b := make([]float64, n), make([]float64, n)
	sa, sb := make([]float64, n), make([]float64, n)
	m.Forecast(a, sa)
	c.Forecast(b, sb)
	for h := range a {
		if math.Float64bits(a[h]) != math.Float64bits(b[h]) || math.Float64bits(sa[h]) != math.Float64bits(sb[h]) {
			t.Fatalf("step %d: restored model forecasts %v ± %v, original %v ± %v", h+1, b[h], sb[h], a[h], sa[h])
		}
	}
}
