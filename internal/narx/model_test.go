package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randRegression returns N samples x ∈ [−2,2]^n (row-major) and y = Σ sin(x_i) + noise.
func randRegression(rng *rand.Rand, N, n int, noise float64) (X, y []float64) {
	X = make([]float64, N*n)
	y = make([]float64, N)
	for i := 0; i < N; i++ {
		for j := 0; j < n; j++ {
			X[i*n+j] = 4*rng.Float64() - 2
			y[i] += math.Sin(X[i*n+j])
		}
		y[i] += noise * rng.NormFloat64()
	}
	return X, y
}

func staticEmbedding(n int) Embedding {
	lags := make([][]int, n)
	for i := range lags {
		lags[i] = []int{0}
	}
	return Embedding{InputLags: lags}
}

func baseConfig(n, M int) Config {
	return Config{Embedding: staticEmbedding(n), Kernel: Kernel{Type: RBF, Sigma2: 2}, Size: M,
		Gamma: 10, Forgetting: 1, Cutoff: 0, Window: 1000, Select: SelectOptions{MaxIter: 2000, Patience: 500}, Seed: 7}
}

// dualLSSVM solves the LS-SVM dual system (book eq. 3.32)
//
//	[0  1ᵀ      ] [b]   [0]
//	[1  Ω + I/γ ] [α] = [y]
//
// directly with an LU factorisation and returns α, b.
func dualLSSVM(t *testing.T, kern Kernel, X, y []float64, n int, gamma float64) ([]float64, float64) {
	t.Helper()
	N := len(y)
	a := mat.NewDense(N+1, N+1, nil)
	rhs := mat.NewVecDense(N+1, nil)
	for i := 0; i < N; i++ {
		a.Set(0, i+1, 1)
		a.Set(i+1, 0, 1)
		rhs.SetVec(i+1, y[i])
		for j := 0; j < N; j++ {
			a.Set(i+1, j+1, kern.Eval(X[i*n:(i+1)*n], X[j*n:(j+1)*n]))
		}
		a.Set(i+1, i+1, a.At(i+1, i+1)+1/gamma)
	}
	var sol mat.VecDense
	if err := sol.SolveVec(a, rhs); err != nil {
		t.Fatalf("dual system: %v", err)
	}
	alpha := make([]float64, N)
	for i := range alpha {
		alpha[i] = sol.AtVec(i + 1)
	}
	return alpha, sol.AtVec(0)
}

// With M = N, no forgetting and no eigenvalue cut-off, the Nyström features
// satisfy ΦΦᵀ = Ω exactly, so the primal ridge with an unregularised bias is the
// dual LS-SVM (book eq. 3.32) in other coordinates: predictions must agree.
// Tolerance 1e-8 relative: the primal path goes through Λ^{-1/2}, which
// amplifies rounding by √cond(Ω); the test asserts cond(Ω) < 1e6 so that the
// expected error (~1e-16·cond) stays well below it.
func TestFixedSizeEqualsDualLSSVM(t *testing.T) {
	for _, tc := range []struct {
		N, n   int
		sigma2 float64
		gamma  float64
	}{{30, 2, 0.5, 10}, {60, 3, 1, 100}, {100, 4, 2, 1}} {
		t.Run(fmt.Sprintf("N=%d,n=%d", tc.N, tc.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.N)))
			m, cfg, X, y := fitFullRank(t, rng, tc.N, tc.n, tc.sigma2, tc.gamma)
			alpha, b := dualLSSVM(t, cfg.Kernel, X, y, tc.n, tc.gamma)
			Xt, _ := randRegression(rng, 50, tc.n, 0)
			for i := 0; i < 50; i++ {
				x := Xt[i*tc.n : (i+1)*tc.n]
				want := b
				for j := range alpha {
					want += alpha[j] * cfg.Kernel.Eval(X[j*tc.n:(j+1)*tc.n], x)
				}
				got := m.Predict(x)
				if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
					t.Errorf("x%d: primal %.15g, dual %.15g", i, got, want)
				}
			}
			// The dual view of the primal model is the same predictor.
			da, db := m.Dual()
			x := Xt[:tc.n]
			got := db
			for j, s := range da {
				got += s * cfg.Kernel.Eval(m.ws.Point(j), x)
			}
			if want := m.Predict(x); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("Dual() predicts %g, Predict %g", got, want)
			}
		})
	}
}

