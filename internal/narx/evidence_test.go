package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// bruteCost evaluates the level-2 cost J(γ) from scratch: θ by a direct solve of
// (A + D/γ)θ = r, E_W and E_D from the explicit samples, the eigenvalues of the
// centred Gram from the explicit centred feature matrix.
func bruteCost(t *testing.T, m *Model, X, y, c []float64, gamma float64) (cost, ew, ed float64) {
	t.Helper()
	n, r, N := m.n, m.fm.r, len(y)
	phi := mat.NewDense(N, r, nil)
	k := make([]float64, m.m)
	for i := 0; i < N; i++ {
		m.cfg.Kernel.Column(k, m.ws.Points(), X[i*n:(i+1)*n])
		m.fm.apply(phi.RawRowView(i), k)
	}
	a := mat.NewSymDense(r+1, nil)
	rv := mat.NewVecDense(r+1, nil)
	psi := make([]float64, r+1)
	var nc, ybar float64
	mean := make([]float64, r)
	for i := 0; i < N; i++ {
		copy(psi, phi.RawRowView(i))
		psi[r] = 1
		a.SymRankOne(a, c[i], mat.NewVecDense(r+1, psi))
		rv.AddScaledVec(rv, c[i]*y[i], mat.NewVecDense(r+1, psi))
		nc += c[i]
		ybar += c[i] * y[i]
		for j := 0; j < r; j++ {
			mean[j] += c[i] * phi.At(i, j)
		}
	}
	ybar /= nc
	for i := 0; i < r; i++ {
		a.SetSym(i, i, a.At(i, i)+1/gamma)
	}
	var th mat.VecDense
	if err := th.SolveVec(a, rv); err != nil {
		t.Fatal(err)
	}
	for j := 0; j < r; j++ {
		ew += 0.5 * th.AtVec(j) * th.AtVec(j)
		mean[j] /= nc
	}
	for i := 0; i < N; i++ {
		e := y[i] - th.AtVec(r)
		for j := 0; j < r; j++ {
			e -= th.AtVec(j) * phi.At(i, j)
		}
		ed += 0.5 * c[i] * e * e
	}
	// Centred, weighted feature matrix: rows √c_k (φ_k − φ̄).
	cen := mat.NewDense(N, r, nil)
	for i := 0; i < N; i++ {
		for j := 0; j < r; j++ {
			cen.Set(i, j, math.Sqrt(c[i])*(phi.At(i, j)-mean[j]))
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, cen.T())
	var es mat.EigenSym
	if !es.Factorize(&g, false) {
		t.Fatal("eigen")
	}
	for _, l := range es.Values(nil) {
		cost += math.Log1p(gamma * math.Max(l, 0))
	}
	cost += (nc - 1) * math.Log(ew/gamma+ed)
	return cost, ew, ed
}

// Level 2 against brute force: the γ it returns minimises the cost evaluated
// from scratch on a fine grid (spacing 0.02 in ln γ over 1e-3..1e7), and its
// energies agree with the directly computed ones. Weighted and forgotten
// samples, so n_c ≠ N is exercised.
func TestLevel2AgainstBruteForce(t *testing.T) {
	for _, tc := range []struct {
		noise, lambda float64
	}{{0.05, 1}, {0.3, 0.995}, {1, 1}} {
		t.Run(fmt.Sprintf("noise=%v,lambda=%v", tc.noise, tc.lambda), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, uint64(100*tc.noise)))
			X, y := randRegression(rng, 300, 2, tc.noise)
			v := make([]float64, len(y))
			for i := range v {
				v[i] = 0.5 + rng.Float64()
			}
			cfg := baseConfig(2, 25)
			cfg.Cutoff, cfg.Forgetting, cfg.AutoGamma = 1e-10, tc.lambda, true
			m, err := NewModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Fit(X, y, v); err != nil {
				t.Fatal(err)
			}
			got := m.level2
			c := make([]float64, len(y))
			for i := range c {
				c[i] = v[i] * math.Pow(tc.lambda, float64(len(y)-1-i))
			}
			bestCost, bestG := math.Inf(1), 0.0
			for lg := math.Log(1e-3); lg <= math.Log(1e7); lg += 0.02 {
				if cost, _, _ := bruteCost(t, m, X, y, c, math.Exp(lg)); cost < bestCost {
					bestCost, bestG = cost, math.Exp(lg)
				}
			}
			// The optimum's cost can undercut the grid's best by at most the
			// curvature over half a grid step; it must never exceed it beyond rounding.
			if got.Cost > bestCost+1e-9*math.Abs(bestCost) {
				t.Errorf("level-2 cost %g at γ=%g worse than the grid's %g at γ=%g", got.Cost, got.Gamma, bestCost, bestG)
			}
			if d := math.Abs(math.Log(got.Gamma / bestG)); d > 0.02 {
				t.Errorf("γ = %g, grid minimum at %g (|Δ ln γ| = %g > one grid step)", got.Gamma, bestG, d)
			}
			cost, ew, ed := bruteCost(t, m, X, y, c, got.Gamma)
			if rel := math.Abs(cost-got.Cost) / math.Abs(cost); rel > 1e-8 {
				t.Errorf("cost from statistics %g, from scratch %g", got.Cost, cost)
			}
			if math.Abs(ew-got.EW) > 1e-8*ew || math.Abs(ed-got.ED) > 1e-8*ed {
				t.Errorf("E_W %g/%g, E_D %g/%g (statistics/scratch)", got.EW, ew, got.ED, ed)
			}
			if m.rls.Gamma() != got.Gamma {
				t.Errorf("inferred γ %g not applied (RLS has %g)", got.Gamma, m.rls.Gamma())
			}
			// The noise std estimate should be near the truth for a clean fit.
			if s := math.Sqrt(1 / got.Zeta); math.Abs(s-tc.noise) > 0.25*tc.noise {
				t.Errorf("noise std %g, true %g", s, tc.noise)
			}
		})
	}
}

