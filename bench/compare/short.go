package main

import (
	"context"
	"fmt"
)

// The short suite's default cut: each NN3 series' first shortTrain values,
// one year, forecast shortHorizon steps, scored on the training column's
// next values — as short as the yearly series of forecasting
// competitions, and shorter than a series' first fit (online.FirstFit).
// -short-train and -short-horizon cut elsewhere (up to the shortest
// series' 50 training values in all).
const (
	shortTrain   = 12
	shortHorizon = 6
)

// cutShort returns the first train values of each series as its training
// values and the next h as its test; a series with fewer than train + h
// training values is an error.
func cutShort(series []nn3Series, train, h int) ([]nn3Series, error) {
	out := make([]nn3Series, len(series))
	for i, s := range series {
		if len(s.Train) < train+h {
			return nil, fmt.Errorf("series %s has %d training values, fewer than %d", s.Name, len(s.Train), train+h)
		}
		out[i] = nn3Series{Name: s.Name, Train: s.Train[:train:train], Test: s.Train[train : train+h]}
	}
	return out, nil
}

// short runs streamd with its defaults and R's methods on the first year
// of every NN3 series, as the nn3 suite does on the whole training columns.
func (e *env) short(ctx context.Context) error {
	train, h := e.shortTrain, e.shortHorizon
	series, dir, fcDir, err := e.prepareNN3Cut("short", func(s []nn3Series) ([]nn3Series, error) { return cutShort(s, train, h) })
	if err != nil {
		return err
	}
	sd := e.iteratedStreamd(ctx, "streamd (defaults)", series, fcDir, h)
	rMethods, rElapsed, err := e.rForecasts(ctx, "short", series, dir, h)
	if err != nil {
		return err
	}
	filled := sd
	filled.Name = fmt.Sprintf("streamd (defaults), all %d: failures naive, no band", len(series))
	filled.Filled = true
	title := fmt.Sprintf("Short series (the first %d values of each of the %d NN3 series, %d-step iterated forecast%s)",
		train, len(series), h, e.datedNote())
	return e.reportNN3(series, append([]methodRun{sd, filled}, rMethods...), dir, rElapsed, h, title)
}
