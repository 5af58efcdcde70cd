package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"
	"gonum.org/v1/plot/plotter"

	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
)

// backtestCommand runs a file through the Learner the daemon uses and scores
// its forecasts.
type backtestCommand struct {
	data, config, protocol      string
	column, inputs, timeColumn  string
	truthColumn                 string
	train, horizon, evalFrom    int
	forecasts, reportPath, plot string
	cpuProfile                  string
	tune                        bool
}

const backtestUsage = `Usage: streamd backtest --data FILE [flags]

Runs the values of FILE, in order, through the same Learner the daemon runs and
scores its forecasts.

Protocols:
  prequential  every value is first predicted, then learned. Each one-step
               prediction (h = 1) and each step h of every issued forecast is
               scored against the true value when the file has it (the
               value nearest the step's time, within half a step); targets
               from --eval-from on count (by default the first after the
               first fit; the steps at h ≥ 2 of a young series' forecasts,
               the theta method's from its 4th value, count too, and a
               series shorter than its first fit is scored on them alone,
               from its 6th value).
  iterated     learn the first --train values, then forecast the next
               --horizon values from there without seeing them (true future
               inputs are supplied when the model has inputs); score that one
               forecast.

Without --tune the Learner runs exactly as the daemon would run it with the
same configuration (the built-in defaults without --config): what a backtest
scores is what the daemon would have published. --tune (iterated only) is a
batch search instead: the structure is chosen once, on all --train values, a
working set of min(600, 3/5 of them), lag orders ranked by --horizon-step
iterated validation in the series as it is (transform and difference auto
become none and 0); the daemon never runs that.

FILE holds one value per line, or is a CSV file with a header line, from
which --column picks y, --inputs the exogenous inputs and --time the time
(columns by name or 0-based index). '-' reads standard input. A missing y
(NA, NaN, null, or an empty CSV cell before the last value, a blank line
in a one-column CSV) is a gap in t, as a record that never came; a forecast
step over it is not scored. A UTF-8 byte-order mark is ignored.

Flags:
`

