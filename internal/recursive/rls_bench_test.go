package recursive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchSink keeps the benchmark results alive.
var benchSink float64

// benchData returns n regressors of dimension m with geometrically
// decaying feature scales (like Nyström features) and a bias coordinate 1,
// and targets.
func benchData(m, n int) (psis [][]float64, ys []float64) {
	rng := rand.New(rand.NewPCG(7, uint64(m)))
	psis = make([][]float64, n)
	ys = make([]float64, n)
	for k := range psis {
		psi := make([]float64, m)
		for i := 0; i < m-1; i++ {
			psi[i] = rng.NormFloat64() * math.Exp(-3*float64(i)/float64(m))
		}
		psi[m-1] = 1
		psis[k] = psi
		ys[k] = psi[0] + rng.NormFloat64()
	}
	return psis, ys
}

// bench runs step b.N times on an RLS of dimension m (γ = 100, forgetting
// lam) warmed up past its first refreshes, cycling through 1024 samples
// generated before the timer starts, and reports PCG iterations and
// refreshes per update.
func bench(b *testing.B, m int, lam float64, step func(r *RLS, psi []float64, y float64)) {
	const nSamples = 1024
	psis, ys := benchData(m, nSamples)
	r := NewRLS(m, 100, lam)
	for k := range 2 * m {
		r.Update(psis[k%nSamples], ys[k%nSamples], 1)
	}
	u0, i0, f0 := r.updates, r.iters, r.refreshes
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		step(r, psis[k%nSamples], ys[k%nSamples])
	}
	b.StopTimer()
	benchSink = r.Theta()[0]
	if n := float64(r.updates - u0); n > 0 {
		b.ReportMetric(float64(r.iters-i0)/n, "iters/update")
		b.ReportMetric(float64(r.refreshes-f0)/n, "refreshes/update")
	}
}

// BenchmarkRLSUpdate measures one Update (including the amortised refreshes)
// per size and forgetting factor.
func BenchmarkRLSUpdate(b *testing.B) {
	for _, m := range []int{20, 50, 100, 200, 400} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			for _, lam := range []float64{1, 0.99} {
				b.Run(fmt.Sprintf("lambda=%v", lam), func(b *testing.B) {
					bench(b, m, lam, func(r *RLS, psi []float64, y float64) {
						r.Update(psi, y, 1)
					})
				})
			}
		})
	}
}

// BenchmarkRLSQuadFormUpdate measures the per-sample work of the NARX
// learner (internal/narx): QuadForm(ψ) for the predictive variance, then
// Update(ψ, y, 1) with the same ψ, at m = M+1 for working sets of M = 50,
// 100, 200, 400.
func BenchmarkRLSQuadFormUpdate(b *testing.B) {
	for _, m := range []int{51, 101, 201, 401} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			for _, lam := range []float64{1, 0.99} {
				b.Run(fmt.Sprintf("lambda=%v", lam), func(b *testing.B) {
					bench(b, m, lam, func(r *RLS, psi []float64, y float64) {
						benchSink += r.QuadForm(psi)
						r.Update(psi, y, 1)
					})
				})
			}
		})
	}
}

// BenchmarkExchangeFeature is one feature exchange (a working-set swap's
// statistics, see ExchangeFeature) at dimension m = M + 1, on an RLS
// warmed up with 2m samples; the border is that of a new feature seen by
// 4M window samples.
func BenchmarkExchangeFeature(b *testing.B) {
	for _, m := range []int{51, 101, 201, 401} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			psis, ys := benchData(m, 2*m)
			r := NewRLS(m, 100, 1)
			for k := range psis {
				r.Update(psis[k], ys[k], 1)
			}
			rng := rand.New(rand.NewPCG(3, uint64(m)))
			a := make([]float64, m)
			for i := range a {
				a[i] = 0.1 * rng.NormFloat64()
			}
			u := make([]float64, m+1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var n float64
				for j := range u {
					u[j] = 0
					if j != m-1 {
						u[j] = rng.NormFloat64()
						n += u[j] * u[j]
					}
				}
				for j := range u {
					u[j] /= math.Sqrt(n)
				}
				if _, ok := r.ExchangeFeature(a, 4, 0.1, u, math.Inf(-1)); !ok {
					b.Fatal("exchange refused")
				}
			}
		})
	}
}
