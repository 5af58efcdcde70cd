package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/theta"
)

// sineFile writes n values of sin(2πk/period) + noise·N(0,1), one per line.
func sineFile(t *testing.T, n int, period, noise float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "%.10g\n", math.Sin(2*math.Pi*float64(k)/period)+noise*rng.NormFloat64())
	}
	return writeFile(t, "sine.dat", b.String())
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sineConfig: lags 1..4 of a sine (an exact AR(2) process, so a kernel model
// on four lags has little to learn), a small working set and warm-up to keep
// the test fast.
const sineConfig = `
model:
  lags: 4
  working_set: 30
  warmup: 200
  kernel: {type: rbf, sigma2: 8}
  gamma: 1000
  swap_interval: 10
forecast: {horizon: 10, every: 1, level: 0.95}
`

// backtestRun runs `streamd backtest args...` and returns stdout, stderr and
// the exit code main would return.
func backtestRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), append([]string{"backtest"}, args...), strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return out.String(), errb.String(), code
}

// reportJSON mirrors the report's JSON with plain types, so that the test
// checks the wire names rather than the Go structs.
type reportJSON struct {
	Protocol string         `json:"protocol"`
	Data     string         `json:"data"`
	Config   map[string]any `json:"config"`
	NTrain   int            `json:"n_train"`
	NEval    int            `json:"n_eval"`
	Metrics  struct {
		NMSE, RMSE, MAE, Coverage95, NLPD *float64
		ByHorizon                         []struct {
			H, N                              int
			NMSE, RMSE, MAE, Coverage95, NLPD *float64
		} `json:"by_horizon"`
	} `json:"metrics"`
	Timing struct {
		UpdateNsP50 int64    `json:"update_ns_p50"`
		UpdateNsP99 int64    `json:"update_ns_p99"`
		SamplesPerS *float64 `json:"samples_per_s"`
		FitMs       float64  `json:"fit_ms"`
	} `json:"timing"`
	Model map[string]any `json:"model"`
}

// backtestReport runs backtest with args and --report, fails the test on
// a non-zero exit, and returns the report and the summary.
func backtestReport(t *testing.T, args ...string) (reportJSON, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	stdout, stderr, code := backtestRun(t, append(args, "--report", path)...)
	if code != 0 {
		t.Fatalf("backtest %v: exit %d: %s", args, code, stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return readReport(t, b), stdout
}

func readReport(t *testing.T, b []byte) reportJSON {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, b)
	}
	for _, k := range []string{"protocol", "data", "config", "n_train", "n_eval", "metrics", "timing", "model"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw["metrics"], &m)
	for _, k := range []string{"nmse", "rmse", "mae", "coverage95", "nlpd", "by_horizon"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report.metrics lacks %q", k)
		}
	}
	var r reportJSON
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestBacktestPrequential(t *testing.T) {
	const n, warmup, H = 600, 200, 10
	data := sineFile(t, n, 20, 0.01)
	cfg := writeFile(t, "sine.yaml", sineConfig)
	dir := t.TempDir()
	reportPath, fcPath, plotPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "f.jsonl"), filepath.Join(dir, "p.svg")
	// Scored from the last re-choice on (model.warmup); the messages start
	// at the first fit.
	stdout, stderr, code := backtestRun(t, "--data", data, "--config", cfg, "--eval-from", fmt.Sprint(warmup+1),
		"--report", reportPath, "--forecasts", fcPath, "--plot", plotPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "prequential") || !strings.Contains(stdout, "NMSE") {
		t.Errorf("summary:\n%s", stdout)
	}
	b, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	r := readReport(t, b)
	if r.Protocol != "prequential" || r.NTrain != n || r.NEval != n-warmup {
		t.Errorf("protocol %q, n_train %d, n_eval %d", r.Protocol, r.NTrain, r.NEval)
	}
	if got := r.Config["working_set"]; got != 30.0 {
		t.Errorf("config.working_set = %v", got)
	}
	if len(r.Metrics.ByHorizon) != H {
		t.Fatalf("%d horizons, want %d", len(r.Metrics.ByHorizon), H)
	}
	for i, h := range r.Metrics.ByHorizon {
		// Step h of a forecast issued at k scores target k+h; forecasts are
		// issued from the first fit on, long before the first scored target,
		// so every target has one of each step.
		want := n - warmup
		if h.H != i+1 || h.N != want {
			t.Errorf("by_horizon[%d]: h %d n %d, want h %d n %d", i, h.H, h.N, i+1, want)
		}
		if nmse := val(h.NMSE); !(nmse < 0.1) {
			t.Errorf("h = %d: NMSE %v on a clean sine", h.H, nmse)
		}
		if c := val(h.Coverage95); !(c >= 0 && c <= 1) {
			t.Errorf("h = %d: coverage %v", h.H, c)
		}
	}
	if nmse := val(r.Metrics.ByHorizon[0].NMSE); !(nmse < 0.05) {
		t.Errorf("one-step NMSE %v on a clean sine", nmse)
	}
	if nmse := val(r.Metrics.NMSE); !(nmse < 0.1) {
		t.Errorf("pooled NMSE %v", nmse)
	}
	tm := r.Timing
	if !(tm.UpdateNsP50 > 0 && tm.UpdateNsP99 >= tm.UpdateNsP50 && val(tm.SamplesPerS) > 0 && tm.FitMs > 0) {
		t.Errorf("timing %+v", tm)
	}
	// The fit keeps at most working_set members: those whose kernel
	// function is not (to model.cutoff) in the span of the others'. A clean
	// sine's regressors lie on a closed curve, so a few may be dropped.
	kept, _ := r.Model["m"].(float64)
	if !(kept > 20 && kept <= 30) {
		t.Errorf("model %v: want 21..30 members kept of working_set 30", r.Model)
	}

	// One message per sample from the first forecast (the theta method's
	// alone, its steps the fallback's, no verdict) to the first fit (a
	// forecast, no verdict), then with the verdict; from the last re-choice
	// on with the configured working set.
	first := theta.MinValues
	msgs := readMessages(t, fcPath)
	if len(msgs) != n-first+1 {
		t.Fatalf("%d messages, want %d", len(msgs), n-first+1)
	}
	if msgs[0].T != int64(first) {
		t.Errorf("first message %+v", msgs[0])
	}
	for i, m := range msgs {
		if len(m.Steps) != H || m.Series != "sine" || (m.T >= warmup && m.Model.M != int(kept)) {
			t.Fatalf("message %d: %d steps, series %q, m %d", i, len(m.Steps), m.Series, m.Model.M)
		}
		young := m.T < online.FirstFit
		if m.T != int64(first+i) || (m.Observed != nil) != (m.T > online.FirstFit) || young != (m.Model.Kernel == "none") ||
			young && (m.Model.Combine != "theta" || slices.ContainsFunc(m.Steps, func(s sink.Step) bool { return !s.Fallback })) {
			t.Fatalf("message %d: t %d, observed %v, model %+v, step 1 %+v", i, m.T, m.Observed, m.Model, m.Steps[0])
		}
		if s := m.Steps[H-1]; s.H != H || s.T != m.T+H || !(s.Lo <= s.Mean && s.Mean <= s.Hi) {
			t.Fatalf("message %d: last step %+v", i, s)
		}
	}
	checkPlot(t, plotPath)
}