// SetGamma on a fitted model equals a fit at that fixed γ: same ridge
// solution, same level-2 noise level and d_eff; γ is then held by later
// level-2 refreshes (AutoGamma off), and bad values leave the model as it was.
func TestSetGammaEqualsFixedFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	X, y := randRegression(rng, 300, 2, 0.1)
	cfg := baseConfig(2, 25)
	cfg.Cutoff, cfg.AutoGamma, cfg.NoiseEvery = 1e-10, true, 10
	auto, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := auto.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	g := auto.Info().Gamma / 8
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if err := auto.SetGamma(bad); err == nil {
			t.Errorf("SetGamma(%v) accepted", bad)
		}
	}
	if !auto.Config().AutoGamma {
		t.Fatal("a refused SetGamma switched AutoGamma off")
	}
	if err := auto.SetGamma(g); err != nil {
		t.Fatal(err)
	}
	fixedCfg := cfg
	fixedCfg.AutoGamma, fixedCfg.Gamma = false, g
	fixed, err := NewModel(fixedCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	if c := auto.Config(); c.AutoGamma || c.Gamma != g {
		t.Errorf("config after SetGamma: AutoGamma %v, γ %g (want false, %g)", c.AutoGamma, c.Gamma, g)
	}
	a, f := auto.Info(), fixed.Info()
	if a.Gamma != g || math.Abs(a.NoiseVar-f.NoiseVar) > 1e-9*f.NoiseVar || math.Abs(a.DEff-f.DEff) > 1e-9*f.DEff {
		t.Errorf("after SetGamma: γ %g, noise var %g, d_eff %g; fixed fit: γ %g, %g, %g",
			a.Gamma, a.NoiseVar, a.DEff, f.Gamma, f.NoiseVar, f.DEff)
	}
	if d := maxRelDiff(auto.Theta(), fixed.Theta()); d > 1e-8 {
		t.Errorf("θ differs from the fixed-γ fit by %g", d)
	}
	// Level-2 refreshes (every NoiseEvery samples) keep the held γ.
	for i := 0; i < 3*cfg.NoiseEvery; i++ {
		x := X[2*i : 2*i+2]
		auto.Observe(x)
		auto.Learn(y[i], 1)
	}
	if got := auto.Info().Gamma; got != g {
		t.Errorf("γ %g after level-2 refreshes, want the held %g", got, g)
	}
	// On an unfitted model it only sets the configuration.
	u, _ := NewModel(cfg)
	if err := u.SetGamma(3); err != nil || u.Config().AutoGamma || u.Config().Gamma != 3 || u.Fitted() {
		t.Errorf("unfitted SetGamma: err %v, config %+v", err, u.Config())
	}
}