// fitFullRank fits a fixed-size model with M = N on N random samples, every
// eigenpair kept, and fails the test if Ω is too ill-conditioned for 1e-8
// comparisons (the primal path amplifies rounding by √cond(Ω)).
func fitFullRank(t *testing.T, rng *rand.Rand, N, n int, sigma2, gamma float64) (*Model, Config, []float64, []float64) {
	t.Helper()
	X, y := randRegression(rng, N, n, 0.1)
	cfg := baseConfig(n, N)
	cfg.Kernel.Sigma2, cfg.Gamma = sigma2, gamma
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	var es mat.EigenSym
	omega := mat.NewSymDense(m.m, nil)
	for i := 0; i < m.m; i++ {
		for j := i; j < m.m; j++ {
			omega.SetSym(i, j, cfg.Kernel.Eval(m.ws.Point(i), m.ws.Point(j)))
		}
	}
	if !es.Factorize(omega, false) {
		t.Fatal("test setup: eigendecomposition of Ω failed")
	}
	vals := es.Values(nil)
	// A negative smallest eigenvalue makes the ratio negative: check both.
	if cond := vals[len(vals)-1] / vals[0]; !(vals[0] > 0 && cond < 1e6) {
		t.Fatalf("test setup: cond(Ω) = %g, too large for a 1e-8 comparison", cond)
	}
	if m.fm.r != N {
		t.Fatalf("rank %d, want %d (cut-off 0 keeps all)", m.fm.r, N)
	}
	return m, cfg, X, y
}

// batchTheta solves θ = (A + D/γ)⁻¹ r from scratch for features ψ_k = [φ(x_k); 1]
// and weights c_k = v_k λ^{N−k}, the formula the recursion must reproduce.
func batchTheta(t *testing.T, m *Model, X, y, v []float64, lambda float64) []float64 {
	t.Helper()
	n, r := m.n, m.fm.r
	N := len(y)
	a := mat.NewSymDense(r+1, nil)
	rv := mat.NewVecDense(r+1, nil)
	k := make([]float64, m.m)
	psi := make([]float64, r+1)
	for i := 0; i < N; i++ {
		c := weightAt(v, i) * math.Pow(lambda, float64(N-1-i))
		m.cfg.Kernel.Column(k, m.ws.Points(), X[i*n:(i+1)*n])
		m.fm.apply(psi[:r], k)
		psi[r] = 1
		a.SymRankOne(a, c, mat.NewVecDense(r+1, psi))
		rv.AddScaledVec(rv, c*y[i], mat.NewVecDense(r+1, psi))
	}
	for i := 0; i < r; i++ {
		a.SetSym(i, i, a.At(i, i)+1/m.rls.Gamma())
	}
	var th mat.VecDense
	if err := th.SolveVec(a, rv); err != nil {
		t.Fatalf("batch solve: %v", err)
	}
	return th.RawVector().Data
}

func maxRelDiff(got, want []float64) float64 {
	var d, s float64
	for i := range got {
		d = math.Max(d, math.Abs(got[i]-want[i]))
		s = math.Max(s, math.Abs(want[i]))
	}
	return d / math.Max(s, 1)
}

// Online with λ = 1 and a frozen working set: fitting on the first N0 samples
// then learning the rest one by one gives the batch fit on all of them.
// Tolerance 1e-8: RLS and the batch solve differ only by rounding amplified by
// cond(A + D/γ) ≲ 1e6 here.
func TestOnlineFrozenEqualsBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	X, y := randRegression(rng, 600, 2, 0.1)
	cfg := baseConfig(2, 20)
	cfg.Cutoff = 1e-10
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	N0 := 100
	if err := m.Fit(X[:N0*2], y[:N0], nil); err != nil {
		t.Fatal(err)
	}
	for i := N0; i < 600; i++ {
		m.Observe(X[i*2 : i*2+2])
		if m.Learn(y[i], 1) {
			t.Fatal("a swap happened with SwapInterval 0")
		}
	}
	want := batchTheta(t, m, X, y, nil, 1)
	if d := maxRelDiff(m.Theta(), want); d > 1e-8 {
		t.Errorf("online θ differs from batch by %g (relative)", d)
	}
}