func TestBacktestEvalFrom(t *testing.T) {
	data := sineFile(t, 400, 20, 0.01)
	cfg := writeFile(t, "sine.yaml", sineConfig)
	stdout, stderr, code := backtestRun(t, "--data", data, "--config", cfg, "--eval-from", "301", "--horizon", "3", "--report", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout)) // --report - writes only the JSON
	if r.NEval != 100 || r.Metrics.ByHorizon[0].N != 100 || r.Metrics.ByHorizon[2].N != 100 {
		t.Errorf("n_eval %d, by_horizon %+v", r.NEval, r.Metrics.ByHorizon)
	}
}

func TestBacktestIterated(t *testing.T) {
	const n, train, H = 600, 500, 50
	data := sineFile(t, n, 20, 0.01)
	cfg := writeFile(t, "sine.yaml", sineConfig)
	dir := t.TempDir()
	fcPath, plotPath := filepath.Join(dir, "f.jsonl"), filepath.Join(dir, "p.png")
	stdout, stderr, code := backtestRun(t, "--data", data, "--config", cfg, "--protocol", "iterated",
		"--train", fmt.Sprint(train), "--horizon", fmt.Sprint(H), "--report", "-", "--forecasts", fcPath, "--plot", plotPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout))
	if r.Protocol != "iterated" || r.NTrain != train || r.NEval != H || len(r.Metrics.ByHorizon) != H {
		t.Errorf("protocol %q, n_train %d, n_eval %d, %d horizons", r.Protocol, r.NTrain, r.NEval, len(r.Metrics.ByHorizon))
	}
	if nmse := val(r.Metrics.NMSE); !(nmse < 0.1) {
		t.Errorf("%d-step iterated NMSE %v on a clean sine", H, nmse)
	}
	if r.Timing.UpdateNsP50 <= 0 {
		t.Errorf("timing %+v", r.Timing)
	}
	msgs := readMessages(t, fcPath)
	if len(msgs) != 1 || len(msgs[0].Steps) != H || msgs[0].T != train || msgs[0].Observed != nil {
		t.Fatalf("messages %+v", msgs)
	}
	if s := msgs[0].Steps; s[0].T != train+1 || s[H-1].T != train+H {
		t.Errorf("step times %d..%d", s[0].T, s[H-1].T)
	}
	checkPlot(t, plotPath)
}

