package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/sink"
)

// TestFanBands: each side of a step's band scales with the quantile of its
// predictive distribution at the level, in the form the model learns, from
// the [lo, hi] it reports at its level. The normal's: z(0.95) =
// 1.959963984540054, z(0.8) = 1.2815515655446004, z(0.5) =
// 0.6744897501960817 (R qnorm(c(.975, .9, .75))); a Student t of ν = 3 df:
// 3.182446305284263, 1.637744353696210, 0.7648923284225570 (R qt(c(.975,
// .9, .75), 3)); of ν = 2, whose quantile has the closed form
// (2p − 1)/√(2p(1 − p)): 4.302652729749462, 1.885618083164127,
// 0.8164965809277260. At the reported level
// the band is [lo, hi] itself; in logs the bands are asymmetric about the
// point forecast, their logs symmetric (a fallback step's are symmetric in
// y, and normal whatever df; a young series' are its t's). Bands nest.
// Tolerance 1e-10 relative: a few roundings of values of order 1–100, and
// narx.TQuantile's 1e-12 against distuv.
func TestFanBands(t *testing.T) {
	z := []float64{0.6744897501960817, 1.2815515655446004, 1.959963984540054}
	q3 := []float64{0.7648923284225570, 1.637744353696210, 3.182446305284263}
	var q2 []float64
	for _, p := range []float64{0.75, 0.9, 0.975} {
		q2 = append(q2, (2*p-1)/math.Sqrt(2*p*(1-p)))
	}
	id := func(v float64) float64 { return v }
	for _, tc := range []struct {
		form      string
		df, young float64
		steps     []sink.Step
		to        func(float64) float64
		q         []float64 // the quantiles the bands scale with
	}{
		{"none", 0, 0, []sink.Step{{H: 1, T: 11, Mean: 10, Std: 2, Lo: 10 - 2*z[2], Hi: 10 + 2*z[2]}, {H: 2, T: 12, Mean: -1, Std: 0.5, Lo: -2, Hi: 0.5}},
			id, z},
		{"log+diff", 0, 0, []sink.Step{{H: 1, T: 11, Mean: 10, Std: 3, Lo: 5, Hi: 20}}, math.Log, z},
		// A fallback step is a normal in y whatever the form and df.
		{"log", 3, 0, []sink.Step{{H: 3, T: 13, Mean: 10, Std: 2, Lo: 10 - 2*z[2], Hi: 10 + 2*z[2], Fallback: true}},
			id, z},
		{"none", 3, 0, []sink.Step{{H: 1, T: 11, Mean: 10, Std: 2, Lo: 10 - 2*q3[2], Hi: 10 + 2*q3[2]}}, id, q3},
		{"log", 3, 0, []sink.Step{{H: 1, T: 11, Mean: 10, Std: 3, Lo: 4, Hi: 25}}, math.Log, q3},
		// A young series' steps: Student's t of its ν at scale std.
		{"none", 0, 2, []sink.Step{{H: 1, T: 11, Mean: 10, Std: 2, Lo: 10 - 2*q2[2], Hi: 10 + 2*q2[2], Fallback: true},
			{H: 2, T: 12, Mean: 11, Std: 3, Lo: 11 - 3*q2[2], Hi: 11 + 3*q2[2], Fallback: true}}, id, q2},
	} {
		got := fan(tc.steps, tc.form, 0.95, tc.df, tc.young)
		for k, f := range got {
			s := tc.steps[k]
			if f.H != s.H || f.T != s.T || float64(f.Mean) != s.Mean || len(f.Lo) != len(FanLevels) || len(f.Hi) != len(FanLevels) {
				t.Fatalf("%s step %d: %+v from %+v", tc.form, k, f, s)
			}
			m := tc.to(s.Mean)
			last := len(tc.q) - 1
			for i, qi := range tc.q {
				wantLo := m - (m-tc.to(s.Lo))*qi/tc.q[last]
				wantHi := m + (tc.to(s.Hi)-m)*qi/tc.q[last]
				if math.Abs(tc.to(float64(f.Lo[i]))-wantLo) > 1e-10*math.Abs(m) || math.Abs(tc.to(float64(f.Hi[i]))-wantHi) > 1e-10*math.Abs(m) {
					t.Errorf("%s df %g step %d level %g: [%g, %g], want [%g, %g] in the form", tc.form, tc.df, k, FanLevels[i], f.Lo[i], f.Hi[i], wantLo, wantHi)
				}
				if i > 0 && !(f.Lo[i] < f.Lo[i-1] && f.Hi[i] > f.Hi[i-1]) {
					t.Errorf("%s step %d: band %g does not contain band %g", tc.form, k, FanLevels[i], FanLevels[i-1])
				}
			}
			if math.Abs(float64(f.Lo[last])-s.Lo) > 1e-12*math.Abs(s.Lo) || math.Abs(float64(f.Hi[last])-s.Hi) > 1e-12*math.Abs(s.Hi) {
				t.Errorf("%s step %d: 95 %% band [%g, %g], the step's [%g, %g]", tc.form, k, f.Lo[last], f.Hi[last], s.Lo, s.Hi)
			}
		}
	}
}

