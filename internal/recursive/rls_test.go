package recursive

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Tolerances.
//
// thetaTol: RLS stops its solves at a backward error of backwardTol = 1e-14
// (relative to ‖r‖ + tr(B)‖θ‖), so its forward error is at most about
// cond(B)·1e-14 (at λ = 1, between two refinements, θ is the exact gain
// recursion from such a solve, whose rounding is far smaller: about
// 1e-16·cond₁ observed); the reference (gonum Cholesky from scratch) is backward
// stable with forward error about m·ε·cond(B). Observed worst cases over
// the random tests are ‖Δθ‖/‖θ‖ ≈ 2e-14·cond₁ (TestRLSMatchesBatch logs
// it). We allow 1e-12·cond₁ (cond₁ = gonum's 1-norm condition estimate,
// within a factor m of the 2-norm one): a 50× margin, yet a recursion that
// loses the ridge (textbook P ← P/λ, or solving with the decayed B̃ instead
// of B) misses it by 10⁵× or more (see TestRLSRidgeDoesNotFade).
func thetaTol(cond float64) float64 { return 1e-12 * cond }

// statTol: A, r, s and n_c are sums of the same terms in the same order in
// RLS and in batchRef; they can differ only through the association of
// v·ψ_i·ψ_j (or a fused multiply-add), at most 2ε per term, which by
// Cauchy–Schwarz sums to about 2ε·√(A_ii·A_jj) (≈ 4e-16). 1e-12 leaves room
// for platform differences while catching any wrong term (a missing λ or v
// is an O(1) error).
const statTol = 1e-12

// batchRef accumulates the statistics independently, from the definition,
// in plain loops over a full m×m matrix, and solves from scratch.
type batchRef struct {
	m     int
	lam   float64
	a     []float64 // full m×m, row-major
	r     []float64
	s, nc float64
}

func newRLSBatch(m int, lam float64) *batchRef {
	return &batchRef{m: m, lam: lam, a: make([]float64, m*m), r: make([]float64, m)}
}

func (b *batchRef) add(psi []float64, y, v float64) {
	m := b.m
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			b.a[i*m+j] = b.lam*b.a[i*m+j] + (v*psi[i])*psi[j]
		}
		b.r[i] = b.lam*b.r[i] + (v*y)*psi[i]
	}
	b.s = b.lam*b.s + (v*y)*y
	b.nc = b.lam*b.nc + v
}

// bmat returns B = A + D/γ (the leading n×n block).
func (b *batchRef) bmat(gamma float64, n int) *mat.SymDense {
	B := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			B.SetSym(i, j, b.a[i*b.m+j])
		}
		if i < b.m-1 {
			B.SetSym(i, i, B.At(i, i)+1/gamma)
		}
	}
	return B
}

// solve returns θ = (A + D/γ)⁻¹ r and the 1-norm condition estimate of the
// system solved. If A_mm = 0 (bias unidentified) it returns the documented
// limit: the reduced (m−1)-system for the weights and θ_m = 0.
func (b *batchRef) solve(t *testing.T, gamma float64) (theta []float64, cond float64) {
	t.Helper()
	m := b.m
	n := m
	if b.a[m*m-1] == 0 {
		n = m - 1
	}
	theta = make([]float64, m)
	if n == 0 {
		return theta, 1
	}
	var ch mat.Cholesky
	if !ch.Factorize(b.bmat(gamma, n)) {
		t.Fatalf("reference Cholesky failed")
	}
	var x mat.VecDense
	if err := ch.SolveVecTo(&x, mat.NewVecDense(n, append([]float64(nil), b.r[:n]...))); err != nil {
		t.Fatalf("reference solve: %v", err)
	}
	for i := 0; i < n; i++ {
		theta[i] = x.AtVec(i)
	}
	return theta, ch.Cond()
}

// gen draws regressors with geometrically decaying feature scales (like
// Nyström features), bias coordinate 1, a linear target with noise, and
// weights v uniform in [0, 2] with 10% exact zeros.
type gen struct {
	rng   *rand.Rand
	m     int
	scale []float64
	w     []float64
}

func newRLSGen(seed uint64, m int) *gen {
	g := &gen{rng: rand.New(rand.NewPCG(seed, uint64(m))), m: m, scale: make([]float64, m), w: make([]float64, m)}
	for i := range g.scale {
		g.scale[i] = math.Exp(-3 * float64(i) / float64(m))
		g.w[i] = g.rng.NormFloat64()
	}
	return g
}

func (g *gen) next(psi []float64) (y, v float64) {
	m := g.m
	y = 0.5 + 0.1*g.rng.NormFloat64()
	for i := 0; i < m-1; i++ {
		psi[i] = g.scale[i] * g.rng.NormFloat64()
		y += g.w[i] * psi[i]
	}
	psi[m-1] = 1
	v = 2 * g.rng.Float64()
	if g.rng.IntN(10) == 0 {
		v = 0
	}
	return y, v
}

func relErr(got, want []float64) float64 {
	var d, n float64
	for i := range want {
		d += (got[i] - want[i]) * (got[i] - want[i])
		n += want[i] * want[i]
	}
	if n == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / n)
}

// checkTheta compares θ with the batch solution and returns the
// relative error divided by cond₁.
func checkTheta(t *testing.T, label string, r *RLS, b *batchRef) float64 {
	t.Helper()
	want, cond := b.solve(t, r.Gamma())
	e := relErr(r.Theta(), want)
	if !(e <= thetaTol(cond)) {
		t.Fatalf("%s: θ relative error %.3g > %.3g (cond %.3g)\n got %v\nwant %v", label, e, thetaTol(cond), cond, r.Theta(), want)
	}
	return e / cond
}

