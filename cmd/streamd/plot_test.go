package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/streamd/streamd/internal/online"
)

// checkPlotPath refuses a path that cannot be written before any work, and
// leaves nothing behind where it can.
func TestCheckPlotPathRefusesUnwritable(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "taken.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		filepath.Join(dir, "missing", "p.png"), // no such directory
		filepath.Join(dir, "taken.png"),        // a directory
		"/proc/streamd-plot.svg",               // a file system nobody writes, root included
	} {
		if err := checkPlotPath(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	ok := filepath.Join(dir, "p.svg")
	if err := checkPlotPath(ok); err != nil {
		t.Fatalf("%s: %v", ok, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "taken.png" {
		t.Errorf("left behind in %s: %v", dir, entries)
	}
}

// A long prequential run is drawn over its last plotWindow predictions,
// with the actual values of the same window, the horizon and the window
// named in the title, the legend beside the data, and the per-horizon panel.
func TestForecastPlotWindowAndPanel(t *testing.T) {
	const n = 3000
	var actual plotter.XYs
	var band []bandPoint
	for i := range n {
		tt := float64(i + 1)
		y := math.Sin(tt / 20)
		m := y + 0.1*math.Cos(tt)
		actual = append(actual, plotter.XY{X: tt, Y: y})
		band = append(band, bandPoint{t: tt, mean: m, lo: m - 0.08, hi: m + 0.08})
	}
	var byH []horizonMetrics
	for h := 1; h <= 12; h++ {
		hm := horizonMetrics{H: h}
		hm.RMSE, hm.Coverage95, hm.N = jsonFloat(0.1*float64(h)), jsonFloat(0.97-0.01*float64(h)), 100
		byH = append(byH, hm)
	}
	f := forecastPlot{Title: "sine — prequential", What: "one-step predictions (h = 1)", Actual: actual, Band: band,
		Level: 0.95, Window: plotWindow, ByHorizon: byH}
	wb, wa := f.window()
	if len(wb) != plotWindow || wb[0].t != n-plotWindow+1 || len(wa) != plotWindow || wa[0].X != wb[0].t {
		t.Fatalf("window: %d band points from t=%g, %d actual from t=%g", len(wb), wb[0].t, len(wa), wa[0].X)
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "p.svg")
	if err := f.save(svg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one-step predictions (h = 1), the last 500 of 3000 targets", "RMSE by horizon",
		"95 % interval coverage by horizon", "horizon h (steps ahead)", "95 % interval", "outside it (", "nominal 95 %"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	// The backtest's figure: the same, from the run and its report.
	bt := &backtest{cfg: online.Config{Level: 0.95}, actual: actual, band: band}
	rep := &report{Protocol: "prequential"}
	rep.Metrics.ByHorizon = byH
	g := backtestPlot("sine — prequential", bt, rep)
	if g.What != f.What || g.Window != plotWindow || len(g.ByHorizon) != len(byH) {
		t.Errorf("backtestPlot: %q, window %d, %d horizons", g.What, g.Window, len(g.ByHorizon))
	}
	png := filepath.Join(dir, "p.png")
	if err := g.save(png); err != nil {
		t.Fatal(err)
	}
	checkPlot(t, png)
}

// The horizon axis labels at most ten horizons, round ones.
func TestHorizonTicks(t *testing.T) {
	for _, c := range []struct {
		max  float64
		want []string
	}{
		{5.5, []string{"1", "2", "3", "4", "5"}},
		{20.5, []string{"2", "4", "6", "8", "10", "12", "14", "16", "18", "20"}},
		{100.5, []string{"10", "20", "30", "40", "50", "60", "70", "80", "90", "100"}},
	} {
		var got []string
		for _, tk := range (horizonTicks{}).Ticks(0.5, c.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("1..%g: %v, want %v", c.max-0.5, got, c.want)
		}
	}
}

// The value axes label about six round values with the decimals they need.
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		min, max float64
		want     []string
	}{
		{-12, 260, []string{"0", "50", "100", "150", "200", "250"}},
		{0.8, 1.01, []string{"0.80", "0.85", "0.90", "0.95", "1.00"}},
		{9590, 10100, []string{"9600", "9700", "9800", "9900", "10000", "10100"}},
	} {
		var got []string
		for _, tk := range (niceTicks{}).Ticks(c.min, c.max) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("[%g, %g]: %v, want %v", c.min, c.max, got, c.want)
		}
	}
}
