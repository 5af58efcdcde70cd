package theta

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// shortAt is the short-period part D of the moving profile by its
// definition: the mean of the last m/s values x[t − js], j ≥ 1, before end
// (observed: a forecast's later steps use the values before its origin);
// 0 with s = 0. ok is false when there is none (t < s).
func shortAt(x []float64, t, m, s, end int) (d float64, ok bool) {
	if s == 0 {
		return 0, true
	}
	var sum float64
	cnt := 0
	for j := 1; cnt < m/s && t-j*s >= 0; j++ {
		if t-j*s < end {
			sum += x[t-j*s]
			cnt++
		}
	}
	if cnt == 0 {
		return 0, false
	}
	return sum / float64(cnt), true
}

// profileAt is the moving profile by its definition, on the whole series:
// shortAt plus the mean of the last k deviations x_τ − D_τ, τ = t − jm
// before end, each D_τ as it was when x_τ arrived (a value with no D yet
// deviates by 0).
func profileAt(x []float64, t, m, s, k, end int) float64 {
	var sum float64
	cnt := 0
	for j := 1; cnt < k && t-j*m >= 0; j++ {
		if tau := t - j*m; tau < end {
			if d, ok := shortAt(x, tau, m, s, tau); ok {
				sum += x[tau] - d
			}
			cnt++
		}
	}
	d, _ := shortAt(x, t, m, s, end)
	return d + sum/float64(cnt)
}

// FitProfile and Update against the definition computed on the whole
// series (profileAt), with one period (s = 0) and with a shorter one
// dividing it (s = 3 in m = 12): the adjusted values x_t less the profile
// at t, smoothed by ses's α and ℓ₀, the line through them, σ² over N − 2;
// then forecasts 1..2m+3 steps ahead, whose profile at steps beyond a cycle
// uses the values observed before the origin. A trend plus a season whose
// shape drifts plus noise, 7 cycles fitted and 3 more updated. Sums of a
// few hundred terms: 1e-9 relative.
func TestProfileFollowsItsDefinition(t *testing.T) {
	// k = 12 (the Learner's count with a shorter period) over 330 values:
	// its ring of 144 wraps twice, as k = 4's of 48 does over 120.
	for _, c := range []struct{ s, k, n int }{{0, 4, 120}, {3, 4, 120}, {3, 12, 330}} {
		t.Run(fmt.Sprint("s=", c.s, ",k=", c.k), func(t *testing.T) { testProfileDefinition(t, c.s, c.k, c.n) })
	}
}

func testProfileDefinition(t *testing.T, s, k, n int) {
	const m, n0 = 12, 84
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, n)
	for i := range x {
		ph := 2 * math.Pi * float64(i%m) / m
		drift := float64(i) / float64(n)
		x[i] = 50 + 0.2*float64(i) + 8*(1-drift)*math.Sin(ph) + 5*drift*math.Cos(2*ph) + rng.NormFloat64()
	}
	f, err := FitProfile(x[:n0], m, s, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range x[n0:] {
		f.Update(v)
	}
	adj := make([]float64, 0, n-m)
	for i := m; i < n; i++ {
		adj = append(adj, x[i]-profileAt(x, i, m, s, k, i))
	}
	_, l0, _ := ses(adj[:n0-m])
	level, drift, sigma2 := checkSmoothing(t, f, adj, l0)
	if f.N != len(adj) {
		t.Errorf("N = %d, want %d", f.N, len(adj))
	}
	mean, sd := make([]float64, 2*m+3), make([]float64, 2*m+3)
	f.Forecast(mean, sd)
	start := (1 - math.Pow(1-f.Alpha, float64(f.N))) / f.Alpha
	for h := range mean {
		want := level + drift*(float64(h)+start) + profileAt(x, n+h, m, s, k, n)
		closeTo(t, "forecast", mean[h], want)
		closeTo(t, "sd", sd[h], math.Sqrt(sigma2*(1+float64(h)*f.Alpha*f.Alpha)))
	}
}

// A season whose shape turns over (its sign flips halfway through) is
// forecast by the moving profile and not by the classical indices, which
// average the two shapes: over the next cycle the profile's mean absolute
// error is below the noise's scale, the indices' several times it. The
// indices of a season that flips average to about 1 (no season left), so
// their error is about the pattern's amplitude, 10 (mean |sin| ≈ 6.4),
// against a noise of std 0.5.
func TestProfileFollowsADriftingSeason(t *testing.T) {
	const m, n = 24, 24 * 12
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float64, n+m)
	for i := range x {
		sign := 1.0
		if i >= n/2 {
			sign = -1
		}
		x[i] = 100 + sign*10*math.Sin(2*math.Pi*float64(i%m)/m) + 0.5*rng.NormFloat64()
	}
	mae := func(f *Model) float64 {
		mean := make([]float64, m)
		f.Forecast(mean, nil)
		var s float64
		for h, v := range mean {
			s += math.Abs(x[n+h] - v)
		}
		return s / m
	}
	p, err := FitProfile(x[:n], m, 0, 4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Fit(x[:n], m, false)
	if err != nil {
		t.Fatal(err)
	}
	if ep, ec := mae(p), mae(c); ep > 0.6 || ec < 3 {
		t.Errorf("next cycle's MAE: profile %.3g (want ≤ 0.6), classical indices %.3g (want ≥ 3)", ep, ec)
	}
}