// After accepted swaps the statistics are re-expressed in the new features:
// the window exactly, older samples through the Nyström projection. Two cases
// where the result must equal the batch formula θ = (A + D/γ)⁻¹r on every
// sample learned, with weights and forgetting, in the final features:
//   - the window holds every sample (then nothing is projected);
//   - a linear kernel with M ≥ n, where the feature space is R^n and the
//     projection is exact, so a window of 30 samples loses nothing.
//
// In both the features must stay orthonormal (F Ω Fᵀ = I, see
// basisError). Tolerance 1e-7 relative: θ goes through O(20) swaps, each a
// few rank-one changes of the inverse whose rounding is amplified by
// cond(A + D/γ) ≲ 1e6 here.
func TestSwapMatchesBatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kern   Kernel
		M, W   int
		lambda float64
		force  bool // swap every 37 samples regardless of the entropy test
		rule   SwapRule
	}{
		{"rbf/window-holds-all/lambda=1", Kernel{Type: RBF, Sigma2: 2}, 15, 1000, 1, false, SwapEntropy},
		{"rbf/window-holds-all/lambda=0.99", Kernel{Type: RBF, Sigma2: 2}, 15, 1000, 0.99, false, SwapEntropy},
		// Swaps forced at every 37th sample, whatever the entropy test says.
		{"rbf/forced/lambda=0.995", Kernel{Type: RBF, Sigma2: 2}, 15, 1000, 0.995, true, SwapEntropy},
		// The gain rule swaps in the most promising of the samples since
		// its last test, most of them already in the window and learned.
		{"rbf/gain/lambda=1", Kernel{Type: RBF, Sigma2: 2}, 15, 1000, 1, false, SwapGain},
		{"rbf/gain/lambda=0.995", Kernel{Type: RBF, Sigma2: 2}, 15, 1000, 0.995, false, SwapGain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			// The second half moves to a new input region, so swaps are accepted.
			X, y := randRegression(rng, 900, 2, 0.05)
			for i := 450; i < 900; i++ {
				X[2*i] += 3
			}
			v := make([]float64, 900)
			for i := range v {
				v[i] = 0.5 + rng.Float64()
			}
			cfg := baseConfig(2, tc.M)
			cfg.Kernel = tc.kern
			cfg.Cutoff, cfg.Forgetting, cfg.Window, cfg.SwapInterval = 1e-10, tc.lambda, tc.W, 5
			cfg.SwapRule = tc.rule
			m, err := NewModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Fit(X[:200], y[:100], v[:100]); err != nil {
				t.Fatal(err)
			}
			swaps, fromWindow := 0, 0
			for i := 100; i < 900; i++ {
				m.Observe(X[i*2 : i*2+2])
				if tc.force && i%37 == 0 {
					if m.swap(i%m.m, math.Inf(-1)) {
						swaps++
					}
					m.prepared = false
					m.learnPrepared(y[i], v[i], 0)
					continue
				}
				if m.Learn(y[i], v[i]) {
					swaps++
					// Not the sample just learned: one from the window.
					newcomer := true
					for j := range m.m {
						if slices.Equal(m.ws.Point(j), X[i*2:i*2+2]) {
							newcomer = false
						}
					}
					if newcomer {
						fromWindow++
					}
				}
			}
			if swaps == 0 {
				t.Fatal("no swap accepted; the test exercises nothing")
			}
			if tc.rule == SwapGain && fromWindow == 0 {
				t.Fatal("no window sample swapped in; the gain rule's newcomer is not exercised")
			}
			want := batchTheta(t, m, X, y, v, tc.lambda)
			if d := maxRelDiff(m.Theta(), want); d > 1e-7 {
				t.Errorf("θ after %d swaps differs from the batch formula on all samples by %g", swaps, d)
			}
			// The window's kept kernel columns are what a restore
			// recomputes, bit for bit.
			kept := slices.Clone(m.win.k)
			m.win.fillColumns(m.cfg.Kernel, m.ws.Points())
			for i := range kept {
				if math.Float64bits(kept[i]) != math.Float64bits(m.win.k[i]) {
					t.Fatalf("window column entry %d: kept %v, recomputed %v", i, kept[i], m.win.k[i])
				}
			}
			if e := basisError(m); e > 1e-8 {
				t.Errorf("features not orthonormal after %d swaps: max |FΩFᵀ − I| = %g", swaps, e)
			}
			if f := m.Info().SwapFailures; f != 0 {
				t.Errorf("%d swaps fell back to the window", f)
			}
		})
	}
}

// With a nonlinear kernel and a short window the projection of older samples
// is an approximation; it must still keep their information: after the same
// stream, the model with a short window stays close to the one whose window
// holds everything, and much closer than a model that forgot the old samples.
// A linear kernel's features span R^n once n members are kept: the fit
// keeps only n of M (the others lie in their span) and a swap is refused
// (x adds nothing), leaving the model equal to the batch formula.
func TestLinearKernelKeepsASpanningSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	X, y := randRegression(rng, 300, 2, 0.05)
	cfg := baseConfig(2, 6)
	cfg.Kernel = Kernel{Type: Linear}
	cfg.Cutoff, cfg.Window, cfg.SwapInterval = 1e-10, 30, 1
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:200], y[:100], nil); err != nil {
		t.Fatal(err)
	}
	if m.m != 2 {
		t.Fatalf("kept %d members, want 2 (the rank of a linear kernel in R²)", m.m)
	}
	for i := 100; i < 300; i++ {
		m.Observe(X[i*2 : i*2+2])
		if m.swap(i%m.m, math.Inf(-1)) {
			t.Fatalf("sample %d: a swap in the span was accepted", i)
		}
		m.prepared = false
		m.learnPrepared(y[i], 1, 0)
	}
	want := batchTheta(t, m, X, y, nil, 1)
	if d := maxRelDiff(m.Theta(), want); d > 1e-8 {
		t.Errorf("θ differs from the batch formula by %g", d)
	}
}