// checkStats compares A, r, s, n_c with the independent accumulation.
func checkStats(t *testing.T, label string, r *RLS, b *batchRef) {
	t.Helper()
	a, rv, s, nc := r.Stats()
	m := b.m
	if a.SymmetricDim() != m || len(rv) != m {
		t.Fatalf("%s: Stats dimensions %d, %d, want %d", label, a.SymmetricDim(), len(rv), m)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			sc := math.Sqrt(b.a[i*m+i] * b.a[j*m+j])
			if d := math.Abs(a.At(i, j) - b.a[i*m+j]); !(d <= statTol*sc) {
				t.Fatalf("%s: A[%d,%d] = %v, want %v", label, i, j, a.At(i, j), b.a[i*m+j])
			}
		}
		sc := math.Sqrt(b.a[i*m+i] * b.s)
		if d := math.Abs(rv[i] - b.r[i]); !(d <= statTol*sc) {
			t.Fatalf("%s: r[%d] = %v, want %v", label, i, rv[i], b.r[i])
		}
	}
	if d := math.Abs(s - b.s); !(d <= statTol*b.s) {
		t.Fatalf("%s: s = %v, want %v", label, s, b.s)
	}
	if d := math.Abs(nc - b.nc); !(d <= statTol*b.nc) {
		t.Fatalf("%s: n_c = %v, want %v", label, nc, b.nc)
	}
}

// TestRLSMatchesBatch runs 10⁵ random updates per configuration and compares
// θ with the batch ridge solution (A + D/γ)⁻¹r, and the statistics with an
// independent accumulation: after every update for m = 5, every 1000th (and
// the last) for m = 50.
func TestRLSMatchesBatch(t *testing.T) {
	const n = 100_000
	for _, tc := range []struct {
		m     int
		lam   float64
		gamma float64
		every int
	}{
		{5, 1, 10, 1},
		{5, 0.999, 10, 1},
		{5, 0.99, 10, 1},
		{50, 1, 100, 1000},
		{50, 0.999, 100, 1000},
		{50, 0.99, 100, 1000},
	} {
		t.Run(fmt.Sprintf("m=%d/lambda=%v", tc.m, tc.lam), func(t *testing.T) {
			r := NewRLS(tc.m, tc.gamma, tc.lam)
			b := newRLSBatch(tc.m, tc.lam)
			g := newRLSGen(1, tc.m)
			psi := make([]float64, tc.m)
			worst := 0.0
			for k := 1; k <= n; k++ {
				y, v := g.next(psi)
				if !r.Update(psi, y, v) {
					t.Fatalf("update %d rejected", k)
				}
				b.add(psi, y, v)
				if k%tc.every == 0 || k == n {
					label := fmt.Sprintf("update %d", k)
					worst = max(worst, checkTheta(t, label, r, b))
					checkStats(t, label, r, b)
				}
			}
			if r.unconverged != 0 {
				t.Errorf("%d solves did not converge", r.unconverged)
			}
			t.Logf("worst ‖Δθ‖/‖θ‖/cond₁ = %.2g; PCG iterations/update %.2f, refreshes %d", worst, float64(r.iters)/n, r.refreshes)
		})
	}
}

// textbookRef is textbook exponentially weighted RLS (Haykin, Adaptive
// Filter Theory, §10.3 / §10.4): P ← (P − kψᵀP)/λ with P₀ the inverse
// ridge. Its effective ridge decays as λ^N — the bug docs/design.md, "The model" warns
// about. The test uses it only to show that the batch comparison catches
// that bug.
type textbookRef struct {
	m     int
	lam   float64
	p     []float64 // m×m
	theta []float64
}

func newRLSTextbook(m int, gamma, lam float64) *textbookRef {
	tb := &textbookRef{m: m, lam: lam, p: make([]float64, m*m), theta: make([]float64, m)}
	for i := 0; i < m-1; i++ {
		tb.p[i*m+i] = gamma
	}
	tb.p[m*m-1] = 1e12 // the bias: (almost) no prior
	return tb
}

func (tb *textbookRef) update(psi []float64, y, v float64) {
	m := tb.m
	g := make([]float64, m)
	for i := 0; i < m; i++ {
		for j := 0; j < m; j++ {
			g[i] += tb.p[i*m+j] * psi[j]
		}
	}
	den := tb.lam
	e := y
	for i := 0; i < m; i++ {
		den += v * psi[i] * g[i]
		e -= psi[i] * tb.theta[i]
	}
	for i := 0; i < m; i++ {
		tb.theta[i] += v * g[i] * e / den
		for j := 0; j < m; j++ {
			tb.p[i*m+j] = (tb.p[i*m+j] - v*g[i]*g[j]/den) / tb.lam
		}
	}
}

// TestRLSRidgeDoesNotFade: with λ = 0.99, after 10⁴ updates θ must still be
// the solution with the full ridge 1/γ. The ridge is made to matter
// (γ = 1, features down to scale e⁻³): textbook RLS (P ← P/λ), whose ridge
// has decayed to λ^10⁴ ≈ 2e-44 of its value, is checked to fail the same
// comparison by a wide margin, so the test can fail.
func TestRLSRidgeDoesNotFade(t *testing.T) {
	const (
		m     = 10
		lam   = 0.99
		gamma = 1
		n     = 10_000
	)
	r := NewRLS(m, gamma, lam)
	b := newRLSBatch(m, lam)
	tb := newRLSTextbook(m, gamma, lam)
	g := newRLSGen(2, m)
	psi := make([]float64, m)
	for k := 0; k < n; k++ {
		y, v := g.next(psi)
		if !r.Update(psi, y, v) {
			t.Fatalf("update %d rejected", k)
		}
		b.add(psi, y, v)
		tb.update(psi, y, v)
	}
	want, cond := b.solve(t, gamma)
	tol := thetaTol(cond)
	if e := relErr(r.Theta(), want); !(e <= tol) {
		t.Errorf("RLS: θ relative error %.3g > %.3g", e, tol)
	}
	if e := relErr(tb.theta, want); !(e > 1e3*tol) {
		t.Errorf("textbook RLS: θ relative error %.3g, expected ≫ %.3g: the test does not detect a fading ridge", e, tol)
	} else {
		t.Logf("textbook RLS (fading ridge) misses by %.3g; tolerance %.3g", e, tol)
	}
}

