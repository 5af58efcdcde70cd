package recursive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// rlsBenchSink keeps the benchmark results alive.
var rlsBenchSink float64

// BenchmarkRLSUpdate measures one Update (including the amortised factor
// refreshes) per size and forgetting factor. Regressors have geometrically
// decaying feature scales (like Nyström features) and a bias coordinate 1;
// 1024 samples are generated before the timer starts and cycled.
func BenchmarkRLSUpdate(b *testing.B) {
	for _, m := range []int{20, 50, 100, 200, 400} {
		b.Run(fmt.Sprintf("m=%d", m), func(b *testing.B) {
			for _, lam := range []float64{1, 0.99} {
				b.Run(fmt.Sprintf("lambda=%v", lam), func(b *testing.B) {
					const nSamples = 1024
					rng := rand.New(rand.NewPCG(7, uint64(m)))
					psis := make([][]float64, nSamples)
					ys := make([]float64, nSamples)
					for k := range psis {
						psi := make([]float64, m)
						for i := 0; i < m-1; i++ {
							psi[i] = rng.NormFloat64() * math.Exp(-3*float64(i)/float64(m))
						}
						psi[m-1] = 1
						psis[k] = psi
						ys[k] = psi[0] + rng.NormFloat64()
					}
					r := NewRLS(m, 100, lam)
					for k := range 2 * m { // warm up past the first refreshes
						r.Update(psis[k%nSamples], ys[k%nSamples], 1)
					}
					b.ReportAllocs()
					b.ResetTimer()
					for k := 0; k < b.N; k++ {
						r.Update(psis[k%nSamples], ys[k%nSamples], 1)
					}
					b.StopTimer()
					rlsBenchSink = r.Theta()[0]
					b.ReportMetric(float64(r.iters)/float64(r.updates), "iters/update")
				})
			}
		})
	}
}
