package daemon

import (
	"math"
	"time"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/theta"
)

// The forecast message of a Learner's result: the wire format (sink) knows
// nothing of the learner, and these adapters, used by the daemon and by
// `streamd backtest`, are the one place that maps one onto the other.

// SetResult fills the forecast message m from the Result of observing y at time t: Observed when
// the Result carries a one-step prediction, and the steps of its forecast
// (copied, since the Result's forecast aliases the Learner's buffer). m.Steps'
// backing array is reused, so a Message kept across calls does not allocate
// once it has grown to the horizon. IssuedAt and Model are left to the caller.
func SetResult(m *sink.Message, series string, t int64, y float64, res online.Result) {
	m.Series, m.T = series, t
	m.Observed = nil
	if res.Fitted {
		m.Observed = &sink.Observed{Y: y, Prediction: res.Prediction, Std: res.Std,
			Residual: res.Residual, Weight: res.Weight, Outlier: res.Outlier, DF: res.DF, Fallback: res.Fallback}
	}
	SetSteps(m, res.Forecast)
}

// SetSteps replaces m.Steps by a copy of steps, reusing m.Steps' backing array.
func SetSteps(m *sink.Message, steps []online.ForecastStep) {
	if m.Steps == nil {
		m.Steps = make([]sink.Step, 0, len(steps)) // "steps": [] rather than null
	}
	m.Steps = m.Steps[:0]
	for _, s := range steps {
		m.Steps = append(m.Steps, sink.Step{H: s.H, T: s.T, Mean: s.Mean, Std: s.Std, Lo: s.Lo, Hi: s.Hi, Fallback: s.Fallback})
	}
}

// youngKernel is the kernel a message names before the series' first fit,
// when its forecast (if any) is the theta method's alone, a young series'.
const youngKernel = "none"

// ModelInfoOf summarises l's model for forecast messages: σ² and γ in the
// model's standardised units, the noise std in the series' units. Before
// the first fit there is no model: kernel "none", and the theta method that
// forecasts alone (online.Learner.Theta), if any.
func ModelInfoOf(l *online.Learner) sink.ModelInfo {
	if !l.Fitted() {
		mi := sink.ModelInfo{Lags: []int{}, Kernel: youngKernel, Form: "none", Combine: "none"}
		if th := l.Theta(); th != nil {
			mi.Combine, mi.Theta = "theta", thetaInfo(th, 0) // a young series: the theta method alone
		}
		return mi
	}
	m := l.Model()
	info := m.Info()
	cfg := m.Config()
	_, scale := l.Scale()
	sigma2 := 0.0
	if cfg.Kernel.Type.HasRBF() {
		sigma2 = cfg.Kernel.Sigma2
	}
	mi := sink.ModelInfo{
		M:         info.M,
		Lags:      cfg.Embedding.YLags,
		InputLags: cfg.Embedding.InputLags[:l.Inputs()],
		Kernel:    cfg.Kernel.Type.String(),
		Form:      l.Form().String(),
		Sigma2:    sigma2,
		Gamma:     info.Gamma,
		NoiseStd:  scale * math.Sqrt(info.NoiseVar),
		DEff:      info.DEff,
		Swaps:     info.Swaps,
		DF:        info.DF,
		Combine:   "none",
	}
	if th := l.Theta(); th != nil {
		mi.Combine, mi.DF = "theta", 0 // the steps' distribution is the average's
		mi.Theta = thetaInfo(th, l.CombinationWeight())
	}
	if s, ok := l.BandScale(); ok {
		mi.BandScale = s
	}
	mi.LevelShift = l.LevelShift()
	mi.DaysOff = daysOff[l.WeekdaysOff()&0x7f]
	mi.WorkingMinutes = l.WorkingMinutes()
	return mi
}

// daysOff names the weekdays of each set of days off (bit d for
// time.Weekday d), built once so that a message takes its names without
// allocating.
var daysOff = func() (names [128][]string) {
	for off := range names {
		for i := 1; i <= 7; i++ { // Monday first, as ISO 8601's week
			if d := time.Weekday(i % 7); off&(1<<d) != 0 {
				names[off] = append(names[off], d.String())
			}
		}
	}
	return names
}()

// thetaInfo describes the theta method th, averaged with the model's weight
// w, for a forecast message.
func thetaInfo(th *theta.Model, w float64) *sink.ThetaInfo {
	alpha, drift := th.Alpha, th.Drift
	if th.Phi > 0 {
		drift = th.Phi * th.Trend // the damped trend's next step
	}
	if len(th.AR) > 0 {
		alpha, drift = 0, 0 // no smoothing, no line (its weight 0 leaves a −0 drift)
	}
	info := &sink.ThetaInfo{Alpha: alpha, Drift: drift, SlopeShare: th.Weight, Phi: th.Phi, AR: th.AR, Period: len(th.Season), Additive: th.Additive, Profile: th.Profile, ModelWeight: w, DF: th.DF()}
	if th.Measured { // never on a damped trend or an autoregression (theta.Model.SetGrowth)
		info.Growth = new(th.Growth) // a pointer: present when measured, 0 included
	}
	if th.HW {
		info.SeasonSmoothing = new(th.HWGamma) // a pointer: present for Holt–Winters, 0 included
	}
	return info
}
