package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// classicSet is one of R's classic data sets (package datasets) the classic
// suite forecasts from several origins: H steps from each origin n =
// First, First+Step, … up to len − H, each scored on the H values after it.
// One origin scores H correlated errors of one path; several say more of a
// method's accuracy and bands.
type classicSet struct {
	Name              string // the R object
	Freq, H           int    // its ts frequency; the forecast horizon
	First, Step       int    // the first origin and the step between origins
	Kind, Description string
	// Sum, when above 1, is how many of the R object's values make one
	// of the set's: a monthly series summed over quarters (sumOver). Freq,
	// H, First and Step are then of the sums.
	Sum int
}

// classicSets are the series issue 16 was measured on (AirPassengers, co2,
// lynx: trend with multiplicative season, trend with season, a short
// cycle) and others of the kinds pipelines carry.
var classicSets = []classicSet{
	{"AirPassengers", 12, 12, 96, 6, "monthly", "airline passengers 1949–1960: trend, multiplicative season", 0},
	{"co2", 12, 12, 348, 12, "monthly", "Mauna Loa CO₂ 1959–1997: trend, season", 0},
	{"lynx", 1, 5, 84, 5, "annual", "lynx trappings 1821–1934: a 10-year cycle, skewed", 0},
	{"nottem", 12, 12, 180, 12, "monthly", "Nottingham temperatures 1920–1939: season", 0},
	{"USAccDeaths", 12, 12, 48, 6, "monthly", "US accidental deaths 1973–1978: season, short", 0},
	{"UKgas", 4, 8, 80, 4, "quarterly", "UK gas consumption 1960–1986: trend, growing season", 0},
	{"sunspot.year", 1, 10, 229, 10, "annual", "yearly sunspots 1700–1988: an irregular cycle", 0},
}

// moreSets are the datasets suite's: every univariate series of R's
// datasets and forecast packages without missing values and of fewer than
// 500 values that the classic suite does not hold (the longer ones, taylor
// and treering, would make R's fits the suite's cost), each forecast from
// four origins a horizon apart, the last a horizon before its end: series
// in general, not chosen for how any method does on them. A non-integer
// ts frequency (uspop's 0.1) is given as 1.
var moreSets = []classicSet{
	{"austres", 4, 8, 57, 8, "quarterly", "Australian residents 1971–1993: a smooth trend", 0},
	{"JohnsonJohnson", 4, 8, 52, 8, "quarterly", "Johnson & Johnson earnings 1960–1980: growth, growing season", 0},
	{"freeny.y", 4, 4, 23, 4, "quarterly", "revenue 1962–1971: a short trend", 0},
	{"woolyrnq", 4, 8, 87, 8, "quarterly", "Australian woollen yarn 1965–1994: season, shifts", 0},
	{"ldeaths", 12, 12, 24, 12, "monthly", "UK lung disease deaths 1974–1979: season, short", 0},
	{"UKDriverDeaths", 12, 12, 144, 12, "monthly", "UK drivers killed 1969–1984: season, a level shift", 0},
	{"wineind", 12, 12, 128, 12, "monthly", "Australian wine sales 1980–1994: trend, season", 0},
	{"gas", 12, 12, 428, 12, "monthly", "Australian gas production 1956–1995: growth, growing season", 0},
	{"Nile", 1, 10, 60, 10, "annual", "Nile flow 1871–1970: a level shift, noise", 0},
	{"LakeHuron", 1, 10, 58, 10, "annual", "Lake Huron level 1875–1972: persistent", 0},
	{"nhtemp", 1, 10, 20, 10, "annual", "New Haven temperature 1912–1971: noise", 0},
	{"discoveries", 1, 10, 60, 10, "annual", "great discoveries 1860–1959: counts", 0},
	{"airmiles", 1, 3, 12, 3, "annual", "US airline miles 1937–1960: growth, short", 0},
	{"uspop", 1, 2, 11, 2, "decennial", "US population 1790–1970: growth, very short", 0},
	{"BJsales", 1, 10, 110, 10, "regular", "Box–Jenkins sales: a trend that wanders", 0},
	{"WWWusage", 1, 10, 60, 10, "minutely", "Internet server users: persistent, smooth", 0},
	{"lh", 1, 6, 24, 6, "10-minutely", "luteinizing hormone: short, noisy", 0},
}

