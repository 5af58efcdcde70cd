package recursive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestExchangeFeatureMatchesBatch compares ExchangeFeature with the
// definition: an independent accumulation of the bordered statistics of
// ψ⁺ = [ψ; e] (e non-zero only for the last 60 samples, as the window of a
// swap), reflected and cut densely, then solved from scratch — after each
// of several exchanges and 200 further updates each, with and without
// forgetting. θ is held to the solver tolerance thetaTol(cond), the
// statistics to statTol times the scale of the entries (an exchange adds
// a few roundings of the same size per entry as an update), and QuadForm
// likewise (see TestRLSQuadForm).
func TestExchangeFeatureMatchesBatch(t *testing.T) {
	for _, tc := range []struct {
		m   int
		lam float64
	}{{5, 1}, {5, 0.99}, {30, 1}, {30, 0.995}} {
		t.Run(fmt.Sprintf("m=%d/lambda=%v", tc.m, tc.lam), func(t *testing.T) {
			const gamma = 20
			m := tc.m
			rng := rand.New(rand.NewPCG(7, uint64(m)))
			r := NewRLS(m, gamma, tc.lam)
			b := newRLSBatch(m+1, tc.lam) // ψ⁺ = [ψ; e]; its statistics only
			g := newRLSGen(8, m)
			psi := make([]float64, m)
			plus := make([]float64, m+1)
			draw := func(e float64) (y, v float64) {
				y, v = g.next(psi)
				copy(plus, psi)
				plus[m] = e
				return y, v
			}
			for k := 0; k < 300; k++ {
				e := 0.0
				if k >= 240 {
					e = 0.3 * rng.NormFloat64()
				}
				y, v := draw(e)
				r.Update(psi, y, v)
				b.add(plus, y, v)
			}
			for round := 0; round < 4; round++ {
				// The border the caller supplies, from the accumulation.
				a := make([]float64, m)
				for i := 0; i < m; i++ {
					a[i] = b.a[i*(m+1)+m]
				}
				diag, rhs := b.a[m*(m+1)+m], b.r[m]
				u := make([]float64, m+1)
				for i := range u {
					if i != m-1 {
						u[i] = rng.NormFloat64()
					}
				}
				nu := math.Sqrt(mat.Dot(mat.NewVecDense(m+1, u), mat.NewVecDense(m+1, u)))
				for i := range u {
					u[i] /= nu
				}
				thBefore, _ := cut(b, m).solve(t, gamma)
				gain, ok := r.ExchangeFeature(a, diag, rhs, u, math.Inf(-1))
				if !ok {
					t.Fatalf("round %d: exchange rejected", round)
				}
				// Reference: H = I − 2uuᵀ, A' = [I 0]HA⁺H[I 0]ᵀ, r' = [I 0]Hr⁺.
				h := mat.NewDense(m+1, m+1, nil)
				for i := 0; i <= m; i++ {
					for j := 0; j <= m; j++ {
						h.Set(i, j, -2*u[i]*u[j])
					}
					h.Set(i, i, h.At(i, i)+1)
				}
				var ha, hah mat.Dense
				ha.Mul(h, mat.NewDense(m+1, m+1, b.a))
				hah.Mul(&ha, h)
				var hr mat.VecDense
				hr.MulVec(h, mat.NewVecDense(m+1, b.r))
				nb := newRLSBatch(m+1, tc.lam)
				for i := 0; i < m; i++ {
					for j := 0; j < m; j++ {
						nb.a[i*(m+1)+j] = 0.5 * (hah.At(i, j) + hah.At(j, i))
					}
					nb.r[i] = hr.AtVec(i)
				}
				nb.s, nb.nc = b.s, b.nc
				ref := cut(nb, m)
				// gain = r'ᵀB'⁻¹r' − rᵀB⁻¹r from the batch solves; its
				// terms are of the size of rᵀθ, each to the solve's
				// tolerance. Exact only when P̃ = B⁻¹ (λ = 1); with
				// forgetting pending it is P̃'s.
				thAfter, cond := ref.solve(t, gamma)
				want := mat.Dot(mat.NewVecDense(m, ref.r), mat.NewVecDense(m, thAfter)) - mat.Dot(mat.NewVecDense(m, cut(b, m).r), mat.NewVecDense(m, thBefore))
				scale := mat.Dot(mat.NewVecDense(m, ref.r), mat.NewVecDense(m, thAfter))
				if d := math.Abs(gain - want); tc.lam == 1 && !(d <= thetaTol(cond)*scale) {
					t.Fatalf("round %d: gain %.17g, batch %.17g", round, gain, want)
				}
				checkStats(t, fmt.Sprintf("round %d: after exchange", round), r, ref)
				checkTheta(t, fmt.Sprintf("round %d: after exchange", round), r, ref)
				checkQuad(t, fmt.Sprintf("round %d: after exchange", round), r, ref, gamma, rng)

				// Later samples are new regressors in the new basis; the
				// next border again has e ≠ 0 only for the last 60.
				b = nb
				for k := 0; k < 200; k++ {
					e := 0.0
					if k >= 140 {
						e = 0.3 * rng.NormFloat64()
					}
					y, v := draw(e)
					r.Update(psi, y, v)
					b.add(plus, y, v)
				}
				ref = cut(b, m)
				checkStats(t, fmt.Sprintf("round %d: 200 updates after", round), r, ref)
				checkTheta(t, fmt.Sprintf("round %d: 200 updates after", round), r, ref)
			}
		})
	}
}

