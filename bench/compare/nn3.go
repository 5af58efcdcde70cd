package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/theta"
)

const nn3Horizon = 18

// nn3Series is one NN3 series: its training values and its 18 test values.
type nn3Series struct {
	Name        string
	Train, Test []float64
	File        string // the training values, one per line
	// Dated, with -dated, is the same values as a CSV file t,y with their
	// times (writeDated): the file streamd reads instead of File.
	Dated string
}

// loadNN3 reads the training and test tables and checks they match.
func loadNN3(dir string) ([]nn3Series, error) {
	names, train, err := readColumnsFile(filepath.Join(dir, "nn3_A_train.csv"))
	if err != nil {
		return nil, err
	}
	tnames, test, err := readColumnsFile(filepath.Join(dir, "nn3_A_test18.csv"))
	if err != nil {
		return nil, err
	}
	testOf := map[string][]float64{}
	for i, n := range tnames {
		testOf[n] = test[i]
	}
	var out []nn3Series
	for i, n := range names {
		t, ok := testOf[n]
		switch {
		case !ok:
			return nil, fmt.Errorf("series %s has no test column", n)
		case len(t) < nn3Horizon:
			return nil, fmt.Errorf("series %s has %d test values, want %d", n, len(t), nn3Horizon)
		case len(train[i]) == 0:
			return nil, fmt.Errorf("series %s has no training values", n)
		}
		out = append(out, nn3Series{Name: n, Train: train[i], Test: t[:nn3Horizon]})
	}
	return out, nil
}

// holdOut returns the series with their last h training values as the
// test values, fitted on the rest: the training-only split, on which
// design choices are measured without the test values.
func holdOut(series []nn3Series, h int) ([]nn3Series, error) {
	out := make([]nn3Series, len(series))
	for i, s := range series {
		if len(s.Train) < 2*h {
			return nil, fmt.Errorf("series %s has %d training values, fewer than 2×%d to hold out %d", s.Name, len(s.Train), h, h)
		}
		n := len(s.Train) - h
		out[i] = nn3Series{Name: s.Name, Train: s.Train[:n:n], Test: s.Train[n:]}
	}
	return out, nil
}

// datedNote is the tables' note of -dated.
func (e *env) datedNote() string {
	if e.dated {
		return "; streamd's files dated"
	}
	return ""
}

// writeDated writes the values y as a CSV file t,y, value i at times[i]:
// the file streamd reads with --time t --column y.
func writeDated(path string, times []string, y []float64) error {
	rows := make([][]string, len(y))
	for i, v := range y {
		rows[i] = []string{times[i], strconv.FormatFloat(v, 'g', -1, 64)}
	}
	return writeCSV(path, []string{"t", "y"}, rows)
}

// monthsFrom returns n dates (YYYY-MM-DD, the first of the month) every
// step calendar months from year and month.
func monthsFrom(year, month, step, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = time.Date(year, time.Month(month+i*step), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	}
	return out
}

// writeNN3Files writes each series' training values to dir/NAME.txt.
func writeNN3Files(series []nn3Series, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range series {
		series[i].File = filepath.Join(dir, series[i].Name+".txt")
		if err := writeValues(series[i].File, series[i].Train); err != nil {
			return err
		}
	}
	return nil
}

// methodRun is one method's forecasts of a set of series.
type methodRun struct {
	Name   string
	Fc     map[string]forecast // by series; absent = failed
	Fail   map[string]string   // by series: why it failed
	Secs   map[string]float64  // by series (streamd only)
	WallS  float64             // total wall time, s
	Filled bool                // failures scored as naive forecasts without band
}

// seriesRun is one series' streamd backtest: its forecast messages (nil
// when none could be read), the failure if any, and the wall time.
type seriesRun struct {
	msgs []message
	fc   forecast
	fail string
	secs float64
}

// backtestEach runs streamd backtest on every series in parallel with the
// protocol flags args gives it, its forecast messages to fcDir/NAME.jsonl,
// and reads them back (also after a failed run: whatever was written).
func (e *env) backtestEach(ctx context.Context, series []nn3Series, fcDir string, args func(nn3Series) []string) []seriesRun {
	runs := make([]seriesRun, len(series))
	e.parallel(len(series), func(i int) {
		s := series[i]
		out := filepath.Join(fcDir, s.Name+".jsonl")
		data := []string{"backtest", "--data", s.File}
		if s.Dated != "" {
			data = []string{"backtest", "--data", s.Dated, "--time", "t", "--column", "y"}
		}
		r := e.streamd(ctx, append(append(data, args(s)...), "--forecasts", out)...)
		runs[i].secs = r.Elapsed.Seconds()
		if r.Err != nil {
			runs[i].fail = r.reason()
		}
		msgs, err := readMessagesFile(out)
		switch {
		case err == nil:
			runs[i].msgs = msgs
		case r.Err == nil:
			runs[i].fail = "unreadable forecasts: " + err.Error()
		}
	})
	return runs
}