// TestRLSSetGamma changes γ mid-stream and compares with the batch solution
// for the new γ, right after the change and after further updates.
func TestRLSSetGamma(t *testing.T) {
	for _, tc := range []struct {
		m             int
		lam           float64
		gamma, gamma2 float64
	}{
		{6, 1, 10, 0.1},
		{6, 0.99, 0.1, 1000},
		{30, 0.999, 100, 1},
		{30, 0.99, 1, 1e4},
	} {
		t.Run(fmt.Sprintf("m=%d/lambda=%v/gamma=%v→%v", tc.m, tc.lam, tc.gamma, tc.gamma2), func(t *testing.T) {
			r := NewRLS(tc.m, tc.gamma, tc.lam)
			b := newRLSBatch(tc.m, tc.lam)
			g := newRLSGen(3, tc.m)
			psi := make([]float64, tc.m)
			feed := func(n int) {
				for range n {
					y, v := g.next(psi)
					r.Update(psi, y, v)
					b.add(psi, y, v)
				}
			}
			feed(537)
			if !r.SetGamma(tc.gamma2) {
				t.Fatal("SetGamma rejected")
			}
			if r.Gamma() != tc.gamma2 {
				t.Fatalf("Gamma() = %v, want %v", r.Gamma(), tc.gamma2)
			}
			checkTheta(t, "after SetGamma", r, b)
			feed(1000)
			checkTheta(t, "1000 updates after SetGamma", r, b)

			before := r.State()
			for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
				if r.SetGamma(bad) {
					t.Errorf("SetGamma(%v) accepted", bad)
				}
			}
			if after := r.State(); !reflect.DeepEqual(before, after) {
				t.Error("rejected SetGamma changed the state")
			}
		})
	}
}

// TestRLSQuadForm compares ψᵀ(A + D/γ)⁻¹ψ with a solve from scratch, at
// states with μ = λʲ < 1 (λ = 0.99) and μ = 1.
func TestRLSQuadForm(t *testing.T) {
	for _, tc := range []struct {
		m   int
		lam float64
	}{{4, 1}, {4, 0.99}, {40, 1}, {40, 0.999}, {40, 0.99}} {
		t.Run(fmt.Sprintf("m=%d/lambda=%v", tc.m, tc.lam), func(t *testing.T) {
			const gamma = 10
			r := NewRLS(tc.m, gamma, tc.lam)
			b := newRLSBatch(tc.m, tc.lam)
			g := newRLSGen(4, tc.m)
			psi := make([]float64, tc.m)
			x := make([]float64, tc.m)
			for k := 1; k <= 700; k++ {
				y, v := g.next(psi)
				r.Update(psi, y, v)
				b.add(psi, y, v)
				if k%70 != 0 {
					continue
				}
				g.next(x)
				x[tc.m-1] = float64(k%3) - 1 // bias coordinate −1, 0 or 1
				got := r.QuadForm(x)
				var ch mat.Cholesky
				if !ch.Factorize(b.bmat(gamma, tc.m)) {
					t.Fatal("reference Cholesky failed")
				}
				var z mat.VecDense
				if err := ch.SolveVecTo(&z, mat.NewVecDense(tc.m, append([]float64(nil), x...))); err != nil {
					t.Fatal(err)
				}
				want := mat.Dot(&z, mat.NewVecDense(tc.m, x))
				// The quadratic form's relative error is bounded by that
				// of the solve (it is even second order for the CG value).
				if e := math.Abs(got-want) / want; !(e <= thetaTol(ch.Cond())) {
					t.Fatalf("update %d (μ = %.3g): QuadForm = %.17g, want %.17g (rel. error %.3g)", k, r.mu, got, want, e)
				}
			}
		})
	}
}

// TestRLSLoad loads statistics (also with a change of dimension, below and
// beyond the buffer capacity), compares θ with the batch solve, continues
// updating, and checks that invalid statistics are rejected with the
// receiver unchanged.
func TestRLSLoad(t *testing.T) {
	const gamma, lam = 5.0, 0.995
	r := NewRLS(8, gamma, lam)
	g0 := newRLSGen(5, 8)
	psi0 := make([]float64, 8)
	for range 100 {
		y, v := g0.next(psi0)
		r.Update(psi0, y, v)
	}

	for _, m := range []int{8, 3, 8, 12, 1} { // same, shrink, grow within capacity, grow beyond, bias only
		t.Run(fmt.Sprintf("m=%d", m), func(t *testing.T) {
			b := newRLSBatch(m, lam)
			g := newRLSGen(6, m)
			psi := make([]float64, m)
			for range 300 {
				y, v := g.next(psi)
				b.add(psi, y, v)
			}
			a := mat.NewSymDense(m, nil)
			for i := 0; i < m; i++ {
				for j := i; j < m; j++ {
					a.SetSym(i, j, b.a[i*m+j])
				}
			}
			if !r.Load(a, b.r, b.s, b.nc) {
				t.Fatal("Load rejected")
			}
			if r.Dim() != m || len(r.Theta()) != m {
				t.Fatalf("Dim() = %d, len(Theta()) = %d, want %d", r.Dim(), len(r.Theta()), m)
			}
			checkStats(t, "after Load", r, b)
			checkTheta(t, "after Load", r, b)
			for k := 0; k < 500; k++ {
				y, v := g.next(psi)
				r.Update(psi, y, v)
				b.add(psi, y, v)
			}
			checkStats(t, "500 updates after Load", r, b)
			checkTheta(t, "500 updates after Load", r, b)

			// Loading the receiver's own Stats view is a refresh.
			sa, sr, ss, snc := r.Stats()
			if !r.Load(sa, sr, ss, snc) {
				t.Fatal("Load(Stats()) rejected")
			}
			checkTheta(t, "after Load(Stats())", r, b)
		})
	}

	// Invalid statistics: rejected, receiver unchanged.
	m := r.Dim()
	mk := func(mod func(a *mat.SymDense, rv []float64) (s, nc float64)) (*mat.SymDense, []float64, float64, float64) {
		a := mat.NewSymDense(3, nil)
		for i := 0; i < 3; i++ {
			a.SetSym(i, i, 2)
		}
		a.SetSym(0, 1, 0.5)
		rv := []float64{1, 2, 3}
		s, nc := mod(a, rv)
		return a, rv, s, nc
	}
	for _, tc := range []struct {
		name string
		mod  func(a *mat.SymDense, rv []float64) (s, nc float64)
	}{
		{"NaN in A", func(a *mat.SymDense, rv []float64) (float64, float64) { a.SetSym(0, 2, math.NaN()); return 1, 1 }},
		{"Inf in r", func(a *mat.SymDense, rv []float64) (float64, float64) { rv[1] = math.Inf(-1); return 1, 1 }},
		{"NaN s", func(a *mat.SymDense, rv []float64) (float64, float64) { return math.NaN(), 1 }},
		{"negative s", func(a *mat.SymDense, rv []float64) (float64, float64) { return -1, 1 }},
		{"negative n_c", func(a *mat.SymDense, rv []float64) (float64, float64) { return 1, -1 }},
		{"negative bias diagonal", func(a *mat.SymDense, rv []float64) (float64, float64) { a.SetSym(2, 2, -1); return 1, 1 }},
		{"indefinite", func(a *mat.SymDense, rv []float64) (float64, float64) { a.SetSym(0, 2, 10); return 1, 1 }},
		{"zero bias diagonal, nonzero row", func(a *mat.SymDense, rv []float64) (float64, float64) {
			a.SetSym(2, 2, 0)
			a.SetSym(1, 2, 0.1)
			return 1, 1
		}},
		{"zero bias diagonal, nonzero r_m", func(a *mat.SymDense, rv []float64) (float64, float64) { a.SetSym(2, 2, 0); return 1, 1 }},
	} {
		a, rv, s, nc := mk(tc.mod)
		before := r.State()
		if r.Load(a, rv, s, nc) {
			t.Errorf("%s: Load accepted", tc.name)
			continue
		}
		if after := r.State(); !reflect.DeepEqual(before, after) || r.Dim() != m {
			t.Errorf("%s: rejected Load changed the state", tc.name)
		}
	}

	// A zero bias row with r_m = 0 is the unidentified-bias state: accepted.
	a, rv, s, nc := mk(func(a *mat.SymDense, rv []float64) (float64, float64) {
		a.SetSym(2, 2, 0)
		rv[2] = 0
		return 1, 1
	})
	if !r.Load(a, rv, s, nc) {
		t.Fatal("Load with unidentified bias rejected")
	}
	if th := r.Theta(); th[2] != 0 {
		t.Errorf("unidentified bias: θ_m = %v, want 0", th[2])
	}
}