// cut returns the leading m×m statistics of b (dimension m+1).
func cut(b *batchRef, m int) *batchRef {
	c := newRLSBatch(m, b.lam)
	for i := 0; i < m; i++ {
		copy(c.a[i*m:(i+1)*m], b.a[i*(m+1):i*(m+1)+m])
		c.r[i] = b.r[i]
	}
	c.s, c.nc = b.s, b.nc
	return c
}

func checkQuad(t *testing.T, label string, r *RLS, b *batchRef, gamma float64, rng *rand.Rand) {
	t.Helper()
	m := b.m
	x := make([]float64, m)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	got := r.QuadForm(x)
	var ch mat.Cholesky
	if !ch.Factorize(b.bmat(gamma, m)) {
		t.Fatal("reference Cholesky failed")
	}
	var z mat.VecDense
	if err := ch.SolveVecTo(&z, mat.NewVecDense(m, append([]float64(nil), x...))); err != nil {
		t.Fatal(err)
	}
	want := mat.Dot(&z, mat.NewVecDense(m, x))
	if e := math.Abs(got-want) / want; !(e <= thetaTol(ch.Cond())) {
		t.Fatalf("%s: QuadForm = %.17g, want %.17g (rel. error %.3g)", label, got, want, e)
	}
}

// TestExchangeFeatureRejects: bad arguments leave the receiver unchanged.
func TestExchangeFeatureRejects(t *testing.T) {
	const m = 4
	r := NewRLS(m, 10, 1)
	g := newRLSGen(3, m)
	psi := make([]float64, m)
	for range 50 {
		y, v := g.next(psi)
		r.Update(psi, y, v)
	}
	before := r.State()
	unit := []float64{0.6, 0.8, 0, 0, 0}
	any := math.Inf(-1)
	ex := func(a []float64, diag, rhs float64, u []float64, minGain float64) bool {
		_, ok := r.ExchangeFeature(a, diag, rhs, u, minGain)
		return ok
	}
	for name, call := range map[string]func() bool{
		"not unit":    func() bool { return ex(make([]float64, m), 1, 0, []float64{1, 1, 0, 0, 0}, any) },
		"mixes bias":  func() bool { return ex(make([]float64, m), 1, 0, []float64{0.6, 0, 0, 0.8, 0}, any) },
		"non-finite":  func() bool { return ex([]float64{math.NaN(), 0, 0, 0}, 1, 0, unit, any) },
		"negative":    func() bool { return ex(make([]float64, m), -1, 0, unit, any) },
		"indefinite":  func() bool { return ex([]float64{1e6, 0, 0, 0}, 0, 0, unit, any) },
		"rhs non-fin": func() bool { return ex(make([]float64, m), 1, math.Inf(1), unit, any) },
		// A new coordinate with no data, exchanged for one that has some,
		// only loses: its gain is negative.
		"no gain": func() bool { return ex(make([]float64, m), 1, 0, []float64{0.6, 0, 0, 0, 0.8}, 0) },
	} {
		if call() {
			t.Errorf("%s: accepted", name)
		}
		if got := r.State(); !reflect.DeepEqual(got, before) {
			t.Errorf("%s: receiver changed", name)
		}
	}
}
