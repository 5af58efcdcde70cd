package daemon

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/source"
	"github.com/streamd/streamd/internal/theta"
)

// A young series (combined, not fitted before its 16th record) publishes
// the theta method's forecasts from its 4th record, every step flagged
// fallback and the model "none"; streamd_forecast_fallbacks_total, the
// count of models that leave the plausible, does not count them.
func TestYoungSeriesPublishesWithoutCountingFallbacks(t *testing.T) {
	cfg := learnerConfig()
	cfg.Combine = online.CombineAuto
	d := &Daemon{cfg: Config{Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096, Inputs: -1},
		Registry: online.RegistryConfig{Default: cfg}, CheckpointRecords: DefaultCheckpointRecords}, metrics: newMetrics(), dir: newDirectory()}
	r := loosePartition(t, d)
	for k, y := range series(0, online.FirstFit-1) {
		r.handle(kafka.Message{Offset: int64(k), Key: []byte("young"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, y))})
	}
	if want := online.FirstFit - theta.MinValues; len(r.pending) != want {
		t.Fatalf("%d messages published, want %d (from the 4th record)", len(r.pending), want)
	}
	for _, m := range r.pending {
		if m.Model.Kernel != "none" || m.Model.Combine != "theta" || m.Observed != nil || len(m.Steps) != cfg.Horizon {
			t.Fatalf("message at t %d: model %+v, observed %v, %d steps", m.T, m.Model, m.Observed, len(m.Steps))
		}
		for _, st := range m.Steps {
			if !st.Fallback {
				t.Fatalf("message at t %d: step %+v not flagged the fallback's", m.T, st)
			}
		}
	}
	if n := testutil.ToFloat64(d.metrics.fallbacks); n != 0 {
		t.Errorf("streamd_forecast_fallbacks_total %v after a young series' forecasts, want 0", n)
	}
}