// TestRLSResetAndSingularStart checks Reset, and the documented behaviour
// while the bias is unidentified (A_mm = 0): θ_m = 0, the weights solve the
// reduced system, QuadForm is +Inf for ψ_m ≠ 0; the first sample with v > 0
// and ψ_m ≠ 0 switches to the exact full solution.
func TestRLSResetAndSingularStart(t *testing.T) {
	const m, gamma, lam = 6, 3.0, 0.98
	fresh := NewRLS(m, gamma, lam)
	used := NewRLS(m, gamma, lam)
	g := newRLSGen(7, m)
	psi := make([]float64, m)
	for range 200 {
		y, v := g.next(psi)
		used.Update(psi, y, v)
	}
	used.Reset()
	a, rv, s, nc := used.Stats()
	if s != 0 || nc != 0 || !mat.Equal(a, mat.NewSymDense(m, nil)) || !reflect.DeepEqual(rv, make([]float64, m)) {
		t.Fatal("Reset: statistics not zero")
	}
	if !reflect.DeepEqual(used.Theta(), make([]float64, m)) {
		t.Fatal("Reset: θ not zero")
	}

	b := newRLSBatch(m, lam)
	check := func(label string) {
		t.Helper()
		checkTheta(t, label, fresh, b)
		if !reflect.DeepEqual(fresh.Theta(), used.Theta()) {
			t.Fatalf("%s: reset receiver differs from a fresh one:\n%v\n%v", label, used.Theta(), fresh.Theta())
		}
	}
	feed := func(y, v float64) {
		fresh.Update(psi, y, v)
		used.Update(psi, y, v)
		b.add(psi, y, v)
	}

	// Zero weights: only decay, nothing to learn.
	for range 5 {
		y, _ := g.next(psi)
		feed(y, 0)
	}
	check("v = 0 only")
	if e := fresh.ResidualEnergy(); e != 0 {
		t.Errorf("ResidualEnergy with no data = %v", e)
	}
	// Samples with a zero bias coordinate: bias stays unidentified.
	for range 20 {
		y, v := g.next(psi)
		psi[m-1] = 0
		feed(y, v+0.1)
	}
	check("ψ_m = 0 samples")
	if th := fresh.Theta(); th[m-1] != 0 || th[0] == 0 {
		t.Fatalf("unidentified bias: θ = %v, want θ_m = 0 and fitted weights", th)
	}
	if q := fresh.QuadForm(psi); math.IsInf(q, 0) || q <= 0 {
		t.Errorf("QuadForm(ψ with ψ_m = 0) = %v, want finite positive", q)
	}
	psi[m-1] = 1
	if q := fresh.QuadForm(psi); !math.IsInf(q, 1) {
		t.Errorf("QuadForm(ψ with ψ_m ≠ 0) = %v while the bias is unidentified, want +Inf", q)
	}
	// A sample with v > 0 and ψ_m ≠ 0 identifies the bias.
	for range 300 {
		y, v := g.next(psi)
		feed(y, v)
	}
	check("after identifying samples")
	if q := fresh.QuadForm(psi); math.IsInf(q, 0) || q <= 0 {
		t.Errorf("QuadForm = %v, want finite positive", q)
	}

	// m = 1: bias only, no ridge: θ = r/A, the weighted mean.
	one := NewRLS(1, 1, 1)
	if th := one.Theta()[0]; th != 0 {
		t.Fatalf("m = 1: θ = %v before data", th)
	}
	one.Update([]float64{1}, 3, 1)
	one.Update([]float64{1}, 6, 2)
	if th := one.Theta()[0]; math.Abs(th-5) > 1e-15 {
		t.Errorf("m = 1: θ = %v, want the weighted mean 5", th)
	}
}