// newEvidence decomposes G in pooled buffers with the LAPACK routine behind
// gonum's mat.EigenSym: its eigenvalues and projections must equal those of
// the straightforward mat.EigenSym computation bit for bit (same routine,
// same input, same work size), so that forecasts did not move when the
// decomposition left mat; and once the pool is warm it must not allocate,
// since it runs at every swap.
func TestEvidenceMatchesEigenSymWithoutAllocating(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	X, y := randRegression(rng, 300, 2, 0.1)
	cfg := baseConfig(2, 25)
	cfg.Cutoff, cfg.AutoGamma = 1e-10, true
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	a, rv, s, nc := m.rls.Stats()
	defer m.rls.ReleaseStats()
	ev, ok := newEvidence(a, rv, s, nc)
	if !ok {
		t.Fatal("newEvidence failed")
	}
	defer ev.release()

	// The reference: G and r_c as mat types, mat.EigenSym, Uᵀr_c.
	r := a.SymmetricDim() - 1
	rb := rv[r]
	g := mat.NewSymDense(r, nil)
	rc := mat.NewVecDense(r, nil)
	for i := 0; i < r; i++ {
		ai := a.At(i, r)
		rc.SetVec(i, rv[i]-ai*rb/nc)
		for j := i; j < r; j++ {
			g.SetSym(i, j, a.At(i, j)-ai*a.At(j, r)/nc)
		}
	}
	var es mat.EigenSym
	if !es.Factorize(g, true) {
		t.Fatal("mat.EigenSym failed")
	}
	var u mat.Dense
	es.VectorsTo(&u)
	var p mat.VecDense
	p.MulVec(u.T(), rc)
	if len(ev.lambda) != r {
		t.Fatalf("%d eigenvalues, want %d", len(ev.lambda), r)
	}
	for i, l := range es.Values(nil) {
		if ev.lambda[i] != max(l, 0) || ev.p2[i] != p.AtVec(i)*p.AtVec(i) {
			t.Fatalf("pair %d: λ %v, p² %v; mat.EigenSym gives %v, %v", i, ev.lambda[i], ev.p2[i], max(l, 0), p.AtVec(i)*p.AtVec(i))
		}
	}
	if allocs := testing.AllocsPerRun(20, func() {
		e, _ := newEvidence(a, rv, s, nc)
		e.release()
	}); allocs != 0 {
		t.Errorf("%v allocations per level-2 decomposition, want 0", allocs)
	}
}

// The periodic level-2 refresh at a held γ (level2Held, O(r²)) against the
// spectral one (evidence.at) on the same statistics, after online updates
// and swaps, at λ = 1 where the RLS keeps the exact inverse. The two are
// the same quantities in exact arithmetic; the tolerance is the inverse's
// rounding drift (below 3e-17·cond₁ relative, recursive.refreshEvery) and
// the residual energy's cancellation (ε·s against E_D ≈ ½N·0.1²): 1e-9
// relative, with d_eff's trace term (≤ r) absolute. Where the inverse is
// not exact (λ < 1 between refreshes) it must decline.
func TestLevel2HeldAgainstSpectrum(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 3))
	X, y := randRegression(rng, 700, 2, 0.1)
	cfg := baseConfig(2, 30)
	cfg.Cutoff, cfg.Gamma, cfg.SwapInterval, cfg.Window = 1e-10, 50, 5, 100
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:300*2], y[:300], nil); err != nil {
		t.Fatal(err)
	}
	checks := 0
	for i := 300; i < 700; i++ {
		m.Observe(X[2*i : 2*i+2])
		m.Learn(y[i], 1)
		if i%50 != 0 {
			continue
		}
		held, ok := m.level2Held()
		if !ok {
			t.Fatalf("sample %d: level2Held declined at λ = 1", i)
		}
		a, rv, s, nc := m.rls.Stats()
		ev, ok := newEvidence(a, rv, s, nc)
		m.rls.ReleaseStats()
		if !ok {
			t.Fatal("newEvidence failed")
		}
		want := ev.at(m.rls.Gamma())
		ev.release()
		rel := func(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }
		if rel(held.Zeta, want.Zeta) > 1e-9 || rel(held.Mu, want.Mu) > 1e-9 ||
			rel(held.EW, want.EW) > 1e-9 || rel(held.ED, want.ED) > 1e-9 ||
			math.Abs(held.DEff-want.DEff) > 1e-9*float64(len(rv)) {
			t.Errorf("sample %d: held %+v, spectral %+v", i, held, want)
		}
		checks++
	}
	if m.Info().Swaps == 0 || checks == 0 {
		t.Fatalf("the check saw %d swaps and %d comparisons: it tests nothing", m.Info().Swaps, checks)
	}

	// With forgetting the inverse is exact only right after its refresh:
	// level2Held must decline between refreshes and agree there.
	cfg.Forgetting = 0.999
	f, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Fit(X[:300*2], y[:300], nil); err != nil {
		t.Fatal(err)
	}
	declined, agreed := 0, 0
	for i := 300; i < 700; i++ {
		f.Observe(X[2*i : 2*i+2])
		f.Learn(y[i], 1)
		held, ok := f.level2Held()
		if !ok {
			declined++
			continue
		}
		a, rv, s, nc := f.rls.Stats()
		ev, _ := newEvidence(a, rv, s, nc)
		f.rls.ReleaseStats()
		want := ev.at(f.rls.Gamma())
		ev.release()
		if math.Abs(held.Zeta-want.Zeta) > 1e-9*want.Zeta || math.Abs(held.DEff-want.DEff) > 1e-9*float64(len(rv)) {
			t.Errorf("λ = 0.999, sample %d: held %+v, spectral %+v", i, held, want)
		}
		agreed++
	}
	if declined == 0 || agreed == 0 {
		t.Errorf("λ = 0.999: %d declined, %d agreed after a refresh: want both", declined, agreed)
	}
}