// TestBacktestIteratedUsesFutureInputs: a static regression y = sinc(x) on
// the current input only. Its forecast is only good if the true future inputs
// of the file are used (holding the last input would give NMSE ≈ 1 or worse).
func TestBacktestIteratedUsesFutureInputs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("time,x,y\n")
	for k := range 400 {
		x := -10 + 20*rng.Float64()
		fmt.Fprintf(&b, "%d,%.10g,%.10g\n", 1000+5*k, x, sinc(x)+0.01*rng.NormFloat64())
	}
	data := writeFile(t, "sinc.csv", b.String())
	cfg := writeFile(t, "sinc.yaml", `
model: {lags: 0, inputs: 1, input_lags: [0], working_set: 20, warmup: 300, kernel: {sigma2: 1}, gamma: 1000}
`)
	stdout, stderr, code := backtestRun(t, "--data", data, "--config", cfg, "--column", "y", "--inputs", "1",
		"--time", "time", "--protocol", "iterated", "--train", "350", "--horizon", "50", "--report", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout))
	if nmse := val(r.Metrics.NMSE); !(nmse < 0.1) {
		t.Errorf("static sinc NMSE %v with the true future inputs", nmse)
	}
	if r.Config["inputs"] != 1.0 {
		t.Errorf("config %v", r.Config)
	}
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(x) / x
}

func TestBacktestUsageErrors(t *testing.T) {
	data := sineFile(t, 300, 20, 0.01)
	cfg := writeFile(t, "sine.yaml", sineConfig)
	bad := writeFile(t, "bad.yaml", "model: {working_set: 1}\n")
	csvData := writeFile(t, "two.csv", "a,b\n1,2\n")
	shortData := sineFile(t, 5, 20, 0.01) // below the first young forecast's first scored step
	oneStepOnly := sineFile(t, online.FirstFit, 20, 0.01)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no data", nil, 2, "--data"},
		{"unknown flag", []string{"--dat", data}, 2, "dat"},
		{"stray argument", []string{"--data", data, "extra"}, 2, "extra"},
		{"bad protocol", []string{"--data", data, "--protocol", "batch"}, 2, "batch"},
		{"train with prequential", []string{"--data", data, "--train", "100"}, 2, "--train"},
		{"eval-from with iterated", []string{"--data", data, "--protocol", "iterated", "--eval-from", "5"}, 2, "--eval-from"},
		{"eval-from before the first target", []string{"--data", data, "--config", cfg, "--eval-from", "5"}, 2, "--eval-from 5 is too early"},
		{"eval-from beyond the data", []string{"--data", data, "--eval-from", "301"}, 2, "beyond the 300 values"},
		{"horizon beyond the data", []string{"--data", data, "--protocol", "iterated", "--horizon", "300"}, 2, "--horizon 300 is not below the 300 values"},
		{"plot type", []string{"--data", data, "--plot", "out.gif"}, 2, ".svg"},
		{"train beyond the data", []string{"--data", data, "--config", cfg, "--protocol", "iterated", "--train", "301"}, 2, "exceeds"},
		{"train too short to forecast", []string{"--data", data, "--config", cfg, "--protocol", "iterated", "--train", "3"}, 2, "too short"},
		{"tune needs three horizons", []string{"--data", data, "--protocol", "iterated", "--train", "50", "--horizon", "20", "--tune"}, 2, "3·horizon"},
		{"tune is for iterated", []string{"--data", data, "--tune"}, 2, "--tune applies"},
		{"inputs without a model input", []string{"--data", csvData, "--column", "a", "--inputs", "b"}, 2, "model.inputs"},
		{"ambiguous column", []string{"--data", csvData}, 2, "--column"},
		{"no such column", []string{"--data", csvData, "--column", "c"}, 2, "no such column"},
		{"missing file", []string{"--data", filepath.Join(t.TempDir(), "none.dat")}, 1, "none.dat"},
		{"invalid config", []string{"--data", data, "--config", bad}, 1, "model.working_set: must be auto or in [2, 4096] (got 1)"},
		{"too little data", []string{"--data", shortData}, 1, "has 5 values: a young series' forecasts start on its 4th value"},
		{"too little for one step", []string{"--data", oneStepOnly, "--horizon", "1"}, 1, "has 16 values: a series' one-step predictions start at its first fit, on 16"},
		{"help", []string{"-h"}, 0, "-protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := backtestRun(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q does not contain %q; stdout %q", code, tc.code, stderr, tc.want, stdout)
			}
		})
	}
	// A series shorter than its first fit is scored on its young
	// forecasts' steps h ≥ 2, from the 6th value: the first forecast
	// follows the 4th.
	stdout, stderr, code := backtestRun(t, "--data", oneStepOnly)
	if code != 0 || !strings.Contains(stdout, "targets 6.. scored (11)") || !regexp.MustCompile(`(?m)^  h = 2 +11 `).MatchString(stdout) {
		t.Errorf("16 values, default horizon: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func readMessages(t *testing.T, path string) []sink.Message {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var msgs []sink.Message
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m sink.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d: %v", len(msgs)+1, err)
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

func checkPlot(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(path) {
	case ".svg":
		if !bytes.HasPrefix(b, []byte("<?xml")) && !bytes.HasPrefix(b, []byte("<svg")) {
			t.Errorf("%s does not start like SVG: %q", path, b[:min(len(b), 20)])
		}
	case ".png":
		if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s lacks the PNG magic", path)
		}
	}
	if len(b) < 1000 {
		t.Errorf("%s has only %d bytes", path, len(b))
	}
}

// TestBacktestStdin reads the series from standard input (--data -).
func TestBacktestStdin(t *testing.T) {
	b, err := os.ReadFile(sineFile(t, 300, 20, 0.01))
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "sine.yaml", sineConfig)
	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"backtest", "--data", "-", "--config", cfg, "--report", "-"},
		bytes.NewReader(b), &out, &errb)
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if r := readReport(t, out.Bytes()); r.NEval != 300-online.FirstFit || r.Data != "-" {
		t.Errorf("n_eval %d, data %q", r.NEval, r.Data)
	}
}

