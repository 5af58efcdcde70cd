package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamd/streamd/internal/synth"
)

// The book's fixed-size example (§6.2, Fig. 6.3–6.4): noisy sinc on [−10, 10],
// noise std 0.1, M = 10 support vectors chosen by entropy, σ² = 3. The entropy
// must rise at every accepted swap, the working set must spread over the input
// range, and the fit must be close to the true sinc.
func TestNoisySincFixedSize(t *testing.T) {
	for _, tc := range []struct {
		N       int
		maxRMSE float64 // against the true sinc
	}{
		// Measured 0.034 (N = 200: estimation error dominates) and 0.020
		// (N = 20000: ten RBF bumps of width σ² = 3 cannot follow the sinc's
		// central peak exactly, whatever γ). Bounds leave ~30 % margin.
		{200, 0.045}, {20000, 0.026},
	} {
		t.Run(fmt.Sprintf("N=%d", tc.N), func(t *testing.T) {
			x, y, f := synth.NoisySinc(synth.SincOptions{N: tc.N, Lo: -10, Hi: 10, NoiseStd: 0.1, Seed: uint64(tc.N)})
			cfg := Config{Embedding: staticEmbedding(1), Kernel: Kernel{Type: RBF, Sigma2: 3}, Size: 10,
				Gamma: 100, Forgetting: 1, Cutoff: 1e-12, Window: 100,
				Select: SelectOptions{Method: SelectEntropy, MaxIter: 20 * tc.N, Patience: 20000}, Seed: 1}
			m, err := NewModel(cfg)
			if err != nil {
				t.Fatal(err)
			}
			sel := SelectWorkingSet(cfg.Kernel, x, 1, 10, rand.New(rand.NewPCG(1, 2)), cfg.Select)
			for i := 1; i < len(sel.Entropy); i++ {
				if !(sel.Entropy[i] > sel.Entropy[i-1]) {
					t.Fatalf("entropy fell at accepted swap %d", i)
				}
			}
			if err := m.Fit(x, y, nil); err != nil {
				t.Fatal(err)
			}
			pts := slices.Clone(m.WorkingSet().Points())
			slices.Sort(pts)
			gap := 0.0
			for i := 1; i < len(pts); i++ {
				gap = math.Max(gap, pts[i]-pts[i-1])
			}
			// Ten points spread over a width of 20 leave gaps near 2; a set that
			// clusters (random selection from uniform data often leaves a gap > 5)
			// fails this.
			if pts[0] > -8 || pts[len(pts)-1] < 8 || gap > 4 {
				t.Errorf("working set %v does not spread over [−10, 10] (largest gap %g)", pts, gap)
			}
			var se float64
			grid := 1000
			for i := 0; i < grid; i++ {
				xi := -10 + 20*float64(i)/float64(grid-1)
				d := m.Predict([]float64{xi}) - synth.Sinc(xi)
				se += d * d
			}
			rmse := math.Sqrt(se / float64(grid))
			var noiseRMSE float64
			for i := range y {
				noiseRMSE += (y[i] - f[i]) * (y[i] - f[i])
			}
			t.Logf("N=%d M=10: RMSE vs true sinc %.4f (noise %.4f), entropy %.4f → %.4f in %d swaps, noise std estimate %.4f",
				tc.N, rmse, math.Sqrt(noiseRMSE/float64(len(y))), sel.Entropy[0], sel.Entropy[len(sel.Entropy)-1],
				len(sel.Entropy)-1, math.Sqrt(m.Info().NoiseVar))
			if rmse > tc.maxRMSE {
				t.Errorf("RMSE %g against the true sinc, want ≤ %g", rmse, tc.maxRMSE)
			}
		})
	}
}
