package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
)

func learnerConfig() online.Config {
	return online.Config{
		Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(4)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 4},
			Size: 20, Gamma: 100, Forgetting: 1, Cutoff: 1e-10, Window: 100, SwapInterval: 5, NoiseEvery: 200,
			Select: narx.SelectOptions{MaxIter: 2000, Patience: 200}, Seed: 3},
		Warmup: 100, Horizon: 5, Every: 1, Level: 0.95,
	}
}

func series(id, n int) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = 10 + 3*math.Sin(0.3*float64(i)+float64(id)) + 0.1*math.Cos(1.7*float64(i*(id+1)))
	}
	return y
}

// drain reads topic's partitions until want messages arrived or ctx ends.
func drain(ctx context.Context, t *testing.T, addrs []string, topic string, want int) []kafka.Message {
	t.Helper()
	var got []kafka.Message
	for ctx.Err() == nil && len(got) < want {
		got = got[:0]
		for p := 0; p < 4; p++ {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: p, MaxWait: 250 * time.Millisecond})
			for {
				rctx, cancel := context.WithTimeout(ctx, 400*time.Millisecond)
				m, err := r.ReadMessage(rctx)
				cancel()
				if err != nil {
					break
				}
				got = append(got, m)
			}
			r.Close()
		}
	}
	return got
}