// TestRLSResidualEnergy compares s − 2θᵀr + θᵀAθ with Σ c_k (y_k − ψ_kᵀθ)²
// summed over stored samples.
func TestRLSResidualEnergy(t *testing.T) {
	const m, lam, n = 5, 0.99, 2000
	r := NewRLS(m, 10, lam)
	g := newRLSGen(8, m)
	psis := make([][]float64, n)
	ys, vs := make([]float64, n), make([]float64, n)
	for k := range psis {
		psis[k] = make([]float64, m)
		ys[k], vs[k] = g.next(psis[k])
		r.Update(psis[k], ys[k], vs[k])
	}
	var want float64
	for k := range psis {
		e := ys[k] - r.Predict(psis[k])
		want += vs[k] * math.Pow(lam, float64(n-1-k)) * e * e
	}
	got := r.ResidualEnergy()
	// s − 2θᵀr + θᵀAθ cancels: its absolute error is a few ε·s.
	_, _, s, _ := r.Stats()
	if math.Abs(got-want) > 1e-12*s {
		t.Errorf("ResidualEnergy = %.17g, want %.17g (s = %g)", got, want, s)
	}
}

// TestRLSRejectsBadInput: non-finite data, negative weights and overflowing
// updates return ok = false and leave the state bit-identical; dimension
// errors panic.
func TestRLSRejectsBadInput(t *testing.T) {
	const m = 4
	r := NewRLS(m, 10, 0.99)
	g := newRLSGen(9, m)
	psi := make([]float64, m)
	for range 50 {
		y, v := g.next(psi)
		r.Update(psi, y, v)
	}
	good := []float64{0.1, -0.2, 0.3, 1}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name string
		psi  []float64
		y, v float64
	}{
		{"NaN ψ", []float64{0.1, nan, 0.3, 1}, 1, 1},
		{"Inf ψ", []float64{0.1, 0.2, -inf, 1}, 1, 1},
		{"NaN y", good, nan, 1},
		{"Inf y", good, -inf, 1},
		{"NaN v", good, 1, nan},
		{"Inf v", good, 1, inf},
		{"negative v", good, 1, -0.5},
		{"ψψᵀ overflows", []float64{1e200, 0, 0, 1}, 1, 1},
		{"vψy overflows", good, 1e300, 1e10},
		{"vy² overflows", []float64{0, 0, 0, 0}, 1e160, 1},
	} {
		before := r.State()
		if r.Update(tc.psi, tc.y, tc.v) {
			t.Errorf("%s: accepted", tc.name)
		}
		if after := r.State(); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: rejected update changed the state", tc.name)
		}
	}
	if !r.Update(good, 1, 0) {
		t.Error("v = 0 rejected")
	}
	if math.IsNaN(r.QuadForm([]float64{nan, 0, 0, 1})) == false {
		t.Error("QuadForm(NaN) not NaN")
	}

	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"Update short ψ", func() { r.Update(make([]float64, m-1), 0, 1) }},
		{"Predict long ψ", func() { r.Predict(make([]float64, m+1)) }},
		{"QuadForm short ψ", func() { r.QuadForm(make([]float64, m-1)) }},
		{"Load len(rv)", func() { r.Load(mat.NewSymDense(2, nil), make([]float64, 3), 0, 0) }},
		{"NewRLS m = 0", func() { NewRLS(0, 1, 1) }},
		{"NewRLS gamma = 0", func() { NewRLS(2, 0, 1) }},
		{"NewRLS gamma = Inf", func() { NewRLS(2, inf, 1) }},
		{"NewRLS gamma = NaN", func() { NewRLS(2, nan, 1) }},
		{"NewRLS lambda = 0", func() { NewRLS(2, 1, 0) }},
		{"NewRLS lambda > 1", func() { NewRLS(2, 1, 1.5) }},
		{"NewRLS lambda = NaN", func() { NewRLS(2, 1, nan) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.f()
		}()
	}
}

// TestRLSLongZeroWeightDecay: thousands of v = 0 updates at λ = 0.5 let
// the statistics underflow (A_mm reaches the smallest subnormal). θ must stay
// finite, updates whose refresh then fails are rejected with the state
// unchanged (documented), and a sample with v > 0 is accepted again and
// gives the batch solution for what is left (that one sample).
func TestRLSLongZeroWeightDecay(t *testing.T) {
	const m, gamma, lam = 4, 10.0, 0.5
	r := NewRLS(m, gamma, lam)
	g := newRLSGen(12, m)
	psi := make([]float64, m)
	for range 20 {
		y, v := g.next(psi)
		r.Update(psi, y, v+0.1)
	}
	rejected := 0
	for k := range 3000 {
		before := r.State()
		if !r.Update(psi, 1, 0) {
			rejected++
			if !reflect.DeepEqual(before, r.State()) {
				t.Fatalf("update %d: rejected update changed the state", k)
			}
		}
		if !AllFinite(r.Theta()) {
			t.Fatalf("update %d: θ = %v", k, r.Theta())
		}
	}
	if rejected == 0 {
		t.Log("no update was rejected (no underflow reached)")
	}
	y, v := g.next(psi)
	v += 0.1
	if !r.Update(psi, y, v) {
		t.Fatal("positive-weight update after the decay rejected")
	}
	b := newRLSBatch(m, lam)
	b.add(psi, y, v)
	checkTheta(t, "after decay", r, b)
}

