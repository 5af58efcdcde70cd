package theta

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// hwRef runs Holt–Winters' recursions as the Model documents them (HW),
// from state (l, b, s with s[0] the next value's index), over ys, and
// returns the state after them and sse plus the squared one-step errors: an
// independent reference, written from the equations, not from hwStep.
func hwRef(ys []float64, l, b float64, s []float64, a, beta, g, phi float64, additive bool, sse float64) (float64, float64, []float64, float64) {
	s = append([]float64(nil), s...)
	m, p := len(s), 0
	for _, y := range ys {
		var pred, nl float64
		if additive {
			pred = l + phi*b + s[p]
			nl = a*(y-s[p]) + (1-a)*(l+phi*b)
			s[p] = g*(y-nl) + (1-g)*s[p]
		} else {
			pred = (l + phi*b) * s[p]
			nl = a*(y/s[p]) + (1-a)*(l+phi*b)
			s[p] = g*(y/nl) + (1-g)*s[p]
		}
		b = beta*(nl-l) + (1-beta)*phi*b
		l = nl
		sse += (y - pred) * (y - pred)
		p = (p + 1) % m
	}
	return l, b, append(s[p:], s[:p]...), sse
}

// FitHW: Update continues the recursions of the documented equations
// (hwRef, from the fitted state, bit for bit: the same operations in the
// same order); Forecast is (ℓ + b·Σ_{j≤h} φ^j) times the phase's index
// with σ²(1 + Σ_{j<h} c_j²), c_j = α + αβ·Σ_{i≤j} φ^i + γ(1 − α) at whole
// seasons (to 1e-12 relative: sums of a few terms); σ² is the squared
// errors of the values after the first season over N − 5 − (m − 1); the
// state round-trips and states a fit cannot write are refused; too few
// values give ErrTooShort.
func TestFitHW(t *testing.T) {
	const m = 4
	rng := rand.New(rand.NewPCG(4, 7))
	x := make([]float64, 60)
	for i := range x {
		// A growing level and a season whose amplitude grows with it.
		x[i] = (100 + 2*float64(i)) * (1 + 0.3*math.Sin(2*math.Pi*float64(i)/m+0.4)) * (1 + 0.02*rng.NormFloat64())
	}
	if _, err := FitHW(x[:3*m+3], m); !errors.Is(err, ErrTooShort) {
		t.Errorf("on %d values: %v, want ErrTooShort", 3*m+3, err)
	}
	f, err := FitHW(x[:40], m)
	if err != nil {
		t.Fatal(err)
	}
	if !f.HW || f.Additive || len(f.Season) != m || !(f.Phi > 0 && f.Phi < 1) || f.HWGamma > 1-f.Alpha || f.N != 40 {
		t.Fatalf("fitted %+v", f)
	}
	if want := f.sse / float64(40-5-(m-1)); f.Sigma2 != want || f.DF() != float64(40-5-(m-1)) {
		t.Errorf("σ² %v (DF %v), want %v", f.Sigma2, f.DF(), want)
	}
	s0 := append(append([]float64(nil), f.Season[f.Phase:]...), f.Season[:f.Phase]...)
	l, b, s, sse := hwRef(x[40:], f.Level, f.Trend, s0, f.Alpha, f.Beta, f.HWGamma, f.Phi, false, f.sse)
	for _, v := range x[40:] {
		f.Update(v)
	}
	got := append(append([]float64(nil), f.Season[f.Phase:]...), f.Season[:f.Phase]...)
	if f.Level != l || f.Trend != b || f.sse != sse || f.N != 60 {
		t.Errorf("after updates: level %v trend %v sse %v, reference %v %v %v", f.Level, f.Trend, f.sse, l, b, sse)
	}
	for k := range s {
		if got[k] != s[k] {
			t.Errorf("index %d: %v, reference %v", k, got[k], s[k])
		}
	}
	mean, sd := make([]float64, 9), make([]float64, 9)
	f.Forecast(mean, sd)
	damp, phiJ, cum := 0.0, 1.0, 0.0
	for h := range mean {
		phiJ *= f.Phi
		damp += phiJ
		want, wantSD := (l+b*damp)*s[h%m], math.Sqrt(f.Sigma2*(1+cum))
		if math.Abs(mean[h]-want) > 1e-12*math.Abs(want) || math.Abs(sd[h]-wantSD) > 1e-12*wantSD {
			t.Errorf("step %d: %v ± %v, want %v ± %v", h+1, mean[h], sd[h], want, wantSD)
		}
		c := f.Alpha + f.Alpha*f.Beta*damp
		if (h+1)%m == 0 {
			c += f.HWGamma * (1 - f.Alpha)
		}
		cum += c * c
	}
	c, err := FromState(f.State())
	if err != nil || !c.HW || c.HWGamma != f.HWGamma || c.Phase != f.Phase || c.Sigma2 != f.Sigma2 {
		t.Fatalf("restored %+v (%v), want %+v", c, err, f)
	}
	sameForecasts(t, f, c, 9)
	for name, mutate := range map[string]func(*State){
		"γ above 1 − α":   func(s *State) { s.HWGamma = 1 - s.Alpha + 0.01 },
		"no season":       func(s *State) { s.Season, s.Phase = nil, 0 },
		"no damping":      func(s *State) { s.Phi = 0 },
		"γ without HW":    func(s *State) { s.HW = false },
		"measured growth": func(s *State) { s.Measured, s.Growth = true, 0.1 },
		"an index of 0":   func(s *State) { s.Season[0] = 0 },
	} {
		s := f.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("%s: the state was accepted", name)
		}
	}
}

