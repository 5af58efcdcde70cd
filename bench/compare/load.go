package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The load suite: the EUNITE half-hourly loads of 1997–1998 (the 48 columns
// of each day of eunite_load_1997_1998.csv, one series), forecast a day
// ahead from loadOrigins midnights over the last year, each origin's
// forecast seeing only the values before it. A series of two seasons (a
// day, 48 values; a week, 336) and thousands of values with times: what a
// metering or traffic pipeline carries.
const (
	loadPerDay  = 48
	loadOrigins = 28
	loadEvery   = 13 // days between origins
)

// loadHalfHours reads the daily rows (date, Holiday, Weekday, the 48
// half-hours ending 00:30 … 24:00, then the day's maximum) into times (Unix
// ms of each half-hour's start, UTC) and values, in order.
func loadHalfHours(r io.Reader) (ts []int64, ys []float64, err error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(rows) < 2 || len(rows[0]) < 3+loadPerDay || rows[0][0] != "date" {
		return nil, nil, fmt.Errorf("want a header date,Holiday,Weekday and %d half-hours", loadPerDay)
	}
	for _, row := range rows[1:] {
		day, err := time.Parse(time.DateOnly, row[0])
		if err != nil {
			return nil, nil, err
		}
		if n := len(ts); n > 0 && day.UnixMilli() != ts[n-1]+int64(30*time.Minute/time.Millisecond) {
			return nil, nil, fmt.Errorf("%s does not follow the day before", row[0])
		}
		for k, cell := range row[3 : 3+loadPerDay] {
			y, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil || !isFinite(y) {
				return nil, nil, fmt.Errorf("%s half-hour %d: %q is not a number", row[0], k+1, cell)
			}
			ts = append(ts, day.Add(time.Duration(k)*30*time.Minute).UnixMilli())
			ys = append(ys, y)
		}
	}
	return ts, ys, nil
}

// loadCuts returns the day-ahead cuts: loadOrigins midnights loadEvery
// days apart, the last one a day before the end (N − 48(1 + loadEvery·k),
// k = loadOrigins−1 … 0, in order), each training on the values before it
// and scored on its day. A 13-day step moves the weekday from origin to
// origin and spreads them over the last year, its seasons and holidays.
func loadCuts(ys []float64) []nn3Series {
	var out []nn3Series
	for k := loadOrigins - 1; k >= 0; k-- {
		o := len(ys) - loadPerDay*(1+loadEvery*k)
		out = append(out, nn3Series{Name: "load@" + strconv.Itoa(o), Train: ys[:o:o], Test: ys[o : o+loadPerDay]})
	}
	return out
}

// writeLoadFiles writes each cut as a CSV of t (RFC 3339) and y for
// streamd, its training values and the day after (backtest scores them;
// the harness scores the forecast messages itself), and its training
// values one per line for R.
func writeLoadFiles(cuts []nn3Series, ts []int64, dir string) (csvs []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for i := range cuts {
		c := &cuts[i]
		c.File = filepath.Join(dir, c.Name+".txt")
		if err := writeValues(c.File, c.Train); err != nil {
			return nil, err
		}
		var b strings.Builder
		b.WriteString("t,y\n")
		for k, y := range append(c.Train[:len(c.Train):len(c.Train)], c.Test...) {
			fmt.Fprintf(&b, "%s,%s\n", time.UnixMilli(ts[k]).UTC().Format(time.RFC3339), strconv.FormatFloat(y, 'g', -1, 64))
		}
		p := filepath.Join(dir, c.Name+".csv")
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			return nil, err
		}
		csvs = append(csvs, p)
	}
	return csvs, nil
}