func (c *backtestCommand) flags(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("backtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.data, "data", "", "the series `FILE` (required)")
	fs.StringVar(&c.config, "config", "", "YAML configuration `FILE` (model and forecast sections; default: built-in defaults)")
	fs.StringVar(&c.protocol, "protocol", "prequential", "`NAME` of the protocol: prequential or iterated")
	fs.StringVar(&c.column, "column", "", "CSV column of y: `NAME|INDEX` (default: the only column not used otherwise)")
	fs.StringVar(&c.inputs, "inputs", "", "CSV columns of the exogenous inputs, comma-separated `COLS`")
	fs.StringVar(&c.timeColumn, "time", "", "CSV column of the time `COL` (integer, RFC 3339, date or month YYYY-MM; default: the sample number)")
	fs.StringVar(&c.truthColumn, "truth", "", "CSV column `COL` to score against instead of y (e.g. the clean signal behind contaminated observations); the model still learns y")
	fs.IntVar(&c.train, "train", 0, "iterated: learn the first `N` values, missing ones not counted (default: all but the last --horizon)")
	fs.IntVar(&c.horizon, "horizon", 0, "forecast horizon `H` (default: forecast.horizon of the configuration)")
	fs.IntVar(&c.evalFrom, "eval-from", 0, "prequential: 1-based index `K` of the first scored target among the values present, missing ones not counted (default: the first after the first fit)")
	fs.StringVar(&c.forecasts, "forecasts", "", "write the forecast messages to `OUT.jsonl`, one per line")
	fs.StringVar(&c.reportPath, "report", "", "write the JSON report to `OUT.json` ('-': standard output, instead of the summary); a number that is not finite is null")
	fs.StringVar(&c.plot, "plot", "", "draw actual vs forecast with its band to `OUT.svg|OUT.png|OUT.pdf`")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `OUT.pprof` (go tool pprof)")
	fs.BoolVar(&c.tune, "tune", false, "iterated: choose the structure by a batch search on the training values (not what the daemon runs)")
	fs.Usage = func() {
		fmt.Fprint(stderr, backtestUsage)
		fs.PrintDefaults()
	}
	return fs
}

func (c *backtestCommand) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := c.flags(stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err := c.checkFlags(set); err != nil {
		return err
	}
	cfg := DefaultConfig()
	if c.config != "" {
		var err error
		if cfg, err = LoadConfig(c.config); err != nil {
			return err
		}
	}
	if set["horizon"] {
		cfg.Forecast.Horizon = c.horizon
	}
	s, err := c.readData(stdin, stderr, &cfg.Model)
	if err != nil {
		return err
	}
	bt, err := c.plan(cfg, s, set, stderr)
	if err != nil {
		return err
	}
	defer bt.prog.done()
	if c.forecasts != "" {
		if bt.out, err = sink.CreateJSONL(c.forecasts); err != nil {
			return err
		}
		defer bt.out.Close()
	}
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rep *report
	if c.protocol == "iterated" {
		rep, err = bt.iterated(ctx)
	} else {
		rep, err = bt.prequential(ctx)
	}
	if err != nil {
		return err
	}
	rep.Data = c.data
	if bt.out != nil {
		if err := bt.out.Close(); err != nil {
			return fmt.Errorf("--forecasts %s: %w", c.forecasts, err)
		}
	}
	if c.plot != "" {
		title := fmt.Sprintf("%s — %s", filepath.Base(c.data), c.protocol)
		if err := backtestPlot(title, bt, rep).save(c.plot); err != nil {
			return fmt.Errorf("--plot %s: %w", c.plot, err)
		}
	}
	return c.writeReport(rep, stdout)
}

// checkFlags reports a usage error in the flags that were set.
func (c *backtestCommand) checkFlags(set map[string]bool) error {
	switch {
	case c.data == "":
		return usageErrorf("backtest: --data is required")
	case c.protocol != "prequential" && c.protocol != "iterated":
		return usageErrorf("backtest: --protocol must be prequential or iterated (got %q)", c.protocol)
	case set["train"] && c.protocol != "iterated":
		return usageErrorf("backtest: --train applies to --protocol iterated")
	case set["eval-from"] && c.protocol != "prequential":
		return usageErrorf("backtest: --eval-from applies to --protocol prequential")
	case c.tune && c.protocol != "iterated":
		return usageErrorf("backtest: --tune applies to --protocol iterated")
	case set["train"] && c.train < 1:
		return usageErrorf("backtest: --train must be ≥ 1 (got %d)", c.train)
	case set["horizon"] && c.horizon < 0:
		return usageErrorf("backtest: --horizon must be ≥ 0 (got %d)", c.horizon)
	case set["eval-from"] && c.evalFrom < 1:
		return usageErrorf("backtest: --eval-from must be ≥ 1 (got %d)", c.evalFrom)
	case c.plot != "":
		return checkPlotPath(c.plot)
	}
	return nil
}

// iteratedWorkingSet caps M for an iterated backtest with --tune: on the
// Santa Fe laser the iterated error keeps falling up to M ≈ 600 of 1000
// training points and is flat beyond.
const iteratedWorkingSet = 600

// plan checks that the protocol can run on s with cfg and returns the run.
func (c *backtestCommand) plan(cfg Config, s *series, set map[string]bool, stderr io.Writer) (*backtest, error) {
	if s.nu != cfg.Model.Inputs {
		return nil, usageErrorf("backtest: the model has %d exogenous inputs (model.inputs) but --inputs names %d columns", cfg.Model.Inputs, s.nu)
	}
	bt := &backtest{
		cfg:    cfg.Model.Learner(cfg.Forecast, cfg.Robust),
		scale:  cfg.Model.Scale,
		s:      s,
		series: seriesName(c.data),
		prog:   newProgress(stderr, s.len()),
	}
	// The Learner's first fit: the first target it can predict follows it.
	first, H, n := bt.cfg.FirstFitAt(), bt.cfg.Horizon, s.len()
	if c.protocol == "prequential" {
		// The first target scored: the first one-step prediction's, after
		// the first fit; with a young series' forecasts (the theta
		// method's, from its FirstForecast-th value), the first target of
		// their steps at h ≥ 2.
		earliest, what := first+1, fmt.Sprintf("a series' one-step predictions start at its first fit, on %d", first)
		if young := bt.cfg.FirstForecast(); H >= 2 && young < first {
			earliest, what = young+2, fmt.Sprintf("a young series' forecasts start on its %dth value (their steps h ≥ 2 are scored), its one-step predictions at its first fit, on %d", young, first)
		}
		bt.evalFrom = first + 1
		if n <= first {
			bt.evalFrom = earliest
		}
		switch {
		case n < earliest:
			return nil, fmt.Errorf("backtest: %s has %d values: %s, so none would be scored; --protocol iterated forecasts from fewer",
				c.data, n, what)
		case set["eval-from"] && c.evalFrom < earliest:
			return nil, usageErrorf("backtest: --eval-from %d is too early: %s, so the first target scored is %d",
				c.evalFrom, what, earliest)
		case set["eval-from"] && c.evalFrom > n:
			return nil, usageErrorf("backtest: --eval-from %d is beyond the %d values of %s: nothing would be scored", c.evalFrom, n, c.data)
		case set["eval-from"]:
			bt.evalFrom = c.evalFrom
		}
		return bt, nil
	}
	bt.train = n - H
	if set["train"] {
		bt.train = c.train
	}
	switch {
	case H < 1:
		return nil, usageErrorf("backtest: the iterated protocol needs a horizon ≥ 1: give --horizon")
	case !set["train"] && H >= n:
		return nil, usageErrorf("backtest: --horizon %d is not below the %d values of %s: give a shorter horizon, or --train", H, n, c.data)
	case bt.train > n:
		return nil, usageErrorf("backtest: --train %d exceeds the %d values of %s", bt.train, n, c.data)
	case bt.train < bt.cfg.FirstForecast():
		return nil, usageErrorf("backtest: --train %d is too short: a series is first forecast after %d values", bt.train, bt.cfg.FirstForecast())
	case s.nu > 0 && bt.train+H > n:
		return nil, usageErrorf("backtest: the model has inputs, so the %d forecast steps need their inputs in the file: --train + --horizon must be ≤ %d (got %d)",
			H, n, bt.train+H)
	}
	if c.tune {
		// The batch search: the structure chosen once, on every training
		// value, with a working set sized for a batch fit and lag orders
		// ranked by iterated validation at this horizon.
		m := cfg.Model
		m.Warmup = bt.train
		m.WorkingSet = Auto[int]{Value: max(min(iteratedWorkingSet, 3*bt.train/5), 2)}
		m.Tuning = "iterated"
		// The batch search is over lags in the series as it is: forms left
		// to auto would be ranked by forecasts from five origins, which on
		// a few windows of a chaotic series chooses worse than the lags'
		// own validation (Santa Fe: log+diff, NMSE 0.22 against 0.026).
		if m.Transform == "auto" {
			m.Transform = "none"
		}
		if m.Difference.Auto {
			m.Difference = Auto[int]{Value: 0}
		}
		if m.Combine == "auto" {
			m.Combine = "none"
		}
		if bt.train < 3*H {
			return nil, usageErrorf("backtest: --tune validates %d-step forecasts and needs --train ≥ 3·horizon = %d (got %d)", H, 3*H, bt.train)
		}
		bt.cfg = m.Learner(cfg.Forecast, cfg.Robust)
		if bt.train < bt.cfg.FirstForecast() {
			return nil, usageErrorf("backtest: --train %d is too short: without the theta combination (--tune) a series is first forecast after %d values", bt.train, bt.cfg.FirstForecast())
		}
		fmt.Fprintf(stderr, "backtest: --tune: structure chosen on the %d training values, working_set = %d, lags ranked by %d-step iterated validation (transform %s, difference %d, combine %s)\n",
			m.Warmup, m.WorkingSet.Value, H, m.Transform, m.Difference.Value, m.Combine)
	}
	return bt, nil
}

func (c *backtestCommand) readData(stdin io.Reader, stderr io.Writer, m *ModelConfig) (*series, error) {
	cols := columns{y: c.column, time: c.timeColumn, truth: c.truthColumn}
	cols.fromModel(m)
	if c.inputs != "" {
		for _, col := range strings.Split(c.inputs, ",") {
			cols.inputs = append(cols.inputs, strings.TrimSpace(col))
		}
	}
	r := stdin
	if c.data != "-" {
		f, err := os.Open(c.data)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	s, err := readSeries(r, cols)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.data, err)
	}
	if s.unitHint != "" {
		fmt.Fprintf(stderr, "streamd: warning: %s: %s\n", c.data, s.unitHint)
	}
	return s, nil
}

