// Package sink owns forecast and checkpoint writers.
package sink

import (
	"math"
	"time"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
)

// Message is one forecast message (DESIGN §4): what a Learner said after
// observing the value at time T of a series. It is the value written to the
// forecasts topic and, one per line, to JSON-lines files.
type Message struct {
	Series   string    `json:"series"`
	T        int64     `json:"t"`
	IssuedAt time.Time `json:"issued_at"`
	// Observed is the gate's verdict on the value at T; nil when there was no
	// one-step prediction for it (the message issued at the end of warm-up, or a
	// what-if forecast).
	Observed *Observed `json:"observed,omitempty"`
	// Steps is the iterated forecast for T+step, T+2·step, …; empty when none
	// was issued with this observation.
	Steps []Step    `json:"steps"`
	Model ModelInfo `json:"model"`
}

// Observed is the one-step verdict on an observed value, in the series' units.
type Observed struct {
	Y          float64 `json:"y"`
	Prediction float64 `json:"prediction"`
	Std        float64 `json:"std"`
	Residual   float64 `json:"residual"`
	Weight     float64 `json:"weight"`
	Outlier    bool    `json:"outlier"`
}

// Step is one step of a forecast of y at time T, h steps after the message's
// T: the point forecast Mean (the predictive mean; for a series modelled in
// logs, form "log" or "log+diff", the predictive median), the predictive
// standard deviation Std, and the central interval [Lo, Hi] at the
// configured level, whose bounds are exact quantiles of the predictive
// distribution (asymmetric about Mean for a log form).
type Step struct {
	H    int     `json:"h"`
	T    int64   `json:"t"`
	Mean float64 `json:"mean"`
	Std  float64 `json:"std"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
}

// ModelInfo summarises the model that issued a message: M working-set
// vectors, the lags of y, the kernel, the form of the series the model learns
// (none, log, diff, log+diff: see online.Form), the kernel width σ² and
// regularisation γ in the model's standardised units, the noise standard
// deviation in the units of the form's series (y, ln y, or their
// increments); DEff is the effective number of parameters, Swaps the
// working-set swaps accepted so far.
type ModelInfo struct {
	M        int     `json:"m"`
	Lags     []int   `json:"lags"`
	Kernel   string  `json:"kernel"`
	Form     string  `json:"form"`
	Sigma2   float64 `json:"sigma2,omitempty"` // kernels with an RBF part only
	Gamma    float64 `json:"gamma"`
	NoiseStd float64 `json:"noise_std"`
	DEff     float64 `json:"d_eff"`
	Swaps    int     `json:"swaps"`
}

// SetResult fills m from the Result of observing y at time t: Observed when
// the Result carries a one-step prediction, and the steps of its forecast
// (copied, since the Result's forecast aliases the Learner's buffer). m.Steps'
// backing array is reused, so a Message kept across calls does not allocate
// once it has grown to the horizon. IssuedAt and Model are left to the caller.
func (m *Message) SetResult(series string, t int64, y float64, res online.Result) {
	m.Series, m.T = series, t
	m.Observed = nil
	if res.Fitted {
		m.Observed = &Observed{Y: y, Prediction: res.Prediction, Std: res.Std,
			Residual: res.Residual, Weight: res.Weight, Outlier: res.Outlier}
	}
	m.SetSteps(res.Forecast)
}

// SetSteps replaces m.Steps by a copy of steps, reusing m.Steps' backing array.
func (m *Message) SetSteps(steps []online.ForecastStep) {
	if m.Steps == nil {
		m.Steps = make([]Step, 0, len(steps)) // "steps": [] rather than null
	}
	m.Steps = m.Steps[:0]
	for _, s := range steps {
		m.Steps = append(m.Steps, Step{H: s.H, T: s.T, Mean: s.Mean, Std: s.Std, Lo: s.Lo, Hi: s.Hi})
	}
}

// ModelInfoOf summarises l's model for forecast messages: σ² and γ in the
// model's standardised units, the noise std in the series' units.
func ModelInfoOf(l *online.Learner) ModelInfo {
	m := l.Model()
	info := m.Info()
	cfg := m.Config()
	_, scale := l.Scale()
	sigma2 := 0.0
	if cfg.Kernel.Type == narx.RBF || cfg.Kernel.Type == narx.LinearRBF {
		sigma2 = cfg.Kernel.Sigma2
	}
	return ModelInfo{
		M:        info.M,
		Lags:     cfg.Embedding.YLags,
		Kernel:   cfg.Kernel.Type.String(),
		Form:     l.Form().String(),
		Sigma2:   sigma2,
		Gamma:    info.Gamma,
		NoiseStd: scale * math.Sqrt(info.NoiseVar),
		DEff:     info.DEff,
		Swaps:    info.Swaps,
	}
}
