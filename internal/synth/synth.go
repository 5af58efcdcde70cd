// Package synth generates the synthetic benchmark series of
// ../shared/data/README.md: Mackey–Glass, Lorenz, Chua's double scroll and the
// book's noisy sinc (with optional outliers), and a control loop's plant
// driven by a known input (Hammerstein). Every generator is deterministic
// given its seed.
package synth

import (
	"math"
	"math/rand/v2"
)

// MackeyGlass returns n samples, one per unit of time, of
//
//	dx/dt = 0.2·x(t−τ)/(1 + x(t−τ)^10) − 0.1·x(t),
//
// integrated by 4th-order Runge–Kutta with step 0.1 (τ/0.1 must be whole; the
// delayed value at the half step is the mean of its grid neighbours), from the
// constant history x = 1.2, after discarding a transient of `skip` samples.
func MackeyGlass(n int, tau float64, skip int) []float64 {
	const dt = 0.1
	const perSample = 10
	lag := int(math.Round(tau / dt))
	total := (n+skip)*perSample + 1
	x := make([]float64, lag+total)
	for i := 0; i <= lag; i++ {
		x[i] = 1.2
	}
	f := func(xt, xd float64) float64 { return 0.2*xd/(1+math.Pow(xd, 10)) - 0.1*xt }
	for i := lag; i < len(x)-1; i++ {
		d0, d1 := x[i-lag], x[i-lag+1]
		dh := 0.5 * (d0 + d1)
		k1 := f(x[i], d0)
		k2 := f(x[i]+0.5*dt*k1, dh)
		k3 := f(x[i]+0.5*dt*k2, dh)
		k4 := f(x[i]+dt*k3, d1)
		x[i+1] = x[i] + dt/6*(k1+2*k2+2*k3+k4)
	}
	out := make([]float64, n)
	for k := range out {
		out[k] = x[lag+(skip+k)*perSample]
	}
	return out
}

// rk4 integrates the autonomous system f from s for steps of dt, returning the
// first coordinate every `every` steps, n samples.
func rk4(f func(d, s []float64), s []float64, dt float64, every, n int) []float64 {
	d := len(s)
	k1, k2, k3, k4, tmp := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	out := make([]float64, n)
	for k := 0; k < n; k++ {
		for step := 0; step < every; step++ {
			f(k1, s)
			for i := range tmp {
				tmp[i] = s[i] + 0.5*dt*k1[i]
			}
			f(k2, tmp)
			for i := range tmp {
				tmp[i] = s[i] + 0.5*dt*k2[i]
			}
			f(k3, tmp)
			for i := range tmp {
				tmp[i] = s[i] + dt*k3[i]
			}
			f(k4, tmp)
			for i := range s {
				s[i] += dt / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
			}
		}
		out[k] = s[0]
	}
	return out
}

// Lorenz returns n samples of the x coordinate of the Lorenz system (σ = 10,
// ρ = 28, β = 8/3) from (1, 1, 1), RK4 with step 0.01, sampled every 0.05
// time units, after a transient of `skip` samples.
func Lorenz(n, skip int) []float64 {
	f := func(d, s []float64) {
		d[0] = 10 * (s[1] - s[0])
		d[1] = s[0]*(28-s[2]) - s[1]
		d[2] = s[0]*s[1] - 8.0/3*s[2]
	}
	return rk4(f, []float64{1, 1, 1}, 0.01, 5, n+skip)[skip:]
}

// Chua returns n samples of the x coordinate of Chua's double scroll (book
// eq. 8.14–8.15): ẋ = a(y − h(x)), ẏ = x − y + z, ż = −b·y,
// h(x) = m1·x + ½(m0 − m1)(|x+1| − |x−1|), a = 9, b = 14.286, m0 = −1/7,
// m1 = 2/7, x(0) = [0.1, 0, −0.1]; RK4 with step 0.01 sampled every 0.1.
func Chua(n int) []float64 {
	const a, b, m0, m1 = 9, 14.286, -1.0 / 7, 2.0 / 7
	f := func(d, s []float64) {
		h := m1*s[0] + 0.5*(m0-m1)*(math.Abs(s[0]+1)-math.Abs(s[0]-1))
		d[0] = a * (s[1] - h)
		d[1] = s[0] - s[1] + s[2]
		d[2] = -b * s[1]
	}
	return rk4(f, []float64{0.1, 0, -0.1}, 0.01, 10, n)
}