func (c *backtestCommand) writeReport(rep *report, stdout io.Writer) error {
	if c.reportPath != "-" {
		if err := rep.summary(stdout); err != nil {
			return err
		}
	}
	if c.reportPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if c.reportPath == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(c.reportPath, b, 0o644)
}

// seriesName is the series id in forecast messages: the data file's base name
// without its extension.
func seriesName(data string) string {
	if data == "-" {
		return "stdin"
	}
	b := filepath.Base(data)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// backtest is one run of a Learner over a series.
type backtest struct {
	cfg    online.Config
	scale  string
	s      *series
	series string
	// evalFrom (prequential) is the 1-based index of the first scored
	// target; train (iterated) the number of values learned.
	evalFrom, train int
	l               *online.Learner
	out             *sink.JSONL
	msg             sink.Message
	prog            *progress

	// Scores by horizon (index h−1) and pooled over all (h, target) pairs.
	byH    []score
	pooled score
	// Timing: the duration of each Observe after the fit, and of the fit.
	updates []int64
	// online are the updates of the samples after the last re-choice
	// (online.Learner.Settled): the per-sample cost of a settled series.
	online  []int64
	fitTime time.Duration
	// What --plot draws.
	actual plotter.XYs
	band   []bandPoint
	// fileStep is the median spacing of the file's times (0 until
	// jitter first needs it, then at least 1): the step before the
	// Learner's first fit.
	fileStep int64
	// future holds the planned rows of the record being observed.
	future [][]float64
}

// observe feeds sample k to the Learner, timing the call.
func (b *backtest) observe(k int) (online.Result, error) {
	var u []float64
	if b.s.nu > 0 {
		u = b.s.inputs(k)
	}
	wasFitted, settled := b.l.Fitted(), b.l.Settled()
	future := b.futureRows(k)
	start := time.Now()
	res, err := b.l.Observe(online.Observation{T: b.s.t[k], Time: b.s.timed, Y: b.s.y[k], U: u, Future: future})
	d := time.Since(start)
	if err != nil {
		return res, fmt.Errorf("line %d: %w", b.s.line[k], err)
	}
	switch {
	case wasFitted:
		b.updates = append(b.updates, int64(d))
		if settled {
			b.online = append(b.online, int64(d))
		}
	case b.l.Fitted():
		b.fitTime = d
	}
	b.prog.update(k + 1)
	return res, nil
}

// jitter is how far a value's time may be from a step's and still be that
// step's: under half the Learner's step (the Learner counts a value at its
// nearest step, and steps forecasts on its grid, so a value logged a
// second late is still its hour's target); before its first fit, when a
// young series' forecasts are already on a grid, under half the median
// spacing of the file's times.
func (b *backtest) jitter() int64 {
	step := b.l.Step()
	if step <= 0 {
		if b.fileStep == 0 {
			b.fileStep = medianSpacing(b.s.t)
		}
		step = b.fileStep
	}
	return max(step-1, 0) / 2
}

// medianSpacing returns the median difference of consecutive times t
// (ascending), at least 1. O(n log n).
func medianSpacing(t []int64) int64 {
	if len(t) < 2 {
		return 1
	}
	d := make([]int64, len(t)-1)
	for i := range d {
		d[i] = t[i+1] - t[i]
	}
	slices.Sort(d)
	return max(d[len(d)/2], 1)
}

// futureRows returns the planned rows of record k as a producer that knows
// them would send (the daemon's Observation.Future): the planned inputs of
// the rows that follow it, for the steps of the forecast horizon, as long
// as each follows at the series' step (the Learner's, or before its fit
// the spacing of the next row), so that no row stands for another step's
// time. None without planned inputs. The rows are reused from record to
// record.
func (b *backtest) futureRows(k int) [][]float64 {
	H := max(b.cfg.Horizon, b.cfg.Calibrate)
	if len(b.cfg.Planned) == 0 || H == 0 || k+1 >= b.s.len() {
		return nil
	}
	if b.future == nil {
		b.future = make([][]float64, H)
		for h := range b.future {
			b.future[h] = make([]float64, len(b.cfg.Planned))
		}
	}
	t := b.s.t
	at := func(h int64) int64 { return b.l.StepTime(t[k], h) }
	if b.l.Step() <= 0 {
		at = func(h int64) int64 { return t[k] + h*(t[k+1]-t[k]) }
	}
	n := 0
	for ; n < H && k+1+n < b.s.len() && absDiff(t[k+1+n], at(int64(n+1))) <= b.jitter(); n++ {
		u := b.s.inputs(k + 1 + n)
		for j, i := range b.cfg.Planned {
			b.future[n][j] = u[i]
		}
	}
	return b.future[:n]
}

// prequential predicts, then learns, every value in order. A target k
// (0-based; 1-based index k+1 ≥ evalFrom) is scored at h = 1 by the one-step
// prediction the Learner made for it before learning it, and at h ≥ 2 by step
// h of the forecast issued after learning sample k−h. Step 1 of an issued
// forecast is the next sample's one-step prediction itself (same state, same
// regressor), so it is not scored twice. The value after a gap of g missing
// steps was predicted g + 1 steps ahead (the gap filled with predictions):
// it is step g + 1 of the forecast issued before the gap, scored there, and
// not at h = 1.
func (b *backtest) prequential(ctx context.Context) (*report, error) {
	var err error
	if b.l, err = online.NewLearner(b.cfg); err != nil {
		return nil, err
	}
	n := b.s.len()
	b.byH = make([]score, max(b.cfg.Horizon, 1))
	from := b.evalFrom - 1 // 0-based index of the first scored target
	for k := range n {
		if k%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		res, err := b.observe(k)
		if err != nil {
			return nil, err
		}
		if res.Fitted && k >= from && res.Filled == 0 {
			d := tOfVariance(res.DF)
			if b.l.Form().Log {
				d = normal // as stepDensities
			}
			b.add(1, b.s.target(k), res.Prediction, res.Std, res.Std, res.Lo, res.Hi, d)
			tk := float64(b.s.t[k])
			b.actual = append(b.actual, plotter.XY{X: tk, Y: b.s.target(k)})
			b.band = append(b.band, bandPoint{t: tk, mean: res.Prediction, lo: res.Lo, hi: res.Hi})
		}
		d := b.stepDensities()
		for _, st := range res.Forecast {
			if j, ok := b.s.at(st.T, b.jitter()); ok && st.H >= 2 && j >= from {
				b.add(st.H, b.s.target(j), st.Mean, st.Std, st.OneStepStd, st.Lo, st.Hi, d.of(st))
			}
		}
		if err := b.write(k, res); err != nil {
			return nil, err
		}
	}
	b.prog.done()
	rep := b.report("prequential", n)
	rep.EvalFrom = b.evalFrom
	rep.NEval = max(n-from, 0)
	return rep, nil
}

// iterated learns the first train values, then scores one forecast of H steps
// against the values that follow (those the file has).
func (b *backtest) iterated(ctx context.Context) (*report, error) {
	train := b.train
	// Periodic forecasts during training are not scored: switch them off so
	// they do not cost time.
	H := b.cfg.Horizon
	lc := b.cfg
	lc.Horizon = 0
	var err error
	if b.l, err = online.NewLearner(lc); err != nil {
		return nil, err
	}
	for k := range train {
		if k%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if _, err := b.observe(k); err != nil {
			return nil, err
		}
	}
	b.prog.done()
	var inputs [][]float64
	if b.s.nu > 0 {
		inputs = make([][]float64, H)
		for h := range inputs {
			inputs[h] = b.s.inputs(train + h)
		}
	}
	steps := make([]online.ForecastStep, H)
	if err := b.l.Forecast(steps, inputs); err != nil {
		return nil, err
	}
	// The steps' targets are the samples at their times: a missing value
	// leaves its step unscored. The planned inputs were read by row, so
	// the rows must be the steps'.
	truth := make([]float64, H)
	for h, st := range steps {
		truth[h] = math.NaN()
		if j, ok := b.s.at(st.T, b.jitter()); ok {
			truth[h] = b.s.target(j)
		}
		if b.s.nu > 0 && train+h < b.s.len() && absDiff(b.s.t[train+h], st.T) > b.jitter() {
			return nil, fmt.Errorf("line %d: t %d where forecast step %d is at %d: with inputs, the forecast's rows must follow at the series' step, none missing",
				b.s.line[train+h], b.s.t[train+h], st.H, st.T)
		}
	}
	b.byH = make([]score, H)
	nEval := 0
	d := b.stepDensities()
	for h, st := range steps {
		if math.IsNaN(truth[h]) {
			continue
		}
		b.add(st.H, truth[h], st.Mean, st.Std, st.OneStepStd, st.Lo, st.Hi, d.of(st))
		nEval++
	}
	for j := max(0, train-2*H); j < min(b.s.len(), train+H); j++ {
		b.actual = append(b.actual, plotter.XY{X: float64(b.s.t[j]), Y: b.s.target(j)})
	}
	for _, st := range steps {
		b.band = append(b.band, bandPoint{t: float64(st.T), mean: st.Mean, lo: st.Lo, hi: st.Hi})
	}
	if b.out != nil {
		b.msg.Series, b.msg.T, b.msg.Observed = b.series, b.s.t[train-1], nil
		daemon.SetSteps(&b.msg, steps)
		b.msg.IssuedAt = time.Now().UTC()
		b.msg.Model = daemon.ModelInfoOf(b.l)
		if err := b.out.Write(&b.msg); err != nil {
			return nil, err
		}
	}
	rep := b.report("iterated", train)
	rep.NEval = nEval
	rep.Config.Horizon = H
	rep.Cumulative = cumulative(steps, truth, d)
	return rep, nil
}

func (b *backtest) add(h int, y, mean, std, oneStepStd, lo, hi float64, d density) {
	b.byH[h-1].add(y, mean, std, oneStepStd, lo, hi, d)
	b.pooled.add(y, mean, std, oneStepStd, lo, hi, d)
}

// stepDensities are the densities of the Learner's forecast steps as its
// messages state them (docs/messages.md, steps[].lo and fallback): a
// model's steps are the Student's t of model.df scaled to their variance,
// or the normal; a log form's steps, and the average of a theta
// combination, are scored with the Gaussian of their std. A fallback step
// is the normal, but a young series', Student's t of Learner.YoungDF at
// scale std.
func (b *backtest) stepDensities() densities {
	switch {
	case !b.l.Fitted():
		return densities{model: normal, fallback: tOfScale(b.l.YoungDF())}
	case b.l.Form().Log || b.l.Theta() != nil:
		return densities{model: normal, fallback: normal}
	}
	return densities{model: tOfVariance(b.l.Model().Info().DF), fallback: normal}
}

// densities are a forecast's densities of the model's steps and of its
// fallback steps (online.ForecastStep.Fallback).
type densities struct{ model, fallback density }

// of is the density of step st.
func (d densities) of(st online.ForecastStep) density {
	if st.Fallback {
		return d.fallback
	}
	return d.model
}

// write emits the message of observation k when there is something to say.
func (b *backtest) write(k int, res online.Result) error {
	if b.out == nil || (!res.Fitted && res.Forecast == nil) {
		return nil
	}
	daemon.SetResult(&b.msg, b.series, b.s.t[k], b.s.y[k], res)
	b.msg.IssuedAt = time.Now().UTC()
	b.msg.Model = daemon.ModelInfoOf(b.l)
	return b.out.Write(&b.msg)
}

// thetaString describes the theta method of the summary's model.
func thetaString(th *sink.ThetaInfo) string {
	season := fmt.Sprintf("seasonal period %d (0: none)", th.Period)
	if th.Additive {
		season = fmt.Sprintf("additive seasonal period %d", th.Period)
	}
	if th.Profile > 0 {
		season = fmt.Sprintf("moving seasonal profile of period %d", th.Profile)
	}
	if th.SeasonSmoothing != nil {
		return fmt.Sprintf("Holt–Winters: α = %.4g, a damped trend (φ = %.4g) of %.4g next step, %s smoothed by γ = %.4g", th.Alpha, th.Phi, th.Drift, season, *th.SeasonSmoothing)
	}
	if th.Phi > 0 {
		return fmt.Sprintf("α = %.4g, a damped trend (φ = %.4g) of %.4g next step, %s", th.Alpha, th.Phi, th.Drift, season)
	}
	if len(th.AR) > 0 {
		return fmt.Sprintf("an autoregression of order %d about the mean, %s", len(th.AR), season)
	}
	band := ""
	if th.Growth != nil {
		band = fmt.Sprintf(", its band growing by %.4g a step (measured; α² %.4g)", *th.Growth, th.Alpha*th.Alpha)
	}
	return fmt.Sprintf("α = %.4g, drift %.4g (%.4g of the line's slope), %s%s", th.Alpha, th.Drift, th.SlopeShare, season, band)
}

// cumulative scores the first k steps of an iterated forecast for a few k
// (10, 20, 50, 100, …, and all steps): the Santa Fe protocol quotes the NMSE
// of the first 20 steps beside that of all 100.
func cumulative(steps []online.ForecastStep, truth []float64, d densities) []cumulativeMetrics {
	var out []cumulativeMetrics
	var s score
	n := len(truth)
	for n > 0 && math.IsNaN(truth[n-1]) {
		n-- // beyond the data
	}
	for i := range min(len(steps), n) {
		if !math.IsNaN(truth[i]) { // a missing value: no target
			s.add(truth[i], steps[i].Mean, steps[i].Std, steps[i].OneStepStd, steps[i].Lo, steps[i].Hi, d.of(steps[i]))
		}
		k := i + 1
		if k == n || (k >= 10 && slices.Contains([]int{10, 20, 50}, k)) || (k >= 100 && k%100 == 0) {
			out = append(out, cumulativeMetrics{Steps: k, metrics: s.metrics()})
		}
	}
	return out
}

// report is the machine-readable result of a backtest.
type report struct {
	Protocol string          `json:"protocol"`
	Data     string          `json:"data"`
	Config   effectiveConfig `json:"config"`
	// NTrain is the number of values learned before the first scored target
	// (iterated: --train; prequential: all values, each learned after its
	// prediction).
	NTrain int `json:"n_train"`
	// NEval is the number of target values in the evaluated range; metrics.n
	// counts the scored (h, target) pairs.
	NEval    int `json:"n_eval"`
	EvalFrom int `json:"eval_from,omitempty"`
	Metrics  struct {
		metrics
		ByHorizon []horizonMetrics `json:"by_horizon"`
	} `json:"metrics"`
	// Cumulative (iterated only): metrics over the first k steps.
	Cumulative []cumulativeMetrics `json:"cumulative,omitempty"`
	Timing     timing              `json:"timing"`
	Model      modelReport         `json:"model"`
}

type horizonMetrics struct {
	H int `json:"h"`
	metrics
}

type cumulativeMetrics struct {
	Steps int `json:"steps"`
	metrics
}

// timing is wall-clock time of the Learner's calls: update_* of each Observe
// after the fit (predict, learn, and the periodic forecast when one is
// issued), samples_per_s = learned samples / their total Observe time.
type timing struct {
	Updates     int       `json:"updates"`
	UpdateNsP50 int64     `json:"update_ns_p50"`
	UpdateNsP99 int64     `json:"update_ns_p99"`
	SamplesPerS jsonFloat `json:"samples_per_s"`
	FitMs       jsonFloat `json:"fit_ms"`
	// Online is the updates of the samples after the last structure
	// re-choice: the settled series' cost, without the re-choices.
	Online onlineTiming `json:"online"`
}

// onlineTiming summarises the Observe times of the samples after the last
// re-choice: their count, mean, median, 99th percentile and maximum.
type onlineTiming struct {
	Updates int       `json:"updates"`
	NsMean  jsonFloat `json:"ns_mean"`
	NsP50   int64     `json:"ns_p50"`
	NsP99   int64     `json:"ns_p99"`
	NsMax   int64     `json:"ns_max"`
}

// effectiveConfig is the configuration the Learner ran with: the lags,
// kernel, σ² and working-set size (with the window, noise_every and
// select_patience derived from it) it chose at the fit when they were
// auto, and the γ it started from (the model section of the report has
// the current γ).
type effectiveConfig struct {
	Lags           []int     `json:"lags"`
	LagCandidates  []int     `json:"lag_candidates,omitempty"`
	Inputs         int       `json:"inputs"`
	InputLags      [][]int   `json:"input_lags"`
	WorkingSet     int       `json:"working_set"`
	Kernel         string    `json:"kernel"`
	Sigma2         jsonFloat `json:"sigma2,omitempty"` // RBF only
	Sigma2Auto     bool      `json:"sigma2_auto"`
	Degree         int       `json:"degree,omitempty"`
	Offset         jsonFloat `json:"offset,omitempty"`
	Gamma          jsonFloat `json:"gamma"`
	GammaAuto      bool      `json:"gamma_auto"`
	Forgetting     jsonFloat `json:"forgetting"`
	Warmup         int       `json:"warmup"`
	Cutoff         jsonFloat `json:"cutoff"`
	Window         int       `json:"window"`
	SwapInterval   int       `json:"swap_interval"`
	NoiseEvery     int       `json:"noise_every"`
	Seed           uint64    `json:"seed"`
	Scale          string    `json:"scale"`
	SelectIter     int       `json:"select_iter"`
	SelectPatience int       `json:"select_patience"`
	Horizon        int       `json:"horizon"`
	Every          int       `json:"every"`
	Level          jsonFloat `json:"level"`
}

// modelReport is the model's state at the end of the run.
type modelReport struct {
	M             int             `json:"m"`
	Rank          int             `json:"rank"`
	Kernel        string          `json:"kernel"`           // the kernel chosen at the last re-choice
	Form          string          `json:"form"`             // none, log, diff or log+diff (online.Form)
	Sigma2        jsonFloat       `json:"sigma2,omitempty"` // RBF only
	Gamma         jsonFloat       `json:"gamma"`
	NoiseStd      jsonFloat       `json:"noise_std"`
	DEff          jsonFloat       `json:"d_eff"`
	Swaps         int             `json:"swaps"`
	BasisRefresh  int             `json:"basis_refresh"`
	Outliers      int64           `json:"outliers"` // samples flagged by robust reweighting
	SamplesWeight jsonFloat       `json:"samples_weight"`
	Entropy       jsonFloat       `json:"entropy"`
	Combine       string          `json:"combine"`               // none or theta (model.combine)
	Theta         *sink.ThetaInfo `json:"theta,omitempty"`       // with combine theta
	BandScale     jsonFloat       `json:"band_scale,omitempty"`  // sink.ModelInfo.BandScale
	LevelShift    jsonFloat       `json:"level_shift,omitempty"` // sink.ModelInfo.LevelShift
	DaysOff       []string        `json:"days_off,omitempty"`    // sink.ModelInfo.DaysOff
	// WorkingSteps are the steps of a working day that carry values, as
	// times of day (sink.ModelInfo.WorkingMinutes); absent when all do.
	WorkingSteps []string `json:"working_steps,omitempty"`
}

func (b *backtest) report(protocol string, nTrain int) *report {
	c := b.cfg
	k := c.Model.Kernel
	rep := &report{Protocol: protocol, NTrain: nTrain}
	// The fit's lags, σ² and working-set size (grown, with what follows
	// from it: window, noise_every, select_patience) where it chose them.
	mc := c.Model
	if b.l.Fitted() {
		mc = b.l.Model().Config()
		k = mc.Kernel // the kernel chosen, with its width: one without an RBF part has none
		if !k.Type.HasRBF() {
			k.Sigma2 = 0
		}
	}
	rep.Config = effectiveConfig{
		Lags: mc.Embedding.YLags, LagCandidates: c.LagCandidates, Inputs: c.Model.Embedding.Inputs(),
		WorkingSet: mc.Size, Kernel: k.Type.String(), Sigma2: jsonFloat(k.Sigma2), Sigma2Auto: c.AutoSigma2,
		Gamma: jsonFloat(c.Model.Gamma), GammaAuto: c.Model.AutoGamma, Forgetting: jsonFloat(c.Model.Forgetting), Warmup: c.Warmup, Cutoff: jsonFloat(c.Model.Cutoff),
		Window: mc.Window, SwapInterval: c.Model.SwapInterval, NoiseEvery: mc.NoiseEvery,
		Seed: c.Model.Seed, Scale: b.scale, SelectIter: c.Model.Select.MaxIter,
		SelectPatience: mc.Select.Patience, Horizon: c.Horizon, Every: c.Every, Level: jsonFloat(c.Level),
	}
	rep.Config.InputLags = append([][]int{}, mc.Embedding.InputLags[:b.l.Inputs()]...)
	if k.Type.String() == "poly" {
		rep.Config.Degree, rep.Config.Offset = k.Degree, jsonFloat(k.Offset)
	}
	rep.Metrics.metrics = b.pooled.metrics()
	for h := range b.byH {
		rep.Metrics.ByHorizon = append(rep.Metrics.ByHorizon, horizonMetrics{H: h + 1, metrics: b.byH[h].metrics()})
	}
	sorted := slices.Clone(b.updates)
	slices.Sort(sorted)
	var total int64
	for _, d := range sorted {
		total += d
	}
	rep.Timing = timing{Updates: len(sorted), UpdateNsP50: percentile(sorted, 0.5), UpdateNsP99: percentile(sorted, 0.99),
		SamplesPerS: jsonFloat(math.NaN()), FitMs: jsonFloat(float64(b.fitTime) / 1e6)}
	if total > 0 {
		rep.Timing.SamplesPerS = jsonFloat(float64(len(sorted)) / (float64(total) / 1e9))
	}
	on := slices.Clone(b.online)
	slices.Sort(on)
	rep.Timing.Online = onlineTiming{Updates: len(on), NsMean: jsonFloat(math.NaN()), NsP50: percentile(on, 0.5), NsP99: percentile(on, 0.99)}
	if len(on) > 0 {
		var sum int64
		for _, d := range on {
			sum += d
		}
		rep.Timing.Online.NsMean = jsonFloat(float64(sum) / float64(len(on)))
		rep.Timing.Online.NsMax = on[len(on)-1]
	}
	if b.l.Fitted() {
		m := b.l.Model()
		info := m.Info()
		mi := daemon.ModelInfoOf(b.l)
		rep.Model = modelReport{M: info.M, Rank: info.Rank, Kernel: mi.Kernel, Form: mi.Form, Sigma2: jsonFloat(mi.Sigma2), Gamma: jsonFloat(info.Gamma),
			NoiseStd: jsonFloat(mi.NoiseStd), DEff: jsonFloat(info.DEff), Swaps: info.Swaps, BasisRefresh: info.BasisRefresh, Outliers: b.l.Outliers(),
			SamplesWeight: jsonFloat(info.SamplesWeight), Entropy: jsonFloat(info.Entropy), Combine: mi.Combine, Theta: mi.Theta,
			BandScale: jsonFloat(mi.BandScale), LevelShift: jsonFloat(mi.LevelShift), DaysOff: mi.DaysOff,
			WorkingSteps: workingSteps(mi.WorkingMinutes)}
	} else {
		// Not fitted yet: no model; the young forecast, if any, the theta
		// method's alone.
		mi := daemon.ModelInfoOf(b.l)
		rep.Model = modelReport{Kernel: mi.Kernel, Form: mi.Form, Combine: mi.Combine, Theta: mi.Theta}
	}
	return rep
}

// summary writes a short human-readable account of rep.
func (r *report) summary(w io.Writer) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "backtest %s (%s): ", r.Data, r.Protocol)
	if r.Protocol == "iterated" {
		fmt.Fprintf(&sb, "learned %d values, forecast %d steps, %d scored\n", r.NTrain, r.Config.Horizon, r.NEval)
	} else {
		fmt.Fprintf(&sb, "%d values, targets %d.. scored (%d), horizons 1..%d\n", r.NTrain, r.EvalFrom, r.NEval, len(r.Metrics.ByHorizon))
	}
	width := ""
	if r.Model.Sigma2 != 0 {
		width = fmt.Sprintf(", σ² = %.4g", r.Model.Sigma2)
	}
	switch th := r.Model.Theta; {
	case r.Model.Kernel == "none":
		fmt.Fprintf(&sb, "  model: none yet (a series is first fitted on %d values)\n", online.Config{Warmup: r.Config.Warmup}.FirstFitAt())
		if th != nil {
			fmt.Fprintf(&sb, "  forecast by the theta method alone: %s\n", thetaString(th))
		}
	default:
		inputs := ""
		for i, ls := range r.Config.InputLags {
			inputs += fmt.Sprintf(", input %d lags %s", i, lagString(ls))
		}
		fmt.Fprintf(&sb, "  model: %s kernel, form %s, M = %d (rank %d), lags %s%s%s, γ = %.4g, noise std %.4g, d_eff %.1f, %d swaps\n",
			r.Model.Kernel, r.Model.Form, r.Model.M, r.Model.Rank, lagString(r.Config.Lags), inputs, width, r.Model.Gamma, r.Model.NoiseStd, r.Model.DEff, r.Model.Swaps)
		if r.Config.GammaAuto && narx.GammaAtBound(float64(r.Model.Gamma)) {
			// The evidence has no interior optimum (narx.GammaAtBound).
			what := "the lags carry nothing the ridge keeps, and the forecast is flat"
			if r.Model.Gamma > 1 {
				what = "the fit interpolates its samples, right for a noise-free series and otherwise a sign of a wrong structure"
			}
			fmt.Fprintf(&sb, "  γ at its search bound (%.4g): %s\n", float64(r.Model.Gamma), what)
		}
		if th != nil {
			fmt.Fprintf(&sb, "  combined with the theta method: %s; the model's weight from step 2 %.4g\n", thetaString(th), th.ModelWeight)
		}
		if s := float64(r.Model.BandScale); s != 0 {
			fmt.Fprintf(&sb, "  band of step %d scaled by %.3g, calibrated on the series' realised errors\n", r.Config.Horizon, s)
		}
		if c := float64(r.Model.LevelShift); c != 0 {
			fmt.Fprintf(&sb, "  forecasts corrected by %.4g for a shift of the level not learned yet\n", c)
		}
		if len(r.Model.DaysOff) > 0 {
			fmt.Fprintf(&sb, "  days off (no values, not steps): %s\n", strings.Join(r.Model.DaysOff, ", "))
		}
		if ws := r.Model.WorkingSteps; len(ws) > 0 {
			fmt.Fprintf(&sb, "  a working day's steps (the others have no values, and are not steps): %d, %s to %s\n", len(ws), ws[0], ws[len(ws)-1])
		}
	}
	// The coverage is of the [lo, hi] band, at forecast.level.
	fmt.Fprintf(&sb, "  %-12s %6s %10s %10s %10s %10s %10s\n", "", "n", "NMSE", "RMSE", "MAE", fmt.Sprintf("cover%g", 100*float64(r.Config.Level)), "NLPD")
	row := func(name string, m metrics) {
		fmt.Fprintf(&sb, "  %-12s %6d %10s %10s %10s %10s %10s\n", name, m.N, fmtMetric(m.NMSE), fmtMetric(m.RMSE),
			fmtMetric(m.MAE), fmtMetric(m.Coverage95), fmtMetric(m.NLPD))
	}
	row("all", r.Metrics.metrics)
	if r.Protocol == "iterated" {
		for _, c := range r.Cumulative {
			row(fmt.Sprintf("steps 1..%d", c.Steps), c.metrics)
		}
	} else {
		for _, h := range r.Metrics.ByHorizon {
			if h.H == 1 || h.H == len(r.Metrics.ByHorizon) || slices.Contains([]int{2, 5, 10, 20, 50, 100}, h.H) {
				row(fmt.Sprintf("h = %d", h.H), h.metrics)
			}
		}
	}
	t := r.Timing
	if t.Updates == 0 {
		fmt.Fprintf(&sb, "  timing: fit %.1f ms; no updates after the fit\n", t.FitMs)
	} else {
		fmt.Fprintf(&sb, "  timing: fit %.1f ms; %d updates, p50 %.1f µs, p99 %.1f µs, %s samples/s\n",
			t.FitMs, t.Updates, float64(t.UpdateNsP50)/1e3, float64(t.UpdateNsP99)/1e3, fmtMetric(t.SamplesPerS))
		if o := t.Online; o.Updates > 0 {
			fmt.Fprintf(&sb, "  after the last re-choice: %d updates, mean %.1f µs, p50 %.1f µs, p99 %.1f µs, max %.1f µs\n",
				o.Updates, float64(o.NsMean)/1e3, float64(o.NsP50)/1e3, float64(o.NsP99)/1e3, float64(o.NsMax)/1e3)
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func fmtMetric(f jsonFloat) string {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return fmt.Sprintf("%.4g", v)
}

// lagString abbreviates 1..p lag lists.
func lagString(l []int) string {
	if len(l) == 0 {
		return "none"
	}
	if len(l) > 2 && l[0] == 1 && l[len(l)-1] == len(l) {
		return fmt.Sprintf("1..%d", len(l))
	}
	return fmt.Sprint(l)
}

// progress draws a progress bar on a terminal, for runs that take longer
// than half a second; it draws nothing when stderr is not a terminal.
type progress struct {
	w            io.Writer
	total        int
	start, drawn time.Time
	on, shown    bool
}

func newProgress(stderr io.Writer, total int) *progress {
	f, ok := stderr.(*os.File)
	return &progress{w: stderr, total: total, start: time.Now(), on: ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progress) update(done int) {
	if !p.on || done%64 != 0 {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < 500*time.Millisecond || now.Sub(p.drawn) < 100*time.Millisecond {
		return
	}
	p.drawn, p.shown = now, true
	const width = 40
	frac := float64(done) / float64(max(p.total, 1))
	bar := strings.Repeat("█", int(frac*width)) + strings.Repeat("░", width-int(frac*width))
	fmt.Fprintf(p.w, "\r%s %3.0f%% %d/%d", bar, 100*frac, done, p.total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// workingSteps renders minutes after midnight (sink.ModelInfo's
// WorkingMinutes) as times of day, HH:MM.
func workingSteps(minutes []int32) []string {
	if minutes == nil {
		return nil
	}
	out := make([]string, len(minutes))
	for i, m := range minutes {
		out[i] = fmt.Sprintf("%02d:%02d", m/60, m%60)
	}
	return out
}
