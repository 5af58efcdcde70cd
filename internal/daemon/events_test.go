package daemon

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/source"
)

// A settled series whose level steps by 5 noise deviations, with a glitch
// before the step: streamd_outliers_total counts the messages flagged
// observed.outlier, and streamd_level_shifts_total the corrections started
// (a message carrying model.level_shift after one without). Both must have
// happened, so the counters are compared with events, not with zero. With
// model.level_shift off (online.Config.NoLevelShift) the same records
// start no correction and carry none.
func TestOutlierAndLevelShiftCounters(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	ys := make([]float64, 320)
	for i := range ys {
		ys[i] = 10 + rng.NormFloat64()
		if i >= 200 {
			ys[i] += 5
		}
	}
	ys[150] = 1e4 // a glitch: a gross error, learned as its prediction
	for _, off := range []bool{false, true} {
		cfg := learnerConfig()
		// A linear AR(1) on white noise is its intercept: it keeps most of
		// the shift for long (longer lags and an RBF follow it in part).
		cfg.Model.Kernel = narx.Kernel{Type: narx.Linear}
		cfg.Model.Embedding.YLags = []int{1}
		cfg.NoLevelShift = off
		d := &Daemon{cfg: Config{Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096, Inputs: -1},
			Registry: online.RegistryConfig{Default: cfg}, CheckpointRecords: DefaultCheckpointRecords}, metrics: newMetrics(), dir: newDirectory()}
		r := loosePartition(t, d)
		for k, y := range ys {
			r.handle(kafka.Message{Offset: int64(k), Key: []byte("s"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, y))})
		}
		var outliers, starts, corrected int
		prev := 0.0
		for _, m := range r.pending {
			if m.Observed != nil && m.Observed.Outlier {
				outliers++
			}
			if m.Model.LevelShift != 0 {
				corrected++
				if prev == 0 {
					starts++
				}
			}
			prev = m.Model.LevelShift
		}
		if outliers == 0 {
			t.Fatalf("off=%v: no message flags the glitch an outlier", off)
		}
		if n := testutil.ToFloat64(d.metrics.outliers); n != float64(outliers) {
			t.Errorf("off=%v: streamd_outliers_total %v, want %d (the messages flagged)", off, n, outliers)
		}
		if n := testutil.ToFloat64(d.metrics.levelShifts); n != float64(starts) {
			t.Errorf("off=%v: streamd_level_shifts_total %v, want %d (the corrections the messages show starting)", off, n, starts)
		}
		if off && corrected > 0 {
			t.Errorf("model.level_shift off: %d messages carry a correction", corrected)
		}
		if !off && starts == 0 {
			t.Error("no correction started after a shift of 5 noise deviations")
		}
	}
}

// A series constant when its structure was chosen starts afresh at the
// first value that varies and is not a glitch: streamd_series_restarts_total
// counts it once, and a glitch before it (a single spike on the constant)
// not at all.
func TestRestartsAreCounted(t *testing.T) {
	ys := make([]float64, 80)
	for i := range ys {
		ys[i] = 7
		if i >= 50 {
			ys[i] += 0.5 * float64(i-49)
		}
	}
	ys[35] = 700 // a glitch on the constant
	d := &Daemon{cfg: Config{Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096, Inputs: -1},
		Registry: online.RegistryConfig{Default: learnerConfig()}, CheckpointRecords: DefaultCheckpointRecords}, metrics: newMetrics(), dir: newDirectory()}
	r := loosePartition(t, d)
	for k, y := range ys {
		r.handle(kafka.Message{Offset: int64(k), Key: []byte("s"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%g}`, k+1, y))})
	}
	if n := testutil.ToFloat64(d.metrics.restarts); n != 1 {
		t.Errorf("streamd_series_restarts_total %v, want 1", n)
	}
}