// On all-zero regressors a linear kernel has no feature: the fit keeps one
// member with a dead feature (a bias-only model), and the first regressor
// off zero is swapped in. The zeros' kernel values against it are 0, so the
// result is exactly the batch formula on every sample.
func TestDeadBasisComesAlive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	X, y := randRegression(rng, 200, 2, 0.05)
	clear(X[:200]) // rows 0..99
	cfg := baseConfig(2, 6)
	cfg.Kernel = Kernel{Type: Linear}
	cfg.Cutoff, cfg.Window, cfg.SwapInterval = 1e-10, 10, 0
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:100], y[:50], nil); err != nil {
		t.Fatal(err)
	}
	if m.m != 1 || m.fm.f[0] != 0 {
		t.Fatalf("fit on zeros kept %d members, F = %v; want one dead feature", m.m, m.fm.f)
	}
	for i := 50; i < 200; i++ {
		m.Observe(X[i*2 : i*2+2])
		if i == 100 && !m.swap(0, math.Inf(-1)) {
			t.Fatal("the first non-zero regressor was not swapped in")
		}
		m.prepared = false
		m.learnPrepared(y[i], 1, 0)
	}
	if e := basisError(m); e > 1e-12 {
		t.Errorf("basis error %g", e)
	}
	want := batchTheta(t, m, X, y, nil, 1)
	if d := maxRelDiff(m.Theta(), want); d > 1e-8 {
		t.Errorf("θ differs from the batch formula by %g", d)
	}
}

// basisError returns max |F Ω Fᵀ − I|, Ω the working set's kernel matrix.
func basisError(m *Model) float64 {
	M := m.m
	omega := mat.NewDense(M, M, nil)
	for i := 0; i < M; i++ {
		for j := 0; j < M; j++ {
			omega.Set(i, j, m.cfg.Kernel.Eval(m.ws.Point(i), m.ws.Point(j)))
		}
	}
	f := mat.NewDense(M, M, m.fm.f)
	var fo, fof mat.Dense
	fo.Mul(f, omega)
	fof.Mul(&fo, f.T())
	var e float64
	for i := 0; i < M; i++ {
		for j := 0; j < M; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			e = math.Max(e, math.Abs(fof.At(i, j)-want))
		}
	}
	return e
}

func TestSwapKeepsOlderSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	X, y := randRegression(rng, 1500, 2, 0.05)
	run := func(W int) *Model {
		cfg := baseConfig(2, 30)
		// The entropy rule swaps the same members whatever the window, so
		// the two models differ only by the projection under test.
		cfg.Cutoff, cfg.Window, cfg.SwapInterval, cfg.SwapRule = 1e-10, W, 20, SwapEntropy
		m, err := NewModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fit(X[:2*300], y[:300], nil); err != nil {
			t.Fatal(err)
		}
		for i := 300; i < 1500; i++ {
			m.Observe(X[i*2 : i*2+2])
			m.Learn(y[i], 1)
		}
		return m
	}
	short, full := run(50), run(2000)
	if short.Info().Swaps == 0 {
		t.Fatal("no swaps")
	}
	// Fraction of the total weight n_c the short-window model still carries:
	// all of it (a truncating model would have about 50/1500).
	if got := short.Info().SamplesWeight; math.Abs(got-1500) > 1e-6 {
		t.Errorf("n_c = %g after swaps, want 1500", got)
	}
	Xt, _ := randRegression(rng, 200, 2, 0)
	var diff, scale float64
	for i := 0; i < 200; i++ {
		x := Xt[2*i : 2*i+2]
		d := short.Predict(x) - full.Predict(x)
		diff += d * d
		scale += full.Predict(x) * full.Predict(x)
	}
	// Measured 0.0045 relative; 1e-2 leaves margin and would catch old
	// samples being dropped or mis-mapped (errors of order 1).
	rel := math.Sqrt(diff / scale)
	t.Logf("short vs full window: relative RMS difference %.2g", rel)
	if rel > 1e-2 {
		t.Errorf("short-window model differs from the full-window one by %g (relative RMS)", rel)
	}
}

