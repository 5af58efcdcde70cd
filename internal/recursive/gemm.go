package recursive

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// gonumBlock and gonumMinParBlock are gonum's Dgemm partition (blas/gonum:
// blockSize and minParBlock): C is cut into blocks of 64×64, and the product
// runs on goroutines once there are at least 4 of them.
const (
	gonumBlock       = 64
	gonumMinParBlock = 4
)

// SerialGemm sets c = op(a)·op(b), op(x) = x or xᵀ as tA and tB say, with
// exactly the arithmetic of blas64.Gemm(tA, tB, 1, a, b, 0, c) (gonum's
// implementation) but always on the calling goroutine. gonum's Dgemm runs
// products of at least 4 blocks of 64×64 on up to GOMAXPROCS goroutines,
// which allocates and competes with the other partition goroutines for the
// cores, for no gain in throughput when every core already runs a
// partition. SerialGemm reproduces its partition — C in 64×64 blocks, each
// accumulated over k in blocks of 64 from 0 with the same serial kernel —
// so every entry of c receives the same sums in the same order: the result
// is bit-identical. Below 4 blocks it simply calls blas64.Gemm, which is
// serial there. c must not overlap a or b. No allocation.
func SerialGemm(tA, tB blas.Transpose, a, b, c blas64.General) {
	m, n := c.Rows, c.Cols
	k := a.Cols
	if tA != blas.NoTrans {
		k = a.Rows
	}
	if m == 0 || n == 0 {
		return
	}
	blocks := func(d int) int { return (d + gonumBlock - 1) / gonumBlock }
	if blocks(m)*blocks(n) < gonumMinParBlock {
		blas64.Gemm(tA, tB, 1, a, b, 0, c)
		return
	}
	// Gemm's β = 0 step: C = 0, then every block accumulates with α = 1.
	for i := 0; i < m; i++ {
		clear(c.Data[i*c.Stride : i*c.Stride+n])
	}
	if k == 0 {
		return
	}
	for i := 0; i < m; i += gonumBlock {
		mi := min(gonumBlock, m-i)
		for j := 0; j < n; j += gonumBlock {
			nj := min(gonumBlock, n-j)
			cs := eigSub(c, i, j, mi, nj)
			for l := 0; l < k; l += gonumBlock {
				kl := min(gonumBlock, k-l)
				var as, bs blas64.General
				if tA != blas.NoTrans {
					as = eigSub(a, l, i, kl, mi)
				} else {
					as = eigSub(a, i, l, mi, kl)
				}
				if tB != blas.NoTrans {
					bs = eigSub(b, j, l, nj, kl)
				} else {
					bs = eigSub(b, l, j, kl, nj)
				}
				// One block: Dgemm with β = 1 adds the serial kernel's
				// product to the block, as dgemmParallel's workers do.
				blas64.Gemm(tA, tB, 1, as, bs, 1, cs)
			}
		}
	}
}
