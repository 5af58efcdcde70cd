package main

import (
	"context"
	"fmt"
)

// The short suite's cut: each NN3 series' first shortTrain values, one
// year, forecast shortHorizon steps, scored on the training column's next
// values — as short as the yearly series of forecasting competitions, and
// shorter than a series' first fit (online.FirstFit).
const (
	shortTrain   = 12
	shortHorizon = 6
)

// cutShort returns the series cut for the short suite; series with fewer
// than shortTrain + shortHorizon training values are an error (NN3 has
// none).
func cutShort(series []nn3Series) ([]nn3Series, error) {
	out := make([]nn3Series, len(series))
	for i, s := range series {
		if len(s.Train) < shortTrain+shortHorizon {
			return nil, fmt.Errorf("series %s has %d training values, fewer than %d", s.Name, len(s.Train), shortTrain+shortHorizon)
		}
		out[i] = nn3Series{Name: s.Name, Train: s.Train[:shortTrain:shortTrain], Test: s.Train[shortTrain : shortTrain+shortHorizon]}
	}
	return out, nil
}

// short runs streamd with its defaults and R's methods on the first year
// of every NN3 series, as the nn3 suite does on the whole training columns.
func (e *env) short(ctx context.Context) error {
	series, dir, fcDir, err := e.prepareNN3Cut("short", cutShort)
	if err != nil {
		return err
	}
	sd := e.iteratedStreamd(ctx, "streamd (defaults)", series, fcDir, shortHorizon)
	rMethods, rElapsed, err := e.rForecasts(ctx, "short", series, dir, shortHorizon)
	if err != nil {
		return err
	}
	filled := sd
	filled.Name = fmt.Sprintf("streamd (defaults), all %d: failures naive, no band", len(series))
	filled.Filled = true
	title := fmt.Sprintf("Short series (the first %d values of each of the %d NN3 series, %d-step iterated forecast)",
		shortTrain, len(series), shortHorizon)
	return e.reportNN3(series, append([]methodRun{sd, filled}, rMethods...), dir, rElapsed, shortHorizon, title)
}