func TestEntropySelection(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	X := make([]float64, 2000)
	for i := range X {
		X[i] = rng.NormFloat64() // clustered at 0: a random subset is too
	}
	kern := Kernel{Type: RBF, Sigma2: 1}
	res := SelectWorkingSet(kern, X, 1, 10, rand.New(rand.NewPCG(1, 2)), SelectOptions{Method: SelectEntropy, MaxIter: 20000, Patience: 2000})
	for i := 1; i < len(res.Entropy); i++ {
		if !(res.Entropy[i] > res.Entropy[i-1]) {
			t.Fatalf("entropy fell at accepted swap %d: %g → %g", i, res.Entropy[i-1], res.Entropy[i])
		}
	}
	if len(res.Entropy) < 2 {
		t.Fatal("no swap accepted")
	}
	// Recompute the final entropy from scratch.
	pts := make([]float64, 0, 10)
	for _, i := range res.Index {
		pts = append(pts, X[i])
	}
	ws := NewWorkingSet(kern, 1, pts, nil)
	if got, want := res.Entropy[len(res.Entropy)-1], ws.Entropy(); math.Abs(got-want) > 1e-12 {
		t.Errorf("incremental entropy %g, from scratch %g", got, want)
	}
}

// fitAR1 fits a linear-kernel model with one lag, ŷ = a·y + b, to 400
// values of y_k = 0.8·y_{k−1} + 0.1 + 0.2·ε_k (seeds s1, s2), and returns
// it with a history holding the last value.
func fitAR1(t *testing.T, s1, s2 uint64) (*Model, *History, float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(s1, s2))
	N := 400
	ys := make([]float64, N+1)
	for i := 1; i <= N; i++ {
		ys[i] = 0.8*ys[i-1] + 0.1 + 0.2*rng.NormFloat64()
	}
	cfg := Config{Embedding: Embedding{YLags: []int{1}}, Kernel: Kernel{Type: Linear}, Size: 5,
		Gamma: 1e6, Forgetting: 1, Window: 100, Select: SelectOptions{MaxIter: 100, Patience: 50}}
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(ys[:N], ys[1:], nil); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(cfg.Embedding)
	h.Push(ys[N], nil)
	return m, h, ys[N]
}

func TestForecastLinearAR1Closed(t *testing.T) {
	// Linear kernel, one y lag: ŷ = a·y + b, so linearisation is exact.
	m, h, last := fitAR1(t, 11, 12)
	steps := make([]Step, 8)
	m.Forecast(steps, h, nil)
	alpha, b := m.Dual()
	var a float64 // ∂ŷ/∂y = Σ α_i s_i
	for i, s := range alpha {
		a += s * m.ws.Point(i)[0]
	}
	if math.Abs(a-0.8) > 0.1 {
		t.Fatalf("fitted AR coefficient %g, far from 0.8", a)
	}
	// The error of step h: the new noise, the previous step's noise error
	// times a, and one parameter error δθ seen through J_h = ψ_h + a·J_{h−1}
	// (ψ_h the features at the previous mean): Var_h = N_h + ζ⁻¹τ·J_hᵀ(A + D/γ)⁻¹J_h,
	// N_h = τ(ζ⁻¹ + ρ·prior_h) + a²·N_{h−1}.
	r := m.fm.r
	psi, J := make([]float64, r+1), make([]float64, r+1)
	prevMean, prevNoise := last, 0.0
	for i, s := range steps {
		wantMean := a*prevMean + b
		if math.Abs(s.Mean-wantMean) > 1e-9 {
			t.Errorf("h=%d mean %g, want %g", i+1, s.Mean, wantMean)
		}
		x := []float64{prevMean}
		m.cfg.Kernel.Column(m.k, m.ws.Points(), x)
		m.fm.apply(psi[:r], m.k)
		psi[r] = 1
		for j := range J {
			J[j] = psi[j] + a*J[j]
		}
		sc, tau := m.cal.s, m.cal.tau*m.cal.kappa
		noise := tau*(sc[0]*m.noiseVar+sc[2]*m.priorPart(psi, m.cfg.Kernel.Eval(x, x))) + a*a*prevNoise
		wantVar := noise + tau*sc[1]*m.noiseVar*m.rls.QuadForm(J)
		if math.Abs(s.Var-wantVar) > 1e-9*wantVar {
			t.Errorf("h=%d var %g, want %g", i+1, s.Var, wantVar)
		}
		prevMean, prevNoise = s.Mean, noise
	}
	if !(steps[7].Var > steps[0].Var) {
		t.Error("variance did not grow with the horizon")
	}
}