// A young series' view draws its steps' fan with the t of the message's
// model.theta.df (ν = 2: the quantile's closed form as in TestFanBands), a
// fitted series' fallback steps with the normal. 1e-12 relative: one
// rounding of each operand.
func TestViewFanOfYoungSeries(t *testing.T) {
	step := sink.Step{H: 1, T: 5, Mean: 10, Std: 2, Fallback: true}
	tq := func(p float64) float64 { return (2*p - 1) / math.Sqrt(2*p*(1-p)) }
	step.Lo, step.Hi = step.Mean-step.Std*tq(0.975), step.Mean+step.Std*tq(0.975)
	for _, tc := range []struct {
		kernel string
		half   float64 // the 50 % band's half-width
	}{
		{"none", step.Std * tq(0.75)},
		{"rbf", step.Std * tq(0.975) * 0.6744897501960817 / 1.959963984540054},
	} {
		m := &sink.Message{Steps: []sink.Step{step}, Model: sink.ModelInfo{Kernel: tc.kernel, Form: "none", Theta: &sink.ThetaInfo{DF: 2}}}
		v := viewOf(SeriesSummary{Latest: m, Level: 0.95})
		i := slices.Index(FanLevels, 0.5)
		if got := float64(v.Fan[0].Hi[i]) - step.Mean; i < 0 || math.Abs(got-tc.half) > 1e-12*tc.half {
			t.Errorf("kernel %s: 50 %% half-width %v, want %v", tc.kernel, got, tc.half)
		}
	}
}

// A series' history keeps its last histLen points, in order, within
// 2·histLen points of buffer; a view taken earlier is not changed by later
// points (the partition goroutine writes while the API reads it); adding
// allocates at most once per histLen points.
func TestHistoryIsBoundedAndViewsStay(t *testing.T) {
	var h history
	var early []HistoryPoint
	for i := range 5 * histLen {
		h.add(HistoryPoint{T: int64(i), Y: float64(i)})
		if i == histLen+17 {
			early = h.view()
		}
		if cap(h.buf) > 2*histLen {
			t.Fatalf("after %d points the buffer holds %d", i+1, cap(h.buf))
		}
	}
	v := h.view()
	if len(v) != histLen || v[0].T != 4*histLen || v[histLen-1].T != 5*histLen-1 {
		t.Fatalf("view of %d points from t=%d to t=%d", len(v), v[0].T, v[len(v)-1].T)
	}
	for i, p := range early {
		if p.T != int64(18+i) {
			t.Fatalf("an earlier view changed: point %d has t=%d, want %d", i, p.T, 18+i)
		}
	}
	if h.sizeBytes() != 2*histLen*40 {
		t.Errorf("sizeBytes %d, want %d", h.sizeBytes(), 2*histLen*40)
	}
	if a := testing.AllocsPerRun(20, func() {
		for range histLen {
			h.add(HistoryPoint{T: 1})
		}
	}); a > 1 {
		t.Errorf("%g allocations per %d points", a, histLen)
	}
}

