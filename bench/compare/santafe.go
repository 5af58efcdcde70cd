package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The santafe suite: streamd alone on the Santa Fe laser record, the
// protocols of ../shared/data/README.md and issue 16's no-regression rows
// (docs/benchmarks.md, "Santa Fe laser"). The competition's target — 100
// steps iterated from point 1000 — is one path, decided by the timing of one
// intensity collapse, so the suite also runs the defaults at three
// working-set seeds and scores the same horizon from many origins: 100-step
// forecasts every sfEvery samples over the whole record, from point 1 001.
const (
	sfTrain   = 1000 // the competition's training points
	sfHorizon = 100
	sfEvery   = 50
)

// sfSeeds are the working-set seeds the defaults run at (1 is the default).
var sfSeeds = []int{1, 2, 3}

// sfReport is what the suite reads of a backtest report.
type sfReport struct {
	Metrics struct {
		N          int              `json:"n"`
		NMSE       num              `json:"nmse"`
		NLPD       num              `json:"nlpd"`
		Coverage95 num              `json:"coverage95"`
		ByHorizon  []horizonMetrics `json:"by_horizon"`
	} `json:"metrics"`
	Config struct {
		Lags []int `json:"lags"`
	} `json:"config"`
	Model struct {
		M      int    `json:"m"`
		Kernel string `json:"kernel"`
	} `json:"model"`
}

// horizonMetrics is one step h of a report's metrics.by_horizon.
type horizonMetrics struct {
	H          int `json:"h"`
	N          int `json:"n"`
	RMSE       num `json:"rmse"`
	NLPD       num `json:"nlpd"`
	Coverage95 num `json:"coverage95"`
}

// pooled is the many-origin score: the steps h ≥ from of every forecast
// pooled, each step h weighted by its count — the mean squared error over
// the variance v of the scored values (NMSE), the mean NLPD and the
// coverage. h = 1 is every sample's one-step prediction, a population of
// its own, so the suite pools from h = 2. ok is false when no step counts.
func pooled(hs []horizonMetrics, from int, v float64) (nmse, nlpd, cover float64, n int, ok bool) {
	var se, lp, cv float64
	for _, h := range hs {
		if h.H < from || h.N == 0 {
			continue
		}
		w := float64(h.N)
		se += w * float64(h.RMSE) * float64(h.RMSE)
		lp += w * float64(h.NLPD)
		cv += w * float64(h.Coverage95)
		n += h.N
	}
	if n == 0 || !(v > 0) {
		return 0, 0, 0, 0, false
	}
	return se / float64(n) / v, lp / float64(n), cv / float64(n), n, true
}

// variance is the population variance (ddof 0) of y, as the protocols'
// NMSE uses.
func variance(y []float64) float64 {
	m := mean(y)
	var s float64
	for _, v := range y {
		s += (v - m) * (v - m)
	}
	return s / float64(len(y))
}

// sfRun is one backtest of the suite: with the configuration file
// repoConfig of the repository, else with config written out when not
// empty, else with none (the defaults).
type sfRun struct {
	name, repoConfig, config string
	args                     []string
	manyOrigins              bool
}

