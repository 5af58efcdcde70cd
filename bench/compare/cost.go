package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The cost suite (issue 17's cost acceptance): streamd's per-sample cost on
// the Santa Fe laser with the hyperparameters fixed — lags 1..20, RBF σ² 20,
// γ 1000, working set M, swap tests every 10 samples — so that only the
// online path is timed: the samples after the warm-up (its last re-choice at
// value 1000), from the backtest report's timing.online. No peer: the
// figure is streamd's own.

// costConfig is the fixed-hyperparameter configuration at working set m.
func costConfig(m int) string {
	return fmt.Sprintf(`# cost suite: Santa Fe, lags 1..20, σ² 20, γ 1000 fixed, M = %d (issue 17).
model:
  transform: none
  difference: 0
  lags: 20
  working_set: %d
  kernel:
    type: rbf
    sigma2: 20
  gamma: 1000
  scale: standard
  warmup: %d
  swap_interval: 10
forecast:
  horizon: 1
`, m, m, krlstFrom-1)
}

// costReport is what the suite reads of a backtest report.
type costReport struct {
	Timing struct {
		Online struct {
			Updates int   `json:"updates"`
			NsMean  num   `json:"ns_mean"`
			NsP50   int64 `json:"ns_p50"`
			NsP99   int64 `json:"ns_p99"`
			NsMax   int64 `json:"ns_max"`
		} `json:"online"`
	} `json:"timing"`
	Model struct {
		M     int `json:"m"`
		Swaps int `json:"swaps"`
	} `json:"model"`
}

// cost runs the suite at every M of -m on the standardised laser record.
func (e *env) cost(ctx context.Context) error {
	ms, err := parseMs(e.krlstOpts.santafeMs)
	if err != nil {
		return fmt.Errorf("-m: %w", err)
	}
	dir := filepath.Join(e.out, "cost")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	raw, err := readValueFile(filepath.Join(e.data, "santafe", "laser_full_10093.dat"))
	if err != nil {
		return err
	}
	z, _, _, err := standardize(raw, krlstFrom-1)
	if err != nil {
		return err
	}
	data := filepath.Join(dir, "santafe.std.txt")
	var b strings.Builder
	for _, v := range z {
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		return err
	}
	header := []string{"M", "kept", "samples", "mean µs", "p50 µs", "p99 µs", "max µs", "mean / p50", "swaps"}
	var rows [][]string
	for _, m := range ms {
		fmt.Fprintf(e.stderr, "compare: cost M = %d\n", m)
		base := filepath.Join(dir, fmt.Sprintf("M%d", m))
		if err := os.WriteFile(base+".yaml", []byte(costConfig(m)), 0o644); err != nil {
			return err
		}
		r := e.streamd(ctx, "backtest", "--data", data, "--config", base+".yaml", "--protocol", "prequential",
			"--horizon", "1", "--report", base+".json")
		os.WriteFile(base+".log", []byte(r.Stderr), 0o644) // a diagnostic only
		if r.Err != nil {
			rows = append(rows, []string{strconv.Itoa(m), "failed: " + r.reason(), "", "", "", "", "", "", ""})
			continue
		}
		rb, err := os.ReadFile(base + ".json")
		if err != nil {
			return err
		}
		var rep costReport
		if err := json.Unmarshal(rb, &rep); err != nil {
			return fmt.Errorf("%s: %w", base+".json", err)
		}
		o := rep.Timing.Online
		us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 1, 64) }
		rows = append(rows, []string{strconv.Itoa(m), strconv.Itoa(rep.Model.M), strconv.Itoa(o.Updates),
			us(float64(o.NsMean)), us(float64(o.NsP50)), us(float64(o.NsP99)), us(float64(o.NsMax)),
			strconv.FormatFloat(float64(o.NsMean)/float64(o.NsP50), 'f', 2, 64), strconv.Itoa(rep.Model.Swaps)})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "### Cost per sample: Santa Fe laser, lags 1..20, σ² 20, γ 1000 fixed, swap tests every 10 samples\n\n")
	out.WriteString(markdownTable(header, rows))
	fmt.Fprintf(&out, "\nTimes of `Learner.Observe` (predict, learn, swap, the periodic level-2 and calibration refits) for the samples after the warm-up (values 1001–%d), from the backtest report's `timing.online`; kept = working-set members kept at the fit.\n", len(z))
	if err := os.WriteFile(filepath.Join(dir, "table.md"), []byte(out.String()), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprint(e.stdout, out.String())
	return err
}
