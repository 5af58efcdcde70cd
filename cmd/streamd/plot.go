package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotFormats are the --plot file types.
var plotFormats = []string{".svg", ".png", ".pdf"}

// checkPlotPath refuses, before any work, a --plot path whose type is not
// one of plotFormats or that cannot be written: it creates and removes a
// temporary file in the target directory, and opens an existing file for
// writing without changing it.
func checkPlotPath(path string) error {
	if !slices.Contains(plotFormats, strings.ToLower(filepath.Ext(path))) {
		return usageErrorf("--plot %s: the file name must end in %s", path, strings.Join(plotFormats, ", "))
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("--plot %s: is a directory", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("--plot %s: cannot be written: %w", path, err)
		}
		f.Close()
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".streamd-plot-*")
	if err != nil {
		return fmt.Errorf("--plot %s: cannot write in %s: %w", path, filepath.Dir(path), err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// bandPoint is a prediction of the value at time t with its interval.
type bandPoint struct {
	t, mean, lo, hi float64
}

// plotWindow is how many of the last one-step predictions of a prequential
// run the plot draws: 500 points show the series' shape and keep the band
// visible on a 10-inch figure; 10 000 squash it into a solid block.
const plotWindow = 500

// forecastPlot is the figure of a backtest: the true values, the predicted
// mean and its band over a window of the run, and, given per-horizon scores,
// a second panel of the error and the coverage by horizon.
type forecastPlot struct {
	Title string
	// What is drawn: the horizon of the band, e.g. "one-step predictions
	// (h = 1)"; it goes in the figure's subtitle.
	What   string
	Actual plotter.XYs
	Band   []bandPoint
	Level  float64
	// Window, when > 0, keeps the last Window band points and the actual
	// values from the first of them on.
	Window int
	// ByHorizon, when it holds more than one horizon, adds the per-horizon
	// panel (RMSE and coverage of the band at Level by h).
	ByHorizon []horizonMetrics
}

// backtestPlot is the figure of a finished backtest: the prequential run's
// last plotWindow one-step predictions with the report's scores by horizon,
// or the iterated forecast with the values before it. An iterated run scores
// one target per horizon, so its per-horizon "coverage" is 0 or 1: the main
// panel, which marks each step outside its interval, says the same better,
// and there is no second panel.
func backtestPlot(title string, bt *backtest, rep *report) forecastPlot {
	f := forecastPlot{Title: title, Actual: bt.actual, Band: bt.band, Level: bt.cfg.Level}
	if rep.Protocol == "iterated" {
		f.What = fmt.Sprintf("iterated forecast, h = 1..%d, from t = %d", len(bt.band), bt.s.t[bt.train-1])
	} else {
		f.What = "one-step predictions (h = 1)"
		f.Window = plotWindow
		f.ByHorizon = rep.Metrics.ByHorizon
	}
	return f
}

// Figure geometry: the main panel, the per-horizon panels under it, and the
// legend column to the right of the data.
const (
	figWidth     = 11 * vg.Inch
	mainHeight   = 4.6 * vg.Inch
	panelHeight  = 2.8 * vg.Inch
	legendWidth  = 2.4 * vg.Inch
	figMargin    = 0.15 * vg.Inch
	legendInsetY = 0.55 * vg.Inch // below the title, level with the data
)

var (
	bandColor   = color.NRGBA{R: 70, G: 130, B: 220, A: 95}
	meanColor   = color.NRGBA{R: 20, G: 70, B: 180, A: 255}
	missColor   = color.NRGBA{R: 200, G: 40, B: 40, A: 255}
	actualColor = color.Black
)

// save draws f and writes it to path in the format of its extension.
func (f forecastPlot) save(path string) error {
	band, actual := f.window()
	withPanel := len(f.ByHorizon) > 1
	height := mainHeight
	if withPanel {
		height += panelHeight
	}
	format := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	cw, err := draw.NewFormattedCanvas(figWidth, height, format)
	if err != nil {
		return err
	}
	dc := draw.Crop(draw.New(cw), figMargin, -figMargin, figMargin, -figMargin)
	top := dc
	if withPanel {
		top = draw.Crop(dc, 0, 0, panelHeight, 0)
	}
	main, legend, err := f.mainPlot(band, actual)
	if err != nil {
		return err
	}
	main.Draw(draw.Crop(top, 0, -legendWidth, 0, 0))
	legend.Draw(draw.Crop(top, figWidth-2*figMargin-legendWidth+0.15*vg.Inch, 0, 0, -legendInsetY))
	if withPanel {
		bottom := draw.Crop(dc, 0, 0, 0, -(height - 2*figMargin - panelHeight + 0.2*vg.Inch))
		w := (figWidth - 2*figMargin - legendWidth) / 2
		errPlot, covPlot, err := f.horizonPlots()
		if err != nil {
			return err
		}
		errPlot.Draw(draw.Crop(bottom, 0, -(figWidth - 2*figMargin - w), 0, 0))
		covPlot.Draw(draw.Crop(bottom, w+0.2*vg.Inch, -legendWidth, 0, 0))
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := cw.WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// window returns the band points and actual values the figure shows.
func (f forecastPlot) window() ([]bandPoint, plotter.XYs) {
	if f.Window <= 0 || len(f.Band) <= f.Window {
		return f.Band, f.Actual
	}
	band := f.Band[len(f.Band)-f.Window:]
	from, _ := slices.BinarySearchFunc(f.Actual, band[0].t, func(p plotter.XY, t float64) int {
		switch {
		case p.X < t:
			return -1
		case p.X > t:
			return 1
		}
		return 0
	})
	return band, f.Actual[from:]
}

// mainPlot draws the band, the actual values, the mean and the actual
// values outside the band; its legend is returned apart, to be drawn beside
// the data.
func (f forecastPlot) mainPlot(band []bandPoint, actual plotter.XYs) (*plot.Plot, *plot.Legend, error) {
	p := plot.New()
	p.Title.Text = f.Title + "\n" + f.subtitle(band)
	p.Title.Padding = 0.15 * vg.Inch
	p.X.Label.Text = "t"
	p.Y.Label.Text = "y"
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	p.Add(plotter.NewGrid())
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Padding = 0.06 * vg.Inch
	if len(band) > 0 {
		ring := make(plotter.XYs, 0, 2*len(band))
		for _, q := range band {
			ring = append(ring, plotter.XY{X: q.t, Y: q.lo})
		}
		for i := len(band) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: band[i].t, Y: band[i].hi})
		}
		poly, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, nil, err
		}
		poly.Color = bandColor
		poly.LineStyle.Width = 0
		p.Add(poly)
		legend.Add(fmt.Sprintf("%g %% interval", 100*f.Level), poly)
	}
	if len(actual) > 0 {
		l, err := plotter.NewLine(actual)
		if err != nil {
			return nil, nil, err
		}
		l.Color = actualColor
		l.Width = vg.Points(0.9)
		p.Add(l)
		legend.Add("actual", l)
	}
	if len(band) > 0 {
		mean := make(plotter.XYs, len(band))
		for i, q := range band {
			mean[i] = plotter.XY{X: q.t, Y: q.mean}
		}
		l, err := plotter.NewLine(mean)
		if err != nil {
			return nil, nil, err
		}
		l.Color = meanColor
		l.Width = vg.Points(1.2)
		p.Add(l)
		legend.Add("predicted mean", l)
		if miss := misses(band, actual); len(miss) > 0 {
			s, err := plotter.NewScatter(miss)
			if err != nil {
				return nil, nil, err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: missColor, Radius: vg.Points(2.2), Shape: draw.CircleGlyph{}}
			p.Add(s)
			legend.Add(fmt.Sprintf("outside it (%d of %d)", len(miss), len(band)), s)
		}
	}
	return p, &legend, nil
}

// subtitle says what the figure shows: the horizon, and the window.
func (f forecastPlot) subtitle(band []bandPoint) string {
	s := f.What
	if len(band) < len(f.Band) {
		s += fmt.Sprintf(", the last %d of %d targets", len(band), len(f.Band))
	}
	return s
}

// misses are the actual values at the band's times that lie outside it.
func misses(band []bandPoint, actual plotter.XYs) plotter.XYs {
	at := make(map[float64]float64, len(actual))
	for _, a := range actual {
		at[a.X] = a.Y
	}
	var out plotter.XYs
	for _, q := range band {
		if y, ok := at[q.t]; ok && (y < q.lo || y > q.hi) {
			out = append(out, plotter.XY{X: q.t, Y: y})
		}
	}
	return out
}

// horizonPlots draws the RMSE and the coverage of the band at Level by
// horizon (the metrics' coverage95 is of the [lo, hi] band, at
// forecast.level).
func (f forecastPlot) horizonPlots() (rmse, coverage *plot.Plot, err error) {
	errPts := make(plotter.XYs, 0, len(f.ByHorizon))
	covPts := make(plotter.XYs, 0, len(f.ByHorizon))
	for _, h := range f.ByHorizon {
		if v := float64(h.RMSE); !math.IsNaN(v) && !math.IsInf(v, 0) {
			errPts = append(errPts, plotter.XY{X: float64(h.H), Y: v})
		}
		if v := float64(h.Coverage95); !math.IsNaN(v) && !math.IsInf(v, 0) {
			covPts = append(covPts, plotter.XY{X: float64(h.H), Y: 100 * v})
		}
	}
	rmse = plot.New()
	rmse.Title.Text = "RMSE by horizon"
	rmse.X.Label.Text = "horizon h (steps ahead)"
	rmse.Y.Label.Text = "RMSE"
	rmse.Y.Min = 0
	rmse.Y.Tick.Marker = niceTicks{}
	coverage = plot.New()
	nominalPct := 100 * f.Level
	coverage.Title.Text = fmt.Sprintf("%g %% interval coverage by horizon", nominalPct)
	coverage.X.Label.Text = "horizon h (steps ahead)"
	coverage.Y.Label.Text = "coverage (%)"
	coverage.Y.Tick.Marker = niceTicks{}
	for _, p := range []*plot.Plot{rmse, coverage} {
		p.Add(plotter.NewGrid())
		p.X.Min = 0.5
		p.X.Max = float64(len(f.ByHorizon)) + 0.5
		p.X.Tick.Marker = horizonTicks{}
	}
	if err := addLinePoints(rmse, errPts, meanColor); err != nil {
		return nil, nil, err
	}
	nominal, err := plotter.NewLine(plotter.XYs{{X: coverage.X.Min, Y: nominalPct}, {X: coverage.X.Max, Y: nominalPct}})
	if err != nil {
		return nil, nil, err
	}
	nominal.Color = missColor
	nominal.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	coverage.Add(nominal)
	coverage.Legend.Add(fmt.Sprintf("nominal %g %%", nominalPct), nominal)
	coverage.Legend.Top = false
	coverage.Legend.Left = true
	coverage.Legend.XOffs = vg.Points(6)
	coverage.Legend.YOffs = vg.Points(4)
	if err := addLinePoints(coverage, covPts, meanColor); err != nil {
		return nil, nil, err
	}
	coverage.Y.Min, coverage.Y.Max = math.Min(coverage.Y.Min, 80), 100
	return rmse, coverage, nil
}

func addLinePoints(p *plot.Plot, pts plotter.XYs, c color.Color) error {
	if len(pts) == 0 {
		return nil
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.2)
	s.Color, s.Radius, s.Shape = c, vg.Points(2), draw.CircleGlyph{}
	p.Add(l, s)
	return nil
}

// horizonTicks labels integer horizons, ten at most, 1, 2 or 5 × 10^k
// apart, with an unlabelled tick at every other horizon up to 50 of them.
type horizonTicks struct{}

func (horizonTicks) Ticks(min, max float64) []plot.Tick {
	lo, hi := int(math.Ceil(min)), int(math.Floor(max))
	step := 1
	for mag := 1; ; mag *= 10 {
		if (hi-lo)/mag <= 10 {
			step = mag
			break
		}
		if (hi-lo)/(2*mag) <= 10 {
			step = 2 * mag
			break
		}
		if (hi-lo)/(5*mag) <= 10 {
			step = 5 * mag
			break
		}
	}
	var ticks []plot.Tick
	for h := lo; h <= hi; h++ {
		switch {
		case h%step == 0 || step == 1:
			ticks = append(ticks, plot.Tick{Value: float64(h), Label: fmt.Sprint(h)})
		case hi-lo <= 50:
			ticks = append(ticks, plot.Tick{Value: float64(h)})
		}
	}
	return ticks
}

// niceTicks labels about six values 1, 2 or 5 × 10^k apart, with the
// decimals that spacing needs, and an unlabelled tick half-way between.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 6, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	half := step / 2
	for k := math.Ceil(lo / half); k*half <= hi+half*1e-9; k++ {
		v := k * half
		if v == 0 {
			v = 0 // not −0
		}
		t := plot.Tick{Value: v}
		if int64(k)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', decimals, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
