package recursive

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestSerialGemmBitIdentical compares SerialGemm with gonum's Gemm (which
// runs the larger of these on goroutines) bit for bit, for every transpose
// and sizes on both sides of the block and parallelism thresholds.
func TestSerialGemmBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func(r, c int) blas64.General {
		g := blas64.General{Rows: r, Cols: c, Stride: c + 3, Data: make([]float64, max(r*(c+3), 1))}
		for i := range g.Data {
			g.Data[i] = rng.NormFloat64()
			if rng.IntN(20) == 0 {
				g.Data[i] = 0
			}
		}
		return g
	}
	for _, sz := range [][3]int{{1, 1, 1}, {200, 50, 51}, {51, 51, 51}, {130, 130, 40}, {64, 256, 70}, {300, 7, 129}, {129, 129, 0}, {65, 200, 1}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tB := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				a := gen(m, k)
				if tA == blas.Trans {
					a = gen(k, m)
				}
				b := gen(k, n)
				if tB == blas.Trans {
					b = gen(n, k)
				}
				want, got := gen(m, n), gen(m, n)
				blas64.Gemm(tA, tB, 1, a, b, 0, want)
				SerialGemm(tA, tB, a, b, got)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						w, g := want.Data[i*want.Stride+j], got.Data[i*got.Stride+j]
						if math.Float64bits(w) != math.Float64bits(g) {
							t.Fatalf("%v %v %v: c[%d,%d] = %v, Gemm %v", sz, tA, tB, i, j, g, w)
						}
					}
				}
			}
		}
	}
	c := gen(200, 200)
	a, b := gen(200, 50), gen(50, 200)
	if n := testing.AllocsPerRun(3, func() { SerialGemm(blas.NoTrans, blas.NoTrans, a, b, c) }); n != 0 {
		t.Errorf("SerialGemm allocates %v times", n)
	}
}
