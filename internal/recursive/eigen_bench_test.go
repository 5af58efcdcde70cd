package recursive

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var (
	benchEigSinkF float64
	benchEigSinkB bool
)

var benchEigSizes = []int{50, 100, 200, 400}

// benchEigMatrix returns a random symmetric matrix with eigenvalues spread
// over [1, 10]: no deflation, so K = n, the worst case of an update.
func benchEigMatrix(n int) *mat.SymDense {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	return eigCases[0].base(rng, n)
}

// BenchmarkSymEigenRankOne times A ± v·vᵀ (alternating signs, so A stays
// bounded) with the periodic refresh off and the O(n²) drift probe on: the
// cost of one update without its amortised refresh (see BenchmarkEigenSymFull).
func BenchmarkSymEigenRankOne(b *testing.B) {
	for _, n := range benchEigSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			e := NewSymEigen(n)
			e.RefreshEvery = 0
			if !e.Factorize(benchEigMatrix(n)) {
				b.Fatal("Factorize failed")
			}
			v := randNormal(rand.New(rand.NewPCG(2, uint64(n))), n, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rho := 1.0
				if i%2 == 1 {
					rho = -1
				}
				benchEigSinkB = e.RankOne(rho, v)
			}
			benchEigSinkF = e.Values()[0]
		})
	}
}

// BenchmarkSymEigenReplaceRowCol times row/column replacements (two rank-one
// passes) on the random matrix, cycling through rows with precomputed
// columns; refresh off, probe on, as above.
func BenchmarkSymEigenReplaceRowCol(b *testing.B) {
	for _, n := range benchEigSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			e := NewSymEigen(n)
			e.RefreshEvery = 0
			if !e.Factorize(benchEigMatrix(n)) {
				b.Fatal("Factorize failed")
			}
			rng := rand.New(rand.NewPCG(3, uint64(n)))
			cols := make([][]float64, 16)
			for k := range cols {
				cols[k] = randNormal(rng, n, 1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % n
				col := cols[i%len(cols)]
				d := col[j]
				col[j] = 5 // a diagonal entry inside the spectrum
				benchEigSinkB = e.ReplaceRowCol(j, col)
				col[j] = d
			}
			benchEigSinkF = e.Values()[0]
		})
	}
}

// BenchmarkSymEigenReplaceRowColKernel times the use case: an RBF kernel
// matrix of points in [0,1]² (σ² = 1) whose point j is swapped for a new
// one. Its spectrum decays to rounding level, so most components deflate
// and the update is much cheaper than the worst case above.
func BenchmarkSymEigenReplaceRowColKernel(b *testing.B) {
	for _, n := range benchEigSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(4, uint64(n)))
			pts := randPoints(rng, n, 2)
			e := NewSymEigen(n)
			e.RefreshEvery = 0
			if !e.Factorize(kernelMatrix(pts, 1)) {
				b.Fatal("Factorize failed")
			}
			fresh := randPoints(rng, 64, 2)
			col := make([]float64, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := (7 * i) % n
				pts[j] = fresh[i%len(fresh)]
				for k := range col {
					col[k] = rbf(pts[k], pts[j], 1)
				}
				benchEigSinkB = e.ReplaceRowCol(j, col)
			}
			benchEigSinkF = e.Values()[0]
		})
	}
}

// BenchmarkEigenSymFull times gonum's full decomposition (mat.EigenSym with
// vectors) of the same matrices: the cost of a refresh, for comparison.
func BenchmarkEigenSymFull(b *testing.B) {
	for _, n := range benchEigSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			a := benchEigMatrix(n)
			var es mat.EigenSym
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchEigSinkB = es.Factorize(a, true)
			}
			benchEigSinkF = es.Values(nil)[0]
		})
	}
}
