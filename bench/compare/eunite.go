package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	euniteTrain   = 730 // 1997-01-01 .. 1998-12-31
	euniteHorizon = 31  // January 1999
)

// euniteRow is one day of the file both sides read.
type euniteRow struct {
	Date        string
	Load        float64 // daily maximum of the 48 half-hourly loads
	Holiday     int
	Temperature float64 // observed; for the forecast days the 1995–1998 climatology
}

// loadDays reads an EUNITE load file (date, Holiday, Weekday, 48 half-hourly
// columns h00.30..h24.00, possibly daily_max): the date, the holiday flag and
// the maximum of the 48 half-hours of each day.
func loadDays(r io.Reader) ([]euniteRow, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("no data rows")
	}
	hdr := rows[0]
	dateCol, holCol := -1, -1
	var halfHours []int
	for i, h := range hdr {
		h = strings.TrimSpace(h)
		switch {
		case h == "date":
			dateCol = i
		case h == "Holiday":
			holCol = i
		case len(h) == 6 && h[0] == 'h' && h[3] == '.':
			halfHours = append(halfHours, i)
		}
	}
	if dateCol < 0 || holCol < 0 || len(halfHours) != 48 {
		return nil, fmt.Errorf("header %v: want date, Holiday and 48 half-hour columns hHH.MM (found %d)", hdr, len(halfHours))
	}
	var out []euniteRow
	for i, row := range rows[1:] {
		if len(row) != len(hdr) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", i+2, len(row), len(hdr))
		}
		d := euniteRow{Date: strings.TrimSpace(row[dateCol]), Load: math.Inf(-1)}
		if d.Holiday, err = strconv.Atoi(strings.TrimSpace(row[holCol])); err != nil || (d.Holiday != 0 && d.Holiday != 1) {
			return nil, fmt.Errorf("line %d: Holiday %q is not 0 or 1", i+2, row[holCol])
		}
		for _, c := range halfHours {
			v, err := strconv.ParseFloat(strings.TrimSpace(row[c]), 64)
			if err != nil || !isFinite(v) {
				return nil, fmt.Errorf("line %d: column %s: %q is not a finite number", i+2, hdr[c], row[c])
			}
			d.Load = math.Max(d.Load, v)
		}
		out = append(out, d)
	}
	return out, checkConsecutive(out)
}

// checkConsecutive checks that the rows are consecutive days.
func checkConsecutive(rows []euniteRow) error {
	var prev time.Time
	for i, r := range rows {
		d, err := time.Parse(time.DateOnly, r.Date)
		if err != nil {
			return fmt.Errorf("row %d: date %q: %v", i+1, r.Date, err)
		}
		if i > 0 && !d.Equal(prev.AddDate(0, 0, 1)) {
			return fmt.Errorf("row %d: %s does not follow %s", i+1, r.Date, rows[i-1].Date)
		}
		prev = d
	}
	return nil
}

// readTemperatures reads date,temperature into a map by date.
func readTemperatures(r io.Reader) (map[string]float64, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 1 || len(rows[0]) != 2 || strings.TrimSpace(rows[0][1]) != "temperature" {
		return nil, fmt.Errorf("want a header date,temperature")
	}
	out := map[string]float64{}
	for i, row := range rows[1:] {
		v, err := strconv.ParseFloat(strings.TrimSpace(row[1]), 64)
		if err != nil || !isFinite(v) {
			return nil, fmt.Errorf("line %d: %q is not a finite number", i+2, row[1])
		}
		out[strings.TrimSpace(row[0])] = v
	}
	return out, nil
}

// climatology is the mean temperature of the calendar day (MM-DD) of date
// over the years first..last of temps; ok is false when none has it.
func climatology(temps map[string]float64, date string, first, last int) (float64, bool) {
	md := date[4:] // "-MM-DD"
	sum, n := 0.0, 0
	for y := first; y <= last; y++ {
		if v, ok := temps[strconv.Itoa(y)+md]; ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return math.NaN(), false
	}
	return sum / float64(n), true
}