// Sinc returns sin(x)/x (1 at x = 0).
func Sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(x) / x
}

// SincOptions describes a noisy-sinc data set (book §6.2 and §5.4).
type SincOptions struct {
	N        int     // samples
	Lo, Hi   float64 // x range, uniform (book: −10..10)
	NoiseStd float64 // Gaussian noise std (book: 0.1)
	// Contamination ε: each sample's noise is drawn from N(0, ContamVarFactor·NoiseStd²)
	// with probability ε (book Fig. 5.14: ε = 0.15, factor 15).
	Contamination   float64
	ContamVarFactor float64
	// Outliers is the number of gross outliers: samples whose y is replaced by
	// OutlierValue·(±1) (book Fig. 5.5).
	Outliers     int
	OutlierValue float64
	Seed         uint64
}

// NoisySinc returns inputs x, noisy targets y and the true function values f.
func NoisySinc(o SincOptions) (x, y, f []float64) {
	rng := rand.New(rand.NewPCG(o.Seed, 0x51c))
	x, y, f = make([]float64, o.N), make([]float64, o.N), make([]float64, o.N)
	for i := range x {
		x[i] = o.Lo + (o.Hi-o.Lo)*rng.Float64()
		f[i] = Sinc(x[i])
		std := o.NoiseStd
		if o.Contamination > 0 && rng.Float64() < o.Contamination {
			std *= math.Sqrt(o.ContamVarFactor)
		}
		y[i] = f[i] + std*rng.NormFloat64()
	}
	for k := 0; k < o.Outliers && k < o.N; k++ {
		i := rng.IntN(o.N)
		sign := 1.0
		if rng.IntN(2) == 0 {
			sign = -1
		}
		y[i] = sign * o.OutlierValue
	}
	return x, y, f
}

// Hammerstein returns n samples of a plant's input u and output y, a static
// nonlinearity followed by second-order dynamics with a dead time of delay
// samples:
//
//	y_t = 0.7·y_{t−1} + 0.2·y_{t−2} + tanh(u_{t−delay}),
//
// from rest (y = 0 before the first sample, u = 0 before its first value).
// u is a set point that moves every hold samples (and, at random, on 2 % of
// the others) to a level uniform in [−2, 2], as an operator or a schedule
// moves it: known in advance, a planned input. The poles (0.92 and −0.22)
// make the response to a step settle in about 50 samples; tanh saturates
// beyond |u| ≈ 1.5, so a linear model misjudges large steps.
func Hammerstein(n, delay, hold int, seed uint64) (u, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x4a3))
	u, y = make([]float64, n), make([]float64, n)
	level := 0.0
	for t := range n {
		if t%hold == 0 || rng.Float64() < 0.02 {
			level = -2 + 4*rng.Float64()
		}
		u[t] = level
		var y1, y2, ud float64
		if t >= 1 {
			y1 = y[t-1]
		}
		if t >= 2 {
			y2 = y[t-2]
		}
		if t >= delay {
			ud = u[t-delay]
		}
		y[t] = 0.7*y1 + 0.2*y2 + math.Tanh(ud)
	}
	return u, y
}

// AddNoise returns y + std·N(0,1) per sample.
func AddNoise(y []float64, std float64, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xadd))
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v + std*rng.NormFloat64()
	}
	return out
}

// AddSpikes returns y with a fraction p of its samples moved by ±size (sign at
// random), and which samples were moved.
func AddSpikes(y []float64, p, size float64, seed uint64) ([]float64, []bool) {
	rng := rand.New(rand.NewPCG(seed, 0x5b1c))
	out := make([]float64, len(y))
	at := make([]bool, len(y))
	for i, v := range y {
		out[i] = v
		if rng.Float64() < p {
			at[i] = true
			out[i] += float64(1-2*rng.IntN(2)) * size
		}
	}
	return out, at
}
