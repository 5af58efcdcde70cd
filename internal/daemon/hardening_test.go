package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/reject"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// A series whose model was ruined (non-finite scores, noise, forecast steps,
// fan) is reported with nulls in its place, and the other series' entries
// stay readable: the list, the detail and the view answer 200 with valid
// JSON (they answered 200 with an empty body when one summary held a NaN).
func TestAPINonFiniteIsNull(t *testing.T) {
	dir := newDirectory()
	nan, inf := math.NaN(), math.Inf(1)
	bad := &sink.Message{Series: "ruined", T: 310, IssuedAt: time.Now().UTC(),
		Steps: []sink.Step{{H: 1, T: 311, Mean: nan, Std: inf, Lo: -inf, Hi: inf}},
		Model: sink.ModelInfo{M: 3, Lags: []int{1}, Kernel: "rbf", Form: "none", Gamma: 1e-6, NoiseStd: inf, DEff: nan}}
	dir.publish(nil, SeriesSummary{ID: "ruined", Fitted: true, Predicted: 9, OneStepRMS: optFloat(inf), Coverage95: optFloat(nan),
		Level: 0.95, Model: bad.Model, Latest: bad,
		History: []HistoryPoint{{T: 309, Y: 1, Fitted: true, Prediction: 1, Std: 0.1}, {T: 310, Y: 1e308, Fitted: true, Prediction: inf, Std: nan}}})
	dir.publish(nil, SeriesSummary{ID: "sound", Fitted: true, Predicted: 9, OneStepRMS: 0.5, Coverage95: 1, Level: 0.95})
	d := &Daemon{dir: dir}
	mux := http.NewServeMux()
	d.apiRoutes(mux)
	d.webRoutes(mux)
	get := func(path string) map[string]any {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		var v map[string]any
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &v) != nil {
			t.Fatalf("GET %s: %d %q", path, rec.Code, rec.Body.String())
		}
		return v
	}
	list := get("/v1/series?sort=rmse")
	if items := list["series"].([]any); len(items) != 2 {
		t.Fatalf("list: %v", list)
	}
	one := get("/v1/series/ruined")
	if one["one_step_rmse"] != nil || one["coverage95"] != nil || one["model"].(map[string]any)["noise_std"] != nil {
		t.Errorf("detail: %v", one)
	}
	step := one["latest"].(map[string]any)["steps"].([]any)[0].(map[string]any)
	if step["mean"] != nil || step["hi"] != nil || step["h"] != 1.0 {
		t.Errorf("latest step: %v", step)
	}
	view := get("/v1/series/ruined/view")
	if p := view["history"].(map[string]any)["prediction"].([]any); p[1] != nil || p[0] != 1.0 {
		t.Errorf("view prediction column: %v", p)
	}
	if get("/v1/series/sound")["one_step_rmse"] != 0.5 {
		t.Error("the sound series' detail changed")
	}
}

// A value that cannot be encoded is answered 500 with the reason, never
// with the intended status and an empty body.
func TestWriteJSONEncodesFirst(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]any{"x": make(chan int)})
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "encode response") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
}

// logBuffer collects a daemon's log lines (JSON) for the tests to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// counterValue reads a counter (or one child of a vector).
func counterValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	go func() { c.Collect(ch); close(ch) }()
	sum := 0.0
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		sum += d.GetCounter().GetValue()
	}
	return sum
}

// goodAndBad writes n records of series "good" to topic with, after the
// 150th, the records bad(key) returns, all on one partition.
func goodAndBad(ctx context.Context, t *testing.T, addrs []string, topic string, n int, bad ...sink.Record) {
	t.Helper()
	in, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: topic, Transport: &kafka.Transport{}, BatchBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var recs []sink.Record
	for i, v := range series(0, n) {
		recs = append(recs, sink.Record{Key: []byte("good"), Value: []byte(fmt.Sprintf(`{"series":"good","t":%d,"y":%.17g}`, i+1, v))})
		if i == 150 {
			recs = append(recs, bad...)
		}
	}
	if err := in.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
}

