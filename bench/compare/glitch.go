package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The glitch suite's corrupt value: the glitchBack-th value from the end of
// each NN3 training series multiplied by glitchFactor, as a sensor's or an
// export's unit error would; near the end, so that it is in the lags of
// the forecast's first steps.
const (
	glitchFactor = 1e4
	glitchBack   = 5
)

// corrupt returns copies of series whose training values carry the suite's
// corrupt value; the test values and the inputs are untouched.
func corrupt(series []nn3Series) []nn3Series {
	out := make([]nn3Series, len(series))
	for i, s := range series {
		out[i] = s
		out[i].Train = append([]float64(nil), s.Train...)
		if k := len(s.Train) - glitchBack; k >= 0 {
			out[i].Train[k] *= glitchFactor
		}
	}
	return out
}

// glitch runs the nn3 suite's streamd forecasts (defaults, 18 steps
// iterated) on the training values as they are and with one corrupt value
// each, and scores both on the test values: what one bad record costs.
func (e *env) glitch(ctx context.Context) error {
	series, dir, fcDir, err := e.prepareNN3("glitch", e.holdout)
	if err != nil {
		return err
	}
	clean := e.iteratedStreamd(ctx, "streamd (defaults), the training values", series, fcDir, nn3Horizon)
	bad := corrupt(series)
	if err := writeNN3Files(bad, filepath.Join(dir, "data-glitch")); err != nil {
		return err
	}
	badDir := filepath.Join(dir, "forecasts-glitch")
	if err := os.MkdirAll(badDir, 0o755); err != nil {
		return err
	}
	name := fmt.Sprintf("streamd (defaults), the %dth value from the end × %g", glitchBack, glitchFactor)
	glitched := e.iteratedStreamd(ctx, name, bad, badDir, nn3Horizon)

	header := []string{"method", "series forecast", "mean sMAPE %", "median sMAPE %", "p90 sMAPE %", "95 % coverage", "wall time"}
	var rows [][]string
	for _, r := range []methodRun{clean, glitched} {
		var scores []seriesScore
		for _, s := range series {
			if f, ok := r.Fc[s.Name]; ok {
				scores = append(scores, scoreSeries(s.Test, f))
			}
		}
		m := summarize(scores)
		rows = append(rows, []string{r.Name, fmt.Sprintf("%d/%d", len(scores), len(series)), f2(m.MeanSMAPE),
			f2(m.MedianSMAPE), f2(m.P90SMAPE), fmtCoverage(m.Covered, m.Values), fmtSeconds(r.WallS)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### One corrupt value (NN3, %d series, %d-step iterated forecast)\n\n", len(series), nn3Horizon)
	b.WriteString(markdownTable(header, rows))
	fmt.Fprintf(&b, "\nThe same series and protocol as nn3, once with each series' %dth value from the end multiplied by %g.\n", glitchBack, glitchFactor)
	for _, r := range []methodRun{clean, glitched} {
		if len(r.Fail) > 0 {
			fmt.Fprintf(&b, "\n%s failed on %d series:\n", r.Name, len(r.Fail))
			for _, l := range groupReasons(r.Fail) {
				b.WriteString("- " + l + "\n")
			}
		}
	}
	fmt.Fprintf(&b, "\nDetails: %s (data/, data-glitch/, forecasts/, forecasts-glitch/)\n", dir)
	if _, err := fmt.Fprint(e.stdout, b.String()); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "table.md"), []byte(b.String()), 0o644)
}
