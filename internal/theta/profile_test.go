package theta

import (
	"math"
	"math/rand/v2"
	"testing"
)

// profileAt is the moving profile by its definition, on the whole series:
// the mean of x[t−jm], j = 1..k, those at or after first (the values the
// profile has seen) and before end (observed: a forecast's later steps
// average the cycles observed before the origin).
func profileAt(x []float64, t, m, k, first, end int) float64 {
	var sum float64
	cnt := 0
	for j := 1; cnt < k; j++ {
		s := t - j*m
		if s < first {
			break
		}
		if s >= end {
			continue
		}
		sum += x[s]
		cnt++
	}
	return sum / float64(cnt)
}

// FitProfile and Update against the definition computed on the whole
// series: the adjusted values x_t less the mean of the last k values at
// t's phase, smoothed by ses's α and ℓ₀, the line through them, σ² over
// N − 2; then forecasts
// 1..2m+3 steps ahead, whose profile at steps beyond a cycle averages the
// last k cycles observed. A trend plus a season whose shape drifts plus
// noise, 7 cycles fitted and 3 more updated. Sums of a few hundred terms:
// 1e-9 relative.
func TestProfileFollowsItsDefinition(t *testing.T) {
	const m, k, n0, n = 12, 4, 84, 120
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float64, n)
	for i := range x {
		ph := 2 * math.Pi * float64(i%m) / m
		drift := float64(i) / n
		x[i] = 50 + 0.2*float64(i) + 8*(1-drift)*math.Sin(ph) + 5*drift*math.Cos(2*ph) + rng.NormFloat64()
	}
	f, err := FitProfile(x[:n0], m, k)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range x[n0:] {
		f.Update(v)
	}
	adj := make([]float64, 0, n-m)
	for i := m; i < n; i++ {
		adj = append(adj, x[i]-profileAt(x, i, m, k, 0, i))
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
		want := level + drift*(float64(h)+start) + profileAt(x, n+h, m, k, n-m*k, n)
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
	p, err := FitProfile(x[:n], m, 4)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Fit(x[:n], m)
	if err != nil {
		t.Fatal(err)
	}
	if ep, ec := mae(p), mae(c); ep > 0.6 || ec < 3 {
		t.Errorf("next cycle's MAE: profile %.3g (want ≤ 0.6), classical indices %.3g (want ≥ 3)", ep, ec)
	}
}

// Skip keeps the profile in phase: a series that is exactly a level plus a
// period-5 pattern, with values 43..49 never observed, forecasts the pattern
// at the phase of the true time to rounding (1e-12 absolute on values of
// about 10), whether the gap is shorter than the ring (7 of 15) or longer
// (40); and a restored state forecasts and updates bit for bit as the
// original.
func TestProfileSkipAndState(t *testing.T) {
	pattern := []float64{3, -1, 4, -1, -5}
	at := func(i int) float64 { return 10 + pattern[i%5] }
	for _, gap := range []int{7, 40} {
		x := make([]float64, 42)
		for i := range x {
			x[i] = at(i)
		}
		f, err := FitProfile(x, 5, 3)
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
			if math.Abs(a[h]-at(next+h)) > 1e-12 {
				t.Errorf("gap %d: step %d forecast %v, want %v", gap, h+1, a[h], at(next+h))
			}
			if math.Float64bits(a[h]) != math.Float64bits(b[h]) {
				t.Errorf("gap %d: step %d: restored %v, original %v", gap, h+1, b[h], a[h])
			}
		}
		r.Update(99)
		if f.State().Recent[f.State().Pos] == 99 || len(f.Clone().recent) != 15 {
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
		"period 1":  func() error { _, err := FitProfile(x, 1, 4); return err }(),
		"no cycles": func() error { _, err := FitProfile(x, 7, 0); return err }(),
		"too short": func() error { _, err := FitProfile(x[:10], 7, 4); return err }(),
		"a NaN": func() error {
			y := append([]float64{}, x...)
			y[3] = math.NaN()
			_, err := FitProfile(y, 7, 4)
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: fitted", name)
		}
	}
	f, err := FitProfile(x, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*State){
		"ring short":       func(s *State) { s.Recent = s.Recent[1:] },
		"pos outside":      func(s *State) { s.Pos = len(s.Recent) },
		"under a cycle":    func(s *State) { s.Filled = s.Profile - 1 },
		"no cycles":        func(s *State) { s.Cycles = 0 },
		"two seasons":      func(s *State) { s.Season = []float64{1, 1, 1, 1, 1, 1, 1}; s.Phase = 0 },
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