// The view's columns against a recomputation from scratch: the error is
// y − prediction, the running coverage the share of the last coverageWindow
// predicted points inside prediction ± z95·std, and warm-up points are null.
func TestViewColumns(t *testing.T) {
	var s SeriesSummary
	for i := range 180 {
		p := HistoryPoint{T: int64(i), Y: math.Sin(float64(i)), Fitted: i >= 20}
		if p.Fitted {
			p.Prediction, p.Std = math.Sin(float64(i))+0.3*math.Cos(float64(7*i)), 0.1+0.05*float64(i%4)
		}
		s.History = append(s.History, p)
	}
	v := viewOf(s)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		History struct {
			T          []int64    `json:"t"`
			Prediction []*float64 `json:"prediction"`
			Error      []*float64 `json:"error"`
			Coverage   []*float64 `json:"coverage"`
		} `json:"history"`
		Fan []FanStep `json:"fan"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.History.T) != 180 || got.Fan == nil {
		t.Fatalf("%d points, fan %v", len(got.History.T), got.Fan)
	}
	for i, p := range s.History {
		if !p.Fitted {
			if got.History.Prediction[i] != nil || got.History.Error[i] != nil || got.History.Coverage[i] != nil {
				t.Fatalf("point %d in warm-up has values", i)
			}
			continue
		}
		in, n := 0, 0
		for j := i; j >= 20 && n < coverageWindow; j-- {
			n++
			if math.Abs(s.History[j].Y-s.History[j].Prediction) <= z95*s.History[j].Std {
				in++
			}
		}
		if e := *got.History.Error[i]; e != p.Y-p.Prediction {
			t.Fatalf("point %d: error %g, want %g", i, e, p.Y-p.Prediction)
		}
		if c := *got.History.Coverage[i]; math.Abs(c-float64(in)/float64(n)) > 1e-15 {
			t.Fatalf("point %d: coverage %g, want %d/%d", i, c, in, n)
		}
	}
}

// The series list sorts by each score, ties by id, in either order; a
// null score (d: nothing predicted yet; e: a ruined model's) sorts last in
// either order; an unknown order is a 400.
func TestSeriesListOrders(t *testing.T) {
	dir := newDirectory()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	null := optFloat(math.NaN())
	for i, s := range []SeriesSummary{
		{ID: "a", OneStepRMS: 3, Coverage95: 0.9, Outliers: 1, LastT: 5},
		{ID: "b", OneStepRMS: 1, Coverage95: 0.99, Outliers: 7, LastT: 9},
		{ID: "c", OneStepRMS: 2, Coverage95: 0.5, Outliers: 1, LastT: 1},
		{ID: "d", OneStepRMS: null, Coverage95: null, Outliers: 0, LastT: 2},
		{ID: "e", OneStepRMS: optFloat(math.Inf(1)), Coverage95: null, Outliers: 0, LastT: 3},
	} {
		s.Updated = base.Add(time.Duration(3-i) * time.Second)
		dir.publish(nil, s)
	}
	for _, c := range []struct {
		sort string
		desc bool
		want string
	}{
		{"id", false, "abcde"}, {"id", true, "edcba"}, {"rmse", true, "acbde"}, {"rmse", false, "bcade"},
		{"coverage", false, "cabde"}, {"coverage", true, "bacde"},
		{"outliers", true, "bacde"}, {"updated", true, "abcde"}, {"last_t", false, "cdeab"},
	} {
		items, total, _ := dir.page(0, 10, false, c.sort, c.desc)
		var ids string
		for _, s := range items {
			ids += s.ID
		}
		if ids != c.want || total != 5 {
			t.Errorf("sort=%s desc=%v: %s of %d, want %s", c.sort, c.desc, ids, total, c.want)
		}
	}
	d := &Daemon{dir: dir}
	mux := http.NewServeMux()
	d.apiRoutes(mux)
	for q, code := range map[string]int{"sort=rmse&order=desc": 200, "sort=nope": 400, "order=up": 400} {
		rec := &recorder{header: http.Header{}}
		req, _ := http.NewRequest("GET", "/v1/series?"+q, nil)
		mux.ServeHTTP(rec, req)
		if rec.code != code {
			t.Errorf("%s: %d, want %d", q, rec.code, code)
		}
	}
}

type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// chromiumPath finds Debian's chromium. CI installs it, and there its
// absence fails the test; elsewhere it skips.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (.ci/run installs the Debian package chromium)")
		}
		t.Skip("chromium not installed; CI runs this test")
	}
	return p
}

// The web view in a real browser (headless Chromium) against the daemon on a
// Kafka-protocol broker: the series page draws the forecast the API holds
// for the series, redraws without a reload when a new record yields a new
// forecast, and the overview lists the series and sorts. Screenshots of
// both pages are written to files the log names.
func TestWebViewInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	const n = 260
	ys := series(2, n+1)
	ys[200] += 3 // an outlier for the page to flag
	produce := func(from, to int) {
		var recs []sink.Record
		for i := from; i < to; i++ {
			for _, id := range []string{"web", "other"} {
				y := ys[i]
				if id == "other" {
					y = 2 * series(5, n+1)[i]
				}
				recs = append(recs, sink.Record{Key: []byte(id), Value: []byte(fmt.Sprintf(`{"series":%q,"t":%d,"y":%.17g}`, id, i+1, y))})
			}
			day := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly)
			recs = append(recs, sink.Record{Key: []byte("daily"), Value: []byte(fmt.Sprintf(`{"series":"daily","t":%q,"y":%.17g}`, day, 3*ys[i]))})
		}
		if err := in.WriteRecords(ctx, recs...); err != nil {
			t.Fatal(err)
		}
	}
	produce(0, n)
	lc := learnerConfig()
	lc.Horizon = 20
	lc.Robust = online.Robust{Enabled: true, Weights: robust.DefaultWeights(), Window: 50, Scale: robust.ScaleIQR, Clean: true}
	cfg := testConfig(addrs)
	cfg.Group = "web"
	cfg.Decoder.MaxBytes = 512
	cfg.Registry.Default = lc
	plant := lc
	plant.Model.Embedding.InputLags = [][]int{{0, 1}}
	cfg.Registry.Overrides = []online.Override{{Match: "plant", Config: plant}}
	d := mustOpen(t, cfg)
	base := "http://" + d.Addr().String()
	latest := func(want int64) []float64 { // the API's latest forecast of "web", once it was issued at want
		t.Helper()
		var means []float64
		waitFor(ctx, t, fmt.Sprintf("the API's forecast issued at t=%d", want), func() bool {
			var s SeriesSummary
			if json.Unmarshal([]byte(httpGet(t, base+"/v1/series/web")), &s) != nil || s.Latest == nil || s.Latest.T != want {
				return false
			}
			for _, st := range s.Latest.Steps {
				means = append(means, st.Mean)
			}
			return true
		})
		return means
	}
	want := latest(n)

	dataDir := t.TempDir()
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(dataDir), chromedp.WindowSize(1280, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true))
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	// Start the browser, then subscribe to its console (both from this
	// goroutine: two first uses at once would start two browsers).
	if err := chromedp.Do(bctx); err != nil {
		t.Fatal(err)
	}
	console := chromedp.Console(bctx)
	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String())
				mu.Unlock()
			}
		}
	}()
	run := func(a chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, a); err != nil {
			t.Fatal(err)
		}
	}
	// drawn waits until the page's forecast is the one issued at issued and
	// returns its means as drawn (the data the chart's points carry).
	drawn := func(issued int64) []float64 {
		t.Helper()
		var means []float64
		js := `(() => { const e = document.querySelector('#fan-mean'); return e && e.dataset.issued == ` +
			fmt.Sprint(issued) + ` ? e.dataset.mean : ''; })()`
		waitFor(ctx, t, fmt.Sprintf("the page to draw the forecast issued at t=%d", issued), func() bool {
			s, err := chromedp.Run(bctx, chromedp.Evaluate[string](js))
			if err != nil {
				t.Fatal(err)
			}
			if s == "" {
				return false
			}
			if err := json.Unmarshal([]byte(s), &means); err != nil {
				t.Fatal(err)
			}
			return true
		})
		return means
	}

	run(chromedp.Navigate(base + "/ui/series.html?id=web"))
	if got := drawn(n); !slices.Equal(got, want) {
		t.Fatalf("page draws means %v, the API has %v", got, want)
	}
	// What the chart shows: the fan's three bands with their polygons, the
	// observations and their one-step predictions as paths, the outlier.
	shape, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]int](`({
		bands: document.querySelectorAll('#main-chart g[id^="fan-"] polygon').length,
		points: document.querySelectorAll('#fan-mean circle').length,
		observed: (document.querySelector('#observed')?.getAttribute('d') || '').split('L').length,
		outliers: document.querySelectorAll('#outliers circle').length,
		legendInside: [...document.querySelectorAll('.legend')].filter(l => l.nextElementSibling?.tagName !== 'svg').length,
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if shape["bands"] != 3 || shape["points"] != len(want) || shape["observed"] != max(100, 4*len(want)) || shape["outliers"] < 1 || shape["legendInside"] != 0 {
		t.Errorf("chart: %v (want 3 bands, %d points, %d observations, an outlier, the legends above their plots)", shape, len(want), max(100, 4*len(want)))
	}
	// Offline: everything the page loaded came from the daemon.
	foreign, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`performance.getEntriesByType('resource').map(e => e.name).filter(u => !u.startsWith(location.origin + '/'))`))
	if err != nil || len(foreign) > 0 {
		t.Errorf("resources from elsewhere: %v (%v)", foreign, err)
	}
	run(chromedp.Evaluate[chromedp.Void](`window.sameDocument = true`))
	produce(n, n+1)
	want = latest(n + 1)
	if got := drawn(n + 1); !slices.Equal(got, want) {
		t.Fatalf("after the new record the page draws means %v, the API has %v", got, want)
	}
	same, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`window.sameDocument === true`))
	if err != nil || !same {
		t.Errorf("the page was reloaded to show the new forecast (%v)", err)
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(os.TempDir(), name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", path)
	}
	shot("streamd-webui-series.png")

	// The daily series: its page draws its forecast, and labels its time
	// axis with dates (its t are Unix ms), not numbers of 13 digits.
	run(chromedp.Navigate(base + "/ui/series.html?id=daily"))
	waitFor(ctx, t, "the page of the daily series to draw its forecast", func() bool {
		k, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#fan-mean circle').length`))
		if err != nil {
			t.Fatal(err)
		}
		return k > 0
	})
	labels, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#main-chart .axis text[text-anchor="middle"]:not(.axis-label)')].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	dateLabel := regexp.MustCompile(`^\d{4}(-\d{2}(-\d{2})?)?$`)
	if len(labels) < 2 || !slices.ContainsFunc(labels, dateLabel.MatchString) || slices.ContainsFunc(labels, func(l string) bool { return !dateLabel.MatchString(l) }) {
		t.Errorf("time axis of a daily series labelled %q, want dates", labels)
	}

	run(chromedp.Navigate(base + "/ui/"))
	order := func() string {
		t.Helper()
		var s string
		waitFor(ctx, t, "the overview to list the two series", func() bool {
			var err error
			s, err = chromedp.Run(bctx, chromedp.Evaluate[string](
				`[...document.querySelectorAll('#series tbody tr')].map(r => r.dataset.series).join(',')`))
			if err != nil {
				t.Fatal(err)
			}
			return strings.Count(s, ",") == 2
		})
		return s
	}
	if got := order(); got != "daily,other,web" {
		t.Errorf("overview by id: %s", got)
	}
	// The list sorted by one-step error as the API sorts it (descending
	// on the first click): "daily" has three times web's amplitude,
	// "other" twice.
	var items []SeriesSummary
	items, _, _ = d.dir.page(0, 10, false, "rmse", true)
	run(chromedp.Evaluate[chromedp.Void](`document.querySelector('th[data-sort="rmse"]').click()`))
	waitFor(ctx, t, "the overview to sort by one-step error", func() bool {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](
			`document.querySelector('th.sorted-desc')?.dataset.sort + ':' + [...document.querySelectorAll('#series tbody tr')].map(r => r.dataset.series).join(',')`))
		if err != nil {
			t.Fatal(err)
		}
		return s == "rmse:"+items[0].ID+","+items[1].ID+","+items[2].ID
	})
	shot("streamd-webui-overview.png")

	// A series with an input, started last (the overview above counts
	// three): its model's table lists the input's lags.
	var recs []sink.Record
	for i := range 40 {
		u := float64(i % 7)
		recs = append(recs, sink.Record{Key: []byte("plant"), Value: []byte(fmt.Sprintf(`{"series":"plant","t":%d,"y":%.17g,"u":[%g]}`, i+1, ys[i]+0.5*u, u))})
	}
	if err := in.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	run(chromedp.Navigate(base + "/ui/series.html?id=plant"))
	waitFor(ctx, t, "the plant's page to list its input's lags", func() bool {
		text, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#model')?.textContent || ''`))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(text, "lags of the inputs") && strings.Contains(text, "u0: 0, 1")
	})
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser console: %s", p)
	}
}

