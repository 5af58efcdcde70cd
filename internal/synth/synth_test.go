package synth

import (
	"math"
	"testing"
)

func meanStd(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var s float64
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

// Mackey–Glass τ = 17 is a bounded chaotic attractor in roughly [0.2, 1.4]
// with mean ≈ 0.9 and std ≈ 0.23 (e.g. Farmer 1982; values commonly reported
// for the sampled series). Loose bounds: a wrong delay or sign breaks them.
func TestMackeyGlassAttractor(t *testing.T) {
	x := MackeyGlass(3000, 17, 500)
	m, s := meanStd(x)
	if math.Abs(m-0.9) > 0.05 || math.Abs(s-0.23) > 0.04 {
		t.Errorf("mean %g std %g, want ≈ 0.9, 0.23", m, s)
	}
	for i, v := range x {
		if !(v > 0.1 && v < 1.5) {
			t.Fatalf("x[%d] = %g leaves the attractor", i, v)
		}
	}
	// Deterministic.
	y := MackeyGlass(3000, 17, 500)
	for i := range x {
		if x[i] != y[i] {
			t.Fatal("not deterministic")
		}
	}
}

// Lorenz and Chua both live on two-lobed attractors: x visits both signs and
// stays bounded. A sign error in the vector field makes them blow up or settle.
func TestLorenzAndChuaBounded(t *testing.T) {
	for name, x := range map[string][]float64{"lorenz": Lorenz(2000, 200), "chua": Chua(2000)} {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range x {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		// Both attractors visit both scrolls/wings: x changes sign.
		if !(lo < 0 && hi > 0) || hi-lo > 60 || math.IsNaN(lo) {
			t.Errorf("%s: range [%g, %g] is not a two-sided bounded attractor", name, lo, hi)
		}
	}
}

func TestNoisySinc(t *testing.T) {
	x, y, f := NoisySinc(SincOptions{N: 20000, Lo: -10, Hi: 10, NoiseStd: 0.1, Seed: 1})
	var r []float64
	for i := range x {
		if x[i] < -10 || x[i] > 10 || f[i] != Sinc(x[i]) {
			t.Fatalf("sample %d off: x=%g f=%g", i, x[i], f[i])
		}
		r = append(r, y[i]-f[i])
	}
	if m, s := meanStd(r); math.Abs(m) > 0.005 || math.Abs(s-0.1) > 0.003 {
		t.Errorf("noise mean %g std %g, want 0, 0.1 (3σ bounds for N = 20000)", m, s)
	}
	// Contaminated: variance (1−ε)σ² + ε·15σ² = 3.1σ² for ε = 0.15.
	_, y2, f2 := NoisySinc(SincOptions{N: 20000, Lo: -10, Hi: 10, NoiseStd: 0.1, Contamination: 0.15, ContamVarFactor: 15, Seed: 2})
	r = r[:0]
	for i := range y2 {
		r = append(r, y2[i]-f2[i])
	}
	if _, s := meanStd(r); math.Abs(s*s-3.1*0.01) > 0.002 {
		t.Errorf("contaminated variance %g, want 0.031", s*s)
	}
	_, y3, _ := NoisySinc(SincOptions{N: 300, Lo: -10, Hi: 10, NoiseStd: 0.1, Outliers: 3, OutlierValue: 5, Seed: 3})
	big := 0
	for _, v := range y3 {
		if math.Abs(v) == 5 {
			big++
		}
	}
	if big == 0 || big > 3 {
		t.Errorf("%d gross outliers, want 1..3 (positions may coincide)", big)
	}
}

// TestHammerstein: every sample follows the recursion exactly (the same
// operations, so bit for bit), y is 0 until the dead time has passed, the
// input stays in [−2, 2] and moves at every multiple of hold (a uniform
// level repeats with probability 0).
func TestHammerstein(t *testing.T) {
	const n, delay, hold = 600, 3, 50
	u, y := Hammerstein(n, delay, hold, 1)
	for i := range n {
		var y1, y2, ud float64
		if i >= 1 {
			y1 = y[i-1]
		}
		if i >= 2 {
			y2 = y[i-2]
		}
		if i >= delay {
			ud = u[i-delay]
		}
		if want := 0.7*y1 + 0.2*y2 + math.Tanh(ud); y[i] != want {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want)
		}
		if u[i] < -2 || u[i] > 2 {
			t.Fatalf("u[%d] = %v outside [−2, 2]", i, u[i])
		}
	}
	for i := hold; i < n; i += hold {
		if u[i] == u[i-1] {
			t.Errorf("u held across %d, a multiple of hold", i)
		}
	}
	for i := range delay {
		if y[i] != 0 {
			t.Errorf("y[%d] = %v before the dead time ends, want 0", i, y[i])
		}
	}
}
