// Package sink owns what streamd writes out: the forecast message and its
// JSON encoding, dead-letter records, and the Kafka and JSON-lines writers
// (checkpoints are written by internal/checkpoint). It knows nothing of the
// learner: internal/daemon maps a Learner's result onto a message.
package sink

import (
	"time"
)

// Message is one forecast message (docs/messages.md): what a Learner said after
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
	// DF is ν when the prediction's distribution is a Student-t scaled to
	// variance Std² (in the model's form); absent for a normal or a theta
	// combination (ModelInfo.Combine).
	DF float64 `json:"df,omitempty"`
	// Fallback: the prediction is the fallback's, as a Step's.
	Fallback bool `json:"fallback,omitempty"`
}

// Step is one step of a forecast of y at time T, h steps after the message's
// T: the point forecast Mean (the predictive mean; for a series modelled in
// logs, form "log" or "log+diff", the predictive median), the predictive
// standard deviation Std, and the central interval [Lo, Hi] at the
// configured level, whose bounds are exact quantiles of the predictive
// distribution (asymmetric about Mean for a log form). With the theta
// combination (ModelInfo.Combine) each field is the mean of the model's and
// the theta method's: the bounds are then the quantiles of the distribution
// whose quantile function is the average of theirs, but from a step whose
// inputs differ from the last observation's on, the model's alone. Fallback marks a step
// the model's forecast left the plausible at (or before): it is then a
// normal's, mean ± z·std (docs/messages.md).
type Step struct {
	H        int     `json:"h"`
	T        int64   `json:"t"`
	Mean     float64 `json:"mean"`
	Std      float64 `json:"std"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Fallback bool    `json:"fallback,omitempty"`
}

// ModelInfo summarises the model that issued a message: M working-set
// vectors, the lags of y, the kernel, the form of the series the model learns
// (none, log, diff, log+diff: see online.Form), the kernel width σ² and
// regularisation γ in the model's standardised units, the noise standard
// deviation in the units of the form's series (y, ln y, or their
// increments); DEff is the effective number of parameters, Swaps the
// working-set swaps accepted so far.
type ModelInfo struct {
	M    int   `json:"m"`
	Lags []int `json:"lags"`
	// InputLags are the lags of each of the record's inputs in use (the
	// calendar's features, at the step predicted, left out); absent for a
	// series without inputs.
	InputLags [][]int `json:"input_lags,omitempty"`
	Kernel    string  `json:"kernel"`
	Form      string  `json:"form"`
	Sigma2    float64 `json:"sigma2,omitempty"` // kernels with an RBF part only
	Gamma     float64 `json:"gamma"`
	NoiseStd  float64 `json:"noise_std"`
	DEff      float64 `json:"d_eff"`
	Swaps     int     `json:"swaps"`
	// DF is ν of the steps' predictive distribution, a Student-t scaled to
	// each step's variance (in the model's form), calibrated on the model's
	// one-step errors; absent for a normal and for a theta combination.
	DF float64 `json:"df,omitempty"`
	// Combine is "theta" when the forecasts average the model's with the
	// theta method's (model.combine), described by Theta; else "none".
	Combine string     `json:"combine"`
	Theta   *ThetaInfo `json:"theta,omitempty"`
	// BandScale is the factor the band of the last calibrated step
	// (forecast.horizon) is scaled by, from the series' realised errors
	// over the horizon; absent when nothing is calibrated (a horizon of 1,
	// forecast.calibrate off, a series not fitted).
	BandScale float64 `json:"band_scale,omitempty"`
	// LevelShift is the correction added to every step of the model's
	// forecasts after a shift of the series' level it has not learned yet,
	// in the model's form (y, or ln y for a log form; a differenced form's
	// per step); absent while none applies (online's shift watch).
	LevelShift float64 `json:"level_shift,omitempty"`
	// DaysOff are the weekdays a daily or finer series has no values on (English
	// names, Monday first; online.Learner.WeekdaysOff): its steps skip them
	// (Saturday and Sunday for business days); absent for every other
	// series. The daemon's slices are shared by every series with the same
	// days off: read them, do not change them.
	DaysOff []string `json:"days_off,omitempty"`
	// WorkingMinutes are the times of day, in minutes after midnight, of
	// the steps of a working day that carry values, when the others do
	// not (business hours: 540 to 960 for hourly values from 09:00 to
	// 16:00; online.Learner.WorkingMinutes): the series' steps skip the
	// others. Absent for every other series. Shared with the learner: read
	// it, do not change it.
	WorkingMinutes []int32 `json:"working_minutes,omitempty"`
}

// ThetaInfo describes the theta method of a combination: its smoothing
// weight, its drift per step (in the seasonally adjusted series' units),
// its seasonal period (0: not seasonal), the period of the moving
// seasonal profile it is adjusted by instead, when it is (0: none), and
// the model's weight in the average.
type ThetaInfo struct {
	Alpha float64 `json:"alpha"`
	Drift float64 `json:"drift"`
	// SlopeShare is the drift's share of the slope of the theta line:
	// ½ as R's thetaf, 1 where the whole slope validated better, 0 for a
	// damped trend.
	SlopeShare float64 `json:"slope_share"`
	// Phi is the damping of Holt's damped trend when that is the partner
	// (Drift is then the next step's slope, φ·b), 0 otherwise.
	Phi float64 `json:"phi,omitempty"`
	// SeasonSmoothing is γ of Holt–Winters' smoothed season when that is
	// the partner (with Phi its damped trend's; Period its season's),
	// absent otherwise.
	SeasonSmoothing *float64 `json:"season_smoothing,omitempty"`
	// AR holds the coefficients φ_1..φ_p of the autoregression about the
	// adjusted series' mean when that is the partner (Alpha, Drift and
	// SlopeShare are then 0), absent otherwise.
	AR     []float64 `json:"ar,omitempty"`
	Period int       `json:"period"`
	// Additive says the season of Period is added to the forecast (the
	// series has a value at or below zero), not multiplied.
	Additive bool `json:"additive,omitempty"`
	Profile  int  `json:"profile,omitempty"`
	// Growth is the smoothing's band growth per step measured on its
	// forecasts out of sample (its step h's variance 1 + (h−1)·growth
	// one-step ones, where α² would be the local-level model's), absent
	// where the band is the formula's.
	Growth *float64 `json:"growth,omitempty"`
	// ModelWeight is the model's weight in the average of steps 2 and
	// later (step 1's is ½), chosen from the series' realised errors (0
	// for a young series' theta method alone).
	ModelWeight float64 `json:"model_weight"`
	// DF is the residual degrees of freedom of its noise level
	// (theta.Model.DF): a young series' steps are Student's t of this ν at
	// scale std.
	DF float64 `json:"df"`
}
