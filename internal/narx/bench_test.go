package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/synth"
)

// benchData returns a standardised Mackey–Glass (τ = 17) series embedded with
// lags 1..n: rows regressors (row-major) and their targets.
func benchData(rows, n int) (X, y []float64) {
	s := synth.MackeyGlass(rows+n, 17, 200)
	for i := range s {
		s[i] = (s[i] - 0.9) / 0.23
	}
	X = make([]float64, 0, rows*n)
	for k := n; k < rows+n; k++ {
		for l := 1; l <= n; l++ {
			X = append(X, s[k-l])
		}
		y = append(y, s[k])
	}
	return X, y
}

// iidData returns regressors uniform in [−1.5, 1.5]^n and y = Σ sin(x_i): with
// σ² = 2n their kernel matrix stays full rank up to M = 400, so the Nyström
// rank r equals M and the cost scaling in M is not flattered by the cut-off.
func iidData(rows, n int) (X, y []float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	X = make([]float64, rows*n)
	y = make([]float64, rows)
	for i := 0; i < rows; i++ {
		for j := 0; j < n; j++ {
			X[i*n+j] = 3*rng.Float64() - 1.5
			y[i] += math.Sin(X[i*n+j])
		}
	}
	return X, y
}

func benchModel(b *testing.B, M, n, swapInterval int) (*Model, []float64, []float64) {
	return benchModelOn(b, benchData, M, n, swapInterval)
}

func benchModelOn(b *testing.B, data func(rows, n int) ([]float64, []float64), M, n, swapInterval int) (*Model, []float64, []float64) {
	fit := 3 * M
	X, y := data(fit+5000, n)
	cfg := Config{Embedding: Embedding{YLags: Lags(n)}, Kernel: Kernel{Type: RBF, Sigma2: float64(2 * n)},
		Size: M, Gamma: 1000, Forgetting: 1, Cutoff: 1e-10, Window: 4 * M, SwapInterval: swapInterval,
		Select: SelectOptions{MaxIter: 10 * fit, Patience: 2 * M}, Seed: 1}
	m, err := NewModel(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Fit(X[:fit*n], y[:fit], nil); err != nil {
		b.Fatal(err)
	}
	return m, X[fit*n:], y[fit:]
}

var sinkF float64

// BenchmarkUpdateNoSwap is one online update with no swap accepted: the
// one-step prediction and features (kernel column, Nyström map, level-1
// variance), the O(M) entropy swap test, and the RLS update. The swap test
// runs on every sample; its verdict is ignored so that no O(M³) swap lands in
// the timing (BenchmarkSwap prices those).
func BenchmarkUpdateNoSwap(b *testing.B) {
	for _, data := range []struct {
		name string
		gen  func(rows, n int) ([]float64, []float64)
	}{{"mackey-glass", benchData}, {"iid", iidData}} {
		for _, M := range []int{25, 50, 100, 200, 400} {
			b.Run(fmt.Sprintf("%s/M=%d/n=20", data.name, M), func(b *testing.B) {
				m, X, y := benchModelOn(b, data.gen, M, 20, 1)
				updatesNoSwap(b, m, X, y)
				b.ReportMetric(float64(m.fm.r), "rank")
			})
		}
	}
}

// updatesNoSwap times b.N online updates over the rows of X (n = 20): the
// one-step prediction with its variance, the O(M) swap test on every sample
// (verdict ignored, so no swap lands in the timing) and the RLS update.
func updatesNoSwap(b *testing.B, m *Model, X, y []float64) {
	rows := len(y)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % rows
		mean, v := m.Observe(X[k*20 : (k+1)*20])
		m.prepared = false
		m.sinceSwap = m.cfg.SwapInterval
		j, ok := m.swapCandidate()
		m.learnPrepared(y[k], 1, 0)
		sinkF += mean + v + float64(j)
		if ok {
			sinkF++
		}
	}
}

// BenchmarkLevel2Amortised is BenchmarkUpdateNoSwap at M = 100 (i.i.d.
// regressors, full rank) with the level-2 inference (γ by evidence, noise,
// d_eff; O(r³)) run every K samples, against K = 0 (never): the amortised
// cost of keeping the hyperparameters current.
func BenchmarkLevel2Amortised(b *testing.B) {
	for _, K := range []int{0, 100, 500, 1000} {
		b.Run(fmt.Sprintf("M=100/K=%d", K), func(b *testing.B) {
			m, X, y := benchModelOn(b, iidData, 100, 20, 1)
			m.cfg.NoiseEvery, m.cfg.AutoGamma = K, K > 0
			updatesNoSwap(b, m, X, y)
		})
	}
}