// TestRLSStateRoundTrip: an RLS restored from State and the original,
// continued with the same updates, compute bit-identical θ.
func TestRLSStateRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    int
		lam  float64
		pre  int
	}{
		{"lambda<1 mid-cycle", 8, 0.99, 333},
		{"lambda=1", 8, 1, 100},
		{"unidentified bias", 5, 0.97, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRLS(tc.m, 7, tc.lam)
			g := newRLSGen(10, tc.m)
			psi := make([]float64, tc.m)
			for range tc.pre {
				y, v := g.next(psi)
				r.Update(psi, y, v)
			}
			st := r.State()
			r2, err := RLSFromState(st)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r2.State(), st) {
				t.Fatal("State of the restored RLS differs")
			}
			// The snapshot is a deep copy.
			st.A[0], st.P[0], st.RV[0], st.Theta[0] = 99, 99, 99, 99
			for k := 0; k < 1000; k++ {
				y, v := g.next(psi)
				r.Update(psi, y, v)
				r2.Update(psi, y, v)
				for i, th := range r.Theta() {
					if math.Float64bits(th) != math.Float64bits(r2.Theta()[i]) {
						t.Fatalf("update %d: θ[%d] = %v vs restored %v", k, i, th, r2.Theta()[i])
					}
				}
				if q1, q2 := r.QuadForm(psi), r2.QuadForm(psi); math.Float64bits(q1) != math.Float64bits(q2) {
					t.Fatalf("update %d: QuadForm %v vs restored %v", k, q1, q2)
				}
			}
			if !reflect.DeepEqual(r.State(), r2.State()) {
				t.Fatal("final states differ")
			}
		})
	}
}

func TestRLSFromStateErrors(t *testing.T) {
	r := NewRLS(3, 2, 0.9)
	r.Update([]float64{1, 2, 1}, 1, 1)
	valid := r.State()
	if _, err := RLSFromState(valid); err != nil {
		t.Fatalf("valid state rejected: %v", err)
	}
	clone := func(s RLSState) RLSState {
		s.A = append([]float64(nil), s.A...)
		s.P = append([]float64(nil), s.P...)
		s.RV = append([]float64(nil), s.RV...)
		s.Theta = append([]float64(nil), s.Theta...)
		return s
	}
	for _, tc := range []struct {
		name string
		mod  func(s *RLSState)
	}{
		{"M = 0", func(s *RLSState) { s.M = 0 }},
		{"M mismatch", func(s *RLSState) { s.M = 4 }},
		{"Gamma = 0", func(s *RLSState) { s.Gamma = 0 }},
		{"Lambda = 1.1", func(s *RLSState) { s.Lambda = 1.1 }},
		{"short A", func(s *RLSState) { s.A = s.A[:8] }},
		{"short P", func(s *RLSState) { s.P = s.P[:8] }},
		{"short RV", func(s *RLSState) { s.RV = s.RV[:2] }},
		{"short Theta", func(s *RLSState) { s.Theta = nil }},
		{"Factored = 1", func(s *RLSState) { s.Factored = 1 }},
		{"Mu = 0", func(s *RLSState) { s.Mu = 0 }},
		{"AScale = 0", func(s *RLSState) { s.AScale = 0 }},
		{"AScale > 1", func(s *RLSState) { s.AScale = 1.5 }},
		{"Sigma < 1", func(s *RLSState) { s.Sigma = 0.5 }},
		{"SinceRefine < 0", func(s *RLSState) { s.SinceRefine = -1 }},
		{"P not symmetric", func(s *RLSState) { s.P[1] += 1 }},
		{"Since < 0", func(s *RLSState) { s.Since = -1 }},
		{"SolveIters < 0", func(s *RLSState) { s.SolveIters = -1 }},
		{"LastIters < 0", func(s *RLSState) { s.LastIters = -1 }},
		{"S = NaN", func(s *RLSState) { s.S = math.NaN() }},
		{"NC < 0", func(s *RLSState) { s.NC = -1 }},
		{"NaN in A", func(s *RLSState) { s.A[4] = math.NaN() }},
		{"Inf in P", func(s *RLSState) { s.P[1] = math.Inf(1) }},
		{"NaN in RV", func(s *RLSState) { s.RV[0] = math.NaN() }},
		{"NaN in Theta", func(s *RLSState) { s.Theta[2] = math.NaN() }},
		{"A not symmetric", func(s *RLSState) { s.A[1] += 1 }},
		{"P diagonal ≤ 0", func(s *RLSState) { s.P[4] = 0 }},
		{"Factored = M−1 with bias data", func(s *RLSState) { s.Factored = 2 }},
	} {
		s := clone(valid)
		tc.mod(&s)
		if _, err := RLSFromState(s); !errors.Is(err, ErrRLSState) {
			t.Errorf("%s: err = %v, want ErrRLSState", tc.name, err)
		}
	}
}

// stateString renders a state exactly (%#v prints every float64 with
// enough digits to round-trip and keeps the sign of zero), for bit-for-bit
// comparisons.
func stateString(st RLSState) string { return fmt.Sprintf("%#v", st) }

// TestRLSQuadFormCache: QuadForm(ψ) followed by Update(ψ, …) reuses the
// product P̃ψ. The results must be bit-identical to Update without a
// preceding QuadForm — through the unidentified-bias start, refreshes,
// λ = 1 refinements and λ < 1 solves — and the cached product must not be
// used for another ψ, for the same slice modified in place, after a
// rejected update that changed nothing (it may be used then), or after
// SetGamma, Load or Reset.
func TestRLSQuadFormCache(t *testing.T) {
	for _, lam := range []float64{1, 0.99, 0.9, 0.2} {
		t.Run(fmt.Sprintf("lambda=%v", lam), func(t *testing.T) {
			const m, n = 12, 800
			with, without := NewRLS(m, 10, lam), NewRLS(m, 10, lam)
			g := newRLSGen(13, m)
			psi, other := make([]float64, m), make([]float64, m)
			for k := range n {
				y, v := g.next(psi)
				if k < 30 {
					psi[m-1] = 0 // bias unidentified at first
				}
				g.next(other)
				var q float64
				switch k % 5 {
				case 0, 1: // the NARX pattern
					q = with.QuadForm(psi)
				case 2: // QuadForm of another ψ
					with.QuadForm(other)
				case 3: // the same slice, modified in place after QuadForm
					psi[0] -= 1e-3
					with.QuadForm(psi)
					psi[0] += 1e-3
				case 4: // a rejected update in between (changes nothing)
					q = with.QuadForm(psi)
					if with.Update(psi, math.NaN(), v) {
						t.Fatal("NaN target accepted")
					}
				}
				if k%5 != 2 && k%5 != 3 {
					// The value does not depend on the cache either.
					clone, err := RLSFromState(without.State())
					if err != nil {
						t.Fatal(err)
					}
					if q2 := clone.QuadForm(psi); math.Float64bits(q) != math.Float64bits(q2) {
						t.Fatalf("update %d: QuadForm %v, fresh receiver %v", k, q, q2)
					}
				}
				ok1, ok2 := with.Update(psi, y, v), without.Update(psi, y, v)
				if ok1 != ok2 {
					t.Fatalf("update %d: ok %v with QuadForm, %v without", k, ok1, ok2)
				}
				if s1, s2 := stateString(with.State()), stateString(without.State()); s1 != s2 {
					t.Fatalf("update %d: state with a preceding QuadForm differs from the state without", k)
				}
			}
			if with.refreshes < 2 {
				t.Errorf("only %d refreshes: the refresh path was not exercised", with.refreshes)
			}

			// Mutations other than Update must drop the cached product.
			for _, mut := range []struct {
				name string
				f    func(r *RLS)
			}{
				{"SetGamma", func(r *RLS) { r.SetGamma(0.37) }},
				{"Load", func(r *RLS) {
					a, rv, s, nc := r.Stats()
					r.Load(mat.NewSymDense(m, append([]float64(nil), a.RawSymmetric().Data...)), append([]float64(nil), rv...), s, nc)
				}},
				{"Reset", func(r *RLS) { r.Reset() }},
			} {
				y, v := g.next(psi)
				with.QuadForm(psi)
				mut.f(with)
				mut.f(without)
				with.Update(psi, y, v)
				without.Update(psi, y, v)
				if stateString(with.State()) != stateString(without.State()) {
					t.Errorf("%s: cached P̃ψ survived the mutation", mut.name)
				}
			}
		})
	}
}