// Skip keeps the profile in phase: a series that is exactly a level plus a
// period-6 pattern (profile of one level) or a period-2 pattern plus a
// period-6 one (two levels, s = 2), with values 43.. never observed,
// forecasts the pattern at the phase of the true time: less the drift's
// h·b, every step is off by the same amount, to rounding (1e-12 absolute
// on values of about 10), whether the gap is shorter than the ring (7 of
// 18) or longer (40). That amount and b are 0 with one level; with two the
// first cycles' profiles, on fewer values than m/s days, leave the
// adjusted values a small transient whose line has a slope (|offset| <
// 0.1). A restored state forecasts and updates bit for bit as the
// original.
func TestProfileSkipAndState(t *testing.T) {
	for _, c := range []struct{ s, gap int }{{0, 7}, {0, 40}, {2, 7}, {2, 40}} {
		s, gap := c.s, c.gap
		at := func(i int) float64 { return 10 + []float64{3, -1, 4, -1, -5, 0}[i%6] + []float64{2, -2}[i%2] }
		x := make([]float64, 42)
		for i := range x {
			x[i] = at(i)
		}
		f, err := FitProfile(x, 6, s, 3)
		if err != nil {
			t.Fatal(err)
		}
		f.Skip(uint64(gap))
		next := 42 + gap
		for i := next; i < next+4; i++ {
			f.Update(at(i))
		}
		next += 4
		r, err := FromState(f.State())
		if err != nil {
			t.Fatal(err)
		}
		a, b := make([]float64, 12), make([]float64, 12)
		f.Forecast(a, nil)
		r.Forecast(b, nil)
		for h := range a {
			off := a[0] - at(next)
			if got := a[h] - f.Drift*float64(h) - at(next+h); math.Abs(got-off) > 1e-12 || math.Abs(off) > 0.1 || (s == 0 && math.Abs(off) > 1e-12) {
				t.Errorf("s %d, gap %d: step %d forecast %v less drift %v·h is off %v, step 1 %v", s, gap, h+1, a[h], f.Drift, got, off)
			}
			if math.Float64bits(a[h]) != math.Float64bits(b[h]) {
				t.Errorf("s %d, gap %d: step %d: restored %v, original %v", s, gap, h+1, b[h], a[h])
			}
		}
		r.Update(99)
		if f.State().Recent[f.State().Pos] == 99-f.short(0) || len(f.Clone().recent) != 18 || (s > 0 && len(f.Clone().recentY) != 6) {
			t.Error("the restored model shares its ring with the original, or a clone lost it")
		}
	}
}

// FitProfile refuses what it cannot fit, and FromState profile states no
// fit could have produced.
func TestProfileRefuses(t *testing.T) {
	x := make([]float64, 30)
	for i := range x {
		x[i] = float64(i % 7)
	}
	for name, err := range map[string]error{
		"period 1":         func() error { _, err := FitProfile(x, 1, 0, 4); return err }(),
		"no cycles":        func() error { _, err := FitProfile(x, 7, 0, 0); return err }(),
		"too short":        func() error { _, err := FitProfile(x[:10], 7, 0, 4); return err }(),
		"sub not dividing": func() error { _, err := FitProfile(x, 7, 3, 4); return err }(),
		"sub the period":   func() error { _, err := FitProfile(x, 7, 7, 4); return err }(),
		"a NaN": func() error {
			y := append([]float64{}, x...)
			y[3] = math.NaN()
			_, err := FitProfile(y, 7, 0, 4)
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: fitted", name)
		}
	}
	f, err := FitProfile(x, 6, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*State){
		"ring short":       func(s *State) { s.Recent = s.Recent[1:] },
		"pos outside":      func(s *State) { s.Pos = len(s.Recent) },
		"under a cycle":    func(s *State) { s.Filled = s.Profile - 1 },
		"no cycles":        func(s *State) { s.Cycles = 0 },
		"two seasons":      func(s *State) { s.Season = []float64{1, 1, 1, 1, 1, 1}; s.Phase = 0 },
		"sub, no y ring":   func(s *State) { s.RecentY = nil },
		"y ring, no sub":   func(s *State) { s.Sub = 0 },
		"sub not dividing": func(s *State) { s.Sub = 4 },
		"Inf in y ring":    func(s *State) { s.RecentY[1] = math.Inf(-1) },
		"Inf in ring":      func(s *State) { s.Recent[0] = math.Inf(1) },
		"ring, no profile": func(s *State) { s.Profile = 0 },
	} {
		s := f.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("%s: the state was accepted", name)
		}
	}
}