// TestForecastOffsetShiftsTheIntercept: for ŷ = a·y + b (linear kernel,
// one lag) ForecastOffset with offset c forecasts m_h = a·m_{h−1} + b + c
// from the last value, the recursion of the model with intercept b + c,
// whose level moves by c/(1 − a) over the horizon; its variances are
// Forecast's at the means it passes (equal to them at step 1, where the
// regressor is the same), and offset 0 is Forecast to the bit. Tolerance
// 1e-9 absolute on means of order 1: rounding in the feature map.
func TestForecastOffsetShiftsTheIntercept(t *testing.T) {
	m, h, last := fitAR1(t, 13, 14)
	plain, zero, shifted := make([]Step, 12), make([]Step, 12), make([]Step, 12)
	m.Forecast(plain, h, nil)
	m.ForecastOffset(zero, h, nil, 0)
	const c = 0.5
	m.ForecastOffset(shifted, h, nil, c)
	if !reflect.DeepEqual(plain, zero) {
		t.Error("ForecastOffset with offset 0 differs from Forecast")
	}
	alpha, b := m.Dual()
	var a float64
	for i, s := range alpha {
		a += s * m.ws.Point(i)[0]
	}
	prev := last
	for i, s := range shifted {
		want := a*prev + b + c
		if math.Abs(s.Mean-want) > 1e-9 {
			t.Errorf("h=%d mean %v, want %v", i+1, s.Mean, want)
		}
		prev = s.Mean
	}
	if shifted[0].Var != plain[0].Var {
		t.Errorf("step 1's variance %v with the offset, %v without", shifted[0].Var, plain[0].Var)
	}
	if lr := c / (1 - a); math.Abs(shifted[11].Mean-plain[11].Mean-lr*(1-math.Pow(a, 12))) > 1e-9 {
		t.Errorf("step 12 moved by %v, want c(1 − a¹²)/(1 − a) = %v", shifted[11].Mean-plain[11].Mean, lr*(1-math.Pow(a, 12)))
	}
}

// TestSelectWorkingSetGramSame checks that the kernel-value cache of
// SelectWorkingSet does not change the selection: the same rows, entropies
// and trials as computing every column, for each kernel type.
func TestSelectWorkingSetGramSame(t *testing.T) {
	X, _ := benchData(140, 10)
	for _, k := range []Kernel{{Type: RBF, Sigma2: 20}, {Type: Linear}, {Type: Polynomial, Degree: 3, Offset: 1}} {
		run := func(on bool) SelectResult {
			defer func(v bool) { selGramOn = v }(selGramOn)
			selGramOn = on
			return SelectWorkingSet(k, X, 10, 30, rand.New(rand.NewPCG(4, 5)), SelectOptions{Method: SelectEntropy, MaxIter: 3000, Patience: 300})
		}
		with, without := run(true), run(false)
		if !reflect.DeepEqual(with, without) {
			t.Errorf("%v: selection with the cache differs: %d trials, %d accepted vs %d, %d",
				k.Type, with.Trials, len(with.Entropy), without.Trials, len(without.Entropy))
		}
		if len(with.Entropy) < 5 {
			t.Errorf("%v: only %d swaps accepted; the cache was hardly exercised", k.Type, len(with.Entropy)-1)
		}
	}
}

