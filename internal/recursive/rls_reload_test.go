package recursive

import (
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestRLSReload checks that Reload gives exactly the state of a fresh RLS
// loaded with the same statistics, into a smaller and a larger dimension,
// and that a failed Reload leaves the receiver unchanged.
func TestRLSReload(t *testing.T) {
	for _, lam := range []float64{1, 0.98} {
		r := NewRLS(12, 30, lam)
		g := newRLSGen(7, 12)
		psi := make([]float64, 12)
		for k := 0; k < 80; k++ {
			y, v := g.next(psi)
			r.Update(psi, y, v)
		}
		for _, n := range []int{9, 12, 15} {
			src := NewRLS(n, 30, lam)
			gs := newRLSGen(uint64(n), n)
			p := make([]float64, n)
			for k := 0; k < 60; k++ {
				y, v := gs.next(p)
				src.Update(p, y, v)
			}
			a, rv, s, nc := src.Stats()
			ac := mat.NewSymDense(n, nil)
			ac.CopySym(a)
			rvc := append([]float64(nil), rv...)
			fresh := NewRLS(n, 30, lam)
			if !fresh.Load(ac, rvc, s, nc) || !r.Reload(ac, rvc, s, nc) {
				t.Fatalf("lambda=%v n=%d: Load failed", lam, n)
			}
			if !reflect.DeepEqual(r.State(), fresh.State()) {
				t.Errorf("lambda=%v n=%d: Reload differs from a fresh Load", lam, n)
			}
		}
		before := r.State()
		bad := mat.NewSymDense(3, []float64{-1, 0, 0, 0, -1, 0, 0, 0, 1})
		if r.Reload(bad, []float64{0, 0, 1}, 1, 1) {
			t.Fatal("Reload of an indefinite system succeeded")
		}
		if !reflect.DeepEqual(r.State(), before) {
			t.Errorf("lambda=%v: failed Reload changed the receiver", lam)
		}
	}
}