// prepareNN3 loads the NN3 training columns and lays out the suite's output
// directory afresh: one file of values per series under data/, and an empty
// forecasts/; with holdout > 0, the training columns split by holdOut.
func (e *env) prepareNN3(suite string, holdout int) (series []nn3Series, dir, fcDir string, err error) {
	return e.prepareNN3Cut(suite, func(s []nn3Series) ([]nn3Series, error) {
		if holdout > 0 {
			return holdOut(s, holdout)
		}
		return s, nil
	})
}

// prepareNN3Cut is prepareNN3 with the series as cut returns them.
func (e *env) prepareNN3Cut(suite string, cut func([]nn3Series) ([]nn3Series, error)) (series []nn3Series, dir, fcDir string, err error) {
	if series, err = loadNN3(filepath.Join(e.data, "nn3")); err != nil {
		return nil, "", "", err
	}
	if series, err = cut(series); err != nil {
		return nil, "", "", err
	}
	dir = filepath.Join(e.out, suite)
	if err := os.RemoveAll(dir); err != nil {
		return nil, "", "", err
	}
	if err := writeNN3Files(series, filepath.Join(dir, "data")); err != nil {
		return nil, "", "", err
	}
	if e.dated {
		for i := range series {
			series[i].Dated = filepath.Join(dir, "data", series[i].Name+".csv")
			// NN3's files carry no dates: monthly from 2000-01, as a
			// pipeline's timestamps would give streamd its season of 12.
			if err := writeDated(series[i].Dated, monthsFrom(2000, 1, 1, len(series[i].Train)), series[i].Train); err != nil {
				return nil, "", "", err
			}
		}
	}
	fcDir = filepath.Join(dir, "forecasts")
	if err := os.MkdirAll(fcDir, 0o755); err != nil {
		return nil, "", "", err
	}
	fmt.Fprintf(e.stderr, "compare: %s: streamd on %d series\n", suite, len(series))
	return series, dir, fcDir, nil
}

func (e *env) nn3(ctx context.Context) error {
	series, dir, fcDir, err := e.prepareNN3("nn3", e.holdout)
	if err != nil {
		return err
	}

	// streamd: the default configuration, one iterated forecast per
	// series; and its model alone, without the theta combination.
	sd := e.iteratedStreamd(ctx, "streamd (defaults)", series, fcDir, nn3Horizon)
	alone := filepath.Join(dir, "combine-none.yaml")
	if err := os.WriteFile(alone, []byte("model: {combine: none}\n"), 0o644); err != nil {
		return err
	}
	aloneDir := filepath.Join(dir, "forecasts-combine-none")
	if err := os.MkdirAll(aloneDir, 0o755); err != nil {
		return err
	}
	sdAlone := e.iteratedStreamd(ctx, "streamd, model.combine: none (the NARX model alone)", series, aloneDir, nn3Horizon, "--config", alone)

	rMethods, rElapsed, err := e.rForecasts(ctx, "nn3", series, dir, nn3Horizon)
	if err != nil {
		return err
	}
	filled := sd
	filled.Name = fmt.Sprintf("streamd (defaults), all %d: failures naive, no band", len(series))
	filled.Filled = true
	runs := append([]methodRun{sd, filled, sdAlone}, rMethods...)
	runs = append(runs, thetaRun(series))
	title := fmt.Sprintf("NN3 (%d monthly series, %d-step iterated forecast from the training values%s)", len(series), nn3Horizon, e.datedNote())
	return e.reportNN3(series, runs, dir, rElapsed, nn3Horizon, title)
}

