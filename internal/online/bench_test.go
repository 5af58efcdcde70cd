package online

import (
	"fmt"
	"testing"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/synth"
)

var sinkF float64

// BenchmarkObserve is one Learner.Observe after the fit (one-step prediction,
// swap test, RLS update; no forecast), M = 100, lags 1..20, on Mackey–Glass
// with 2 % spikes, with robust reweighting off and on: the price of the
// streaming robust scale, the weight and the cleaning.
func BenchmarkObserve(b *testing.B) {
	y := synth.MackeyGlass(40000, 17, 500)
	y, _ = synth.AddSpikes(synth.AddNoise(y, 0.0023, 1), 0.02, 0.023, 1)
	for _, rob := range []bool{false, true} {
		b.Run(fmt.Sprintf("M=100/n=20/robust=%v", rob), func(b *testing.B) {
			cfg := testConfig()
			if rob {
				cfg = robustConfig(true)
			}
			cfg.Model.Embedding = narx.Embedding{YLags: narx.Lags(20)}
			cfg.Model.Size, cfg.Model.Kernel.Sigma2, cfg.Model.SwapInterval = 100, 40, 0
			cfg.Model.NoiseEvery = 10 * cfg.Model.Size // the configuration default
			cfg.Warmup, cfg.Horizon = 1000, 0
			l, err := NewLearner(cfg)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < cfg.Warmup; i++ {
				l.Observe(Observation{T: int64(i), Y: y[i]})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := cfg.Warmup + i%(len(y)-cfg.Warmup)
				res, _ := l.Observe(Observation{T: int64(cfg.Warmup + i), Y: y[k]})
				sinkF += res.Prediction
			}
		})
	}
}
