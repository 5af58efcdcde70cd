package recursive

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naiveAllFinite is the definition AllFinite must agree with.
func naiveAllFinite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func TestAllFinite(t *testing.T) {
	specials := []float64{0, math.Copysign(0, -1), 1, -1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		0x1p-1022, math.NaN(), math.Inf(1), math.Inf(-1)}
	rng := rand.New(rand.NewPCG(1, 2))
	// Every length up to 9 (each tail length of the four-way loop), each
	// special value at every position among finite ones, and random mixes.
	for n := 0; n <= 9; n++ {
		x := make([]float64, n)
		if got := AllFinite(x); !got {
			t.Fatalf("zeros of length %d: not finite", n)
		}
		for pos := 0; pos < n; pos++ {
			for _, v := range specials {
				for i := range x {
					x[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(600)-300))
				}
				x[pos] = v
				if got, want := AllFinite(x), naiveAllFinite(x); got != want {
					t.Fatalf("%v: got %v, want %v", x, got, want)
				}
			}
		}
	}
	for range 10000 {
		x := make([]float64, rng.IntN(70))
		for i := range x {
			x[i] = specials[rng.IntN(len(specials))]
		}
		if got, want := AllFinite(x), naiveAllFinite(x); got != want {
			t.Fatalf("%v: got %v, want %v", x, got, want)
		}
	}
}
