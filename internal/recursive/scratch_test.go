package recursive

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestPoolConcurrentBitIdentical runs the same update sequences on several
// RLSs (λ = 1 and λ < 1, so refreshes, PCG and the Stats buffer are
// exercised, with feature exchanges) from concurrent goroutines, which then
// share the pooled workspaces, and checks that every result is
// bit-identical to a sequential run. Run it with -race to check the pool's
// concurrency.
func TestPoolConcurrentBitIdentical(t *testing.T) {
	const n, steps = 12, 120
	run := func(seed uint64) []float64 {
		rng := rand.New(rand.NewPCG(seed, 5))
		lam := 1.0
		if seed%2 == 1 {
			lam = 0.97
		}
		r := NewRLS(n, 50, lam)
		g := newRLSGen(seed, n)
		psi := make([]float64, n)
		border := make([]float64, n)
		u := make([]float64, n+1)
		var out []float64
		for k := 0; k < steps; k++ {
			y, v := g.next(psi)
			out = append(out, r.QuadForm(psi))
			r.Update(psi, y, v)
			out = append(out, r.Theta()...)
			if k%10 == 0 {
				a, _, _, _ := r.Stats()
				out = append(out, a.At(0, 1), r.ResidualEnergy())
				r.ReleaseStats()
			}
			if k%7 == 6 {
				var nu float64
				for i := range u {
					u[i] = 0
					if i != n-1 {
						u[i] = rng.NormFloat64()
						nu += u[i] * u[i]
					}
				}
				for i := range u {
					u[i] /= math.Sqrt(nu)
				}
				if _, ok := r.ExchangeFeature(border, 0.1, 0, u, math.Inf(-1)); !ok {
					panic("exchange refused")
				}
				out = append(out, r.Theta()...)
			}
		}
		return out
	}
	const workers = 6
	want := make([][]float64, workers)
	for w := range want {
		want[w] = run(uint64(w))
	}
	got := make([][]float64, workers)
	var wg sync.WaitGroup
	for w := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[w] = run(uint64(w))
		}()
	}
	wg.Wait()
	for w := range want {
		if len(got[w]) != len(want[w]) {
			t.Fatalf("worker %d: %d results, want %d", w, len(got[w]), len(want[w]))
		}
		for i := range want[w] {
			if math.Float64bits(got[w][i]) != math.Float64bits(want[w][i]) {
				t.Fatalf("worker %d: result %d = %v, sequential %v", w, i, got[w][i], want[w][i])
			}
		}
	}
}

func TestGetFloats(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 64, 65, 1000} {
		b := GetFloats(n)
		if len(b) != n || cap(b) < n || cap(b)&(cap(b)-1) != 0 {
			t.Errorf("GetFloats(%d): len %d cap %d", n, len(b), cap(b))
		}
		PutFloats(b)
	}
	PutFloats(nil)
	defer func() {
		if recover() == nil {
			t.Error("PutFloats of a foreign buffer did not panic")
		}
	}()
	PutFloats(make([]float64, 3))
}