// rForecasts runs nn3.R on every series in one R process, H steps each:
// auto.arima, ets, thetaf, their mean and snaive, read back.
func (e *env) rForecasts(ctx context.Context, suite string, series []nn3Series, dir string, H int) ([]methodRun, time.Duration, error) {
	fmt.Fprintf(e.stderr, "compare: %s: R forecast on %d series\n", suite, len(series))
	var list []string
	for _, s := range series {
		list = append(list, s.Name+","+s.File)
	}
	listFile := filepath.Join(dir, "list.csv")
	if err := os.WriteFile(listFile, []byte("series,path\n"+strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return nil, 0, err
	}
	rFc, rTimes, rErrs := filepath.Join(dir, "r_forecasts.csv"), filepath.Join(dir, "r_times.csv"), filepath.Join(dir, "r_errors.csv")
	rr := e.rscriptRun(ctx, "nn3.R", listFile, strconv.Itoa(H), rFc, rTimes, rErrs)
	if err := os.WriteFile(filepath.Join(dir, "r.log"), []byte(rr.Stdout+rr.Stderr), 0o644); err != nil {
		return nil, 0, err
	}
	if rr.Err != nil {
		return nil, 0, fmt.Errorf("Rscript nn3.R: %v\n%s", rr.Err, rr.Stderr)
	}
	rMethods, err := loadRRun(rFc, rTimes, rErrs, H, []string{"auto.arima", "ets", "thetaf", "comb", "snaive"},
		map[string]string{"comb": "comb (mean of the 3)", "snaive": "snaive"})
	return rMethods, rr.Elapsed, err
}

// iteratedStreamd runs streamd backtest with flags extra on every series,
// one iterated forecast of H steps each, its messages to fcDir.
func (e *env) iteratedStreamd(ctx context.Context, name string, series []nn3Series, fcDir string, H int, extra ...string) methodRun {
	sd := methodRun{Name: name, Fc: map[string]forecast{}, Fail: map[string]string{}, Secs: map[string]float64{}}
	results := e.backtestEach(ctx, series, fcDir, func(s nn3Series) []string {
		return append([]string{"--protocol", "iterated", "--train", strconv.Itoa(len(s.Train)), "--horizon", strconv.Itoa(H)}, extra...)
	})
	for i, r := range results {
		name := series[i].Name
		sd.Secs[name] = r.secs
		sd.WallS += r.secs
		if r.fail == "" {
			fc, err := iteratedForecast(r.msgs, H)
			if err != nil {
				r.fail = "no usable forecast: " + err.Error()
			}
			r.fc = fc
		}
		if r.fail != "" {
			sd.Fail[name] = r.fail
		} else {
			sd.Fc[name] = r.fc
		}
	}
	return sd
}

// thetaRun forecasts every series with internal/theta (period 12, the
// data being monthly), its 95 % band the mean ± 1.96 standard deviations
// as thetaf's: the Go component of streamd's combination (model.combine),
// checked here against R's thetaf on the same values.
func thetaRun(series []nn3Series) methodRun {
	r := methodRun{Name: "internal/theta (Go, thetaf's method, period 12)", Fc: map[string]forecast{}, Fail: map[string]string{}}
	z95 := distuv.UnitNormal.Quantile(0.975)
	start := time.Now()
	for _, s := range series {
		m, err := theta.Fit(s.Train, 12, false)
		if err != nil {
			r.Fail[s.Name] = err.Error()
			continue
		}
		f := forecast{Mean: make([]float64, nn3Horizon), Lo: make([]float64, nn3Horizon), Hi: make([]float64, nn3Horizon)}
		sd := make([]float64, nn3Horizon)
		m.Forecast(f.Mean, sd)
		for h := range f.Mean {
			f.Lo[h], f.Hi[h] = f.Mean[h]-z95*sd[h], f.Mean[h]+z95*sd[h]
		}
		r.Fc[s.Name] = f
	}
	r.WallS = time.Since(start).Seconds()
	return r
}

// loadRRun reads an R script's outputs as one methodRun per method, in
// order; labels renames methods for the table.
func loadRRun(fcPath, timesPath, errPath string, H int, order []string, labels map[string]string) ([]methodRun, error) {
	f, err := os.Open(fcPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fcs, err := readRForecasts(f, H)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fcPath, err)
	}
	times, err := readRTimes(timesPath)
	if err != nil {
		return nil, err
	}
	errs, err := readRErrors(errPath)
	if err != nil {
		return nil, err
	}
	var out []methodRun
	for _, m := range order {
		name := "R " + m
		if l, ok := labels[m]; ok {
			name = "R " + l
		}
		r := methodRun{Name: name, Fc: fcs[m], Fail: errs[m], WallS: times[m]}
		if r.Fc == nil {
			r.Fc = map[string]forecast{}
		}
		if r.Fail == nil {
			r.Fail = map[string]string{}
		}
		out = append(out, r)
	}
	return out, nil
}