// An open event stream sends its first event at once and ends when the
// daemon closes, without holding Close up (the HTTP server's shutdown waits
// for its requests).
func TestEventStreamEndsAtClose(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	cfg := testConfig(c.ListenAddrs())
	cfg.Decoder.MaxBytes = 512
	d := mustOpen(t, cfg)
	resp, err := http.Get("http://" + d.Addr().String() + "/v1/events/series")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 256)
	k, err := resp.Body.Read(buf)
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" ||
		!strings.HasPrefix(string(buf[:k]), "event: series\ndata: {") {
		t.Fatalf("first event: %q (%v, %s)", buf[:k], err, resp.Header.Get("Content-Type"))
	}
	start := time.Now()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Close took %v with an event stream open", el)
	}
	if _, err := io.ReadAll(resp.Body); err != nil {
		t.Errorf("the stream did not end cleanly: %v", err)
	}
}

// deadlineRecorder is a ResponseWriter that records the write deadlines
// set on it (through http.ResponseController) at each write.
type deadlineRecorder struct {
	httptest.ResponseRecorder
	mu        sync.Mutex
	deadline  time.Time
	atWrites  []time.Time
	firstDone chan struct{}
}

func (r *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
	return nil
}

func (r *deadlineRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	r.atWrites = append(r.atWrites, r.deadline)
	first := len(r.atWrites) == 1
	r.mu.Unlock()
	if first {
		close(r.firstDone)
	}
	return r.ResponseRecorder.Write(b)
}

func (r *deadlineRecorder) WriteString(s string) (int, error) { return r.Write([]byte(s)) }

// Each write of an event stream has a deadline of its own, eventWriteTimeout
// ahead: a client that stops reading without closing releases its handler
// then, instead of when TCP gives up (the server's own write timeout is
// lifted for streams).
func TestEventStreamWritesHaveDeadlines(t *testing.T) {
	d := &Daemon{dir: newDirectory(), quit: make(chan struct{})}
	w := &deadlineRecorder{ResponseRecorder: *httptest.NewRecorder(), firstDone: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("GET", "/v1/events/series", nil).WithContext(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		d.serveEvents(w, req, "series", time.Millisecond, func() (any, uint64) { return []int{1}, 1 })
	}()
	select {
	case <-w.firstDone:
	case <-time.After(10 * time.Second):
		t.Fatal("no event written in 10 s")
	}
	cancel()
	<-done
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, dl := range w.atWrites {
		if dl.Before(start.Add(eventWriteTimeout)) || dl.After(time.Now().Add(eventWriteTimeout)) {
			t.Errorf("write %d: deadline %v, want eventWriteTimeout (%v) after the write", i, dl, eventWriteTimeout)
		}
	}
}