// batchQuad returns θ, ψᵀB⁻¹ψ and cond₁(B) from one Cholesky
// factorisation of B = A + D/γ (bias identified).
func batchQuad(t *testing.T, b *batchRef, gamma float64, psi []float64) (theta []float64, quad, cond float64) {
	t.Helper()
	m := b.m
	var ch mat.Cholesky
	if !ch.Factorize(b.bmat(gamma, m)) {
		t.Fatal("reference Cholesky failed")
	}
	var x, z mat.VecDense
	if err := ch.SolveVecTo(&x, mat.NewVecDense(m, append([]float64(nil), b.r...))); err != nil {
		t.Fatal(err)
	}
	pv := mat.NewVecDense(m, append([]float64(nil), psi...))
	if err := ch.SolveVecTo(&z, pv); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), x.RawVector().Data...), mat.Dot(&z, pv), ch.Cond()
}

// TestRLSEveryUpdate compares θ and QuadForm with the batch solution after
// every update (every 4th for m = 101) over more than two periodic
// refreshes at λ = 1 (4m+32 updates each: 20 refinement cycles of
// refineEvery gain steps, the point where the drift of P̃ is largest is
// just before a refresh) and over many refresh cycles at λ < 1, where the
// inner PCG iterations use the implicit product B·p = s + (1−μ)Dp/γ.
func TestRLSEveryUpdate(t *testing.T) {
	for _, tc := range []struct {
		m, every int
		lam      float64
		gamma    float64
	}{
		{40, 1, 1, 100},
		{40, 1, 0.99, 100},
		{40, 1, 0.9, 1},
		{101, 4, 1, 100},
		{101, 4, 0.99, 100},
	} {
		t.Run(fmt.Sprintf("m=%d/lambda=%v", tc.m, tc.lam), func(t *testing.T) {
			m := tc.m
			n := 2*refreshEvery(m) + 100
			r := NewRLS(m, tc.gamma, tc.lam)
			b := newRLSBatch(m, tc.lam)
			g := newRLSGen(14, m)
			psi, x := make([]float64, m), make([]float64, m)
			var worstTheta, worstQuad float64
			for k := 1; k <= n; k++ {
				y, v := g.next(psi)
				if !r.Update(psi, y, v) {
					t.Fatalf("update %d rejected", k)
				}
				b.add(psi, y, v)
				if k < 3 || k%tc.every != 0 && k != refreshEvery(m)-1 {
					continue
				}
				g.next(x)
				want, quad, cond := batchQuad(t, b, tc.gamma, x)
				tol := thetaTol(cond)
				if e := relErr(r.Theta(), want); !(e <= tol) {
					t.Fatalf("update %d (since refresh %d): θ relative error %.3g > %.3g", k, r.since, e, tol)
				} else {
					worstTheta = max(worstTheta, e/cond)
				}
				if e := math.Abs(r.QuadForm(x)-quad) / quad; !(e <= tol) {
					t.Fatalf("update %d (since refresh %d, μ = %.3g): QuadForm relative error %.3g > %.3g", k, r.since, r.mu, e, tol)
				} else {
					worstQuad = max(worstQuad, e/cond)
				}
			}
			if r.unconverged != 0 {
				t.Errorf("%d solves did not converge", r.unconverged)
			}
			t.Logf("worst relative error/cond₁: θ %.2g, QuadForm %.2g; refreshes %d", worstTheta, worstQuad, r.refreshes)
		})
	}
}

// TestRLSIndefiniteInverse: if P̃ has lost definiteness (ψᵀP̃ψ < 0; here
// injected through a snapshot whose P is symmetric with a positive diagonal
// but indefinite), Update must not apply the Sherman–Morrison step but
// refresh, and θ is again the batch solution.
func TestRLSIndefiniteInverse(t *testing.T) {
	const m, gamma = 6, 10.0
	for _, lam := range []float64{1, 0.99} {
		r := NewRLS(m, gamma, lam)
		b := newRLSBatch(m, lam)
		g := newRLSGen(15, m)
		psi := make([]float64, m)
		for range 50 {
			y, v := g.next(psi)
			r.Update(psi, y, v)
			b.add(psi, y, v)
		}
		st := r.State()
		d0, d1 := st.P[0], st.P[m+1]
		c := 2 * math.Sqrt(d0*d1)
		st.P[1], st.P[m] = c, c
		bad, err := RLSFromState(st)
		if err != nil {
			t.Fatal(err)
		}
		clear(psi)
		psi[0], psi[1], psi[m-1] = 1, -1, 1
		if q := bad.QuadForm(psi); !(q >= 0) {
			t.Fatalf("QuadForm = %v", q)
		}
		refreshes := bad.refreshes
		if !bad.Update(psi, 0.3, 1) {
			t.Fatal("update rejected")
		}
		b.add(psi, 0.3, 1)
		if bad.refreshes != refreshes+1 {
			t.Errorf("lambda=%v: no refresh with an indefinite P̃", lam)
		}
		checkTheta(t, fmt.Sprintf("lambda=%v: after the refresh", lam), bad, b)
	}
}