// Records in, forecasts out, through a real Kafka-protocol broker over TCP:
// every valid record past warm-up yields a forecast message whose numbers are
// bit-identical to a Learner run directly on the same values (the daemon adds
// nothing to the math); every bad record goes to the dead-letter topic with
// its reason; metrics and health answer; Close loses nothing.
func TestDaemonEndToEnd(t *testing.T) {
	c := testCluster(t, 4, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const nSeries, n = 3, 250
	in, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []sink.Record
	for i := 0; i < n; i++ {
		for s := 0; s < nSeries; s++ {
			v := fmt.Sprintf(`{"series":"s%d","t":%d,"y":%.17g}`, s, i+1, series(s, n)[i])
			recs = append(recs, sink.Record{Key: []byte(fmt.Sprintf("s%d", s)), Value: []byte(v)})
		}
		if i == 150 { // the bad-input table, interleaved with the good records
			for _, bad := range []struct{ key, value string }{
				{"s0", `{"series":"s0","t":999999,`},                       // invalid JSON
				{"s0", `{"series":"s0","t":999999}`},                       // missing y
				{"s1", `{"series":"s1","t":999999,"y":"NaN"}`},             // y "NaN"
				{"s1", `{"series":"s1","t":999999,"y":1e999}`},             // overflows to Inf
				{"s2", `{"series":"s2","t":1,"y":3}`},                      // t not increasing
				{"s2", `{"series":"s2","t":999999,"y":1,"u":[1]}`},         // wrong u length
				{"", `{"t":5,"y":1}`},                                      // no key, no series
				{"s0", `{"y":1,"pad":"` + strings.Repeat("x", 600) + `"}`}, // oversize
			} {
				recs = append(recs, sink.Record{Key: []byte(bad.key), Value: []byte(bad.value)})
			}
		}
	}
	if err := in.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	in.Close()

	cfg := testConfig(addrs)
	cfg.Group = "streamd"
	cfg.Decoder.MaxBytes = 512
	d := mustOpen(t, cfg)
	// Per series: one message at the first fit (forecast only) and one per
	// later record.
	want := nSeries * (n - online.FirstFit + 1)
	got := drain(ctx, t, addrs, "forecasts", want)
	dead := drain(ctx, t, addrs, "dlq", 8)
	base := "http://" + d.Addr().String()
	metricsText := httpGet(t, base+"/metrics")
	ready := httpGet(t, base+"/readyz")
	list := httpGet(t, base+"/v1/series?limit=2")
	detail := httpGet(t, base+"/v1/series/s1")
	whatIf, whatIfCode := httpPost(t, base+"/v1/series/s1/forecast", `{"horizon": 7}`)
	_, missingCode := httpPost(t, base+"/v1/series/nope/forecast", `{"horizon": 7}`)
	_, badCode := httpPost(t, base+"/v1/series/s1/forecast", `{"horizon": 0}`)
	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if len(got) != want {
		t.Fatalf("%d forecast messages, want %d", len(got), want)
	}
	// Every published forecast has its latency observed: from its record's
	// timestamp (written before Open) to the acknowledgement, so between 0
	// and the test's deadline.
	var lat dto.Metric
	if err := d.metrics.latency.Write(&lat); err != nil {
		t.Fatal(err)
	}
	if h := lat.GetHistogram(); int(h.GetSampleCount()) != d.metricsForecasts() || h.GetSampleSum() <= 0 ||
		h.GetSampleSum() > 90*float64(h.GetSampleCount()) {
		t.Errorf("latency histogram: %d samples summing to %g s, %d forecasts published", h.GetSampleCount(), h.GetSampleSum(), d.metricsForecasts())
	}
	// Reference: the same Learner over the same values, directly; each
	// series' messages in order.
	ref := referenceForecasts(t, nSeries, n)
	lastT := map[string]int64{}
	for _, km := range got {
		var m sink.Message
		if err := json.Unmarshal(km.Value, &m); err != nil {
			t.Fatal(err)
		}
		r, ok := ref[forecastKey{m.Series, m.T}]
		if !ok || m.T <= lastT[m.Series] {
			t.Fatalf("%s t=%d: not expected here (previous t %d)", m.Series, m.T, lastT[m.Series])
		}
		lastT[m.Series] = m.T
		if msg := sameForecast(m, r); msg != "" {
			t.Fatalf("%s t=%d: %s", m.Series, m.T, msg)
		}
	}
	reasons := map[string]int{}
	for _, m := range dead {
		for _, h := range m.Headers {
			if h.Key == "streamd-reason" {
				reasons[string(h.Value)]++
			}
		}
	}
	for _, r := range []string{"invalid_json", "missing_y", "non_finite_y", "t_not_increasing", "bad_inputs", "missing_series", "oversize"} {
		if reasons[r] == 0 {
			t.Errorf("no dead letter with reason %s (got %v)", r, reasons)
		}
	}
	if len(dead) != 8 {
		t.Errorf("%d dead letters, want 8: %v", len(dead), reasons)
	}
	for _, want := range []string{`streamd_input_rejected_total{reason="non_finite_y"} 2`, "streamd_forecasts_published_total",
		"go_goroutines", "streamd_build_info{", "streamd_series 3", "streamd_series_state_bytes ", "streamd_forecast_latency_seconds_bucket{le=\"0.05\"}"} {
		if !strings.Contains(metricsText, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.TrimSpace(ready) != "ok" {
		t.Errorf("readyz: %q", ready)
	}

	// The series API: a paginated list, a detail with the latest forecast,
	// and a what-if forecast computed from the live model — bit-identical to
	// the direct Learner's forecast at the same state, which it leaves as is.
	var page struct {
		Total  int             `json:"total"`
		Series []SeriesSummary `json:"series"`
	}
	if err := json.Unmarshal([]byte(list), &page); err != nil || page.Total != nSeries || len(page.Series) != 2 || page.Series[0].ID != "s0" {
		t.Errorf("list: %s (%v)", list, err)
	}
	var sum SeriesSummary
	if err := json.Unmarshal([]byte(detail), &sum); err != nil || !sum.Fitted || sum.Latest == nil || sum.LastT != n || sum.Bytes == 0 {
		t.Errorf("detail: %s (%v)", detail, err)
	}
	if whatIfCode != http.StatusOK || missingCode != http.StatusNotFound || badCode != http.StatusBadRequest {
		t.Fatalf("what-if codes %d, %d, %d: %s", whatIfCode, missingCode, badCode, whatIf)
	}
	var wi sink.Message
	if err := json.Unmarshal([]byte(whatIf), &wi); err != nil || len(wi.Steps) != 7 {
		t.Fatalf("what-if: %s (%v)", whatIf, err)
	}
	direct, _ := online.NewLearner(learnerConfig())
	for i, v := range series(1, n) {
		direct.Observe(online.Observation{T: int64(i + 1), Y: v})
	}
	steps := make([]online.ForecastStep, 7)
	if err := direct.Forecast(steps, nil); err != nil {
		t.Fatal(err)
	}
	var ref1 sink.Message
	SetSteps(&ref1, steps)
	for h := range ref1.Steps {
		if wi.Steps[h] != ref1.Steps[h] {
			t.Errorf("what-if step %d: %+v, direct %+v", h+1, wi.Steps[h], ref1.Steps[h])
		}
	}
}

func httpPost(t *testing.T, url, body string) (string, int) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