// BenchmarkSwap is one working-set swap (swap.go): the border from the
// window of W = 4M samples, the feature map's reflection and the O(M²)
// exchange of the statistics; every 4M-th also re-orthonormalises the basis.
func BenchmarkSwap(b *testing.B) {
	for _, M := range []int{25, 50, 100, 200, 400} {
		b.Run(fmt.Sprintf("M=%d/n=20/W=%d", M, 4*M), func(b *testing.B) {
			m, X, y := benchModel(b, M, 20, 0)
			for k := 0; k < 4*M; k++ { // fill the window
				m.Observe(X[k*20 : (k+1)*20])
				m.Learn(y[k], 1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := (4*M + i) % len(y)
				m.Observe(X[k*20 : (k+1)*20])
				m.swap(i%m.m, math.Inf(-1))
				m.prepared = false
				m.learnPrepared(y[k], 1, 0)
			}
			b.ReportMetric(float64(m.fm.r), "rank")
		})
	}
}

// BenchmarkStream is the realistic per-sample cost with swaps allowed every 10
// samples; besides the mean it reports the median and 99th percentile of the
// per-update time, since accepted swaps make the distribution heavy-tailed.
func BenchmarkStream(b *testing.B) {
	for _, M := range []int{50, 100} {
		b.Run(fmt.Sprintf("M=%d/n=20/swap_interval=10", M), func(b *testing.B) {
			m, X, y := benchModel(b, M, 20, 10)
			d := make([]time.Duration, 0, b.N)
			swaps := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := i % len(y)
				t0 := time.Now()
				mean, _ := m.Observe(X[k*20 : (k+1)*20])
				if m.Learn(y[k], 1) {
					swaps++
				}
				d = append(d, time.Since(t0))
				sinkF += mean
			}
			b.StopTimer()
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(swaps)/float64(b.N), "swaps/op")
		})
	}
}

// BenchmarkDaemonShape prices the two expensive operations of the daemon's
// end-to-end configuration (M = 50, lags 1..10, window 200): an accepted
// swap (as BenchmarkSwap) and a 10-step
// iterated forecast with its variance propagation, issued after a learned
// sample (so the dual coefficients are recomputed, as in the daemon).
func BenchmarkDaemonShape(b *testing.B) {
	const M, n, W, H = 50, 10, 200, 10
	setup := func(b *testing.B) (*Model, []float64, []float64) {
		m, X, y := benchModel(b, M, n, 0)
		m.cfg.Window = W
		m.win = newWindow(n, m.m, W)
		for k := 0; k < W; k++ { // fill the window
			m.Observe(X[k*n : (k+1)*n])
			m.Learn(y[k], 1)
		}
		return m, X[W*n:], y[W:]
	}
	b.Run("swap", func(b *testing.B) {
		m, X, y := setup(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := i % len(y)
			m.Observe(X[k*n : (k+1)*n])
			m.swap(i%m.m, math.Inf(-1))
			m.prepared = false
			m.learnPrepared(y[k], 1, 0)
		}
	})
	b.Run("forecast", func(b *testing.B) {
		m, X, y := setup(b)
		h := NewHistory(m.cfg.Embedding)
		steps := make([]Step, H)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := i % len(y)
			m.Observe(X[k*n : (k+1)*n])
			m.prepared = false
			m.learnPrepared(y[k], 1, 0)
			h.Push(y[k], nil)
			if h.Ready() {
				m.Forecast(steps, h, nil)
				sinkF += steps[H-1].Var
			}
		}
	})
}

func TestUpdateDoesNotAllocate(t *testing.T) {
	X, y := benchData(600, 10)
	cfg := Config{Embedding: Embedding{YLags: Lags(10)}, Kernel: Kernel{Type: RBF, Sigma2: 20}, Size: 40,
		Gamma: 1000, Forgetting: 0.999, Cutoff: 1e-10, Window: 100, NoiseEvery: 0,
		Select: SelectOptions{MaxIter: 2000, Patience: 100}, Seed: 1}
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:300*10], y[:300], nil); err != nil {
		t.Fatal(err)
	}
	h := NewHistory(cfg.Embedding)
	for _, v := range y[:20] {
		h.Push(v, nil)
	}
	steps := make([]Step, 20)
	k := 300
	allocs := testing.AllocsPerRun(200, func() {
		m.Observe(X[k*10 : (k+1)*10])
		m.Learn(y[k], 1)
		m.Forecast(steps, h, nil)
		k++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per update+forecast, want 0", allocs)
	}

	// The periodic level-2 refresh at a held γ without forgetting
	// (level2Held) on every 4th sample, swap tests on every 5th: the
	// refresh is on the per-sample path too.
	cfg.Forgetting, cfg.NoiseEvery, cfg.SwapInterval = 1, 4, 5
	if m, err = NewModel(cfg); err != nil {
		t.Fatal(err)
	}
	if err := m.Fit(X[:300*10], y[:300], nil); err != nil {
		t.Fatal(err)
	}
	k = 300
	held := 0
	allocs = testing.AllocsPerRun(200, func() {
		m.Observe(X[k*10 : (k+1)*10])
		m.Learn(y[k], 1)
		if m.sinceNoise == 0 && m.logEvRLS == nil {
			held++
		}
		k++
	})
	if allocs != 0 || held == 0 {
		t.Errorf("%v allocations per update with level-2 refreshes at a held γ (%d held refreshes), want 0 (and some)", allocs, held)
	}
}