// quarterlySets are the quarterly suite's: R's quarterly series and R's
// monthly seasonal series summed over quarters (Sum 3), each forecast a
// year ahead from four origins a year apart, the last a year before its
// end (from three, the first at 12 values, for the two of 24 quarters).
// The monthly sets' quarters hold the classic and datasets suites' series
// at the step that turns their season of 12 into one of 4, which
// streamd's bare values must find by themselves: quarterly series of a
// pipeline (and of a competition's quarterly part) beside the monthly
// ones.
var quarterlySets = []classicSet{
	{"UKgas", 4, 4, 92, 4, "quarterly", "UK gas consumption 1960–1986: trend, growing season", 0},
	{"JohnsonJohnson", 4, 4, 68, 4, "quarterly", "Johnson & Johnson earnings 1960–1980: growth, growing season", 0},
	{"woolyrnq", 4, 4, 103, 4, "quarterly", "Australian woollen yarn 1965–1994: season, shifts", 0},
	{"austres", 4, 4, 73, 4, "quarterly", "Australian residents 1971–1993: a smooth trend", 0},
	{"AirPassengers", 4, 4, 32, 4, "quarterly", "airline passengers 1949–1960, summed over quarters: trend, multiplicative season", 3},
	{"co2", 4, 4, 140, 4, "quarterly", "Mauna Loa CO₂ 1959–1997, summed over quarters: trend, season", 3},
	{"nottem", 4, 4, 64, 4, "quarterly", "Nottingham temperatures 1920–1939, summed over quarters: season", 3},
	{"UKDriverDeaths", 4, 4, 48, 4, "quarterly", "UK drivers killed 1969–1984, summed over quarters: season, a level shift", 3},
	{"wineind", 4, 4, 42, 4, "quarterly", "Australian wine sales 1980–1994, summed over quarters: trend, season", 3},
	{"gas", 4, 4, 142, 4, "quarterly", "Australian gas production 1956–1995, summed over quarters: growth, growing season", 3},
	{"USAccDeaths", 4, 4, 12, 4, "quarterly", "US accidental deaths 1973–1978, summed over quarters: season, short", 3},
	{"ldeaths", 4, 4, 12, 4, "quarterly", "UK lung disease deaths 1974–1979, summed over quarters: season, short", 3},
}

// sumOver returns the sums of k consecutive values of y, the oldest
// len(y) mod k values dropped so that the last sum ends at the last value
// (a series' latest quarter is complete), and how many were dropped.
func sumOver(y []float64, k int) (sums []float64, dropped int) {
	dropped = len(y) % k
	for i := dropped; i+k <= len(y); i += k {
		var s float64
		for _, v := range y[i : i+k] {
			s += v
		}
		sums = append(sums, s)
	}
	return sums, dropped
}

// setTimes returns the times of the n values of set s from R's start
// (year and period of its ts) as streamd reads them: dates a calendar
// step apart for the monthly, quarterly, annual and decennial sets, RFC
// 3339 times a minute or ten apart from 2000-01-01 for the minutely ones
// (R gives them none); nil for a set whose values have no time step
// (BJsales's).
func setTimes(s classicSet, year, period, n int) []string {
	switch s.Kind {
	case "monthly":
		return monthsFrom(year, period, 1, n)
	case "quarterly":
		return monthsFrom(year, 3*(period-1)+1, 3, n)
	case "annual":
		return monthsFrom(year, 1, 12, n)
	case "decennial":
		return monthsFrom(year, 1, 120, n)
	case "minutely", "10-minutely":
		step := time.Minute
		if s.Kind == "10-minutely" {
			step = 10 * time.Minute
		}
		out := make([]string, n)
		for i := range out {
			out[i] = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * step).Format(time.RFC3339)
		}
		return out
	}
	return nil
}