// One input record too large for the dead-letter topic (the input topic
// allows it) must not stall its partition: with the dead-letter limit
// configured, its dead letter is cut to fit and says so; with the limit
// left above what the topic accepts, the broker refuses the dead letter for
// good and it is skipped, counted and logged with its series. Either way
// every forecast of the other series on the partition, whose records follow
// it, is published.
func TestOversizeDeadLetterDoesNotStall(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "forecasts2")
	if err := c.CreateTopic("dlq", 1, map[string]string{"max.message.bytes": "20000"}); err != nil {
		t.Fatal(err)
	}
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 250
	huge := `{"series":"bad","t":1,"y":1,"pad":"` + strings.Repeat("x", 100000) + `"}`
	goodAndBad(ctx, t, addrs, "series", n, sink.Record{Key: []byte("bad"), Value: []byte(huge)})
	want := n - online.FirstFit + 1

	for _, tc := range []struct {
		name, group, forecasts string
		deadMax                int
	}{
		{"truncated", "g1", "forecasts", 20000},
		{"refused", "g2", "forecasts2", 0}, // the default, 1 MB: more than the topic takes
	} {
		var logs logBuffer
		cfg := testConfig(addrs)
		cfg.Group = tc.group
		cfg.ForecastTopic = tc.forecasts
		cfg.DeadLetterMaxBytes = tc.deadMax
		cfg.Decoder.MaxBytes = 50000
		cfg.Logger = logs.logger()
		d := mustOpen(t, cfg)
		got := drain(ctx, t, addrs, tc.forecasts, want)
		if err := d.Close(); err != nil {
			t.Fatalf("%s: close: %v", tc.name, err)
		}
		if len(got) != want {
			t.Fatalf("%s: %d forecasts of the good series, want %d", tc.name, len(got), want)
		}
		truncated, dropped := counterValue(t, d.metrics.deadTruncated), counterValue(t, d.metrics.dropped)
		switch tc.name {
		case "truncated":
			dead := drain(ctx, t, addrs, "dlq", 1)
			if len(dead) != 1 || truncated != 1 || dropped != 0 {
				t.Fatalf("%d dead letters, truncated %g, dropped %g", len(dead), truncated, dropped)
			}
			h := map[string]string{}
			for _, x := range dead[0].Headers {
				h[x.Key] = string(x.Value)
			}
			if h["streamd-reason"] != "oversize" || h["streamd-origin"] != "series/0/151" || string(dead[0].Key) != "bad" ||
				!strings.HasPrefix(h["streamd-truncated"], "key 3/3 bytes, value ") || !strings.HasPrefix(huge, string(dead[0].Value)) {
				t.Errorf("dead letter: key %q, headers %v, value of %d bytes", dead[0].Key, h, len(dead[0].Value))
			}
		case "refused":
			if dropped != 1 || truncated != 0 {
				t.Errorf("dropped %g, truncated %g", dropped, truncated)
			}
			if l := logs.String(); !strings.Contains(l, `"msg":"publish: the brokers refuse the record for good; skipped","what":"dead_letters","series":"bad"`) {
				t.Errorf("no log line names the skipped dead letter's series:\n%s", l)
			}
		}
	}
}

