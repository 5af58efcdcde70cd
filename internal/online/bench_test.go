package online

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
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

// BenchmarkDaemonRecord is the daemon's model work per record in the
// end-to-end benchmark's configuration (daemon.BenchmarkEndToEnd): M = 50,
// lags 1..10, window 200, swaps every 10 samples, level 2 with γ by evidence
// every 500, a 10-step forecast after every record — one Learner.Observe,
// without Kafka, decoding or publishing. As there, every series lives for
// 500 records, the first 150 its warm-up (the fit is timed too), so the
// early swaps, which are frequent while the working set is still poor, are
// weighted as the daemon sees them. Noisy Mackey–Glass, a different stretch
// per series. The bands are calibrated over the horizon, as the daemon's
// default calibrates them (forecast.calibrate), and without: the price of
// the shadow forecasts.
func BenchmarkDaemonRecord(b *testing.B) {
	for _, cal := range []bool{true, false} {
		b.Run(fmt.Sprintf("calibrate=%v", cal), func(b *testing.B) { benchmarkDaemonRecord(b, cal) })
	}
}

func benchmarkDaemonRecord(b *testing.B, calibrate bool) {
	const life = 500
	y := synth.AddNoise(synth.MackeyGlass(20000, 17, 500), 0.0023, 1)
	cfg := testConfig()
	cfg.Model.Embedding = narx.Embedding{YLags: narx.Lags(10)}
	cfg.Model.Kernel.Sigma2, cfg.Model.Size, cfg.Model.Window = 20, 50, 200
	cfg.Model.AutoGamma, cfg.Model.SwapInterval, cfg.Model.NoiseEvery = true, 10, 500
	cfg.Model.Select = narx.SelectOptions{MaxIter: 3000, Patience: 200}
	cfg.Warmup, cfg.Horizon, cfg.Every = 150, 10, 1
	if calibrate {
		cfg.Calibrate = cfg.Horizon
	}
	var l *Learner
	swaps, off := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % life
		if k == 0 {
			var err error
			if l, err = NewLearner(cfg); err != nil {
				b.Fatal(err)
			}
			off = (i / life * 131) % (len(y) - life)
		}
		res, _ := l.Observe(Observation{T: int64(k), Y: y[off+k]})
		sinkF += res.Prediction
		if res.Swapped {
			swaps++
		}
	}
	b.ReportMetric(float64(swaps)/float64(b.N), "swaps/op")
}

// BenchmarkMemory10kSeries fits 10 000 series (M = 32, lags 1..10, warm-up
// 200) in one registry and reports the heap they hold (after a GC) and the
// Learners' own SizeBytes, per series, and the process's resident memory
// (VmRSS from /proc/self/status, Linux only): rss-MiB is the whole test
// process as the kernel sees it after that GC — the live heap, heap pages
// the runtime has not yet returned, the runtime's own structures and the
// binary. steady-rss-MiB is the peak VmRSS while every series then learns
// and forecasts 100 more records, the daemon's steady state: the garbage
// collector lets the heap grow to (1 + GOGC/100) times the live heap
// between cycles unless a memory limit (GOMEMLIMIT) says otherwise, and the
// resident memory follows that peak. Run with -benchtime=1x.
func BenchmarkMemory10kSeries(b *testing.B) {
	const nSeries = 10000
	cfg := testConfig()
	cfg.Model.Embedding = narx.Embedding{YLags: narx.Lags(10)}
	cfg.Model.Size, cfg.Model.Kernel.Sigma2, cfg.Model.Window = 32, 20, 128
	cfg.Warmup, cfg.Horizon = 200, 10
	y := synth.AddNoise(synth.MackeyGlass(400, 17, 500), 0.0023, 1)
	for i := 0; i < b.N; i++ {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		reg, err := NewRegistry(RegistryConfig{Default: cfg})
		if err != nil {
			b.Fatal(err)
		}
		size := 0
		for s := 0; s < nSeries; s++ {
			l, _, _ := reg.Get(fmt.Sprintf("s%d", s))
			for k := 0; k < 260; k++ {
				l.Observe(Observation{T: int64(k), Y: y[(k+s)%len(y)]})
			}
			size += l.SizeBytes()
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapInuse) - float64(before.HeapInuse)
		b.ReportMetric(heap/nSeries, "heap-bytes/series")
		b.ReportMetric(float64(size)/nSeries, "state-bytes/series")
		b.ReportMetric(heap/(1<<20), "heap-MiB")
		if rss, ok := vmRSS(); ok {
			b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		}
		var peak int64
		for k := 260; k < 360; k++ {
			for s := 0; s < nSeries; s++ {
				l, _, _ := reg.Get(fmt.Sprintf("s%d", s))
				l.Observe(Observation{T: int64(k), Y: y[(k+s)%len(y)]})
			}
			if rss, ok := vmRSS(); ok {
				peak = max(peak, rss)
			}
		}
		if peak > 0 {
			b.ReportMetric(float64(peak)/(1<<20), "steady-rss-MiB")
		}
		runtime.KeepAlive(reg)
	}
}

// vmRSS returns the process's resident set size in bytes from the VmRSS line
// of /proc/self/status; ok is false where that file does not exist.
func vmRSS() (n int64, ok bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmRSS:" && string(f[2]) == "kB" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