// buildEunite joins the training days (observed temperatures) and the test
// days (holiday flags known in advance, the 1995–1998 temperature
// climatology of each calendar day, the true load for scoring).
func buildEunite(train, test, temps io.Reader) ([]euniteRow, error) {
	tr, err := loadDays(train)
	if err != nil {
		return nil, fmt.Errorf("training loads: %w", err)
	}
	te, err := loadDays(test)
	if err != nil {
		return nil, fmt.Errorf("test loads: %w", err)
	}
	t, err := readTemperatures(temps)
	if err != nil {
		return nil, fmt.Errorf("temperatures: %w", err)
	}
	for i := range tr {
		v, ok := t[tr[i].Date]
		if !ok {
			return nil, fmt.Errorf("no temperature for %s", tr[i].Date)
		}
		tr[i].Temperature = v
	}
	for i := range te {
		v, ok := climatology(t, te[i].Date, 1995, 1998)
		if !ok {
			return nil, fmt.Errorf("no 1995–1998 temperature for the calendar day of %s", te[i].Date)
		}
		te[i].Temperature = v
	}
	rows := append(tr, te...)
	return rows, checkConsecutive(rows)
}

func buildEuniteFiles(dir string) ([]euniteRow, error) {
	var files []io.Reader
	for _, name := range []string{"eunite_load_1997_1998.csv", "eunite_load_jan1999_TEST.csv", "eunite_temp_1995_1998.csv"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		files = append(files, f)
	}
	return buildEunite(files[0], files[1], files[2])
}

func writeEunite(path string, rows []euniteRow) error {
	var recs [][]string
	for _, r := range rows {
		recs = append(recs, []string{r.Date, g(r.Load), strconv.Itoa(r.Holiday), strconv.FormatFloat(math.Round(r.Temperature*1e6)/1e6, 'g', -1, 64)})
	}
	return writeCSV(path, []string{"date", "load", "holiday", "temperature"}, recs)
}

// minimalEuniteConfig declares the two inputs as current values (lag 0) and
// leaves everything else to the defaults.
const minimalEuniteConfig = "model: {inputs: 2, input_lags: [0]}\n"