// Two deployments given one state topic (different groups, different
// forecast topics): the second refuses the first's checkpoints and
// watermarks — counted, and logged with the series and both groups — and
// learns every series from its own input, publishing every forecast (it
// adopted them, skipped the input they covered and published nothing).
func TestStateBelongsToItsGroup(t *testing.T) {
	c := testCluster(t, 2, "series", "forecasts", "forecasts2", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const nSeries, n = 2, 200
	produceRange(ctx, t, addrs, nSeries, n, 0, n)
	want := nSeries * (n - online.FirstFit + 1)

	a := stateDaemon(t, addrs, 100)
	if got := drain(ctx, t, addrs, "forecasts", want); len(got) != want {
		t.Fatalf("first deployment: %d forecasts, want %d", len(got), want)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	var logs logBuffer
	cfg := stateConfig(addrs, 100)
	cfg.Group, cfg.ForecastTopic, cfg.Logger = "other", "forecasts2", logs.logger()
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := drain(ctx, t, addrs, "forecasts2", want)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != want {
		t.Fatalf("second deployment: %d forecasts, want %d", len(got), want)
	}
	if f, r := counterValue(t, b.metrics.foreignCheckpoints), counterValue(t, b.metrics.restored); f < nSeries || r != 0 {
		t.Errorf("%g foreign records refused, %g series restored", f, r)
	}
	if l := logs.String(); !strings.Contains(l, `"series":"s0"`) || !strings.Contains(l, `"group":"other","checkpoint_group":"g"`) {
		t.Errorf("no log line names the refused series and both groups:\n%s", l)
	}
}

// httpStatus GETs url and returns the status and body ("" and 0 when the
// request failed).
func httpStatus(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Readiness says why: with the brokers not yet reachable, the daemon does
// not exit but retries, logging each attempt, and /readyz answers 503
// "brokers unreachable"; once they are up but the forecast topic is missing,
// 503 naming the topic, while the partition's forecasts wait (their writes
// retried); once it exists, 200, and every forecast is published — nothing
// was lost — with a "recovered" log line.
func TestReadinessAndStartupRetry(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there until the broker starts
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var logs logBuffer
	cfg := stateConfig([]string{addr}, 100)
	cfg.Logger, cfg.readyCheckEvery, cfg.stallAfter = logs.logger(), 100*time.Millisecond, 500*time.Millisecond
	d, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open with the brokers down: %v", err)
	}
	defer d.Close()
	readyz := "http://" + d.Addr().String() + "/readyz"
	waitFor(ctx, t, "readyz to report the brokers unreachable", func() bool {
		code, body := httpStatus(readyz)
		return code == 503 && strings.Contains(body, "not ready: brokers unreachable")
	})
	waitFor(ctx, t, "a log line of a retried start", func() bool {
		return strings.Contains(logs.String(), `"msg":"brokers unreachable at start; retrying"`)
	})

	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(2, "series", "dlq"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const nSeries, n = 2, 150
	produceRange(ctx, t, []string{addr}, nSeries, n, 0, n)
	waitFor(ctx, t, "readyz to name the missing forecast topic", func() bool {
		code, body := httpStatus(readyz)
		return code == 503 && strings.Contains(body, `forecast topic "forecasts" does not exist`)
	})
	// The partitions' forecast writes fail meanwhile: retried, and, past
	// stallAfter, reported as stalled.
	waitFor(ctx, t, "a stalled publisher", func() bool { return len(d.stalled()) > 0 })
	if l := logs.String(); !strings.Contains(l, `"msg":"publish: retrying","what":"forecasts"`) {
		t.Errorf("no log line of the failing forecast writes:\n%s", l)
	}
	select {
	case <-d.Done():
		t.Fatalf("the daemon stopped: %v", d.Err())
	default:
	}
	if err := c.CreateTopic("forecasts", 2, nil); err != nil {
		t.Fatal(err)
	}
	want := nSeries * (n - online.FirstFit + 1)
	if got := drain(ctx, t, []string{addr}, "forecasts", want); len(got) != want {
		t.Fatalf("%d forecasts, want %d", len(got), want)
	}
	waitFor(ctx, t, "readyz 200", func() bool { code, _ := httpStatus(readyz); return code == 200 })
	if l := logs.String(); !strings.Contains(l, `"msg":"publish: recovered"`) || !strings.Contains(l, `"msg":"brokers reached"`) {
		t.Errorf("no recovery log lines:\n%s", l)
	}
}

// Hostile records on the partition of a healthy series: a series field under
// another key, ids too long or with NUL, newline or ANSI escapes, y as a
// numeric string, a boolean or null, a time among the series' sequence
// numbers, and new series beyond the live-series cap. Each bad record is dead-lettered with its own reason, the eviction is
// logged naming the series, and the healthy series, whose records follow
// them, gets every forecast.
func TestHostileRecords(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bad := map[string]sink.Record{
		"series_key_mismatch": {Key: []byte("good"), Value: []byte(`{"series":"x","t":1,"y":1}`)},
		"bad_series":          {Key: []byte(strings.Repeat("k", 300)), Value: []byte(`{"t":1,"y":1}`)},
		"bad_series NUL":      {Value: []byte(`{"series":"a\u0000b","t":1,"y":1}`)},
		"bad_series newline":  {Value: []byte(`{"series":"a\nb","t":1,"y":1}`)},
		"bad_series ANSI":     {Value: []byte(`{"series":"\u001b[2Jx","t":1,"y":1}`)},
		"bad_y string":        {Key: []byte("good"), Value: []byte(`{"t":1,"y":"1.5"}`)},
		"bad_y true":          {Key: []byte("good"), Value: []byte(`{"t":1,"y":true}`)},
		"bad_y null":          {Key: []byte("good"), Value: []byte(`{"t":1,"y":null}`)},
		// good's t are sequence numbers: a time, learned, would leave every
		// later record of good "not increasing".
		"bad_time rfc3339":     {Key: []byte("good"), Value: []byte(`{"t":"2026-01-01T00:00:00Z","y":1}`)},
		"bad_time record time": {Key: []byte("good"), Value: []byte(`{"y":1}`)},
	}
	var recs []sink.Record
	for _, r := range bad {
		recs = append(recs, r)
	}
	// e1 then, after a record of good, e2: the cap of two evicts e1, the
	// least recently seen.
	recs = append(recs, sink.Record{Key: []byte("e1"), Value: []byte(`{"t":1,"y":1}`)})
	in, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var all []sink.Record
	for i, v := range series(0, n) {
		all = append(all, sink.Record{Key: []byte("good"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, i+1, v))})
		switch i {
		case 100:
			all = append(all, recs...)
		case 101:
			all = append(all, sink.Record{Key: []byte("e2"), Value: []byte(`{"t":1,"y":1}`)})
		}
	}
	if err := in.WriteRecords(ctx, all...); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	cfg := testConfig(addrs)
	cfg.Registry.MaxSeries = 2
	cfg.Logger = logs.logger()
	d := mustOpen(t, cfg)
	want := n - online.FirstFit + 1
	got := drain(ctx, t, addrs, "forecasts", want)
	dead := drain(ctx, t, addrs, "dlq", len(bad))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if len(got) != want {
		t.Errorf("%d forecasts of the healthy series, want %d", len(got), want)
	}
	reasons := map[string]int{}
	for _, m := range dead {
		for _, h := range m.Headers {
			if h.Key == "streamd-reason" {
				reasons[string(h.Value)]++
			}
		}
	}
	if len(dead) != len(bad) || reasons["series_key_mismatch"] != 1 || reasons["bad_series"] != 4 || reasons["bad_y"] != 3 ||
		reasons["bad_time"] != 2 {
		t.Errorf("%d dead letters, reasons %v", len(dead), reasons)
	}
	if ev := counterValue(t, d.metrics.evicted); ev != 1 {
		t.Errorf("%g evictions, want 1", ev)
	}
	if l := logs.String(); !strings.Contains(l, `"msg":"series evicted at the live-series cap or the state budget","series":"e1"`) {
		t.Errorf("no log line names the evicted series:\n%s", l)
	}
}

// /readyz names a partition whose publisher has failed longer than
// stallAfter, and the gauge counts it; one failing for less, or not at all,
// is not reported.
func TestReadyzReportsStalledPublishers(t *testing.T) {
	d := &Daemon{cfg: Config{stallAfter: time.Minute}, metrics: newMetrics(), dir: newDirectory()}
	ok := ""
	d.outputs.Store(&ok)
	d.joined.Store(true)
	for i, since := range []time.Duration{0, 10 * time.Second, 5 * time.Minute} {
		p := &publisher{r: &partitionRun{d: d, p: source.Partition{Topic: "series", ID: i}}}
		if since > 0 {
			p.failingSince.Store(time.Now().Add(-since).UnixNano())
		}
		d.pubs.Store(p, struct{}{})
	}
	rec := httptest.NewRecorder()
	d.routes().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if body := rec.Body.String(); rec.Code != 503 || !strings.Contains(body, "not ready: publishing stalled: partition series/2 failing for 300 s") ||
		strings.Contains(body, "series/1") {
		t.Errorf("readyz: %d %q", rec.Code, body)
	}
	if st := d.stalled(); len(st) != 1 {
		t.Errorf("stalled: %v", st)
	}
}

// A restart keeps what the daemon knows of a series beyond its model: its
// running one-step scores and its latest forecast, written beside its
// checkpoint: after the restart the summary is not back at predicted 0,
// coverage 0 and no latest forecast; and the kind of its t, so that a
// record with a time in the series of sequence numbers is refused as
// bad_time after the restart as before it, not taken as its first.
func TestRestartKeepsSeriesSummaries(t *testing.T) {
	c := testCluster(t, 2, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const nSeries, n = 2, 150
	produceRange(ctx, t, addrs, nSeries, n, 0, n)
	detail := func(d *Daemon) (SeriesSummary, bool) {
		code, body := httpStatus("http://" + d.Addr().String() + "/v1/series/s1")
		var s SeriesSummary
		return s, code == 200 && json.Unmarshal([]byte(body), &s) == nil
	}
	a := stateDaemon(t, addrs, 100)
	var before SeriesSummary
	waitFor(ctx, t, "the first run's summary of s1 at its last record", func() bool {
		s, ok := detail(a)
		before = s
		return ok && s.Latest != nil && s.Latest.T == n
	})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if before.Predicted == 0 {
		t.Fatalf("first run: %+v", before)
	}
	b := stateDaemon(t, addrs, 100)
	defer b.Close()
	var after SeriesSummary
	waitFor(ctx, t, "the restored summary of s1", func() bool {
		s, ok := detail(b)
		after = s
		return ok
	})
	if after.Predicted != before.Predicted || after.Coverage95 != before.Coverage95 || after.OneStepRMS != before.OneStepRMS ||
		after.Latest == nil || after.Latest.T != n || len(after.Latest.Steps) != len(before.Latest.Steps) ||
		after.Latest.Steps[0] != before.Latest.Steps[0] {
		t.Errorf("restored summary %+v\nbefore the restart %+v", after, before)
	}
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	defer w.Close()
	if err := w.WriteRecords(ctx, sink.Record{Key: []byte("s1"), Value: []byte(`{"t":"2026-11-27T12:00:00Z","y":1}`)}); err != nil {
		t.Fatal(err)
	}
	badTime := b.metrics.rejected.WithLabelValues(string(reject.BadTime))
	waitFor(ctx, t, "the time in s1's sequence numbers refused as bad_time", func() bool {
		return testutil.ToFloat64(badTime) == 1
	})
}

// One huge value in a fitted series (robust weighting off, the default)
// does not poison it: produced over TCP after 150 records of "good" and of
// "spiky" on one partition, the value 1e150 (online.MaxAbsValue, the
// largest taken; beyond it a value is dead-lettered as out_of_range) is
// flagged as an outlier in its
// forecast message, every later forecast of spiky stays finite and within
// the series' range, good gets every forecast, and the API keeps answering
// with a body for every series.
func TestHugeValueDoesNotPoison(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 200
	var all []sink.Record
	good, spiky := series(0, n), series(1, n)
	for i := range n {
		all = append(all, sink.Record{Key: []byte("good"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, i+1, good[i]))})
		y := spiky[i]
		if i == 150 {
			y = online.MaxAbsValue
		}
		all = append(all, sink.Record{Key: []byte("spiky"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, i+1, y))})
	}
	writeInput(ctx, t, addrs, all...)
	cfg := testConfig(addrs)
	d := mustOpen(t, cfg)
	want := 2 * (n - online.FirstFit + 1)
	got := drain(ctx, t, addrs, "forecasts", want)
	if len(got) != want {
		t.Fatalf("%d forecasts, want %d", len(got), want)
	}
	lo, hi := slices.Min(spiky), slices.Max(spiky)
	span := hi - lo
	flagged := false
	for _, m := range got {
		var msg sink.Message
		if err := json.Unmarshal(m.Value, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Series != "spiky" {
			continue
		}
		if msg.T == 151 && msg.Observed != nil && msg.Observed.Outlier && msg.Observed.Weight == 0 {
			flagged = true
		}
		if msg.T > 151 {
			for _, s := range msg.Steps {
				if !(s.Mean > lo-span && s.Mean < hi+span) || math.IsInf(s.Hi-s.Lo, 0) || math.IsNaN(s.Std) {
					t.Fatalf("t=%d h=%d: %+v after the huge value (range [%g, %g])", msg.T, s.H, s, lo, hi)
				}
			}
		}
	}
	if !flagged {
		t.Error("the value 1e150 was not flagged as an outlier with weight 0")
	}
	for _, path := range []string{"/v1/series", "/v1/series/spiky", "/v1/series/good"} {
		code, body := httpStatus("http://" + d.Addr().String() + path)
		if code != 200 || len(body) < 10 {
			t.Errorf("GET %s: %d %q", path, code, body)
		}
	}
}

// A new series whose first t, an integer Unix time, looks like the other
// unit's is counted and named in a warning (calendar.UnitHint): with
// model.time_unit ms, hourly Unix seconds fall in January 1970. Unix
// milliseconds, and a 1970 date written as a timestamp string, whose unit
// the data states, are not.
func TestSuspectTimeUnitIsCounted(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 30
	var all []sink.Record
	for i := range n {
		y := 10 + math.Sin(float64(i)/3)
		all = append(all,
			sink.Record{Key: []byte("seconds"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%g}`, 1_704_067_200+3600*i, y))},
			sink.Record{Key: []byte("millis"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%g}`, 1_704_067_200_000+3_600_000*i, y))},
			sink.Record{Key: []byte("dated"), Value: []byte(fmt.Sprintf(`{"t":"1970-01-%02dT00:00:00Z","y":%g}`, 1+i, y))})
	}
	writeInput(ctx, t, addrs, all...)
	var logs logBuffer
	cfg := testConfig(addrs)
	cfg.Decoder.Unit = calendar.Millis
	cfg.Logger = logs.logger()
	d := mustOpen(t, cfg)
	waitFor(ctx, t, "every record handled", func() bool { return counterValue(t, d.metrics.records) >= 3*n })
	if got := counterValue(t, d.metrics.unitSuspect); got != 1 {
		t.Errorf("streamd_series_time_unit_suspect_total %g, want 1 (the series of Unix seconds)", got)
	}
	if s := logs.String(); !strings.Contains(s, `"msg":"series time unit looks wrong","series":"\"seconds\""`) || !strings.Contains(s, "model.time_unit: s") ||
		strings.Contains(s, `"series":"\"millis\""`) || strings.Contains(s, `"series":"\"dated\""`) {
		t.Errorf("log: %s", s)
	}
}