// TestForecastCumVarAgainstErrorRecursion: with a linear kernel the
// linearised propagation is exact. Each step's error is its new noise ε_h
// (variance τ(ζ⁻¹ + ρ·prior_h)), the earlier steps' errors fed back,
// e_h = Σ_a g_a e_{h−a} + ε_h + J_hᵀδθ, and one parameter error δθ
// (covariance ζ⁻¹τ·(A + D/γ)⁻¹) seen through J_h = ∂ŷ_h/∂θ. Written as
// e = Aε + Jδθ (A lower triangular from the recursion), Var e_h =
// Σ_k A_hk² D_k + J_hᵀΣJ_h and the summed errors' variance
// Var(Σ_{j≤h} e_j) = Σ_k (Σ_{j≤h} A_jk)² D_k + (Σ_j J_j)ᵀΣ(Σ_j J_j), which
// Var and CumVar must equal. J is measured here by central differences of
// the forecast path in θ, independently of the recursion Forecast uses.
// Lags 1, 2 and 4 exercise the covariance of several fed-back values.
// Tolerance 1e-6 relative: the differences' truncation (the path is a
// polynomial in θ) at δ = 1e-5, and rounding of the quadratic forms.
func TestForecastCumVarAgainstErrorRecursion(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	lags := []int{1, 2, 4}
	N := 600
	ys := make([]float64, N)
	for i := 4; i < N; i++ {
		ys[i] = 0.5*ys[i-1] + 0.3*ys[i-2] - 0.2*ys[i-4] + 0.05 + 0.3*rng.NormFloat64()
	}
	cfg := Config{Embedding: Embedding{YLags: lags}, Kernel: Kernel{Type: Linear}, Size: 10,
		Gamma: 1e4, Forgetting: 1, Window: 100, Select: SelectOptions{MaxIter: 200, Patience: 100}, Summed: true}
	var X, y []float64
	for i := 4; i < N; i++ {
		X = append(X, ys[i-1], ys[i-2], ys[i-4])
		y = append(y, ys[i])
	}
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(cfg.Embedding)
	for i := N - 4; i < N; i++ {
		h.Push(ys[i], nil)
	}
	const H = 12
	steps := make([]Step, H)
	m.Forecast(steps, h, nil)
	r := m.fm.r
	// The gradient of a linear predictor in x, by differences at 0 (exact up
	// to rounding: ŷ is affine).
	g := make([]float64, len(lags))
	x := make([]float64, len(lags))
	b := m.Predict(x)
	for i := range g {
		x[i] = 1
		g[i] = m.Predict(x) - b
		x[i] = 0
	}
	// J by central differences of the mean path in θ.
	J := make([][]float64, H)
	for k := range J {
		J[k] = make([]float64, r+1)
	}
	theta := m.rls.Theta()
	plus, minus := make([]Step, H), make([]Step, H)
	const delta = 1e-5
	for j := range theta {
		th := theta[j]
		theta[j], m.alphaFresh = th+delta, false
		m.Forecast(plus, h, nil)
		theta[j], m.alphaFresh = th-delta, false
		m.Forecast(minus, h, nil)
		theta[j], m.alphaFresh = th, false
		for k := range J {
			J[k][j] = (plus[k].Mean - minus[k].Mean) / (2 * delta)
		}
	}
	// D_k: the new noise of step k at the mean path's regressor.
	path := append(slices.Clone(ys[N-4:]), make([]float64, H)...)
	psi := make([]float64, r+1)
	D := make([]float64, H)
	for k := range D {
		xk := []float64{path[3+k], path[2+k], path[k]}
		m.cfg.Kernel.Column(m.k, m.ws.Points(), xk)
		m.fm.apply(psi[:r], m.k)
		psi[r] = 1
		D[k] = m.cal.tau * m.cal.kappa * (m.cal.s[0]*m.noiseVar + m.cal.s[2]*m.priorPart(psi, m.cfg.Kernel.Eval(xk, xk)))
		path[4+k] = steps[k].Mean
	}
	A := make([][]float64, H)
	for row := range A {
		A[row] = make([]float64, H)
		A[row][row] = 1
		for i, a := range lags {
			if row-a >= 0 {
				for k := range A[row] {
					A[row][k] += g[i] * A[row-a][k]
				}
			}
		}
	}
	pv := m.cal.tau * m.cal.kappa * m.cal.s[1] * m.noiseVar
	sum, jsum := make([]float64, H), make([]float64, r+1)
	for row, s := range steps {
		var v, cv float64
		for k := range sum {
			sum[k] += A[row][k]
			v += A[row][k] * A[row][k] * D[k]
			cv += sum[k] * sum[k] * D[k]
		}
		for j := range jsum {
			jsum[j] += J[row][j]
		}
		v += pv * m.rls.QuadForm(J[row])
		cv += pv * m.rls.QuadForm(jsum)
		if math.Abs(s.Var-v) > 1e-6*v {
			t.Errorf("h=%d Var %g, want %g", row+1, s.Var, v)
		}
		if math.Abs(s.CumVar-cv) > 1e-6*cv {
			t.Errorf("h=%d CumVar %g, want %g", row+1, s.CumVar, cv)
		}
	}
	if !(steps[H-1].CumVar > steps[H-1].Var) {
		t.Errorf("summed errors of positively correlated steps should vary more than one step: %g ≤ %g", steps[H-1].CumVar, steps[H-1].Var)
	}
}

// Every learned sample keeps its swap score, v·e²·(K(x,x) − k_S(x)ᵀΩ⁻¹k_S(x))/K(x,x)
// with e its prediction error before it was learned: checked against that
// closed form with Ω⁻¹ from a dense solve on the members of the moment, for
// weighted samples, across swaps (SwapGain). The novelty is a difference
// of two numbers of order 1 computed with rounding about 1e-14 (the
// Nyström map's, conditioned by the cut-off 1e-10); samples with novelty
// above 1e-4 are compared to 1e-7 relative, and the others absolutely.
func TestSwapScoreIsThePriorErrorTimesNovelty(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	X, y := randRegression(rng, 800, 2, 0.05)
	for i := 400; i < 800; i++ { // the inputs move on: the members must follow
		X[2*i] += 3
		y[i] += math.Sin(X[2*i]) - math.Sin(X[2*i]-3)
	}
	cfg := baseConfig(2, 20)
	cfg.Cutoff, cfg.Window, cfg.SwapInterval, cfg.SwapRule = 1e-10, 80, 5, SwapGain
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:2*100], y[:100], nil); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i := 100; i < 800; i++ {
		x := X[i*2 : i*2+2]
		// The members before the sample's swap test, as its score uses.
		M := m.m
		pts := slices.Clone(m.ws.Points())
		omega := mat.NewSymDense(M, nil)
		k := mat.NewVecDense(M, nil)
		for a := range M {
			k.SetVec(a, cfg.Kernel.Eval(x, pts[a*2:a*2+2]))
			for b := a; b < M; b++ {
				omega.SetSym(a, b, cfg.Kernel.Eval(pts[a*2:a*2+2], pts[b*2:b*2+2]))
			}
		}
		var sol mat.VecDense
		if err := sol.SolveVec(omega, k); err != nil {
			t.Fatal(err)
		}
		kxx := cfg.Kernel.Eval(x, x)
		nov := max((kxx-mat.Dot(k, &sol))/kxx, 0)
		mean, _ := m.Observe(x)
		v := 0.5 + float64(i%3)/4
		m.Learn(y[i], v)
		want := v * nov * (y[i] - mean) * (y[i] - mean)
		got := m.win.s[m.win.head]
		tol := 1e-7 * want
		if nov < 1e-4 {
			tol = 1e-9
		}
		if math.Abs(got-want) > tol {
			t.Fatalf("sample %d: score %v, want %v (novelty %v)", i, got, want, nov)
		}
		checked++
	}
	if m.Info().Swaps < 5 {
		t.Fatalf("%d swaps: the scores were not checked across changes of members", m.Info().Swaps)
	}
	t.Logf("%d scores checked, %d swaps", checked, m.Info().Swaps)
}

