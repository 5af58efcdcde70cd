package main

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// plotFormats are the --plot file types.
var plotFormats = []string{".svg", ".png", ".pdf"}

func checkPlotPath(path string) error {
	if !slices.Contains(plotFormats, strings.ToLower(filepath.Ext(path))) {
		return usageErrorf("--plot %s: the file name must end in %s", path, strings.Join(plotFormats, ", "))
	}
	return nil
}

// bandPoint is a prediction of the value at time t with its interval.
type bandPoint struct {
	t, mean, lo, hi float64
}

// plotForecast draws the true values (actual: t, y pairs), the predicted mean
// and the shaded [lo, hi] band of pts, and saves the figure to path (the
// format from its extension).
func plotForecast(path, title string, actual plotter.XYs, pts []bandPoint, level float64) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "t"
	p.Y.Label.Text = "y"
	p.Legend.Top = true

	if len(pts) > 0 {
		ring := make(plotter.XYs, 0, 2*len(pts))
		for _, q := range pts {
			ring = append(ring, plotter.XY{X: q.t, Y: q.lo})
		}
		for i := len(pts) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: pts[i].t, Y: pts[i].hi})
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return err
		}
		band.Color = color.NRGBA{R: 70, G: 130, B: 220, A: 70}
		band.LineStyle.Width = 0
		p.Add(band)
		p.Legend.Add(fmt.Sprintf("%g %% interval", 100*level), band)
	}
	if len(actual) > 0 {
		l, err := plotter.NewLine(actual)
		if err != nil {
			return err
		}
		l.Color = color.Black
		l.Width = vg.Points(0.8)
		p.Add(l)
		p.Legend.Add("actual", l)
	}
	if len(pts) > 0 {
		mean := make(plotter.XYs, len(pts))
		for i, q := range pts {
			mean[i] = plotter.XY{X: q.t, Y: q.mean}
		}
		l, err := plotter.NewLine(mean)
		if err != nil {
			return err
		}
		l.Color = color.NRGBA{R: 20, G: 70, B: 180, A: 255}
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add("forecast mean", l)
	}
	return p.Save(10*vg.Inch, 4*vg.Inch, path)
}