// writeSetDated writes each cut of set s (of its n values) as a dated
// file beside its values (nn3Series.Dated), its start read from
// startFile (datasets.R's); a set without times (setTimes) is left as
// bare values. A summed set's (Sum) start is its R object's, a month,
// moved past the dropped values; its sums are dated by their first month,
// Sum months apart.
func writeSetDated(s classicSet, series []nn3Series, startFile string, n, dropped int) error {
	b, err := os.ReadFile(startFile)
	if err != nil {
		return err
	}
	var year, period int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d,%d", &year, &period); err != nil {
		return fmt.Errorf("%s: %v", startFile, err)
	}
	times := setTimes(s, year, period, n)
	if s.Sum > 1 {
		times = monthsFrom(year, period+dropped, s.Sum, n)
	}
	if times == nil {
		return nil
	}
	for i := range series {
		series[i].Dated = strings.TrimSuffix(series[i].File, ".txt") + ".csv"
		if err := writeDated(series[i].Dated, times, series[i].Train); err != nil {
			return err
		}
	}
	return nil
}

// classicOrigins returns the origins of set s on n values: First, First+Step,
// … while an origin leaves H values to score.
func classicOrigins(s classicSet, n int) []int {
	var out []int
	for o := s.First; o+s.H <= n; o += s.Step {
		out = append(out, o)
	}
	return out
}

// classicSeries cuts the values y of set s at each origin: the training
// values before it and the H after it, named SET@ORIGIN.
func classicSeries(s classicSet, y []float64) []nn3Series {
	var out []nn3Series
	for _, o := range classicOrigins(s, len(y)) {
		out = append(out, nn3Series{Name: s.Name + "@" + strconv.Itoa(o), Train: y[:o:o], Test: y[o : o+s.H]})
	}
	return out
}

// classicScore is one method's score on one set: the mean over origins of
// the mean absolute error of the path and of its sMAPE, the mean scaled
// error (each path's MAE over the mean absolute one-step change of its
// training values), and the 95 % bands' coverage over every value scored.
type classicScore struct {
	Origins, Forecast int
	MAE, SMAPE, MASE  float64
	Covered, Values   int
}

func scoreClassic(series []nn3Series, fc map[string]forecast) classicScore {
	var sc classicScore
	sc.Origins = len(series)
	for _, s := range series {
		f, ok := fc[s.Name]
		if !ok {
			continue
		}
		sc.Forecast++
		r := scoreSeries(s.Test, f)
		mae := mean(r.AE)
		var scale float64
		for k := 1; k < len(s.Train); k++ {
			scale += math.Abs(s.Train[k] - s.Train[k-1])
		}
		scale /= float64(len(s.Train) - 1)
		sc.MAE += mae
		sc.SMAPE += r.SMAPE
		sc.MASE += mae / scale
		sc.Covered += r.Covered
		sc.Values += len(r.AE)
	}
	// With nothing forecast the means are NaN, which the tables print as
	// "—": zeros would read as perfect forecasts.
	n := float64(sc.Forecast)
	sc.MAE, sc.SMAPE, sc.MASE = sc.MAE/n, sc.SMAPE/n, sc.MASE/n
	return sc
}

// classicMethods are the R methods of the classic suites, in table order;
// rSingles are the single methods among them, of which the best per set is
// the suites' yardstick (geoRatio).
var (
	classicMethods = []string{"auto.arima", "ets", "thetaf", "comb", "snaive"}
	rSingles       = []string{"auto.arima", "ets", "thetaf"}
)