func (e *env) eunite(ctx context.Context) error {
	rows, err := buildEuniteFiles(filepath.Join(e.data, "eunite"))
	if err != nil {
		return err
	}
	if len(rows) != euniteTrain+euniteHorizon || rows[0].Date != "1997-01-01" || rows[len(rows)-1].Date != "1999-01-31" {
		return fmt.Errorf("built %d rows %s..%s, want %d rows 1997-01-01..1999-01-31", len(rows), rows[0].Date, rows[len(rows)-1].Date, euniteTrain+euniteHorizon)
	}
	dir := filepath.Join(e.out, "eunite")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data := filepath.Join(dir, "eunite.csv")
	if err := writeEunite(data, rows); err != nil {
		return err
	}
	test := make([]float64, euniteHorizon)
	for i := range test {
		test[i] = rows[euniteTrain+i].Load
	}

	minimal := filepath.Join(dir, "minimal.yaml")
	if err := os.WriteFile(minimal, []byte(minimalEuniteConfig), 0o644); err != nil {
		return err
	}
	type variant struct{ name, slug, config, inputs string }
	var variants []variant
	rel, _ := filepath.Rel(e.repo, e.euniteConfig)
	haveConfig := false
	if _, err := os.Stat(e.euniteConfig); err == nil {
		haveConfig = true
		variants = append(variants, variant{"streamd (" + rel + ")", "config", e.euniteConfig, "holiday,temperature"})
	}
	variants = append(variants,
		variant{"streamd (minimal config: inputs 2, input_lags [0])", "minimal", minimal, "holiday,temperature"},
		variant{"streamd univariate (no config, no inputs)", "univariate", "", ""})

	var runs []methodRun
	for _, v := range variants {
		fmt.Fprintf(e.stderr, "compare: eunite: %s\n", v.name)
		out := filepath.Join(dir, "streamd_"+v.slug+".jsonl")
		args := []string{"backtest", "--data", data, "--time", "date", "--column", "load"}
		if v.inputs != "" {
			args = append(args, "--inputs", v.inputs)
		}
		if v.config != "" {
			args = append(args, "--config", v.config)
		}
		args = append(args, "--protocol", "iterated", "--train", strconv.Itoa(euniteTrain),
			"--horizon", strconv.Itoa(euniteHorizon), "--forecasts", out)
		r := e.streamd(ctx, args...)
		if err := os.WriteFile(filepath.Join(dir, "streamd_"+v.slug+".log"),
			[]byte("streamd "+strings.Join(args, " ")+"\n"+r.Stdout+r.Stderr), 0o644); err != nil {
			return err
		}
		mr := methodRun{Name: v.name, Fc: map[string]forecast{}, Fail: map[string]string{}, WallS: r.Elapsed.Seconds()}
		if r.Err != nil {
			mr.Fail["eunite"] = r.reason()
		} else if msgs, err := readMessagesFile(out); err != nil {
			mr.Fail["eunite"] = err.Error()
		} else if fc, err := iteratedForecast(msgs, euniteHorizon); err != nil {
			mr.Fail["eunite"] = "no usable forecast: " + err.Error()
		} else {
			mr.Fc["eunite"] = fc
		}
		runs = append(runs, mr)
	}

	fmt.Fprintf(e.stderr, "compare: eunite: R forecast\n")
	rFc, rTimes, rErrs := filepath.Join(dir, "r_forecasts.csv"), filepath.Join(dir, "r_times.csv"), filepath.Join(dir, "r_errors.csv")
	rr := e.rscriptRun(ctx, "eunite.R", data, strconv.Itoa(euniteTrain), strconv.Itoa(euniteHorizon), rFc, rTimes, rErrs)
	if err := os.WriteFile(filepath.Join(dir, "r.log"), []byte(rr.Stdout+rr.Stderr), 0o644); err != nil {
		return err
	}
	if rr.Err != nil {
		return fmt.Errorf("Rscript eunite.R: %v\n%s", rr.Err, rr.Stderr)
	}
	rMethods, err := loadRRun(rFc, rTimes, rErrs, euniteHorizon, []string{"arima+xreg", "ets", "thetaf", "comb", "snaive"},
		map[string]string{"arima+xreg": "auto.arima + xreg (weekday, holiday, temperature, Fourier K=3)",
			"ets": "ets (frequency 7)", "thetaf": "thetaf (frequency 7)", "comb": "comb (mean of the 3)", "snaive": "snaive (weekly)"})
	if err != nil {
		return err
	}
	runs = append(runs, rMethods...)

	header := []string{"method", "MAPE %", "max abs error", "95 % coverage", "wall time"}
	var tableRows, fcRows, hRows [][]string
	for _, r := range runs {
		f, ok := r.Fc["eunite"]
		if !ok {
			why := r.Fail["eunite"]
			if why == "" {
				why = "no forecast"
			}
			tableRows = append(tableRows, []string{r.Name, "failed", "—", "—", fmtSeconds(r.WallS)})
			hRows = append(hRows, []string{r.Name, "", "", "", "", "", "", why})
			continue
		}
		sc := scoreSeries(test, f)
		tableRows = append(tableRows, []string{r.Name, f2(sc.MAPE), fmt.Sprintf("%.0f", sc.MaxAE),
			fmtCoverage(sc.Covered, len(sc.APE)), fmtSeconds(r.WallS)})
		for h := range f.Mean {
			fcRows = append(fcRows, []string{r.Name, rows[euniteTrain+h].Date, strconv.Itoa(h + 1), g(test[h]), g(f.Mean[h]), g(f.Lo[h]), g(f.Hi[h]),
				g(sc.APE[h]), strconv.FormatBool(sc.Band[h] == inBand)})
		}
		hRows = append(hRows, []string{r.Name, g(sc.MAPE), g(sc.MaxAE), strconv.Itoa(sc.Covered), strconv.Itoa(len(sc.APE)),
			g(sc.SMAPE), g(r.WallS), ""})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### EUNITE (daily maximum load, 31 days of January 1999 from %d days of 1997–1998)\n\n", euniteTrain)
	b.WriteString(markdownTable(header, tableRows))
	b.WriteString("\nMAPE = 100/31·Σ|L−L̂|/L; coverage of the 95 % band over the 31 days. Holiday flags are known in advance; " +
		"January 1999 temperatures are the 1995–1998 mean of the calendar day.\n")
	if !haveConfig {
		fmt.Fprintf(&b, "%s does not exist: the minimal configuration %q stands in for it.\n", rel, strings.TrimSpace(minimalEuniteConfig))
	}
	for _, r := range runs {
		if why, bad := r.Fail["eunite"]; bad {
			fmt.Fprintf(&b, "- %s failed: %s\n", r.Name, why)
		}
	}
	fmt.Fprintf(&b, "\nDetails: %s (eunite.csv, summary.csv, forecasts.csv, logs)\n", dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := writeCSV(filepath.Join(dir, "summary.csv"), []string{"method", "mape", "max_abs_error", "covered", "n", "smape", "seconds", "error"}, hRows); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "forecasts.csv"), []string{"method", "date", "h", "load", "mean", "lo", "hi", "ape", "covered"}, fcRows)
}
