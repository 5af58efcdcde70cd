package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// coldFrom is the 1-based index of the first value every series must have a
// one-step forecast for (issue 16: no later than its 24th value).
const coldFrom = 24

func (e *env) coldstart(ctx context.Context) error {
	series, dir, fcDir, err := e.prepareNN3("coldstart", 0)
	if err != nil {
		return err
	}
	runs := e.backtestEach(ctx, series, fcDir, func(nn3Series) []string {
		return []string{"--protocol", "prequential", "--horizon", "1"}
	})
	type result struct {
		score coldScore
		fail  string
		secs  float64
	}
	results := make([]result, len(series))
	for i, r := range runs {
		// Score what was written even after a failure (nothing, usually).
		results[i] = result{score: scoreColdstart(series[i].Train, oneStepForecasts(r.msgs), coldFrom), fail: r.fail, secs: r.secs}
	}

	var scores []coldScore
	var rows [][]string
	late := map[string]string{}
	wall := 0.0
	for i, r := range results {
		s := series[i]
		sc := r.score
		scores = append(scores, sc)
		wall += r.secs
		first := "none"
		if sc.First > 0 {
			first = strconv.Itoa(sc.First)
		}
		switch {
		case r.fail != "":
			late[s.Name] = r.fail
		case sc.First == 0:
			late[s.Name] = "no one-step forecast in the output"
		case sc.First > coldFrom:
			late[s.Name] = "first forecast at value " + first
		}
		rows = append(rows, []string{s.Name, strconv.Itoa(len(s.Train)), first, strconv.Itoa(sc.Targets), strconv.Itoa(sc.Scored),
			strconv.Itoa(sc.Missing), g(perTarget(sc.SAPESum, sc.Scored)), g(perTarget(sc.NaiveSAPESum, sc.Scored)),
			strconv.Itoa(sc.Covered), strconv.Itoa(sc.NonFinite), strconv.Itoa(sc.Wide), strconv.FormatFloat(r.secs, 'f', 3, 64), r.fail})
	}
	c := summarizeCold(scores)
	header := []string{"forecaster", "forecast by value 24", "targets scored", "pooled 1-step sMAPE %", "95 % coverage",
		"non-finite", "bands > 10× range", "median first index", "wall time"}
	table := [][]string{
		{"streamd (prequential, no config)", fmt.Sprintf("%d/%d", c.ByFrom, c.Series), fmt.Sprintf("%d/%d", c.Scored, c.Targets),
			f2(c.SMAPE), fmtCoverage(c.Covered, c.Scored), strconv.Itoa(c.NonFinite), strconv.Itoa(c.Wide), fmtFloat(c.MedianFirst, 0), fmtSeconds(wall)},
		{"naive (last value), same targets", "—", fmt.Sprintf("%d/%d", c.Scored, c.Targets), f2(c.Naive), "—", "—", "—", "—", "—"},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Cold start (NN3 training series, prequential one-step, values %d.. scored)\n\n", coldFrom)
	b.WriteString(markdownTable(header, table))
	b.WriteString("\nsMAPE and coverage pooled over the (series, value) targets from each series' 24th value on that have a forecast; " +
		"a band is too wide when hi − lo > 10 × (max − min) of the values before its target.\n")
	if len(late) > 0 {
		fmt.Fprintf(&b, "\n%d of %d series have no forecast by their %dth value:\n", len(late), len(series), coldFrom)
		for _, l := range groupReasons(late) {
			b.WriteString("- " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "\nDetails: %s (series.csv, forecasts/)\n", dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return writeCSV(filepath.Join(dir, "series.csv"), []string{"series", "n", "first_forecast", "targets", "scored", "missing",
		"smape", "naive_smape", "covered", "non_finite", "wide_bands", "seconds", "error"}, rows)
}

func perTarget(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}
