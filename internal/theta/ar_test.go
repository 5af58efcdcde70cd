package theta

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// arSeries returns n values of a stationary AR(2) about 20, x_t − 20 =
// 1.2(x_{t−1} − 20) − 0.5(x_{t−2} − 20) + e_t, e ~ N(0, 1), from seed.
func arSeries(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	x := make([]float64, n)
	a, b := 0.0, 0.0
	for i := range x {
		a, b = 1.2*a-0.5*b+r.NormFloat64(), a
		x[i] = 20 + a
	}
	return x
}

// The coefficients are Yule–Walker's and the order AIC's: at each order k
// the Toeplitz system of the sample autocovariances is solved by a dense
// LU (gonum), the batch reference to the Durbin–Levinson recursion, its
// innovation variance is v_k = c_0 − Σ φ_j c_j, and the order is the
// argmin of n·ln v_k + 2k. Both solutions are backward stable on these
// well-conditioned systems (a process with roots of modulus 0.71), so they
// agree to a few hundred ulps: 1e-10 absolute on coefficients of order 1,
// and the AIC's differences between orders are far above rounding.
func TestFitARIsYuleWalker(t *testing.T) {
	x := arSeries(400, 1)
	m, err := FitAR(x, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	n := len(x)
	best, bestAIC := 0, float64(n)*math.Log(yuleWalker(t, x, 0).v)
	for k := 1; k <= arMaxOrder(n, 0); k++ {
		if aic := float64(n)*math.Log(yuleWalker(t, x, k).v) + 2*float64(k); aic < bestAIC {
			best, bestAIC = k, aic
		}
	}
	p := len(m.AR)
	if p != best || m.Season != nil || m.Weight != 0 || m.Drift != 0 {
		t.Fatalf("fitted order %d (AIC's %d), season %v, weight %v", p, best, m.Season, m.Weight)
	}
	want := yuleWalker(t, x, p)
	for j := range p {
		if math.Abs(m.AR[j]-want.phi[j]) > 1e-10 {
			t.Errorf("AR[%d] = %v, Yule–Walker %v", j, m.AR[j], want.phi[j])
		}
	}
	if math.Abs(m.ARMean-want.mu) > 1e-12*want.mu { // sums of 400 terms, in another order
		t.Errorf("mean %v, want %v", m.ARMean, want.mu)
	}
	// The AR(2)'s own coefficients within four standard errors
	// (√((1 − φ₂²)/n) ≈ 0.043 each).
	if p < 2 || math.Abs(m.AR[0]-1.2) > 0.18 || math.Abs(m.AR[1]+0.5) > 0.18 {
		t.Errorf("coefficients %v, want about 1.2, −0.5", m.AR)
	}
}

// yw is a Yule–Walker fit: the mean, the coefficients and the innovation
// variance v = c_0 − Σ φ_j c_j.
type yw struct {
	mu, v float64
	phi   []float64
}

// yuleWalker solves the Yule–Walker equations of order p of x (sample
// autocovariances about the mean, sums over n, as dot products of the
// centred values) by a dense LU (gonum), the batch reference to FitAR's
// Durbin–Levinson recursion.
func yuleWalker(t *testing.T, x []float64, p int) yw {
	t.Helper()
	n := len(x)
	mu := floats.Sum(x) / float64(n)
	xc := slices.Clone(x)
	floats.AddConst(-mu, xc)
	acv := make([]float64, p+1)
	for k := range acv {
		acv[k] = floats.Dot(xc[k:], xc[:n-k]) / float64(n)
	}
	if p == 0 {
		return yw{mu: mu, v: acv[0]}
	}
	R := mat.NewDense(p, p, nil)
	r := mat.NewVecDense(p, nil)
	for i := range p {
		r.SetVec(i, acv[i+1])
		for j := range p {
			R.Set(i, j, acv[abs(i-j)])
		}
	}
	var phi mat.VecDense
	if err := phi.SolveVec(R, r); err != nil {
		t.Fatal(err)
	}
	v := acv[0]
	for j := range p {
		v -= phi.AtVec(j) * acv[j+1]
	}
	return yw{mu: mu, v: v, phi: phi.RawVector().Data}
}

// FitProfileAR is Yule–Walker on the values less the moving profile by its
// definition (profileAt) at each t ≥ m, and forecasts the profile at each
// step (from the values before the origin) plus the autoregression's path
// from the last adjusted values. A daily profile of 24 plus an AR(1) of
// 0.7, 16 days fitted, 2 more updated. Sums of a few hundred terms, each
// profile a mean of a few values: 1e-9. The state round trip keeps both.
func TestFitProfileAR(t *testing.T) {
	const m, k = 24, 4
	r := rand.New(rand.NewPCG(8, 1))
	x := make([]float64, 18*m)
	z := 0.0
	for i := range x {
		z = 0.7*z + r.NormFloat64()
		x[i] = 50 + 10*math.Sin(2*math.Pi*float64(i)/m) + z
	}
	n := 16 * m
	f, err := FitProfileAR(x[:n], m, 0, k)
	if err != nil {
		t.Fatal(err)
	}
	adj := make([]float64, 0, len(x)-m)
	for i := m; i < len(x); i++ {
		adj = append(adj, x[i]-profileAt(x, i, m, 0, k, i))
	}
	p := len(f.AR)
	want := yuleWalker(t, adj[:n-m], p)
	for j := range p {
		if math.Abs(f.AR[j]-want.phi[j]) > 1e-9 {
			t.Errorf("AR[%d] = %v, Yule–Walker of the adjusted values %v", j, f.AR[j], want.phi[j])
		}
	}
	if math.Abs(f.AR[0]-0.7) > 0.15 {
		t.Errorf("AR %v, want about 0.7 first", f.AR)
	}
	for _, v := range x[n:] {
		f.Update(v)
	}
	c, err := FromState(f.State())
	if err != nil {
		t.Fatal(err)
	}
	const H = 30
	last := adj[len(adj)-p:]
	mean, mean2 := make([]float64, H), make([]float64, H)
	f.Forecast(mean, nil)
	c.Forecast(mean2, nil)
	hist := slices.Clone(last)
	for i := range mean {
		next := f.ARMean
		for j := 1; j <= p; j++ {
			next += f.AR[j-1] * (hist[len(hist)-j] - f.ARMean)
		}
		hist = append(hist, next)
		wantMean := next + profileAt(x, len(x)+i, m, 0, k, len(x))
		if math.Abs(mean[i]-wantMean) > 1e-9*math.Abs(wantMean) || mean2[i] != mean[i] {
			t.Fatalf("step %d: %v (restored %v), want %v", i+1, mean[i], mean2[i], wantMean)
		}
	}
}

// The forecasts follow the recursion and the deviations the moving-average
// weights: checked against an AR(1)'s closed forms, μ + φʰ(x_n − μ) and
// σ²(1 − φ^{2h})/(1 − φ²), on a model built by hand, to 1e-12 relative
// (h ≤ 30 multiplications).
func TestARForecastClosedForm(t *testing.T) {
	x := arSeries(100, 2)
	m, err := FitAR(x, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	const phi, mu = 0.7, 3.0
	m.AR, m.ARMean, m.hist, m.Sigma2 = []float64{phi}, mu, []float64{5}, 2
	mean, sd := make([]float64, 30), make([]float64, 30)
	m.Forecast(mean, sd)
	for i := range mean {
		h := float64(i + 1)
		want := mu + math.Pow(phi, h)*(5-mu)
		wantSD := math.Sqrt(2 * (1 - math.Pow(phi, 2*h)) / (1 - phi*phi))
		if math.Abs(mean[i]-want) > 1e-12*math.Abs(want) || math.Abs(sd[i]-wantSD) > 1e-12*wantSD {
			t.Errorf("step %d: %v ± %v, want %v ± %v", i+1, mean[i], sd[i], want, wantSD)
		}
	}
}

// Update continues FitAR's recursion with the coefficients held: after the
// values past the fit, the one-step SSE and the history are those of the
// recursion over all values (the same sums in the same order: equal to the
// bit), σ² its SSE over N − 2p − 1, and a seasonal model's indices advance
// as the smoothing's do. A state round trip gives the same forecasts, and
// states that cannot have been are refused.
func TestARUpdateAndState(t *testing.T) {
	x := arSeries(300, 3)
	for i := range x {
		x[i] += 4 * math.Sin(2*math.Pi*float64(i)/12)
	}
	m, err := FitAR(x[:200], 12, false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Season == nil {
		t.Fatal("not seasonal")
	}
	p := len(m.AR)
	adj := make([]float64, len(x))
	for i, v := range x {
		// The model's phase 0 is value 200's: index i has (i−200) mod 12.
		adj[i] = deseason(v, m.Season[((i-200)%12+12)%12], m.Additive)
	}
	sse := m.sse
	for i := 200; i < len(x); i++ {
		e := adj[i] - arNext(m.AR, m.ARMean, adj[i-p:i])
		sse += e * e
		m.Update(x[i])
	}
	// σ² over N − 2p − 1 less the season's 11 free indices.
	if df := float64(len(x) - 2*p - 1 - 11); m.sse != sse || m.Sigma2 != sse/df {
		t.Errorf("sse %v σ² %v, want %v, %v", m.sse, m.Sigma2, sse, sse/df)
	}
	for j, v := range m.hist {
		if v != adj[len(x)-p+j] {
			t.Fatalf("history %v, want %v", m.hist, adj[len(x)-p:])
		}
	}
	c, err := FromState(m.State())
	if err != nil {
		t.Fatal(err)
	}
	a1, s1, a2, s2 := make([]float64, 24), make([]float64, 24), make([]float64, 24), make([]float64, 24)
	m.Forecast(a1, s1)
	c.Forecast(a2, s2)
	for i := range a1 {
		if a1[i] != a2[i] || s1[i] != s2[i] {
			t.Fatalf("restored step %d: %v ± %v, want %v ± %v", i+1, a2[i], s2[i], a1[i], s1[i])
		}
	}
	cl := m.Clone()
	cl.Update(100)
	if m.hist[p-1] == cl.hist[p-1] {
		t.Error("a clone shares its history")
	}
	for name, mutate := range map[string]func(*State){
		"history short": func(s *State) { s.Hist = s.Hist[1:] },
		"with damping":  func(s *State) { s.Phi, s.Beta = 0.9, 0 },
		"with a drift":  func(s *State) { s.Weight = 0.5 },
		"NaN mean":      func(s *State) { s.ARMean = math.NaN() },
		"NaN history":   func(s *State) { s.Hist[0] = math.Inf(1) },
		"too few":       func(s *State) { s.N = 2 * len(s.AR) },
		"an order too high for its values": func(s *State) {
			s.AR = make([]float64, arMaxOrder(s.N, 0)+1)
			s.Hist = make([]float64, len(s.AR))
		},
		"not stationary": func(s *State) { s.AR = append([]float64{3}, s.AR[1:]...) },
		"explosive":      func(s *State) { s.AR[len(s.AR)-1] = -1e100 },
	} {
		s := m.State()
		mutate(&s)
		if _, err := FromState(s); err == nil {
			t.Errorf("%s: the state was accepted", name)
		}
	}
}

// Skip feeds the recursion its own forecasts: after a gap of k the model
// forecasts as it would have at the gap's start k steps further on (the
// two recursions, arNext's in values and arPaths' in deviations from the
// mean, round differently: 1e-12 relative). A gap longer than arSkipMax
// ends at the mean, the forecasts' limit.
func TestARSkip(t *testing.T) {
	m, err := FitAR(arSeries(200, 4), 1, false)
	if err != nil {
		t.Fatal(err)
	}
	long := m.Clone()
	long.Skip(arSkipMax + 1)
	for _, v := range long.hist {
		if v != long.ARMean {
			t.Fatalf("after a gap of %d: history %v, want the mean %v", arSkipMax+1, long.hist, long.ARMean)
		}
	}
	const k = 5
	want := make([]float64, k+3)
	m.Forecast(want, nil)
	m.Skip(k)
	got := make([]float64, 3)
	m.Forecast(got, nil)
	for i := range got {
		if math.Abs(got[i]-want[k+i]) > 1e-12*math.Abs(want[k+i]) {
			t.Errorf("step %d after the gap: %v, want %v", i+1, got[i], want[k+i])
		}
	}
}

// A constant and too few values are refused with their errors.
func TestFitARRefuses(t *testing.T) {
	flat := make([]float64, 50)
	if _, err := FitAR(flat, 1, false); !errors.Is(err, ErrNoAR) {
		t.Errorf("a constant: %v, want ErrNoAR", err)
	}
	if _, err := FitAR(arSeries(MinAR-1, 6), 1, false); !errors.Is(err, ErrTooShort) {
		t.Errorf("%d values: %v, want ErrTooShort", MinAR-1, err)
	}
}

func abs(i int) int { return max(i, -i) }

// On seasonally adjusted values σ²'s degrees of freedom count the
// season's m − 1 indices (DF): an autoregression's order is capped so that
// two remain (arMaxOrder), a damped trend that would keep fewer is refused,
// and every fit on short seasonal values keeps σ² = SSE/DF finite and its
// state restorable. Without the cap, 11 quarterly values of white noise
// gave an order of 4 and DF = 11 − 9 − 3 = −1: a negative σ² and NaN
// bands. Seeds × lengths from just above 2m (the season's minimum) to 4m;
// at m = 2 and 3 the shortest damped trends are refused.
func TestSeasonalDegreesOfFreedom(t *testing.T) {
	for _, m := range []int{2, 3, 4, 12} {
		for n := 2*m + 1; n <= 4*m; n++ {
			for seed := range uint64(20) {
				r := rand.New(rand.NewPCG(seed, uint64(n)))
				x := make([]float64, n)
				for i := range x {
					x[i] = (10 + r.NormFloat64()) * (1 + 0.3*math.Sin(2*math.Pi*float64(i)/float64(m)))
				}
				ar, err := FitAR(x, m, true)
				if err == nil {
					if ar.Season == nil {
						t.Fatalf("m %d n %d seed %d: no season", m, n, seed)
					}
					df := float64(n - 2*len(ar.AR) - 1 - (m - 1))
					if ar.DF() != df || df < 2 || ar.Sigma2 != ar.sse/df {
						t.Fatalf("m %d n %d seed %d: order %d, DF %v (want %v ≥ 2), σ² %v", m, n, seed, len(ar.AR), ar.DF(), df, ar.Sigma2)
					}
					if _, err := FromState(ar.State()); err != nil {
						t.Fatalf("m %d n %d seed %d: %v", m, n, seed, err)
					}
				}
				if n < MinDamped {
					continue
				}
				d, err := FitDamped(x, m, true)
				if err != nil {
					if n-4-(m-1) >= 2 || !errors.Is(err, ErrTooShort) {
						t.Fatalf("m %d n %d seed %d: damped trend refused: %v", m, n, seed, err)
					}
					continue
				}
				if df := float64(n - 4 - (m - 1)); d.DF() != df || df < 2 || d.Sigma2 != d.sse/df {
					t.Fatalf("m %d n %d seed %d: damped DF %v (want %v ≥ 2), σ² %v", m, n, seed, d.DF(), df, d.Sigma2)
				}
			}
		}
	}
}

// A state written before σ² counted the season's indices (its Sigma2 the
// squared errors over N − 2) restores with σ² = SSE/DF, as an Update would
// set it: the forecasts do not change at the next value.
func TestStateSigma2FromDF(t *testing.T) {
	x := make([]float64, 60)
	for i := range x {
		x[i] = (100 + float64(i) + 3*math.Sin(float64(7*i))) * []float64{0.8, 1.1, 1.3, 0.8}[i%4]
	}
	f, err := Fit(x, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	s := f.State()
	s.Sigma2 = s.SSE / float64(s.N-2)
	g, err := FromState(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := s.SSE / float64(s.N-2-3); g.Sigma2 != want || g.Sigma2 != f.Sigma2 {
		t.Errorf("σ² %v, want SSE/(N − 2 − 3) = %v (the fit's %v)", g.Sigma2, want, f.Sigma2)
	}
}