// On values exactly a season times a constant level, every grid point
// starts from the exact level, trend 0 and indices and errs nowhere, so
// the fit forecasts the season exactly; a series through zero gets the
// additive season, exactly too. A gap (Skip) moves the phase on with
// the level and trend as they were.
func TestFitHWExactSeason(t *testing.T) {
	pattern := []float64{0.5, 1.5, 1.2, 0.8} // mean 1
	for _, additive := range []bool{false, true} {
		x := make([]float64, 24)
		for i := range x {
			if additive {
				x[i] = 10 * (pattern[i%4] - 1) // −5, 5, 2, −2: through zero
			} else {
				x[i] = 10 * pattern[i%4]
			}
		}
		f, err := FitHW(x, 4)
		if err != nil {
			t.Fatal(err)
		}
		if f.Additive != additive || f.sse != 0 {
			t.Fatalf("additive %v: fitted additive %v, sse %v, want 0", additive, f.Additive, f.sse)
		}
		mean := make([]float64, 8)
		f.Forecast(mean, nil)
		for h, v := range mean {
			if want := x[(24+h)%4]; v != want {
				t.Errorf("additive %v, step %d: %v, want %v", additive, h+1, v, want)
			}
		}
		f.Skip(3)
		f.Forecast(mean, nil)
		if want := x[(27)%4]; mean[0] != want {
			t.Errorf("additive %v, after a gap of 3: %v, want %v", additive, mean[0], want)
		}
	}
}

// FitHW starts from the first two seasons' means (level m1, trend
// (m2 − m1)/m, indices x_k/m1) and scores the values after the first
// season: its σ²'s squared errors are the least, over hwGrid, of the
// documented recursions run from that start over x[m:] (hwRef), bit for
// bit (the same operations in the same order).
func TestFitHWStartAndScore(t *testing.T) {
	const m = 4
	rng := rand.New(rand.NewPCG(5, 8))
	x := make([]float64, 30)
	for i := range x {
		x[i] = (50 + 3*float64(i)) * (1 + 0.2*math.Cos(2*math.Pi*float64(i)/m)) * (1 + 0.03*rng.NormFloat64())
	}
	f, err := FitHW(x, m)
	if err != nil {
		t.Fatal(err)
	}
	var m1, m2 float64
	for k := range m {
		m1 += x[k]
		m2 += x[m+k]
	}
	m1, m2 = m1/m, m2/m
	s0 := make([]float64, m)
	for k := range s0 {
		s0[k] = x[k] / m1
	}
	best := math.Inf(1)
	for _, p := range hwGrid {
		if _, _, _, sse := hwRef(x[m:], m1, (m2-m1)/m, s0, p[0], p[1], p[2], p[3], false, 0); sse < best {
			best = sse
		}
	}
	if f.sse != best {
		t.Errorf("fitted sse %v, want the grid's least from the documented start %v", f.sse, best)
	}
}

// A multiplicative season meets values at and below zero (a positive
// series that falls through zero after its fit): from the first such
// value on, the season is frozen (HWGamma 0) and its indices stay as they
// were, every index at least minIndex; the state stays finite, restores,
// and the restored model forecasts to the bit as the original.
func TestHWThroughZero(t *testing.T) {
	const m = 4
	x := make([]float64, 40)
	for i := range x {
		x[i] = 20 * (1 + 0.3*math.Sin(2*math.Pi*float64(i)/m))
	}
	f, err := FitHW(x, m)
	if err != nil {
		t.Fatal(err)
	}
	if f.Additive {
		t.Fatal("a positive series fitted an additive season")
	}
	f.HWGamma = 0.2 // whatever the grid chose, a season that would move
	for i := range 24 {
		y := 20 - 2*float64(i) // 20, 18, …, 0, −2, …
		before := append([]float64(nil), f.Season...)
		f.Update(y)
		if !(y > 0) && f.HWGamma != 0 {
			t.Fatalf("value %v: γ %v, want the season frozen", y, f.HWGamma)
		}
		if f.HWGamma == 0 {
			for k := range before {
				if f.Season[k] != before[k] {
					t.Fatalf("value %v: index %d moved %v → %v in a frozen season", y, k, before[k], f.Season[k])
				}
			}
		}
		for _, v := range f.Season {
			if !(v >= minIndex) {
				t.Fatalf("value %v: index %v below minIndex", y, v)
			}
		}
	}
	if !f.finite() {
		t.Fatalf("state not finite: %+v", f)
	}
	c, err := FromState(f.State())
	if err != nil {
		t.Fatal(err)
	}
	sameForecasts(t, f, c, 8)
}