// geoRatio returns the geometric mean over sets of a/b, the ratio of two
// methods' scores on each: below 1 when a is ahead on the typical set, each
// set counting alike whatever its units. ok is false when a ratio is not
// positive and finite, or there are none.
func geoRatio(a, b []float64) (float64, bool) {
	if len(a) == 0 || len(a) != len(b) {
		return 0, false
	}
	var s float64
	for i := range a {
		r := a[i] / b[i]
		if !(r > 0) || math.IsInf(r, 0) {
			return 0, false
		}
		s += math.Log(r)
	}
	return math.Exp(s / float64(len(a))), true
}

func (e *env) classic(ctx context.Context) error {
	return e.runSets(ctx, "classic", classicSets, "R's classic data sets, iterated forecasts from several origins")
}

// datasets runs moreSets as the classic suite runs its sets.
func (e *env) datasets(ctx context.Context) error {
	return e.runSets(ctx, "datasets", moreSets, "More of R's data sets, iterated forecasts from four origins each")
}

// quarterly runs quarterlySets as the classic suite runs its sets.
func (e *env) quarterly(ctx context.Context) error {
	return e.runSets(ctx, "quarterly", quarterlySets, "Quarterly series, a year ahead from three or four origins each")
}

// runSets is the classic, datasets and quarterly suites: every set cut at
// its origins, streamd with its defaults and R's methods forecasting each
// cut, one table and a summary of streamd against the best single R
// method per set.
func (e *env) runSets(ctx context.Context, suite string, sets []classicSet, title string) error {
	dir := filepath.Join(e.out, suite)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	names := make([]string, len(sets))
	for i, s := range sets {
		names[i] = s.Name
	}
	if r := e.rscriptRun(ctx, "datasets.R", append([]string{dataDir}, names...)...); r.Err != nil {
		return fmt.Errorf("Rscript datasets.R: %v\n%s", r.Err, r.Stderr)
	}
	header := []string{"series", "origins × H", "method", "MAE", "MASE", "sMAPE %", "95 % coverage"}
	var rows, csvRows [][]string
	var log, fails strings.Builder
	var sdMAE, bestMAE, combMAE []float64
	wins := 0
	for _, set := range sets {
		y, err := readValueFile(filepath.Join(dataDir, set.Name+".txt"))
		if err != nil {
			return err
		}
		dropped := 0
		if set.Sum > 1 {
			y, dropped = sumOver(y, set.Sum)
		}
		series := classicSeries(set, y)
		sdir := filepath.Join(dir, set.Name)
		if err := writeNN3Files(series, filepath.Join(sdir, "data")); err != nil {
			return err
		}
		if e.dated {
			if err := writeSetDated(set, series, filepath.Join(dataDir, set.Name+".start"), len(y), dropped); err != nil {
				return err
			}
		}
		fcDir := filepath.Join(sdir, "forecasts")
		if err := os.MkdirAll(fcDir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "compare: %s: %s, %d origins × %d steps\n", suite, set.Name, len(series), set.H)
		sd := e.iteratedStreamd(ctx, "streamd (defaults)", series, fcDir, set.H)
		var list []string
		for _, s := range series {
			list = append(list, fmt.Sprintf("%s,%s,%d", s.Name, s.File, set.Freq))
		}
		listFile := filepath.Join(sdir, "list.csv")
		if err := os.WriteFile(listFile, []byte("series,path,frequency\n"+strings.Join(list, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		rFc, rTimes, rErrs := filepath.Join(sdir, "r_forecasts.csv"), filepath.Join(sdir, "r_times.csv"), filepath.Join(sdir, "r_errors.csv")
		rr := e.rscriptRun(ctx, "nn3.R", listFile, strconv.Itoa(set.H), rFc, rTimes, rErrs)
		log.WriteString(rr.Stdout + rr.Stderr)
		if rr.Err != nil {
			return fmt.Errorf("Rscript nn3.R on %s: %v\n%s", set.Name, rr.Err, rr.Stderr)
		}
		rMethods, err := loadRRun(rFc, rTimes, rErrs, set.H, classicMethods,
			map[string]string{"comb": "comb (mean of the 3)", "snaive": "snaive"})
		if err != nil {
			return err
		}
		best, comb, complete := math.Inf(1), math.NaN(), true
		for i, r := range append([]methodRun{sd}, rMethods...) {
			sc := scoreClassic(series, r.Fc)
			complete = complete && sc.Forecast == sc.Origins
			switch {
			case i == 0:
			case slices.Contains(rSingles, classicMethods[i-1]):
				best = min(best, sc.MAE)
			case classicMethods[i-1] == "comb":
				comb = sc.MAE
			}
			if sc.Forecast < sc.Origins {
				for _, s := range series {
					if _, ok := r.Fc[s.Name]; !ok && r.Fail[s.Name] == "" {
						r.Fail[s.Name] = "no forecast"
					}
				}
				fmt.Fprintf(&fails, "\n%s: %s failed on %d of %d origins:\n", set.Name, r.Name, sc.Origins-sc.Forecast, sc.Origins)
				for _, l := range groupReasons(r.Fail) {
					fails.WriteString("- " + l + "\n")
				}
			}
			label := ""
			if i == 0 {
				label = fmt.Sprintf("%s (%s)", set.Name, set.Kind)
			}
			count := fmt.Sprintf("%d × %d", sc.Forecast, set.H)
			if sc.Forecast < sc.Origins {
				count = fmt.Sprintf("%d of %d × %d", sc.Forecast, sc.Origins, set.H)
			}
			rows = append(rows, []string{label, count, r.Name, fmtFloat(sc.MAE, 3), f3(sc.MASE), f2(sc.SMAPE), fmtCoverage(sc.Covered, sc.Values)})
			csvRows = append(csvRows, []string{set.Name, r.Name, strconv.Itoa(sc.Origins), strconv.Itoa(sc.Forecast), strconv.Itoa(set.H),
				g(sc.MAE), g(sc.MASE), g(sc.SMAPE), strconv.Itoa(sc.Covered), strconv.Itoa(sc.Values)})
		}
		// A set on which a method missed an origin scores its methods on
		// different origins: it is left out of the summary.
		if own := scoreClassic(series, sd.Fc); complete {
			sdMAE, bestMAE, combMAE = append(sdMAE, own.MAE), append(bestMAE, best), append(combMAE, comb)
			if own.MAE < best {
				wins++
			}
		}
	}
	var b strings.Builder
	b.WriteString("### " + title + e.datedNote() + "\n\n")
	b.WriteString(markdownTable(header, rows))
	if gb, ok := geoRatio(sdMAE, bestMAE); ok {
		gc, _ := geoRatio(sdMAE, combMAE)
		fmt.Fprintf(&b, "\nOver the %d sets every method forecast at every origin: streamd's MAE over the best single R method's "+
			"(auto.arima, ets, thetaf; the best of each set) %.3f, over comb's %.3f (geometric means); streamd ahead of all three on %d.\n",
			len(sdMAE), gb, gc, wins)
	}
	b.WriteString("\nEach origin's forecast sees only the values before it. MAE and sMAPE: means over the origins of each path's; " +
		"MASE: the path's MAE over the mean absolute one-step change of its training values, averaged; coverage of the 95 % bands " +
		"over every value scored. streamd: defaults, no configuration; R: forecast's defaults with the series' frequency.\n\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "- %s: %s; origins %d, %d, … every %d, %d steps\n", s.Name, s.Description, s.First, s.First+s.Step, s.Step, s.H)
	}
	b.WriteString(fails.String())
	fmt.Fprintf(&b, "\nDetails: %s (summary.csv; per set its cut series, forecasts and R outputs)\n", dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "r.log"), []byte(log.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "summary.csv"), []string{"set", "method", "origins", "forecast", "h",
		"mae", "mase", "smape", "covered", "values"}, csvRows)
}