// reportNN3 scores runs (streamd's first, then its run with failures
// filled by naive forecasts, then the others) on the series' test values,
// H steps, and writes the table under title and the details to dir.
func (e *env) reportNN3(series []nn3Series, runs []methodRun, dir string, rElapsed time.Duration, H int, title string) error {
	header := []string{"method", "series forecast", "mean sMAPE %", "median sMAPE %", "p90 sMAPE %", "95 % coverage", "wall time"}
	var rows, seriesRows, horizonRows, fcRows [][]string
	for _, r := range runs {
		var scores []seriesScore
		forecastN := 0
		for _, s := range series {
			f, ok := r.Fc[s.Name]
			status := "ok"
			switch {
			case ok:
				forecastN++
			case r.Filled:
				f, status = naiveForecast(s.Train, H), "failed: naive"
			default:
				status = "failed"
				if _, known := r.Fail[s.Name]; !known {
					r.Fail[s.Name] = "no forecast"
				}
			}
			if status == "failed" {
				seriesRows = append(seriesRows, []string{r.Name, s.Name, strconv.Itoa(len(s.Train)), status,
					"", "", "", "", "", secsCell(r.Secs, s.Name), r.Fail[s.Name]})
				continue
			}
			sc := scoreSeries(s.Test, f)
			scores = append(scores, sc)
			seriesRows = append(seriesRows, []string{r.Name, s.Name, strconv.Itoa(len(s.Train)), status,
				g(sc.SMAPE), g(sc.MAPE), g(sc.MaxAE), strconv.Itoa(sc.Covered), strconv.Itoa(sc.Banded),
				secsCell(r.Secs, s.Name), r.Fail[s.Name]})
			for h := range f.Mean {
				lo, hi := "", ""
				if f.Lo != nil {
					lo, hi = g(f.Lo[h]), g(f.Hi[h])
				}
				fcRows = append(fcRows, []string{r.Name, s.Name, strconv.Itoa(h + 1), g(s.Test[h]), g(f.Mean[h]), lo, hi})
			}
		}
		m := summarize(scores)
		for _, hs := range m.ByH {
			horizonRows = append(horizonRows, []string{r.Name, strconv.Itoa(hs.H), strconv.Itoa(hs.N),
				g(hs.MeanSMAPE), g(hs.Coverage), strconv.Itoa(hs.Covered)})
		}
		count := fmt.Sprintf("%d/%d", forecastN, len(series))
		if r.Filled {
			count = fmt.Sprintf("%d/%d (+%d naive)", forecastN, len(series), len(series)-forecastN)
		}
		rows = append(rows, []string{r.Name, count, f2(m.MeanSMAPE), f2(m.MedianSMAPE), f2(m.P90SMAPE),
			fmtCoverage(m.Covered, m.Values), fmtSeconds(r.WallS)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", title)
	b.WriteString(markdownTable(header, rows))
	fmt.Fprintf(&b, "\nsMAPE over the series forecast × %d steps; coverage of the 95 %% band over the values scored ", H)
	b.WriteString(
		"(the \"all\" row: naive values have no band and count as not covered). streamd wall time: sum of its per-series runs; " +
			fmt.Sprintf("R: per method, summed over series (comb: the sum of its three parts; the whole R script took %.1f s).\n", rElapsed.Seconds()))
	for _, r := range runs[:1] {
		if len(r.Fail) > 0 {
			fmt.Fprintf(&b, "\n%s failed on %d of %d series:\n", r.Name, len(r.Fail), len(series))
			for _, l := range groupReasons(r.Fail) {
				b.WriteString("- " + l + "\n")
			}
		}
	}
	for _, r := range runs[2:] {
		if len(r.Fail) > 0 {
			fmt.Fprintf(&b, "\n%s failed on %d series:\n", r.Name, len(r.Fail))
			for _, l := range groupReasons(r.Fail) {
				b.WriteString("- " + l + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "\nDetails: %s (series.csv, horizon.csv, forecasts.csv)\n", dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "series.csv"), []string{"method", "series", "n_train", "status", "smape", "mape",
		"max_abs_error", "covered", "banded", "seconds", "error"}, seriesRows); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "horizon.csv"), []string{"method", "h", "series", "mean_smape", "coverage", "covered"}, horizonRows); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "forecasts.csv"), []string{"method", "series", "h", "y", "mean", "lo", "hi"}, fcRows)
}

// g formats a float for CSV files.
func g(x float64) string { return strconv.FormatFloat(x, 'g', 10, 64) }

func secsCell(secs map[string]float64, series string) string {
	if v, ok := secs[series]; ok {
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return ""
}