// A record's t read as a time (a date here) is one for the Learner however
// early: business days from 1962, whose Unix milliseconds are negative,
// have their weekends off as those of 2023 do, though their t are below
// 1e11 (March 1973), where no size tells a time from a sequence number.
// The latest forecast's model names the days off.
func TestDatesBefore1973AreTimes(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 60
	var all []sink.Record
	last := map[string]int64{} // each series' last t, Unix ms
	for _, year := range []int{1962, 2023} {
		id := fmt.Sprint(year)
		for d, k := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), 0; k < n; d = d.AddDate(0, 0, 1) {
			if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				continue
			}
			y := 10 + math.Sin(float64(k)/2)
			all = append(all, sink.Record{Key: []byte(id), Value: []byte(fmt.Sprintf(`{"series":%q,"t":%q,"y":%g}`, id, d.Format(time.DateOnly), y))})
			last[id] = d.UnixMilli()
			k++
		}
	}
	writeInput(ctx, t, addrs, all...)
	d := mustOpen(t, testConfig(addrs))
	waitFor(ctx, t, "every record handled", func() bool { return counterValue(t, d.metrics.records) >= 2*n })
	for _, id := range []string{"1962", "2023"} {
		var got struct {
			Latest *sink.Message `json:"latest"`
		}
		waitFor(ctx, t, "series "+id+"'s last forecast", func() bool {
			code, body := httpStatus("http://" + d.Addr().String() + "/v1/series/" + id)
			return code == 200 && json.Unmarshal([]byte(body), &got) == nil && got.Latest != nil && got.Latest.T == last[id]
		})
		if m := got.Latest.Model; !slices.Equal(m.DaysOff, []string{"Saturday", "Sunday"}) {
			t.Errorf("series %s: model %+v, want days off Saturday and Sunday", id, m)
		}
	}
}