// TestLearnOffsetScoresThePublishedPrediction checks LearnOffset's
// contract: the model learns y as Learn does (the same predictions after
// every update, to the bit), offset 0 is Learn to the bit (the same
// variances too), and the calibration records y − (mean + offset), the
// error of the prediction as published, where Learn records y − mean.
func TestLearnOffsetScoresThePublishedPrediction(t *testing.T) {
	plain, _, last := fitAR1(t, 15, 16)
	zero, _, _ := fitAR1(t, 15, 16)
	offset, _, _ := fitAR1(t, 15, 16)
	rng := rand.New(rand.NewPCG(17, 18))
	const c = 0.3
	x := []float64{last}
	for i := range 50 {
		y := 0.8*x[0] + 0.1 + 0.2*rng.NormFloat64()
		mp, vp := plain.Observe(x)
		mz, vz := zero.Observe(x)
		mo, _ := offset.Observe(x)
		if mp != mz || vp != vz || mp != mo {
			t.Fatalf("update %d: predictions %v, %v (offset 0), %v (offset %v); variances %v, %v", i, mp, mz, mo, c, vp, vz)
		}
		plain.Learn(y, 1)
		zero.LearnOffset(y, 1, 0)
		offset.LearnOffset(y, 1, c)
		k := (plain.cal.head + calWindow - 1) % calWindow // the entry just added
		if got, want := plain.cal.e2[k], (y-mp)*(y-mp); got != want {
			t.Fatalf("update %d: Learn recorded e² %v, want %v", i, got, want)
		}
		if got, want := offset.cal.e2[k], (y-(mp+c))*(y-(mp+c)); got != want {
			t.Fatalf("update %d: LearnOffset recorded e² %v, want (y − (mean + %v))² = %v", i, got, c, want)
		}
		x[0] = y
	}
}

// TestFailedFitLeavesModelUnfitted: a refit whose ridge system is not
// positive definite (constant regressors at γ = 1e14: one member, its
// feature collinear with the bias) leaves the model unfitted, as Fit's
// contract says, not fitted with empty statistics (which predicted 0 with
// an infinite variance); a negative weight is refused up front and leaves
// the fitted model as it was; an interval level whose quantile rounds to
// infinity is refused by Validate.
func TestFailedFitLeavesModelUnfitted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	X, y := randRegression(rng, 200, 2, 0.1)
	cfg := baseConfig(2, 10)
	cfg.Gamma = 1e14
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X, y, nil); err != nil {
		t.Fatal(err)
	}
	mu, v := m.Predict(X[:2]), m.Info()
	w := make([]float64, len(y))
	for i := range w {
		w[i] = 1
	}
	w[7] = -1
	if err := m.Fit(X, y, w); err == nil || !m.Fitted() || m.Predict(X[:2]) != mu || m.Info() != v {
		t.Errorf("a negative weight: %v; fitted %v, prediction %v (was %v)", err, m.Fitted(), m.Predict(X[:2]), mu)
	}
	Xc := make([]float64, len(X))
	for i := range Xc {
		Xc[i] = 0.3
	}
	if err := m.Fit(Xc, y, nil); err == nil || m.Fitted() {
		t.Errorf("constant regressors at γ = 1e14: %v, fitted %v", err, m.Fitted())
	}
	cfg.IntervalLevel = 0.9999999999999999
	if err := cfg.Validate(); err == nil {
		t.Error("an interval level of 1 − 1e-16 validated")
	}
}