func (e *env) load(ctx context.Context) error {
	f, err := os.Open(filepath.Join(e.data, "eunite", "eunite_load_1997_1998.csv"))
	if err != nil {
		return err
	}
	ts, ys, err := loadHalfHours(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("eunite_load_1997_1998.csv: %w", err)
	}
	dir := filepath.Join(e.out, "load")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	cuts := loadCuts(ys)
	csvs, err := writeLoadFiles(cuts, ts, filepath.Join(dir, "data"))
	if err != nil {
		return err
	}
	// streamd reads each cut's CSV (with its times), R its values.
	byCSV := slices.Clone(cuts)
	for i := range byCSV {
		byCSV[i].File = csvs[i]
	}
	// The third run reads the values R reads, without their times: the
	// periods must then come from the values (a pipeline keyed by sequence
	// numbers).
	var runs []methodRun
	for _, v := range []struct {
		name, cfg string
		times     bool
	}{
		{"streamd (defaults)", "", true},
		{"streamd (config/load.yaml: calendar)", filepath.Join(e.repo, "config", "load.yaml"), true},
		{"streamd (defaults, values without times)", "", false},
	} {
		fcDir := filepath.Join(dir, "forecasts", strconv.Itoa(len(runs)))
		if err := os.MkdirAll(fcDir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "compare: load: %s, %d origins × %d steps\n", v.name, len(cuts), loadPerDay)
		series, extra := cuts, []string(nil)
		if v.times {
			series, extra = byCSV, []string{"--time", "t", "--column", "y"}
		}
		if v.cfg != "" {
			extra = append(extra, "--config", v.cfg)
		}
		runs = append(runs, e.iteratedStreamd(ctx, v.name, series, fcDir, loadPerDay, extra...))
	}
	var list []string
	for _, c := range cuts {
		list = append(list, c.Name+","+c.File)
	}
	listFile := filepath.Join(dir, "list.csv")
	if err := os.WriteFile(listFile, []byte("series,path\n"+strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	rFc, rTimes, rErrs := filepath.Join(dir, "r_forecasts.csv"), filepath.Join(dir, "r_times.csv"), filepath.Join(dir, "r_errors.csv")
	fmt.Fprintf(e.stderr, "compare: load: R\n")
	rr := e.rscriptRun(ctx, "load.R", listFile, strconv.Itoa(loadPerDay), rFc, rTimes, rErrs)
	if err := os.WriteFile(filepath.Join(dir, "r.log"), []byte(rr.Stdout+rr.Stderr), 0o644); err != nil {
		return err
	}
	if rr.Err != nil {
		return fmt.Errorf("Rscript load.R: %v\n%s", rr.Err, rr.Stderr)
	}
	rMethods, err := loadRRun(rFc, rTimes, rErrs, loadPerDay, []string{"stlf", "snaive.day", "snaive.week"},
		map[string]string{"stlf": "stlf (mstl, periods 48 and 336; ets)", "snaive.day": "snaive (a day before)", "snaive.week": "snaive (a week before)"})
	if err != nil {
		return err
	}
	header := []string{"method", "origins × H", "MAE", "MAPE %", "MASE", "95 % coverage", "time"}
	var rows, csvRows [][]string
	for _, r := range append(runs, rMethods...) {
		sc := scoreClassic(cuts, r.Fc)
		mape := loadMAPE(cuts, r.Fc)
		rows = append(rows, []string{r.Name, fmt.Sprintf("%d of %d × %d", sc.Forecast, sc.Origins, loadPerDay),
			f2(sc.MAE), f2(mape), f3(sc.MASE), fmtCoverage(sc.Covered, sc.Values), fmtSeconds(r.WallS)})
		csvRows = append(csvRows, []string{r.Name, strconv.Itoa(sc.Origins), strconv.Itoa(sc.Forecast), g(sc.MAE), g(mape), g(sc.MASE),
			strconv.Itoa(sc.Covered), strconv.Itoa(sc.Values), g(r.WallS)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Half-hourly load (EUNITE 1997–1998), day-ahead from %d midnights over a year\n\n", loadOrigins)
	b.WriteString(markdownTable(header, rows))
	fmt.Fprintf(&b, "\nOrigins: %d midnights %d days apart, %s to %s, each forecast %d steps from the values before it. "+
		"MAE, MAPE: over every value scored; MASE: each path's MAE over the mean absolute one-step change of its training values, averaged; "+
		"time: summed over the origins' runs.\n\nDetails: %s (summary.csv, cut series, forecasts, R outputs)\n",
		loadOrigins, loadEvery, time.UnixMilli(ts[len(cuts[0].Train)]).UTC().Format(time.DateOnly),
		time.UnixMilli(ts[len(ts)-loadPerDay]).UTC().Format(time.DateOnly), loadPerDay, dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "summary.csv"), []string{"method", "origins", "forecast", "mae", "mape", "mase", "covered", "values", "seconds"}, csvRows)
}

// loadMAPE is the mean absolute percentage error over every value of the
// cuts that fc forecasts.
func loadMAPE(cuts []nn3Series, fc map[string]forecast) float64 {
	var sum float64
	var n int
	for _, c := range cuts {
		f, ok := fc[c.Name]
		if !ok {
			continue
		}
		for h, y := range c.Test {
			sum += aPE(y, f.Mean[h])
			n++
		}
	}
	return sum / float64(n) // NaN ("—") when nothing was forecast
}