// TestRLSAllocs: the hot-path methods do not allocate — on the rank-one
// path (λ = 1), on the refresh path (λ = 0.2 < muMin refreshes at every
// update) and mixed (λ = 0.99); also the per-sample pair QuadForm(ψ) then
// Update(ψ, …) of the NARX learner, which shares P̃ψ.
func TestRLSAllocs(t *testing.T) {
	for _, lam := range []float64{1, 0.99, 0.2} {
		const m = 30
		r := NewRLS(m, 10, lam)
		g := newRLSGen(11, m)
		psis := make([][]float64, 64)
		ys, vs := make([]float64, 64), make([]float64, 64)
		for k := range psis {
			psis[k] = make([]float64, m)
			ys[k], vs[k] = g.next(psis[k])
		}
		k := 0
		var sink float64
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"Update", func() {
				r.Update(psis[k%64], ys[k%64], vs[k%64])
				k++
			}},
			{"QuadForm+Update", func() {
				sink += r.QuadForm(psis[k%64])
				r.Update(psis[k%64], ys[k%64], vs[k%64])
				k++
			}},
			{"Predict", func() { sink += r.Predict(psis[k%64]) }},
			{"QuadForm", func() { sink += r.QuadForm(psis[k%64]) }},
			{"ResidualEnergy", func() { sink += r.ResidualEnergy() }},
			{"Theta", func() { sink += r.Theta()[0] }},
		} {
			if a := testing.AllocsPerRun(200, c.f); a != 0 {
				t.Errorf("lambda=%v: %s: %v allocations per call", lam, c.name, a)
			}
		}
		if lam == 0.2 && r.refreshes < 400 {
			t.Errorf("lambda=0.2: only %d refreshes; the refresh path was not measured", r.refreshes)
		}
		_ = sink
	}
}

// ExampleRLS fits y = 2x + 1 (the bias is the last coordinate, unregularised)
// with a weak ridge and forgetting.
func ExampleRLS() {
	r := NewRLS(2, 1e6, 0.99)
	for i := range 200 {
		x := float64(i%10) / 10
		r.Update([]float64{x, 1}, 2*x+1, 1)
	}
	th := r.Theta()
	fmt.Printf("w = %.4f, b = %.4f, ŷ(0.5) = %.4f\n", th[0], th[1], r.Predict([]float64{0.5, 1}))
	// Output: w = 2.0000, b = 1.0000, ŷ(0.5) = 2.0000
}

// A Clone computes bit for bit what its original would, and the two share
// nothing: updates of one leave the other's predictions, quadratic forms
// and θ unchanged.
func TestRLSCloneIsIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const m = 6
	r := NewRLS(m, 50, 1)
	psi := make([]float64, m)
	draw := func() float64 {
		for i := range psi {
			psi[i] = rng.NormFloat64()
		}
		psi[m-1] = 1
		return rng.NormFloat64()
	}
	for range 40 {
		y := draw()
		r.Update(psi, y, 1)
	}
	c := r.Clone()
	for range 30 { // the same updates: the same bits
		y := draw()
		if r.QuadForm(psi) != c.QuadForm(psi) {
			t.Fatal("quadratic forms differ")
		}
		r.Update(psi, y, 1)
		c.Update(psi, y, 1)
		if !SameBits(r.Theta(), c.Theta()) {
			t.Fatal("θ differs after the same update")
		}
	}
	c2 := r.Clone()
	theta := slices.Clone(c2.Theta())
	at := slices.Clone(psi)
	q := c2.QuadForm(at)
	for range 30 { // the original moves on; the clone does not
		y := draw()
		r.Update(psi, y, 1)
	}
	if !SameBits(c2.Theta(), theta) || c2.QuadForm(at) != q {
		t.Error("updating the original changed its clone")
	}
}

func copySym(a mat.Symmetric) *mat.SymDense {
	c := mat.NewSymDense(a.SymmetricDim(), nil)
	c.CopySym(a)
	return c
}

// TestRLSVersion checks Version's contract: every call that may change the
// statistics, θ or γ changes it, a refused one included; reading does not.
func TestRLSVersion(t *testing.T) {
	const m = 4
	r := NewRLS(m, 10, 1)
	psi := []float64{0.3, -1, 0.5, 1}
	r.Update(psi, 1, 1)
	mutate := []struct {
		name string
		call func()
	}{
		{"Update", func() { r.Update(psi, 2, 1) }},
		{"Update refused", func() { r.Update(psi, math.NaN(), 1) }},
		{"SetGamma", func() { r.SetGamma(20) }},
		{"SetGamma refused", func() { r.SetGamma(-1) }},
		{"Load", func() { a, rv, s, nc := r.Stats(); r.Load(copySym(a), slices.Clone(rv), s, nc) }},
		{"Reload", func() { a, rv, s, nc := r.Stats(); r.Reload(copySym(a), slices.Clone(rv), s, nc) }},
		{"ExchangeFeature refused", func() { r.ExchangeFeature(make([]float64, m), 1, 0, make([]float64, m+1), 0) }},
		{"Reset", func() { r.Reset() }},
	}
	for _, c := range mutate {
		v := r.Version()
		c.call()
		if r.Version() == v {
			t.Errorf("%s left Version at %d", c.name, v)
		}
	}
	r.Update(psi, 1, 1)
	v := r.Version()
	r.Predict(psi)
	r.QuadForm(psi)
	r.Stats()
	r.ReleaseStats()
	r.ResidualEnergy()
	r.State()
	r.Clone()
	if r.Version() != v {
		t.Errorf("reading moved Version from %d to %d", v, r.Version())
	}
}