func (e *env) santafe(ctx context.Context) error {
	dir := filepath.Join(e.out, "santafe")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data := filepath.Join(e.data, "santafe", "laser_full_10093.dat")
	y, err := readValueFile(data)
	if err != nil {
		return err
	}
	if len(y) < sfTrain+sfHorizon {
		return fmt.Errorf("%s: %d values, want at least %d", data, len(y), sfTrain+sfHorizon)
	}
	iterated := []string{"--protocol", "iterated", "--train", strconv.Itoa(sfTrain), "--horizon", strconv.Itoa(sfHorizon)}
	runs := []sfRun{
		{name: "`config/santafe.yaml`", repoConfig: "config/santafe.yaml", args: iterated},
		{name: "`--tune` (batch search on the training values)", args: append([]string{"--tune"}, iterated...)},
	}
	for _, s := range sfSeeds {
		runs = append(runs, sfRun{name: fmt.Sprintf("defaults, seed %d", s), config: seedConfig(s, false), args: iterated})
	}
	many := []string{"--eval-from", strconv.Itoa(sfTrain + 1)}
	for _, s := range sfSeeds {
		runs = append(runs, sfRun{name: fmt.Sprintf("defaults, seed %d, %d steps every %d samples", s, sfHorizon, sfEvery),
			config: seedConfig(s, true), args: many, manyOrigins: true})
	}
	runs = append(runs, sfRun{name: "defaults, one step", args: append([]string{"--horizon", "1"}, many...)})

	results := make([]runResult, len(runs))
	e.parallel(len(runs), func(i int) {
		r := runs[i]
		base := filepath.Join(dir, fmt.Sprintf("run%d", i))
		args := []string{"backtest", "--data", data, "--report", base + ".json"}
		switch {
		case r.repoConfig != "":
			args = append(args, "--config", filepath.Join(e.repo, r.repoConfig))
		case r.config != "":
			if err := os.WriteFile(base+".yaml", []byte(r.config), 0o644); err != nil {
				results[i] = runResult{Err: err}
				return
			}
			args = append(args, "--config", base+".yaml")
		}
		fmt.Fprintf(e.stderr, "compare: santafe: %s\n", r.name)
		results[i] = e.streamd(ctx, append(args, r.args...)...)
		os.WriteFile(base+".log", []byte(results[i].Stderr), 0o644) // a diagnostic only
	})

	vAll := variance(y[sfTrain:])
	header := []string{"run", "scored", "NMSE", "NLPD", "95 % coverage", "model", "wall time"}
	var rows [][]string
	for i, r := range runs {
		res := results[i]
		if res.Err != nil {
			rows = append(rows, []string{r.name, "failed: " + res.reason(), "", "", "", "", ""})
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run%d.json", i)))
		if err != nil {
			return err
		}
		var rep sfReport
		if err := json.Unmarshal(b, &rep); err != nil {
			return fmt.Errorf("%s, report: %w", r.name, err)
		}
		scored := fmt.Sprintf("%d–%d", sfTrain+1, sfTrain+sfHorizon)
		nmse, nlpd, cover := float64(rep.Metrics.NMSE), float64(rep.Metrics.NLPD), float64(rep.Metrics.Coverage95)
		if r.manyOrigins {
			var n int
			var ok bool
			if nmse, nlpd, cover, n, ok = pooled(rep.Metrics.ByHorizon, 2, vAll); !ok {
				return fmt.Errorf("%s: the report has no steps h ≥ 2", r.name)
			}
			scored = fmt.Sprintf("h = 2..%d, %d steps", sfHorizon, n)
		} else if len(rep.Metrics.ByHorizon) > 0 && rep.Metrics.ByHorizon[len(rep.Metrics.ByHorizon)-1].H == 1 {
			scored = fmt.Sprintf("%d one-step", rep.Metrics.N)
		}
		model := fmt.Sprintf("%s, lags %s, M = %d", rep.Model.Kernel, lagString(rep.Config.Lags), rep.Model.M)
		rows = append(rows, []string{r.name, scored, fmtG4(nmse), fmtG4(nlpd), strconv.FormatFloat(cover, 'f', 3, 64), model, fmtSeconds(res.Elapsed.Seconds())})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "### Santa Fe laser (streamd)\n\n")
	out.WriteString(markdownTable(header, rows))
	fmt.Fprintf(&out, "\nIterated rows: learn points 1–%d, forecast %d–%d blind, NMSE over the variance of those %d points. "+
		"Many-origin rows: %d-step forecasts every %d samples of the whole record (`forecast.every`), steps h ≥ 2 pooled over the forecasts whose targets are from point %d on, NMSE over the variance of points %d–%d. "+
		"The seed is `model.seed`, the working set's; everything else the defaults.\n",
		sfTrain, sfTrain+1, sfTrain+sfHorizon, sfHorizon, sfHorizon, sfEvery, sfTrain+1, sfTrain+1, len(y))
	fmt.Fprintf(&out, "\nDetails: %s (runN.json, runN.log, runN.yaml)\n", dir)
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(out.String()), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, out.String())
	return err
}

// seedConfig is the defaults with the working set's seed s (none for the
// default seed 1, so that the row is the defaults' own), with many: the
// many-origin forecasts.
func seedConfig(s int, many bool) string {
	var b strings.Builder
	if s != 1 {
		fmt.Fprintf(&b, "model:\n  seed: %d\n", s)
	}
	if many {
		fmt.Fprintf(&b, "forecast:\n  horizon: %d\n  every: %d\n", sfHorizon, sfEvery)
	}
	return b.String()
}

// lagString writes lags as "1..p" when they are 1..p, else as a list.
func lagString(l []int) string {
	run := len(l) > 0
	for i, v := range l {
		run = run && v == i+1
	}
	if run {
		return fmt.Sprintf("1..%d", len(l))
	}
	s := make([]string, len(l))
	for i, v := range l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// fmtG4 writes x with four significant digits.
func fmtG4(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