// TestBacktestCancel: an interrupted run stops with the context's error.
func TestBacktestCancel(t *testing.T) {
	data := sineFile(t, 300, 20, 0.01)
	cfg := writeFile(t, "sine.yaml", sineConfig)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"backtest", "--data", data, "--config", cfg}, nil, &out, &errb)
	if !errors.Is(err, context.Canceled) || exitCode(err, &errb) != 1 {
		t.Errorf("got %v", err)
	}
}

// TestBacktestTruthColumn: --truth scores against another column while the
// model learns y. y is a sine plus noise of std 0.3, truth the sine: one-step
// errors against y include the noise, against the truth they do not.
func TestBacktestTruthColumn(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("y,truth\n")
	for k := range 400 {
		v := math.Sin(2 * math.Pi * float64(k) / 20)
		fmt.Fprintf(&b, "%.10g,%.10g\n", v+0.3*rng.NormFloat64(), v)
	}
	data := writeFile(t, "noisy.csv", b.String())
	cfg := writeFile(t, "sine.yaml", sineConfig)
	score := func(extra ...string) reportJSON {
		args := append([]string{"--data", data, "--column", "y", "--config", cfg, "--eval-from", "201", "--report", "-"}, extra...)
		stdout, stderr, code := backtestRun(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return readReport(t, []byte(stdout))
	}
	noisy, clean := score(), score("--truth", "truth")
	// The noise of y is independent of the prediction made before it, so
	// RMSE²(against y) ≈ RMSE²(against truth) + 0.3². Tolerance 0.03: the
	// mean of 200 squared N(0, 0.3²) draws has std 0.09·√(2/200) = 0.009.
	rn, rc := val(noisy.Metrics.ByHorizon[0].RMSE), val(clean.Metrics.ByHorizon[0].RMSE)
	if d := rn*rn - rc*rc - 0.09; !(rc < rn) || math.Abs(d) > 0.03 {
		t.Errorf("h=1 RMSE against y %g, against truth %g: RMSE² gap %g, want 0.09", rn, rc, rn*rn-rc*rc)
	}
	if _, stderr, code := backtestRun(t, "--data", data, "--column", "y", "--truth", "nope", "--config", cfg); code != 2 {
		t.Errorf("unknown --truth column: exit %d (%s)", code, stderr)
	}
}

// A report whose model holds non-finite numbers (the entropy of a linear
// kernel's working set, a log of a sum that can be zero) is still written:
// every such field is null, every other one as it is.
func TestBacktestReportNonFiniteIsNull(t *testing.T) {
	rep := &report{Protocol: "iterated", Data: "x.csv"}
	rep.Config.Level, rep.Config.Gamma = 0.95, jsonFloat(math.Inf(1))
	rep.Model = modelReport{M: 3, Kernel: "linear", Gamma: 2, Entropy: jsonFloat(math.NaN()), SamplesWeight: jsonFloat(math.Inf(-1)), DEff: 1.5}
	rep.Timing.FitMs = jsonFloat(math.Inf(1))
	rep.Metrics.metrics = (&score{}).metrics()
	var out bytes.Buffer
	if err := (&backtestCommand{reportPath: "-"}).writeReport(rep, &out); err != nil {
		t.Fatalf("writeReport: %v", err)
	}
	var got struct {
		Config struct{ Gamma, Level *float64 }
		Model  struct {
			Entropy       *float64
			DEff          *float64 `json:"d_eff"`
			SamplesWeight *float64 `json:"samples_weight"`
		}
		Timing struct {
			FitMs *float64 `json:"fit_ms"`
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v in %s", err, out.String())
	}
	if got.Model.Entropy != nil || got.Model.SamplesWeight != nil || got.Timing.FitMs != nil || got.Config.Gamma != nil {
		t.Errorf("non-finite fields not null: %s", out.String())
	}
	if got.Model.DEff == nil || *got.Model.DEff != 1.5 || got.Config.Level == nil || *got.Config.Level != 0.95 {
		t.Errorf("finite fields changed: %s", out.String())
	}
}

// A missing value is a gap: an iterated forecast over it scores the other
// steps, each against the sample at its own t (the same figures as the
// complete file's for those steps), and a prequential run scores every
// forecast step whose t has a sample; with planned inputs a gap among the
// forecast's rows is an error that names it.
func TestBacktestMissingValues(t *testing.T) {
	const n, train, H = 120, 100, 10
	var full, gappy strings.Builder
	for k := range n {
		v := fmt.Sprintf("%.10g\n", 10+math.Sin(2*math.Pi*float64(k)/12))
		full.WriteString(v)
		if k == train+3 { // step 4's target
			v = "NA\n"
		}
		gappy.WriteString(v)
	}
	args := []string{"--protocol", "iterated", "--train", fmt.Sprint(train), "--horizon", fmt.Sprint(H), "--report", "-"}
	stdout, stderr, code := backtestRun(t, append([]string{"--data", writeFile(t, "gappy.dat", gappy.String())}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	g := readReport(t, []byte(stdout))
	stdout, _, _ = backtestRun(t, append([]string{"--data", writeFile(t, "full.dat", full.String())}, args...)...)
	f := readReport(t, []byte(stdout))
	for h := range H {
		gh, fh := g.Metrics.ByHorizon[h], f.Metrics.ByHorizon[h]
		if h == 3 {
			if gh.N != 0 {
				t.Errorf("step 4, its value missing: %d scored", gh.N)
			}
			continue
		}
		if gh.N != 1 || val(gh.MAE) != val(fh.MAE) {
			t.Errorf("step %d: %d scored, MAE %v against the complete file's %v", h+1, gh.N, val(gh.MAE), val(fh.MAE))
		}
	}
	stdout, stderr, code = backtestRun(t, "--data", writeFile(t, "gappy.dat", gappy.String()), "--horizon", "3", "--report", "-")
	if code != 0 {
		t.Fatalf("prequential: exit %d: %s", code, stderr)
	}
	// No forecast is issued at the gap, and the value after it, predicted
	// two steps ahead, is scored by the forecast issued before the gap
	// (h = 2), not again as a one-step prediction: as many one-step as
	// two-step targets.
	if p := readReport(t, []byte(stdout)); p.Metrics.ByHorizon[1].N != p.Metrics.ByHorizon[0].N {
		t.Errorf("prequential: %d one-step and %d two-step targets, want as many", p.Metrics.ByHorizon[0].N, p.Metrics.ByHorizon[1].N)
	}
	var csv strings.Builder
	csv.WriteString("t,y,u\n")
	for k := range n {
		y := fmt.Sprintf("%.10g", 10+math.Sin(2*math.Pi*float64(k)/12))
		if k == train+3 {
			y = ""
		}
		fmt.Fprintf(&csv, "%d,%s,%g\n", k+1, y, math.Cos(float64(k)))
	}
	cfg := writeFile(t, "u.yaml", "model: {inputs: 1, input_lags: [0], planned_inputs: [0]}\n")
	_, stderr, code = backtestRun(t, "--data", writeFile(t, "u.csv", csv.String()), "--time", "t", "--column", "y", "--inputs", "u",
		"--config", cfg, "--protocol", "iterated", "--train", fmt.Sprint(train), "--horizon", fmt.Sprint(H))
	if code == 0 || !strings.Contains(stderr, "none missing") {
		t.Errorf("inputs over a gap: exit %d, %s", code, stderr)
	}
}

// TestBacktestPlannedRows: every record's forecast takes its planned
// inputs from the rows that follow it, as a producer that knows them sends
// them (Observation.Future), so that a prequential backtest scores what the
// daemon publishes for such records. With y = 3u + noise and u white
// noise, a step's forecast is good only with its own u: held at the last
// value, its error would be about the series' whole spread (NMSE ≈ 1);
// with u, about the noise's (0.05² against 3²·1 + 0.05²: NMSE 3e-4). The
// bound 0.05 lies far between the two.
func TestBacktestPlannedRows(t *testing.T) {
	const n, H = 400, 3
	rng := rand.New(rand.NewPCG(4, 4))
	var csv strings.Builder
	csv.WriteString("t,y,u\n")
	for k := range n {
		u := rng.NormFloat64()
		fmt.Fprintf(&csv, "%d,%.10g,%.10g\n", k+1, 3*u+0.05*rng.NormFloat64(), u)
	}
	cfg := writeFile(t, "u.yaml", "model: {inputs: 1, input_lags: [0], planned_inputs: [0], lags: [1], combine: none}\n")
	stdout, stderr, code := backtestRun(t, "--data", writeFile(t, "u.csv", csv.String()), "--time", "t", "--column", "y", "--inputs", "u",
		"--config", cfg, "--horizon", fmt.Sprint(H), "--eval-from", "201", "--report", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout))
	for _, h := range r.Metrics.ByHorizon {
		if nmse := val(h.NMSE); !(nmse < 0.05) || h.N < 190 {
			t.Errorf("step %d: NMSE %v over %d targets, want < 0.05 (the planned u used)", h.H, nmse, h.N)
		}
	}
}

// TestBacktestBusinessDays: a series dated Monday to Friday with a planned
// input steps from Friday to Monday, so that every forecast step lands on
// a row of the file: the iterated forecast takes its planned inputs from
// the rows that follow (the build before refused it, its step 1 a
// Saturday), the prequential run scores every step of every forecast
// (before, the steps dated on weekends had no value), and the report and
// summary name the days off. Dates before 1973 are times too, though
// their milliseconds are below 1e11, where no size tells a time from a
// sequence number.
func TestBacktestBusinessDays(t *testing.T) {
	for _, start := range []time.Time{time.Date(2023, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(1962, 1, 1, 0, 0, 0, 0, time.UTC)} {
		t.Run(start.Format(time.DateOnly), func(t *testing.T) { testBusinessDays(t, start) })
	}
}

func testBusinessDays(t *testing.T, start time.Time) {
	const n, H = 400, 3
	rng := rand.New(rand.NewPCG(5, 4))
	var csv strings.Builder
	csv.WriteString("date,y,u\n")
	for d, k := start, 0; k < n; d = d.AddDate(0, 0, 1) {
		if d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
			continue
		}
		u := rng.NormFloat64()
		fmt.Fprintf(&csv, "%s,%.10g,%.10g\n", d.Format(time.DateOnly), 3*u+0.05*rng.NormFloat64(), u)
		k++
	}
	data := writeFile(t, "bd.csv", csv.String())
	cfg := writeFile(t, "u.yaml", "model: {inputs: 1, input_lags: [0], planned_inputs: [0], lags: [1], combine: none}\n")
	common := []string{"--data", data, "--time", "date", "--column", "y", "--inputs", "u", "--config", cfg, "--horizon", fmt.Sprint(H)}
	stdout, stderr, code := backtestRun(t, append(common, "--protocol", "iterated", "--train", "300", "--report", "-")...)
	if code != 0 {
		t.Fatalf("iterated: exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout))
	if nmse := val(r.Metrics.NMSE); r.NEval != H || !(nmse < 0.05) {
		t.Errorf("iterated: %d steps scored, NMSE %v; want %d, < 0.05 (the planned u used)", r.NEval, nmse, H)
	}
	if got := fmt.Sprint(r.Model["days_off"]); got != "[Saturday Sunday]" {
		t.Errorf("report's model.days_off %s, want [Saturday Sunday]", got)
	}
	stdout, stderr, code = backtestRun(t, append(common, "--eval-from", "201")...)
	if code != 0 {
		t.Fatalf("prequential: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "days off (no values, not steps): Saturday, Sunday") {
		t.Errorf("summary does not name the days off:\n%s", stdout)
	}
	stdout, _, _ = backtestRun(t, append(common, "--eval-from", "201", "--report", "-")...)
	for _, h := range readReport(t, []byte(stdout)).Metrics.ByHorizon {
		if nmse := val(h.NMSE); !(nmse < 0.05) || h.N < 200-h.H {
			t.Errorf("step %d: NMSE %v over %d targets, want < 0.05 over %d (every forecast's step scored)", h.H, nmse, h.N, 200-h.H)
		}
	}
}

// TestBacktestBusinessHours: hourly values from 09:00 to 16:00 on working
// days: the report names the working day's steps and the summary says so,
// and every step of every forecast lands on a value (before, the steps
// dated at night had none: h = 8 was never scored).
func TestBacktestBusinessHours(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 4))
	var csv strings.Builder
	csv.WriteString("t,y\n")
	for tm, k := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), 0; k < 400; tm = tm.Add(time.Hour) {
		if wd := tm.Weekday(); wd == time.Saturday || wd == time.Sunday || tm.Hour() < 9 || tm.Hour() > 16 {
			continue
		}
		fmt.Fprintf(&csv, "%s,%.6g\n", tm.Format(time.RFC3339), 50+8*math.Sin(2*math.Pi*float64(tm.Hour()-9)/8)+rng.NormFloat64())
		k++
	}
	data := writeFile(t, "bh.csv", csv.String())
	r, stdout := backtestReport(t, "--data", data, "--time", "t", "--column", "y", "--horizon", "8", "--eval-from", "300")
	if got := fmt.Sprint(r.Model["working_steps"]); got != "[09:00 10:00 11:00 12:00 13:00 14:00 15:00 16:00]" {
		t.Errorf("report's model.working_steps %s", got)
	}
	for _, h := range r.Metrics.ByHorizon { // found at the re-choice at 256
		if h.N < 100-h.H {
			t.Errorf("step %d: %d targets scored, want %d (every forecast's)", h.H, h.N, 100-h.H)
		}
	}
	if !strings.Contains(stdout, "a working day's steps (the others have no values, and are not steps): 8, 09:00 to 16:00") {
		t.Errorf("summary does not name the working hours:\n%s", stdout)
	}
}

// TestSummaryNamesGammaAtItsBound: the backtest summary says when an
// inferred γ sits at a bound of its search (narx.GammaAtBound), floor or
// ceiling, and not for an interior γ nor for a configured one.
func TestSummaryNamesGammaAtItsBound(t *testing.T) {
	for _, tc := range []struct {
		gamma float64
		auto  bool
		want  string // "" for no such line
	}{
		{1e-6, true, "γ at its search bound (1e-06): the lags carry nothing the ridge keeps"},
		{1e10, true, "γ at its search bound (1e+10): the fit interpolates its samples"},
		{37, true, ""},
		{1e-6, false, ""},
	} {
		r := &report{Protocol: "prequential", Data: "x.txt"}
		r.Config.GammaAuto = tc.auto
		r.Model = modelReport{Kernel: "rbf", Form: "none", M: 10, Rank: 10, Gamma: jsonFloat(tc.gamma)}
		var b strings.Builder
		if err := r.summary(&b); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if has := strings.Contains(got, "search bound"); tc.want == "" && has || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("γ = %g (auto %v): summary\n%s\nwant the line %q", tc.gamma, tc.auto, got, tc.want)
		}
	}
}

// TestBacktestJitteredTimes: hourly values logged up to two seconds either
// side of the hour, with a planned input. Every forecast step is on the
// hour (the grid), every step h of every forecast is scored against the
// value logged nearest its hour, and the iterated protocol reads the
// planned rows of the jittered times as the steps'. Before the grid the
// step was the median difference (3 600 0xx ms), the steps drifted off the
// hour, no step h ≥ 2 met a value's exact time and none was scored, and the
// iterated run refused the rows.
func TestBacktestJitteredTimes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	var csv, exact strings.Builder
	csv.WriteString("t,u,y\n")
	exact.WriteString("t,u,y\n")
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for k := range 400 {
		tm := start.Add(time.Duration(k) * time.Hour)
		jittered := tm.Add(time.Duration(rng.IntN(4001)-2000) * time.Millisecond)
		u := float64(k % 5)
		y := 50 + 8*math.Sin(2*math.Pi*float64(k)/24) + 2*u + 0.5*rng.NormFloat64()
		fmt.Fprintf(&csv, "%s,%g,%.6g\n", jittered.Format("2006-01-02T15:04:05.000Z07:00"), u, y)
		fmt.Fprintf(&exact, "%s,%g,%.6g\n", tm.Format(time.RFC3339), u, y)
	}
	data := writeFile(t, "jitter.csv", csv.String())
	// From the first values on (the young series' forecasts scored too),
	// the jittered times score as many steps as the exact ones.
	counts := func(file string) []int {
		r, _ := backtestReport(t, "--data", file, "--time", "t", "--column", "y", "--horizon", "6")
		var n []int
		for _, h := range r.Metrics.ByHorizon {
			n = append(n, h.N)
		}
		return n
	}
	if got, want := counts(data), counts(writeFile(t, "exact.csv", exact.String())); !slices.Equal(got, want) {
		t.Errorf("steps scored by horizon: %v with jitter, %v at exact times", got, want)
	}
	cfg := writeFile(t, "jitter.yaml", "model:\n  inputs: 1\n  input_lags: [0]\n  planned_inputs: [0]\n")
	fc := filepath.Join(t.TempDir(), "fc.jsonl")
	r, _ := backtestReport(t, "--data", data, "--time", "t", "--column", "y", "--inputs", "u", "--config", cfg,
		"--horizon", "6", "--eval-from", "300", "--forecasts", fc)
	for _, h := range r.Metrics.ByHorizon {
		if want := 101; h.N != want { // targets 300..400, each by the forecast h before it
			t.Errorf("step %d: %d targets scored, want %d (every forecast's)", h.H, h.N, want)
		}
	}
	msgs, err := os.ReadFile(fc)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(msgs)), "\n") {
		var m struct {
			Steps []struct{ T int64 } `json:"steps"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for _, st := range m.Steps {
			if st.T%int64(time.Hour/time.Millisecond) != 0 {
				t.Fatalf("a forecast step at %s, not on the hour", time.UnixMilli(st.T).UTC())
			}
		}
	}
	for _, train := range []string{"12", "350"} { // before the first fit, and after
		if _, stderr, code := backtestRun(t, "--data", data, "--time", "t", "--column", "y", "--inputs", "u", "--config", cfg,
			"--protocol", "iterated", "--train", train, "--horizon", "24"); code != 0 {
			t.Errorf("iterated from %s values: exit %d: %s", train, code, stderr)
		}
	}
}

// The summary's coverage column is of the [lo, hi] band, at
// forecast.level: named for that level, and near it for a well-calibrated
// model (a noisy sine's one-step band at 50 %: within 0.1 of 0.5, the
// standard error of a share of about 300 targets being 0.03).
func TestBacktestCoverageAtTheLevel(t *testing.T) {
	var b strings.Builder
	for k := range 400 {
		fmt.Fprintf(&b, "%.6f\n", math.Sin(float64(k)/5)+0.1*math.Sin(float64(k)*7.3)*math.Cos(float64(k)*3.1))
	}
	cfg := writeFile(t, "level.yaml", "forecast: {horizon: 1, level: 0.5}\n")
	stdout, stderr, code := backtestRun(t, "--data", writeFile(t, "s.dat", b.String()), "--config", cfg, "--report", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := readReport(t, []byte(stdout))
	if c := val(r.Metrics.Coverage95); !(math.Abs(c-0.5) < 0.1) {
		t.Errorf("coverage of the 50 %% band %v", c)
	}
	stdout, _, _ = backtestRun(t, "--data", writeFile(t, "s.dat", b.String()), "--config", cfg)
	if !strings.Contains(stdout, "cover50") || strings.Contains(stdout, "cover95") {
		t.Errorf("summary's coverage column not named for the level:\n%s", stdout)
	}
}

// Integer times that look like the other unit's are read as configured,
// with a warning that says which unit they look like (calendar.UnitHint):
// hourly epoch seconds with model.time_unit ms would be 3.6 s apart in
// January 1970.
func TestBacktestWarnsOfAnUnlikelyTimeUnit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("t,y\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%d,%g\n", 1_704_067_200+3600*i, 10+math.Sin(float64(i)/4))
	}
	data := filepath.Join(dir, "s.csv")
	cfg := filepath.Join(dir, "ms.yaml")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for unit, want := range map[string]string{"ms": "set model.time_unit: s", "s": "", "sequence": ""} {
		if err := os.WriteFile(cfg, []byte("model: {time_unit: "+unit+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := backtestRun(t, "--data", data, "--time", "t", "--column", "y", "--config", cfg, "--horizon", "1")
		if code != 0 || (want == "") != !strings.Contains(stderr, "warning") || !strings.Contains(stderr, want) {
			t.Errorf("time_unit %s: exit %d, stderr %q; want a warning %q", unit, code, stderr, want)
		}
	}
	// Unix milliseconds read as sequence numbers (the default unit) have no
	// calendar: the warning says how to give them one.
	b.Reset()
	b.WriteString("t,y\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%d,%g\n", 1_704_067_200_000+3_600_000*i, 10+math.Sin(float64(i)/4))
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := backtestRun(t, "--data", data, "--time", "t", "--column", "y", "--horizon", "1")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "set model.time_unit: ms") {
		t.Errorf("Unix milliseconds as sequence numbers: exit %d, stderr %q; want a warning to set model.time_unit: ms", code, stderr)
	}
}

// A young series' forecast (before its first fit at 16 values) is scored
// with its steps' Student's t of ν = model.theta.df at scale std, the
// distribution its band is the quantiles of (lo, hi = mean ∓ t_ν·std):
// the report's NLPD is the mean of −log of that density over the targets,
// recomputed here from the message with distuv (1e-12 relative: a few
// roundings in sums of four terms), and differs from the normal's.
func TestBacktestScoresYoungStepsByTheirT(t *testing.T) {
	y := []float64{10, 12, 11, 13, 12, 14, 13, 15, 11, 16, 12, 17}
	var b strings.Builder
	for _, v := range y {
		fmt.Fprintf(&b, "%g\n", v)
	}
	data := writeFile(t, "young.dat", b.String())
	const train, H = 8, 4
	fcPath := filepath.Join(t.TempDir(), "f.jsonl")
	r, _ := backtestReport(t, "--data", data, "--protocol", "iterated", "--train", fmt.Sprint(train), "--horizon", fmt.Sprint(H), "--forecasts", fcPath)
	msgs := readMessages(t, fcPath)
	if len(msgs) != 1 || msgs[0].Model.Kernel != "none" || msgs[0].Model.Theta == nil || len(msgs[0].Steps) != H {
		t.Fatalf("messages %+v", msgs)
	}
	nu := msgs[0].Model.Theta.DF
	if nu != train-2 {
		t.Fatalf("model.theta.df %v, want n − 2 = %d", nu, train-2)
	}
	var tNLPD, normNLPD float64
	for i, st := range msgs[0].Steps {
		if !st.Fallback {
			t.Fatalf("step %d of a young forecast is not flagged fallback", i+1)
		}
		q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nu}.Quantile(0.975)
		if math.Abs(st.Hi-(st.Mean+q*st.Std)) > 1e-9*q*st.Std {
			t.Fatalf("step %d: hi %v, want mean + t·std = %v", i+1, st.Hi, st.Mean+q*st.Std)
		}
		tNLPD -= distuv.StudentsT{Mu: st.Mean, Sigma: st.Std, Nu: nu}.LogProb(y[train+i])
		normNLPD -= distuv.Normal{Mu: st.Mean, Sigma: st.Std}.LogProb(y[train+i])
	}
	tNLPD, normNLPD = tNLPD/H, normNLPD/H
	if got := val(r.Metrics.NLPD); math.Abs(got-tNLPD) > 1e-12*math.Abs(tNLPD) || math.Abs(tNLPD-normNLPD) < 1e-3 {
		t.Errorf("NLPD %v, want the t's %v (the normal's %v)", got, tNLPD, normNLPD)
	}
}
