// Package online owns the life cycle of one series' forecaster: warm-up,
// normalisation frozen after warm-up, the batch fit, per-sample online updates
// and periodic iterated forecasts. The daemon and `streamd backtest` run this
// very Learner, so what a backtest measures is what the daemon does.
package online

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/reject"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/theta"
)

// Config fixes a Learner. Validate reports bad values; zero fields are not
// defaulted here (defaults live with the configuration loader).
type Config struct {
	Model narx.Config
	// Warmup is the number of samples at which the structure is chosen a last
	// time (≥ 1 more than the embedding depth), or later for a long season
	// (lastFit); before it, the series is fitted from FirstFit samples on
	// and re-chosen at each doubling (see FirstFit).
	Warmup int
	// Forms are the candidate forms of the series (Form), ranked at every
	// re-choice; nil means the plain series only.
	Forms []Form
	// Kernels are the candidate kernel types (narx.Linear, narx.RBF), ranked
	// at every re-choice; nil means Model.Kernel.Type only.
	Kernels []narx.KernelType
	// Season proposes seasonal lags (s, s+1) with the lag candidates: 0
	// detects the period from the data, s > 0 proposes s, < 0 none.
	Season int
	// Calendar features of t (Unix milliseconds) join the inputs as inputs
	// of lag 0, computed for every observation and every forecast step: the
	// embedding's last Calendar.Dim() inputs are these (NewLearner adds
	// them), the first n_u those of the observations.
	Calendar calendar.Spec
	// Planned are the indices of the observations' inputs known in advance:
	// an Observation's Future rows give their values for the steps of the
	// forecast it issues. The others are held at their last values.
	Planned []int
	// calendarAdded: the embedding already holds the calendar's inputs (a
	// Learner's own configuration, which a restore builds from again).
	calendarAdded bool
	// Horizon H of the periodic iterated forecasts; 0 issues none.
	Horizon int
	// Every issues a forecast every F learned samples (F ≥ 1).
	Every int
	// Calibrate is the horizon whose bands are calibrated on the series'
	// realised errors (horizonCal): steps 2..Calibrate, each later step as
	// step Calibrate; 0 or 1 calibrates none. It is Horizon's value
	// normally, and stays so where the periodic forecasts are switched off
	// (an iterated backtest's training), so that the bands are the
	// daemon's.
	Calibrate int
	// Level of the central prediction interval, in (0, 1).
	Level float64
	// Scale selects the normalisation statistics frozen after warm-up.
	Scale Scale
	// AutoSigma2 infers the RBF width σ² at the fit by the level-3 evidence on
	// the warm-up window (narx.SearchSigma2 around the median squared pairwise
	// distance) instead of using Model.Kernel.Sigma2.
	AutoSigma2 bool
	// LagCandidates, when not empty, replaces Model.Embedding.YLags by lags
	// 1..p for the p among the candidates that Tuning ranks first.
	LagCandidates []int
	// InputLagOrders > 0 chooses the user inputs' lags at each re-choice
	// instead of fixing them: k consecutive lags of every input for the
	// k in 1..InputLagOrders the evidence ranks first, from lag 0 for a
	// planned input (known at the step predicted) and from 1 for another
	// (held over the horizon, so its lag 0 would be a value the forecast
	// does not have). Model.Embedding.InputLags of the user inputs must
	// then be those of k = InputLagOrders (InputLagsUpTo), the deepest
	// history the model may need.
	InputLagOrders int
	// Tuning ranks the lag candidates: by level-3 evidence (TuneEvidence) or
	// by iterated validation on the warm-up window (TuneIterated).
	Tuning Tuning
	// RetuneEvery re-runs the level-3 width search every this many learned
	// samples (0 = never; needs AutoSigma2): see Learner.retune.
	RetuneEvery int
	// TuneSize is the working-set size used while ranking structures, by
	// every Tuning (0 = the model's); the final fit uses Model.Size.
	TuneSize int
	// TuneHorizon is the forecast length TuneIterated validates (0 = Horizon).
	TuneHorizon int
	// Robust reweighting (docs/design.md, "The model", book ch. 5); off when !Robust.Enabled.
	Robust Robust
	// Combine says whether the forecasts average the NARX model's with a
	// theta forecaster's (internal/theta).
	Combine Combine
	// Growth lets a re-choice choose a working set larger than Model.Size
	// (grow); the zero value keeps Model.Size.
	Growth Growth
	// NoLevelShift turns the level-shift watch off (shift.go): the
	// forecasts are never corrected for a shift the model has not learned
	// yet. The zero value watches.
	NoLevelShift bool
}

// Combine names a rule for averaging the NARX model's forecasts with those
// of the theta method (internal/theta: exponential smoothing with drift,
// seasonally adjusted), fitted on the same values at each re-choice and
// updated with every value after. The average's point forecast is the
// mean of the two; its band's bounds the means of the two bands' bounds
// (the quantiles of the distribution whose quantile function is the
// average of theirs); its std the mean of their stds.
type Combine int

const (
	// CombineNone publishes the NARX model's forecasts alone.
	CombineNone Combine = iota
	// CombineAuto averages them unless, at a re-choice, the model's
	// validated forecasts alone are better than the average's by
	// thetaMargin (chooseTheta); and on series too short to validate.
	CombineAuto
	// CombineTheta always averages them.
	CombineTheta
)

func (c Combine) String() string {
	switch c {
	case CombineAuto:
		return "auto"
	case CombineTheta:
		return "theta"
	}
	return "none"
}

// Robust configures robust reweighting. Each learned sample gets the weight
// Weights.Weight(e/ŝ) of its one-step residual e standardised by ŝ, the robust
// scale of the last Window residuals; |e/ŝ| > Weights.C2 flags an outlier.
// With Clean, an outlier's one-step prediction, not the outlier, enters the
// lag history, so later regressors are not driven by it. The warm-up fit is
// the book's weighted LS-SVM: refitted with the weights of its own residuals
// until they settle.
type Robust struct {
	Enabled bool
	Weights robust.Weights
	Window  int
	Scale   robust.ScaleKind
	Clean   bool
}

// robustMinResiduals is how many residuals the streaming scale needs before
// it replaces the model's own predictive std as ŝ.
const robustMinResiduals = 20

// tuneHorizon resolves TuneHorizon.
func (c Config) tuneHorizon() int {
	if c.TuneHorizon > 0 {
		return c.TuneHorizon
	}
	return c.Horizon
}

// Tuning names a criterion for the lag order.
type Tuning int

const (
	// TuneEvidence ranks lag orders by the level-3 evidence: a one-step
	// criterion, cheap, right for one-step and short-horizon use.
	TuneEvidence Tuning = iota
	// TuneIterated ranks lag orders by the squared error of Horizon-step
	// iterated forecasts from five origins in the last part of the warm-up
	// window, each candidate fitted (σ² and γ by evidence) at TuneSize on the
	// data before the first origin. One-step criteria favour short lags that
	// miss slow dynamics an iterated forecast needs (on the Santa Fe laser,
	// the intensity collapses); this scores what the forecasts are for. The
	// winner is deployed as validated: with AutoGamma the final fit holds the
	// winner's γ instead of re-inferring it at the full working-set size, and
	// level 2 keeps re-estimating the noise level at that γ (see
	// chooseByIteratedValidation).
	TuneIterated
	// TuneRobustCV ranks lag orders and kernel widths (σ² = c·2^k around the
	// median squared distance, k = −3..3) by repeated V-fold cross-validation
	// scored with the (0, β2)-trimmed mean of squared errors (book §5.3):
	// the largest errors, which outliers cause, do not decide. Each fold is
	// fitted with the robust weighting when it is on.
	TuneRobustCV
)

// Robust cross-validation design (book §5.3: V = 10 is usual; 5 folds
// repeated twice cost the same and average over two partitions).
const (
	cvFolds   = 5
	cvRepeats = 2
	cvTrim    = 0.1 // β2: the largest 10 % of squared errors are dropped
)

// Scale names a normalisation.
type Scale int

const (
	// ScaleRobust standardises by the median and IQR/1.349.
	ScaleRobust Scale = iota
	// ScaleStandard standardises by the mean and standard deviation.
	ScaleStandard
	// ScaleNone uses the values as they are (location 0, scale 1), so kernel
	// widths and γ keep the units of the data — e.g. the book's σ² for sinc.
	ScaleNone
)

// MinWarmup returns the fewest values on which a re-choice fits the whole
// structure of e, with calendar more inputs at lag 0: depth + 2 at most
// half the values, and two targets per parameter (minTargets), with one
// value to spare for a differenced form's first. The re-choices rank only
// structures their values can carry so (lagSets, inputLags), and a series
// keeps at most Warmup values for them, so with fewer some lags or inputs
// could never join its model.
func MinWarmup(e narx.Embedding, calendar int) int {
	d, n := e.Depth(), e.Dim()+calendar
	return max(2*(d+2), d+1+minTargets(n))
}

// minWarmup is MinWarmup of c's configured structure: its lags of y (lag
// 1 with LagCandidates, which are checked on their own) and every input's
// (its first with InputLagOrders).
func (c Config) minWarmup() int {
	e := c.Model.Embedding
	if len(c.LagCandidates) > 0 {
		e.YLags = []int{1}
	}
	if c.InputLagOrders > 0 {
		// Each input's first lag: the deeper ones join as the samples allow.
		nUser := len(e.InputLags)
		if c.calendarAdded {
			nUser -= c.Calendar.Dim()
		}
		e.InputLags = append(InputLagsUpTo(nUser, c.Planned, 1), e.InputLags[nUser:]...)
	}
	calendar := c.Calendar.Dim()
	if c.calendarAdded {
		calendar = 0 // already among the inputs
	}
	return MinWarmup(e, calendar)
}

// Validate reports the first problem with c, or nil.
func (c Config) Validate() error {
	if err := c.Model.Validate(); err != nil {
		return err
	}
	switch {
	case c.Warmup < c.minWarmup():
		return fmt.Errorf("warmup must be ≥ %d for every configured lag and input to join the model (got %d)", c.minWarmup(), c.Warmup)
	case c.Horizon < 0:
		return fmt.Errorf("horizon must be ≥ 0 (got %d)", c.Horizon)
	case c.Calibrate < 0:
		return fmt.Errorf("calibrated horizon must be ≥ 0 (got %d)", c.Calibrate)
	case c.Every < 1:
		return fmt.Errorf("forecast interval must be ≥ 1 (got %d)", c.Every)
	case !(c.Level > 0 && c.Level <= narx.MaxIntervalLevel):
		return fmt.Errorf("interval level must be in (0, %v] (got %v)", narx.MaxIntervalLevel, c.Level)
	case c.Scale != ScaleRobust && c.Scale != ScaleStandard && c.Scale != ScaleNone:
		return fmt.Errorf("unknown scale %d", int(c.Scale))
	case c.Combine != CombineNone && c.Combine != CombineAuto && c.Combine != CombineTheta:
		return fmt.Errorf("unknown combination rule %d", int(c.Combine))
	}
	if h := c.tuneHorizon(); c.Tuning == TuneIterated && (h < 1 || c.Warmup < h*3) {
		return fmt.Errorf("iterated tuning needs a horizon ≥ 1 and warmup ≥ 3·horizon (got horizon %d, warmup %d)", h, c.Warmup)
	}
	if c.Robust.Enabled {
		if err := c.Robust.Weights.Validate(); err != nil {
			return fmt.Errorf("robust weights: %w", err)
		}
		if !(c.Robust.Weights.C2 > 0) {
			return fmt.Errorf("robust c2 (the outlier threshold) must be > 0 (got %v)", c.Robust.Weights.C2)
		}
		if c.Robust.Window < robustMinResiduals {
			return fmt.Errorf("robust window must be ≥ %d (got %d)", robustMinResiduals, c.Robust.Window)
		}
	}
	if c.RetuneEvery < 0 || (c.RetuneEvery > 0 && (!c.AutoSigma2 || c.Model.Kernel.Type != narx.RBF)) {
		return fmt.Errorf("retuning every %d samples needs ≥ 0, and an RBF kernel with an inferred width", c.RetuneEvery)
	}
	nUser := c.Model.Embedding.Inputs()
	if c.calendarAdded {
		nUser -= c.Calendar.Dim()
	}
	for k, i := range c.Planned {
		if i < 0 || i >= nUser || (k > 0 && i <= c.Planned[k-1]) {
			return fmt.Errorf("planned inputs must be increasing indices of the %d inputs (got %v)", nUser, c.Planned)
		}
	}
	if err := c.Calendar.Validate(); err != nil {
		return fmt.Errorf("calendar: %w", err)
	}
	if c.TuneSize < 0 || c.TuneHorizon < 0 {
		return fmt.Errorf("tuning working-set size must be ≥ 0 (got %d)", c.TuneSize)
	}
	if c.InputLagOrders < 0 || (c.InputLagOrders > 0 && !slices.EqualFunc(c.Model.Embedding.InputLags[:nUser], InputLagsUpTo(nUser, c.Planned, c.InputLagOrders), slices.Equal)) {
		return fmt.Errorf("input lag orders %d need the inputs' lags %v (got %v)", c.InputLagOrders,
			InputLagsUpTo(nUser, c.Planned, c.InputLagOrders), c.Model.Embedding.InputLags[:nUser])
	}
	for _, p := range c.LagCandidates {
		if p < 1 || p+1 > c.Warmup/2 {
			return fmt.Errorf("lag candidate %d must be in [1, warmup/2 − 1] = [1, %d]", p, c.Warmup/2-1)
		}
		d := c.Model.Embedding
		d.YLags = narx.Lags(p)
		if c.Warmup < d.Depth()+1 {
			return fmt.Errorf("warmup must exceed lag candidate %d", p)
		}
	}
	return nil
}

// InputLagsUpTo returns the lags of n inputs with k consecutive lags
// each: 0..k−1 for the planned ones (indices in planned), 1..k for the
// others (Config.InputLagOrders).
func InputLagsUpTo(n int, planned []int, k int) [][]int {
	out := make([][]int, n)
	for i := range out {
		first := 1
		if slices.Contains(planned, i) {
			first = 0
		}
		for a := first; a < first+k; a++ {
			out[i] = append(out[i], a)
		}
	}
	return out
}

// Observation is one sample of a series: target y at time t and the exogenous
// inputs u_t (len n_u).
type Observation struct {
	T int64
	// Time says T is a time in Unix milliseconds (an RFC 3339 time, a
	// date, an integer of a configured time unit), else a sequence number,
	// which has no calendar: no seasons from the time step, no days off.
	// A series' first observation decides for all its others.
	Time bool
	Y    float64
	U    []float64
	// Future holds the planned inputs (Config.Planned, in that order) for
	// the steps after T: row h−1 for step h. Steps beyond the rows, and
	// inputs not planned, hold their last values. It may be nil.
	Future [][]float64
}

// ForecastStep is one step of a forecast in the series' units. Lo and Hi
// are exact quantiles of the predictive distribution (the model's, in its
// form, carried back through the form: see Form). Mean is the point
// forecast: the predictive mean, or for a Log form the predictive median
// (the inverse transform of the mean of ln y, as R's forecast reports it);
// Std is the predictive standard deviation. With the theta combination
// (Combine) every field is the mean of the model's and the theta
// method's (blend), but from a step whose inputs differ from the last
// observation's on, the model's alone (forecastNormalised). A Fallback
// step is the fallback's alone (combine).
type ForecastStep struct {
	H          int
	T          int64
	Mean, Std  float64
	Lo, Hi     float64
	OneStepStd float64 // the level-1 std alone, without fed-back uncertainty
	// Fallback: the model's step was not plausible (Learner.plausible), and
	// the step is the fallback's, a normal predictive: the theta method's,
	// or the series' values' mean and standard deviation. Or the series has
	// no model yet (a young forecast, youngSteps), and the step is the
	// theta method's, Student's t of ν = Learner.YoungDF at scale Std.
	Fallback bool
}

// Result is what one observation produced.
type Result struct {
	// Fitted is false during warm-up; the prediction fields are then zero.
	Fitted bool
	// Prediction and Std are the one-step prediction of this observation's y and
	// its standard deviation, made before y was learned; Lo and Hi its
	// interval at the configured level (as in ForecastStep, averaged with
	// the theta method's under the combination).
	Prediction, Std float64
	Lo, Hi          float64
	// DF is ν of the Student-t the prediction's interval is a quantile of
	// (the model's heavy-tailed predictive, narx.Info.DF); 0 for a normal,
	// for the small-sample t of quantile, and for the theta combination.
	DF float64
	// Fallback: the model's one-step prediction was not plausible, and the
	// prediction is the fallback's (ForecastStep.Fallback).
	Fallback bool
	Residual float64 // y − Prediction
	Weight   float64 // robust weight given to the sample (1 when not robust)
	Outlier  bool
	Swapped  bool // a working-set swap was accepted
	// ShiftStarted reports that the one-step errors up to this one showed
	// a shift of the level the model has not learned, and that the
	// forecasts from this one on carry the correction (LevelShift): false
	// when a new model replaced the one that showed it in the same call.
	ShiftStarted bool
	// Restarted reports that the series started afresh with this value:
	// its values had never varied where it was last chosen, and this one
	// did (restart).
	Restarted bool
	// Retuned reports that the periodic level-3 re-run replaced the kernel
	// width (Config.RetuneEvery), or that a settled series' working set
	// grew (Config.Growth, Learner.growSettled): the model was refitted.
	Retuned bool
	// Filled is how many missing samples before this one (a gap in t of
	// more than one step) were filled with their predictions; see Observe.
	Filled int
	// Forecast holds the iterated forecast issued after learning this sample, or
	// nil. It aliases the Learner's buffer: valid until the next call.
	Forecast []ForecastStep
}

// Learner is the forecaster of one series.
//
// A Learner is owned by exactly one goroutine (the partition goroutine in the
// daemon); it has no locks, and none of its methods may run concurrently.
type Learner struct {
	cfg   Config
	nu    int // inputs of the model: the observations' (nUser), then the calendar's
	nUser int
	// uRaw is the inputs of the current observation in the series' units,
	// the calendar features of its t included.
	uRaw  []float64
	model *narx.Model
	hist  *narx.History
	z     float64 // the interval's normal quantile
	// tNu, tQ cache the Student-t quantile of quantile.
	tNu, tQ float64

	// The raw values seen so far (Config.keptMax at most), from which the
	// structure is re-chosen; released after the last re-choice.
	warmY []float64
	warmU []float64
	warmT []int64
	// fitT are the times of the samples a fit chooses on: warmT with the
	// missing steps of its gaps (regularised), during fit only.
	fitT []int64
	// values is what the values learned have been (ValueStats), which
	// bounds the plausible forecasts (plausible).
	values ValueStats
	// nextFit is the count of samples seen at which the structure is chosen
	// next; 0 after the last re-choice.
	nextFit int64
	// flatY: the latest re-choice saw y never vary; flatInputs are the
	// observation's inputs it saw never vary, while values are kept for a
	// later re-choice (unflat). A flat y keeps its last restartKeep values
	// past the last re-choice, and its first value that varies and is not
	// a glitch starts it afresh (restart); a flat input's first change
	// chooses again (Observe). Not in the checkpoint: the values kept say
	// it (restore).
	flatY      bool
	flatInputs []int

	// The form of the series (Form) and the normalisation of w, fixed at
	// each re-choice: w ← (w − yLoc)/yScale, likewise each input. lastZ is
	// z of the last sample (the level increments are added to); floor the
	// Log form's stand-in for a y at or below zero: half the smallest
	// positive value so far (logFloor, then followed by Observe).
	form         Form
	lastZ, floor float64
	// gross counts the gross errors in a row (grossError); lastBig is seen
	// at the last value glitchZ predictive standard deviations from its
	// prediction, 0 before any; glitchSeen is seen at the last glitch gated
	// (0: none since a surprise recurred), glitchY its observed value.
	gross               int
	lastBig, glitchSeen int64
	glitchY             float64
	// changed: the configuration keys that differ from those of the state
	// restored into l (ConfigChanged).
	changed      []string
	yLoc, yScale float64
	uLoc, uScale []float64

	lastT    int64
	haveT    bool
	timed    bool    // the series' t are times (Observation.Time)
	sp       spacing // time between samples, frozen at the fit
	workMin  []int32 // WorkingMinutes, from sp
	seen     int64   // observations accepted
	learned  int64   // samples learned online after the fit
	sinceFc  int
	x, uNorm []float64
	uHold    [][]float64
	steps    []narx.Step
	out      []ForecastStep

	// rscale is the streaming robust scale of one-step residuals (model
	// units); nil when robust reweighting is off.
	rscale   *robust.StreamingScale
	outliers int64
	// shift watches the model's residuals for a location shift and
	// corrects its predictions by it (shift.go); reset with every model.
	shift shiftState

	// th is the theta forecaster averaged with the model (Combine), in the
	// series' units; nil when the last re-choice did not combine. thMean
	// and thSD are its forecasts' buffers.
	th           *theta.Model
	thMean, thSD []float64
	// fcModel is the model's own point forecasts of the last
	// forecastNormalised, before any average.
	fcModel []float64
	// cal calibrates the bands over the horizon; calOut is its shadow
	// forecasts' buffer.
	cal    horizonCal
	calOut []ForecastStep
	// young is the theta forecaster of the last young forecast: a function
	// of warmY, fitted again at each, so not in the snapshot.
	young *theta.Model
	// yield is ObserveYielding's, nil outside it; not state.
	yield func()
}

// NewLearner returns a Learner in warm-up.
func NewLearner(cfg Config) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.calendarAdded {
		if err := cfg.Calendar.Compile(); err != nil {
			return nil, fmt.Errorf("online: calendar: %w", err)
		}
		e := &cfg.Model.Embedding
		e.InputLags = slices.Clone(e.InputLags)
		for range cfg.Calendar.Dim() {
			e.InputLags = append(e.InputLags, []int{0})
		}
		cfg.calendarAdded = true
	}
	cfg.Model.IntervalLevel = cfg.Level
	m, err := narx.NewModel(cfg.Model)
	if err != nil {
		return nil, err
	}
	e := cfg.Model.Embedding
	nu := e.Inputs()
	l := &Learner{cfg: cfg, nu: nu, nUser: nu - cfg.Calendar.Dim(), model: m, hist: narx.NewHistory(e),
		uRaw:    make([]float64, nu),
		z:       distuv.UnitNormal.Quantile(0.5 + cfg.Level/2),
		x:       make([]float64, e.Dim()),
		uNorm:   make([]float64, nu),
		steps:   make([]narx.Step, max(cfg.Horizon, cfg.Calibrate)),
		out:     make([]ForecastStep, cfg.Horizon),
		uHold:   make([][]float64, max(cfg.Horizon, cfg.Calibrate)),
		thMean:  make([]float64, max(cfg.Horizon, cfg.Calibrate, 1)),
		thSD:    make([]float64, max(cfg.Horizon, cfg.Calibrate, 1)),
		fcModel: make([]float64, max(cfg.Horizon, cfg.Calibrate, 1)),
		cal:     newHorizonCal(cfg.Calibrate, cfg.Level),
	}
	if l.cal.on() {
		l.calOut = make([]ForecastStep, cfg.Calibrate)
	}
	for h := range l.uHold {
		l.uHold[h] = make([]float64, nu)
	}
	if cfg.Robust.Enabled {
		l.rscale = robust.NewStreamingScale(cfg.Robust.Window, cfg.Robust.Scale)
	}
	l.nextFit = int64(cfg.nextFit(0, cfg.Warmup))
	return l, nil
}

// SizeBytes returns the bytes held by the Learner's numeric state: the model
// (narx.Model.SizeBytes), the warm-up buffer, the lag history and the
// forecast buffers. Go object headers are excluded, so it is a lower bound
// of the memory a series costs.
func (l *Learner) SizeBytes() int {
	f := len(l.warmY) + len(l.warmU) + len(l.warmT) + len(l.x) + len(l.uNorm) + 5*len(l.out) + 3*len(l.steps) +
		len(l.thMean) + len(l.thSD) + 5*len(l.calOut) + l.cal.floats()
	if l.th != nil {
		f += len(l.th.Season) + l.th.Profile*(l.th.Cycles+boolInt(l.th.Sub > 0)) + 2*len(l.th.AR) + 23 // its rings, autoregression and scalars (theta.State's)
	}
	for _, u := range l.uHold {
		f += len(u)
	}
	n := 8*f + l.model.SizeBytes()
	if l.rscale != nil {
		n += 32 * l.cfg.Robust.Window // the streaming scale's tree nodes and ring
	}
	return n
}

// ConfigChanged returns the configuration keys (as in the YAML model,
// forecast and robust sections) that differ between the configuration a
// restored state was learned with and the Learner's; nil for a Learner not
// restored or restored under the same configuration. The Learner keeps the
// restored state — its structure, and the data it learned: the new values
// of keys that shape the structure (lags, kernel, forms, season, working
// set) take effect at its next re-choice, or, after the last one, when the
// series starts afresh; the others (horizon, level, robust weighting) at
// once.
func (l *Learner) ConfigChanged() []string { return l.changed }

// Inputs returns n_u, the number of inputs an Observation carries (the
// calendar's features, which the Learner computes, not counted).
func (l *Learner) Inputs() int { return l.nUser }

// LastT returns the time of the last accepted observation (0 before any).
func (l *Learner) LastT() int64 { return l.lastT }

// Outliers returns the number of learned samples flagged as outliers.
func (l *Learner) Outliers() int64 { return l.outliers }

// Config returns the Learner's configuration.
func (l *Learner) Config() Config { return l.cfg }

// Scale returns the normalisation of the model's series w (Form), w_model =
// (w − loc)/scale; (0, 1) before the fit.
func (l *Learner) Scale() (loc, scale float64) {
	if !l.model.Fitted() {
		return 0, 1
	}
	return l.yLoc, l.yScale
}

// Form returns the form of the series chosen at the last re-choice.
func (l *Learner) Form() Form { return l.form }

// Theta returns the theta forecaster the model's forecasts are averaged
// with (Config.Combine); before the first fit, the one the last young
// forecast came from (youngForecast); nil when there is none. For
// read-only use.
func (l *Learner) Theta() *theta.Model {
	if !l.model.Fitted() {
		return l.young
	}
	return l.th
}

// YoungDF is ν of the Student's t of a young forecast's steps
// (youngSteps): Lo, Hi = Mean ∓ t_ν·Std, so Std is the t's scale, not its
// standard deviation; ν is the theta method's residual degrees of freedom
// (theta.Model.DF). 0 once the series is fitted, and before its first young
// forecast.
func (l *Learner) YoungDF() float64 {
	if l.model.Fitted() || l.young == nil {
		return 0
	}
	return l.young.DF()
}

// Fitted reports whether the series has a model (from FirstFit samples on).
func (l *Learner) Fitted() bool { return l.model.Fitted() }

// Settled reports whether the series is fitted and past its last
// structure re-choice: its next Observe is an online update, or a periodic
// retune (Config.RetuneEvery), never a re-choice; but for a series whose
// values never varied, which its first value that varies restarts (flatY).
func (l *Learner) Settled() bool { return l.model.Fitted() && l.nextFit == 0 && !l.flatY }

// BandScale returns the factor the band of step Config.Calibrate is scaled
// by (horizonCal), and whether any step is calibrated (a fitted series with
// Calibrate ≥ 2).
func (l *Learner) BandScale() (float64, bool) {
	if !l.cal.on() || !l.model.Fitted() {
		return 1, false
	}
	return l.cal.factor(l.cal.H), true
}

// watchesShift reports whether the series watches for a level shift: not
// with Config.NoLevelShift, nor with a seasonal structure (seasonal).
func (l *Learner) watchesShift() bool { return !l.cfg.NoLevelShift && !l.seasonal() }

// seasonal reports whether the series' structure is seasonal: lags that
// are not 1..p (a seasonal lag set), a theta partner with a season or a
// seasonal profile, or calendar inputs. Such a series is not watched for
// level shifts (shift.go): a run of one-sided errors within a cycle is the
// season's misfit (a holiday, a changed daily shape), which its seasonal
// lags and profile carry into the next cycle, and an intercept correction
// would carry into every step of the horizon (the half-hourly load's
// day-ahead MAE 15.84 → 16.01 with it; docs/benchmarks.md, "Level
// shifts"). O(lags), no allocation.
func (l *Learner) seasonal() bool {
	if l.nu > l.nUser || (l.th != nil && (len(l.th.Season) > 0 || l.th.Profile > 0)) {
		return true
	}
	for i, a := range l.model.Config().Embedding.YLags {
		if a != i+1 {
			return true
		}
	}
	return false
}

// LevelShift returns the correction the model's forecasts carry for a
// shift of the series' level (shift.go), in the form's units (y, or ln y
// for a log form; per step for a differenced form); 0 while none applies.
func (l *Learner) LevelShift() float64 { return l.yScale * l.shift.correction() }

// CombinationWeight returns the model's weight in the average with the
// theta method from step 2 on (blend): ½ unless the calibration over the
// horizon has chosen another from the shadows' errors.
func (l *Learner) CombinationWeight() float64 { return l.cal.weight }

// Step returns the time step between samples, frozen at the fit (0 before
// it): the median spacing of the times, from which StepTime gives the
// forecast steps' times. A business-day series' is a day (WeekdaysOff).
func (l *Learner) Step() int64 { return l.sp.step }

// StepTime returns the time of the h-th step after t in the series'
// spacing: t + h·Step, calendar months for monthly, quarterly and yearly
// times, steps on working days only for a series with days off (the forecast
// steps' times, ForecastStep.T). For a fixed step t is first moved to the
// nearest step of the series' grid (the phase its values keep), so that a
// value logged a little early or late is followed by steps on the grid.
func (l *Learner) StepTime(t, h int64) int64 { return l.sp.after(l.sp.onGrid(t), h) }

// WeekdaysOff returns the weekdays of a daily or finer series that carry no values
// (bit d for time.Weekday d, in UTC or, on a zone's clock, in the zone;
// Saturday and Sunday for business days),
// frozen at the fit: they are not steps (StepTime) nor gaps to fill, and a
// week has 7 less their number of steps. 0 before the fit and for every
// other series.
func (l *Learner) WeekdaysOff() uint8 { return l.sp.off }

// WorkingMinutes returns, for a series whose step divides a day and whose
// working days carry values at some of their steps only (business hours),
// the times of day of those steps in minutes after midnight (on the
// spacing's clock, as WeekdaysOff's days; such a step is a minute or
// more), frozen at the fit; nil for every other series. The other steps
// are not steps (StepTime) nor gaps. The slice is the Learner's, made at
// the fit: read it, do not change it.
func (l *Learner) WorkingMinutes() []int32 { return l.workMin }

// setSpacing sets the series' spacing and what is derived from it.
func (l *Learner) setSpacing(sp spacing) {
	l.sp = sp
	l.workMin = nil
	if sp.slots != nil {
		l.workMin = make([]int32, len(sp.slots))
		for i, j := range sp.slots {
			l.workMin[i] = int32(int64(j) * sp.step / 60000)
		}
	}
}

// Model exposes the underlying model for diagnostics (read-only use).
func (l *Learner) Model() *narx.Model { return l.model }

// check validates an observation without changing l.
func (l *Learner) check(o Observation) error {
	if math.IsNaN(o.Y) || math.IsInf(o.Y, 0) {
		return reject.Errorf(reject.NonFiniteY, "y is not finite")
	}
	if math.Abs(o.Y) > MaxAbsValue {
		return reject.Errorf(reject.OutOfRange, "y %g is beyond ±%g", o.Y, MaxAbsValue)
	}
	if len(o.U) != l.nUser {
		return reject.Errorf(reject.BadInputs, "%d inputs, want %d", len(o.U), l.nUser)
	}
	for _, row := range o.Future {
		if len(row) != len(l.cfg.Planned) {
			return reject.Errorf(reject.BadFuture, "a future row has %d planned inputs, want %d", len(row), len(l.cfg.Planned))
		}
		for _, u := range row {
			if math.IsNaN(u) || math.IsInf(u, 0) {
				return reject.Errorf(reject.NonFiniteFuture, "a planned input is not finite")
			}
			if math.Abs(u) > MaxAbsValue {
				return reject.Errorf(reject.OutOfRange, "a planned input, %g, is beyond ±%g", u, MaxAbsValue)
			}
		}
	}
	for i, u := range o.U {
		if math.IsNaN(u) || math.IsInf(u, 0) {
			return reject.Errorf(reject.NonFiniteInput, "an input is not finite")
		}
		if math.Abs(u) > MaxAbsValue {
			return reject.Errorf(reject.OutOfRange, "input %d, %g, is beyond ±%g", i, u, MaxAbsValue)
		}
	}
	if o.T > maxAbsT || o.T < -maxAbsT {
		return reject.Errorf(reject.BadTime, "t %d is beyond ±2^53", o.T)
	}
	if l.haveT && o.T <= l.lastT {
		return reject.Errorf(reject.TNotIncreasing, "t %d is not after %d", o.T, l.lastT)
	}
	return nil
}

// MaxAbsValue bounds |y| and the inputs' magnitudes: the statistics a
// series keeps (sums of squares, variances, the theta method's squared
// errors, the normalisation) stay finite for values up to 1e150, whose
// squares are 1e300, over any window a series keeps. Beyond it a value is
// refused (reject.OutOfRange) rather than let overflow into the state.
const MaxAbsValue = 1e150

// maxAbsT bounds |t|: 2^53 ms is 285 000 years either side of 1970, and a
// sequence number that large is a corrupt one. Beyond it a series' steps
// (t + h·step) could overflow, and one such t would make every later real
// record of the series "not after" it.
const maxAbsT = 1 << 53

// Observe takes the next observation. Until the first fit (FirstFit
// samples) it is only kept (and, with the theta combination, from
// theta.MinValues samples on the series is forecast by the theta method
// alone: youngForecast); afterwards it is predicted one step ahead,
// learned, and every Every samples a forecast of Horizon steps is issued. At
// each re-choice (see FirstFit) the structure is chosen again and the model
// refitted on every sample kept, after this one is predicted and learned.
// An error wrapping reject.ErrRejected leaves l unchanged. Any other error is a
// failed fit or re-choice: the observation is taken, the model (if any)
// kept, and the fit tried again at the next re-choice.
func (l *Learner) Observe(o Observation) (Result, error) {
	if err := l.check(o); err != nil {
		return Result{}, err
	}
	prevT := l.lastT
	if !l.haveT {
		l.timed = o.Time
	}
	l.lastT, l.haveT = o.T, true
	l.seen++
	copy(l.uRaw, o.U)
	// On the grid, as the forecasts' steps are: a daily value logged a
	// second before midnight has the next day's features.
	l.calendarAt(l.uRaw, l.sp.onGrid(o.T))
	due := l.nextFit > 0 && l.seen >= l.nextFit
	// A structure chosen on values that never varied knows nothing of how
	// they vary: its noise level is the floor, and an input's effect was
	// never seen. The first input that varies chooses again, with it; the
	// first value that varies and is not a glitch starts the series afresh
	// (restart).
	changed := l.varies(o)
	due = due || changed && !l.flatY
	if !l.model.Fitted() {
		l.values.add(o.Y)
		if l.nextFit > 0 {
			l.keep(o.Y, l.uRaw, o.T)
		}
		if !due {
			return l.youngForecast(), nil
		}
		if err := l.fit(); errors.Is(err, errNoStructure) {
			return l.youngForecast(), nil // too few samples yet: the next re-choice tries again
		} else if err != nil {
			return Result{}, err
		}
		return l.maybeForecast(Result{}, o.Future, false), nil
	}
	filled := l.fillGap(prevT, o.T)
	z := l.form.transformed(o.Y, l.floor)
	if o.Y > 0 && halfFloor(o.Y) < l.floor {
		l.floor = halfFloor(o.Y) // logFloor of the values so far: a value at or below zero maps just below the lowest
	}
	base := l.levelBase()
	y := standardise(z-base, l.yLoc, l.yScale)
	for i, u := range l.uRaw {
		l.uNorm[i] = standardise(u, l.uLoc[i], l.uScale[i])
	}
	l.hist.Regressor(l.x, l.uNorm)
	mean, variance := l.model.Observe(l.x)
	offset := l.shift.correction() // the level-shift correction published with this prediction
	st := l.back(base+l.yLoc+l.yScale*(mean+offset), l.yScale*math.Sqrt(variance))
	own := st.Mean        // the model's own prediction, before any combination
	_, df := l.quantile() // the distribution back just used
	if l.th != nil {
		l.th.Forecast(l.thMean[:1], l.thSD[:1])
	}
	if !l.combine(&st, 0, false, false) || l.th != nil {
		df = 0 // the band is an average of two distributions' quantiles, or a normal one
	}
	res := Result{Fitted: true, Prediction: st.Mean, Std: st.Std, Lo: st.Lo, Hi: st.Hi, Filled: filled, DF: df, Fallback: st.Fallback}
	res.Residual = o.Y - res.Prediction
	res.Weight, res.Outlier = l.weigh(y-mean, variance)
	// The value judged in the series' own units too: a log form compresses
	// a corrupt value that the theta forecaster and the values' spread,
	// both additive in y, do not (see glitchZ).
	zY := l.values.z(o.Y)
	if l.th != nil && l.thSD[0] > 0 {
		zY = max(zY, math.Abs(o.Y-l.thMean[0])/l.thSD[0])
	}
	gross := l.grossError(o.Y, y, mean, variance, zY)
	if changed && l.flatY && !gross {
		return l.restart(o)
	}
	if gross {
		res.Weight, res.Outlier = 0, true
	} else if l.watchesShift() && l.shift.update(y-mean, math.Sqrt(variance)) {
		l.cal.reset(l.learned) // its scores are of the uncorrected forecasts (shift.go)
		res.ShiftStarted = true
	}
	res.Swapped = l.model.LearnOffset(y, res.Weight, offset)
	// A re-choice refits robustly on the values as observed (fitWeighted),
	// all but gross errors.
	lagValue, kept, thetaValue := y, o.Y, o.Y
	switch {
	case gross && l.flatY:
		kept = l.flatValue() // the constant itself: a log form's prediction of it may be an ulp off
	case gross:
		kept = own
	}
	if res.Outlier {
		l.outliers++
		if l.cfg.Robust.Clean || gross {
			lagValue = mean + offset // as published: the correction included
			z = base + l.yLoc + l.yScale*lagValue
			thetaValue = own // the theta forecaster learns the cleaned series too
		}
	}
	if l.th != nil {
		l.th.Update(thetaValue)
	}
	if l.nextFit > 0 || l.flatY {
		l.keep(kept, l.uRaw, o.T)
	}
	l.values.add(kept)
	l.hist.Push(lagValue, l.uNorm)
	l.lastZ = z
	l.learned++
	issued := l.cal.issued
	l.calibrate(o.T, o.Y, res.Weight < 0.5, due, o.Future)
	if due {
		// A failed re-choice keeps the model it would have replaced.
		_ = l.fit()
	} else if l.growDue(l.seen) {
		res.Retuned = l.growSettled()
	} else if n := int64(l.cfg.RetuneEvery); n > 0 && (l.learned+l.retunePhase(n))%n == 0 {
		res.Retuned = l.retune()
	}
	// A new model (a re-choice, a retune, a growth) watches afresh: a
	// correction started on the old one's errors does not apply.
	res.ShiftStarted = res.ShiftStarted && l.shift.On
	// A shadow issued just now, with the model unchanged since (no
	// re-choice: none is issued when one is due; no retune), is this
	// record's periodic forecast before the calibration scales it.
	shadow := l.cal.issued != issued && !res.Retuned
	return l.maybeForecast(res, o.Future, shadow), nil
}

// calendarAt writes the calendar features of time t (Unix ms) into the
// last Calendar.Dim() entries of u (series' units; the first nUser are the
// observation's inputs).
func (l *Learner) calendarAt(u []float64, t int64) {
	if l.nu > l.nUser {
		l.cfg.Calendar.FeaturesTo(u[l.nUser:], t)
	}
}

// Gross errors. A value grossZ predictive standard deviations from its
// one-step prediction, or grossZ robust scales from the centre of the
// model's series, is corrupt data, not signal — whatever the robust
// weighting's setting: on the Santa Fe laser, whose intensity collapses are
// the largest genuine surprises known here, the largest one-step error is
// 34 standard deviations. It is not learned (weight 0), is flagged as an
// outlier, and its prediction stands in for it in the lags and the samples
// kept for re-choices. grossRun such values in a row are a shift of the
// series rather than errors: from the grossRun-th on they are learned.
//
// The value is judged in the series' own units too: from the mean of the
// values learned (ValueStats) and from the theta forecaster's one-step
// forecast, in their standard deviations. A log form compresses a corrupt
// value: 1000 times the level of a series with 10 % noise in logs is 69 of
// the model's standard deviations, thousands of the values'; learned, the
// theta forecaster's level and trend, additive in y, carry it into every
// later forecast.
//
// A surprise is a value glitchZ standard deviations away (in any of these
// units) that is not a gross error; it is a glitch, gated like one, when
// no other surprise came within the last glitchMemory values. A surprise
// that recurs is the series' own: the second within glitchMemory is
// learned, as is one of any size right after a gated glitch (grossError),
// and the glitch's observed value goes back among those kept for the
// re-choices, so a series with recurring spikes learns them, and its band
// widens to them. A genuine surprise rarer than that is a step late.
// glitchZ keeps a factor 3 over the largest genuine surprise known here
// (the laser's, above); no value of the benchmark suites reaches it
// (docs/benchmarks.md, "Glitches", which prices the rare ones).
const (
	grossZ       = 1000
	grossRun     = 3
	glitchZ      = 100
	glitchMemory = 1000
)

// keep adds a sample to the raw samples the re-choices use, dropping the oldest
// beyond Config.keptMax (a series that could not be fitted by Warmup keeps
// trying on its last Warmup samples).
func (l *Learner) keep(y float64, u []float64, t int64) {
	most := l.cfg.keptMax(l.model.Fitted(), l.nextFit)
	if l.flatY && l.nextFit == 0 {
		most = restartKeep // a settled flat series keeps what a restart replays
	}
	if len(l.warmY) >= most {
		l.warmY = slices.Delete(l.warmY, 0, 1)
		l.warmU = slices.Delete(l.warmU, 0, l.nu)
		l.warmT = slices.Delete(l.warmT, 0, 1)
	}
	l.warmY = append(l.warmY, y)
	l.warmU = append(l.warmU, u...)
	l.warmT = append(l.warmT, t)
}

// levelBase is what the model's w is added to for z: the last z with a
// Diff form, else 0.
func (l *Learner) levelBase() float64 {
	if l.form.Diff {
		return l.lastZ
	}
	return 0
}

// back carries a normal predictive distribution of z (mean, sd) back to
// the series' units: the interval's bounds are the quantiles of z mapped
// through the inverse of the form's transform (exact: it is monotone), the
// point forecast the inverse at the mean (for Log, the median of y), the std
// that of the distribution of y (for Log, log-normal). Exponents are capped
// so that a wide distribution stays finite.
func (l *Learner) back(mean, sd float64) ForecastStep {
	q, _ := l.quantile()
	lo, hi := mean-q*sd, mean+q*sd
	if !l.form.Log {
		return ForecastStep{Mean: mean, Std: sd, Lo: lo, Hi: hi}
	}
	const maxExp = 700 // e^700 ≈ 1e304: finite, and so are sums of a few
	v := min(sd*sd, maxExp)
	// The log-normal std √(e^v − 1)·e^(mean + v/2), its exponent capped as
	// a whole: capping the factors apart overflows their product.
	std := 0.0
	if v > 0 {
		std = math.Exp(min(0.5*math.Log(math.Expm1(v))+mean+v/2, maxExp))
	}
	return ForecastStep{Mean: math.Exp(min(mean, maxExp)), Std: std,
		Lo: math.Exp(min(lo, maxExp)), Hi: math.Exp(min(hi, maxExp))}
}

// quantile returns the interval's half-width in predictive standard
// deviations. Once the model has calibrated its predictive distribution on
// its own one-step errors, it is that distribution's (a Student-t of ν =
// narx.Info.DF scaled to the variance, or the normal). Before, it is
// Student's t with ν = n_c − d_eff degrees of freedom, the residual degrees
// of freedom the noise level is estimated with (level 2), at least minNu,
// when ν is finite and positive, else the normal: on a few samples the estimated noise
// level is itself uncertain, and integrating it out under its posterior
// gives the t (a normal with an inverse-gamma variance); on many, t →
// normal. It is computed again only when ν changes. df is the model's ν
// (0: none).
func (l *Learner) quantile() (q, df float64) {
	info := l.model.Info()
	if info.DF > 0 {
		if info.DF != l.tNu {
			l.tNu = info.DF
			l.tQ = narx.StandardQuantile(info.DF, l.cfg.Level)
		}
		return l.tQ, info.DF
	}
	nu := info.SamplesWeight - info.DEff
	if !(nu > 0) || math.IsInf(nu, 0) {
		return l.z, 0
	}
	nu = max(nu, minNu)
	// Negative keys: this t's quantiles are cached apart from the model's.
	if -nu != l.tNu {
		l.tNu = -nu
		l.tQ = narx.TQuantile(nu, 0.5+l.cfg.Level/2)
	}
	return l.tQ, 0
}

// minNu is the fewest residual degrees of freedom the band's t is given. A
// model that (nearly) interpolates its samples (d_eff → n_c, an RBF of a
// narrow width on a few values) leaves none, and the t's quantile grows
// without bound as ν → 0; at ν = 1, a Cauchy's, the 95 % band is ±12.7
// standard deviations: wide, as a noise level estimated from nothing
// should make it, and finite.
const minNu = 1

// retuneMinGain is the log-evidence gain (nats) a new width needs over the
// current one, both fitted to the same recent samples, to replace it:
// "positive" evidence on Kass and Raftery's scale (a Bayes factor above 3
// would be 1.1 nats; 2 keeps a series from flapping between close widths).
const retuneMinGain = 2

// fillGap keeps the lag history aligned in time across a gap: when t moved
// k > 1 steps (the step frozen at the fit; k rounded, so jitter below half a
// step is no gap), each of the k−1 missing samples is filled with its
// one-step prediction (with the level-shift correction that applies, as
// the forecasts have it), inputs held at their last values (the calendar's
// computed for its time) — what an iterated forecast feeds back — and is
// not learned. At most the history's depth is
// filled: after that many the regressor holds only predictions either way,
// so the cost of a long outage is bounded by O(depth·M·n). The theta
// forecaster skips every missing step (theta.Model.Skip). Before the first
// fit nothing is filled here: a fit or re-choice fills the gaps of the
// values kept itself (regularised). It returns the number of samples
// filled.
func (l *Learner) fillGap(prevT, t int64) int {
	if l.sp.step <= 0 {
		return 0
	}
	k := l.sp.steps(l.sp.onGrid(prevT), l.sp.onGrid(t))
	if k < 2 {
		return 0
	}
	fill := int(min(k-1, uint64(l.model.Config().Embedding.Depth())))
	for j := range fill {
		copy(l.uNorm, l.hist.LastInputs())
		l.calendarNorm(l.uNorm, l.StepTime(t, -int64(fill-j)))
		l.hist.Regressor(l.x, l.uNorm)
		p := l.model.Predict(l.x) + l.shift.correction() // as a forecast over the gap would have it
		l.hist.Push(p, l.uNorm)
		l.lastZ = l.levelBase() + l.yLoc + l.yScale*p
	}
	if l.th != nil {
		l.th.Skip(k - 1) // all of them: its season and line keep to time
	}
	return fill
}

// maybeForecast issues the periodic forecast. The inputs of step h: the
// planned ones from future[h−1] when the observation brought that row, the
// calendar's computed for the step's time, the others held at their last
// values (unknown to a streaming forecaster). shadow: the calibration's
// shadow forecast (calOut) was issued from the same state and inputs, so
// that it is the forecast's first steps, copied rather than computed again.
func (l *Learner) maybeForecast(res Result, future [][]float64, shadow bool) Result {
	if l.cfg.Horizon == 0 {
		return res
	}
	l.sinceFc++
	if l.sinceFc < l.cfg.Every && l.learned > 0 {
		return res
	}
	l.sinceFc = 0
	if shadow && len(l.out) == len(l.calOut) {
		copy(l.out, l.calOut)
	} else {
		l.forecastNormalised(l.out, l.holdInputs(len(l.out), future))
	}
	l.cal.apply(l.out, l.form.Log)
	res.Forecast = l.out
	return res
}

// holdInputs fills the first n rows of uHold with the normalised inputs of
// forecast steps 1..n and returns them: the planned ones from future[h−1]
// where given, the calendar's computed for the step's time, the others held
// at their last values.
func (l *Learner) holdInputs(n int, future [][]float64) [][]float64 {
	last := l.hist.LastInputs()
	for h, u := range l.uHold[:n] {
		copy(u, last)
		if h < len(future) {
			for j, i := range l.cfg.Planned {
				u[i] = standardise(future[h][j], l.uLoc[i], l.uScale[i])
			}
		}
		l.calendarNorm(u, l.StepTime(l.lastT, int64(h+1)))
		last = u
	}
	return l.uHold[:n]
}

// calibrate advances the calibration over the horizon (horizonCal) by the
// sample just learned, of value y at time t (outlier: learned with a
// robust weight below one half, a gross error or an outlier, and not
// scored, since the bands describe the clean process, as the model's own
// calibration takes them), and issues
// the next shadow forecast when it is due, unless a re-choice is (refit:
// it would reset the calibration): from the state that has learned the
// sample, with the observation's planned rows (future), as the periodic
// forecast would be issued.
func (l *Learner) calibrate(t int64, y float64, outlier, refit bool, future [][]float64) {
	c := &l.cal
	if !c.on() {
		return
	}
	if c.live {
		// In steps of time: a gap's missing values are steps not scored.
		h := l.sp.steps(l.sp.onGrid(c.origin), l.sp.onGrid(t))
		c.score(int(min(h, uint64(c.H)+1)), y, !outlier)
	}
	if c.live || l.learned < c.due || refit {
		return
	}
	l.forecastNormalised(l.calOut, l.holdInputs(c.H, future))
	var th []float64
	if l.th != nil {
		th = l.thMean[:c.H]
	}
	c.setShadow(l.calOut, l.form.Log, l.fcModel[:c.H], th)
	c.live, c.origin = true, l.lastT
	c.due = l.learned + c.spacing()
	c.issued++
}

// youngForecast is the periodic forecast of a series that is not fitted
// yet (fewer than FirstFit values, or no structure fits them yet): the
// theta method's alone (youngSteps), from theta.MinValues values on, so
// that a short series is forecast at all; none with model.combine none.
func (l *Learner) youngForecast() Result {
	if l.cfg.Horizon == 0 || l.cfg.Combine == CombineNone || len(l.warmY) < theta.MinValues {
		return Result{}
	}
	l.sinceFc++
	if l.sinceFc < l.cfg.Every {
		return Result{}
	}
	l.sinceFc = 0
	if !l.youngSteps(l.out) {
		return Result{}
	}
	return Result{Forecast: l.out}
}

// youngSteps fills dst with the forecast of the theta method fitted on the
// last youngWindow values kept (theta.FitYoung: its drift only where the
// trend is evident), cleaned of gross errors as a re-choice
// cleans them (cleanGross), its seasonal period as a re-choice would give
// it (thetaPeriod), each step its mean and standard deviation with the
// band of Student's t at that scale (below), flagged Fallback: a series
// not fitted has no model to forecast with, and
// its inputs are not used. False, dst untouched, with model.combine none,
// values too few for the theta method, or a forecast that is not finite.
// O(w²) for w values: it allocates, and runs before a series' first fit
// only.
func (l *Learner) youngSteps(dst []ForecastStep) bool {
	if l.cfg.Combine == CombineNone || len(l.warmY) < theta.MinValues {
		return false
	}
	from := max(len(l.warmY)-youngWindow, 0)
	ys, ts := slices.Clone(l.warmY[from:]), l.warmT[from:]
	cleanGross(ys)
	th, err := theta.FitYoung(ys, l.thetaPeriod(l.periodsOf(ys, ts), ys))
	if err != nil {
		return false
	}
	mean, sd := l.thetaForecast(th, len(dst))
	// The noise level is estimated from the values with th.DF() degrees
	// of freedom; integrated out, it makes the predictive Student's t, as
	// a fitted model's before its calibration (quantile): on 6 values the
	// normal's band covered 83 % of NN3's next 6–18 (docs/benchmarks.md,
	// "Short series").
	q := narx.TQuantile(th.DF(), 0.5+l.cfg.Level/2)
	for h := range dst {
		if lo, hi := mean[h]-q*sd[h], mean[h]+q*sd[h]; math.IsNaN(lo+hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return false
		}
	}
	l.young = th
	sp := spacingOf(ts, l.cfg.Calendar.Location, l.timed)
	for h := range dst {
		dst[h] = ForecastStep{H: h + 1, T: sp.after(sp.onGrid(l.lastT), int64(h+1)), Mean: mean[h], Std: sd[h],
			Lo: mean[h] - q*sd[h], Hi: mean[h] + q*sd[h], OneStepStd: sd[0], Fallback: true}
	}
	return true
}

// thetaForecast writes th's forecast of steps 1..n into thMean and thSD,
// grown to n if need be, and returns them. It allocates only when n
// exceeds every horizon before it.
func (l *Learner) thetaForecast(th *theta.Model, n int) (mean, sd []float64) {
	if len(l.thMean) < n {
		l.thMean, l.thSD = make([]float64, n), make([]float64, n)
	}
	mean, sd = l.thMean[:n], l.thSD[:n]
	th.Forecast(mean, sd)
	return mean, sd
}

// youngWindow is the most values a young forecast is fitted on: a series
// whose first fits fail for long (too few values for its inputs' lags)
// keeps up to Warmup values, and the fit's period detection costs the
// square of their number on every record.
const youngWindow = 256

// calendarNorm writes the standardised calendar features of time t into
// the last Calendar.Dim() entries of the normalised inputs u.
func (l *Learner) calendarNorm(u []float64, t int64) {
	if l.nu == l.nUser {
		return
	}
	c := u[l.nUser:]
	l.cfg.Calendar.FeaturesTo(c, t)
	for j := range c {
		i := l.nUser + j
		c[j] = standardise(c[j], l.uLoc[i], l.uScale[i])
	}
}

// forecastNormalised fills dst from the model with normalised inputs.
func (l *Learner) forecastNormalised(dst []ForecastStep, inputs [][]float64) {
	steps := l.steps[:len(dst)]
	l.model.ForecastOffset(steps, l.hist, inputs, l.shift.correction())
	// With Diff the level is the last z plus the summed increments, whose
	// variance counts their covariances (CumVar).
	level := l.levelBase()
	for h, s := range steps {
		w, v := l.yLoc+l.yScale*s.Mean, s.Var
		z := w
		if l.form.Diff {
			level += w
			z, v = level, s.CumVar
		}
		st := l.back(z, l.yScale*math.Sqrt(v))
		st.H, st.T = h+1, l.StepTime(l.lastT, int64(h+1))
		st.OneStepStd = l.yScale * math.Sqrt(s.OneStepVar)
		if l.form.Log {
			st.OneStepStd *= st.Mean // the delta method: d y = y d ln y
		}
		dst[h] = st
	}
	if l.th != nil {
		l.thetaForecast(l.th, len(dst))
	}
	if len(l.fcModel) < len(dst) {
		l.fcModel = make([]float64, len(dst)) // a what-if longer than every horizon before
	}
	// The theta method forecasts as if the inputs stayed as they were: from
	// the first step whose inputs differ from the last observation's (a
	// planned change, a what-if's inputs) the model forecasts alone, or an
	// average would halve the change's effect.
	alone := len(dst)
	if l.th != nil && l.nUser > 0 {
		last := l.hist.LastInputs()
	steps:
		for h, u := range inputs[:len(dst)] {
			for i := range l.nUser {
				if u[i] != last[i] {
					alone = h
					break steps
				}
			}
		}
	}
	// The steps are iterated: from the first the model leaves the
	// plausible on, every later one starts from it, and falls back too.
	fallen := false
	for h := range dst {
		model := dst[h].OneStepStd
		l.fcModel[h] = dst[h].Mean
		fallen = !l.combine(&dst[h], h, fallen, h >= alone)
		switch {
		case !fallen && h >= alone:
		case !fallen && l.th != nil:
			dst[h].OneStepStd = (model + l.thSD[0]) / 2
		case fallen && l.th != nil:
			dst[h].OneStepStd = l.thSD[0]
		case fallen:
			dst[h].OneStepStd = l.values.sd()
		}
	}
}

// combine makes st, step h+1 of the model's forecast in the series' units
// (h = 0 for Observe's one-step prediction, which is step 1 of the
// forecast before it), the published one: with the theta forecaster, whose
// forecast of the step is in thMean[h], thSD[h], the average of the two
// (blend), else, or with alone (the step's inputs differ from the last
// observation's: forecastNormalised), the model's own; where the model's step is not
// plausible, or fallen is set (an earlier step of the same forecast was
// not), the fallback alone: the theta method's step (its band censored at
// zero under a log form, partnerBand), or without it the series' marginal
// distribution, the normal of the values' mean and standard deviation
// (ValueStats), whose band may reach below a positive series' lowest
// value: a last resort, honest about its two moments and nothing more. It
// reports whether the model's step stands (alone or averaged); a step that
// does not is a normal's and says so (Fallback).
func (l *Learner) combine(st *ForecastStep, h int, fallen, alone bool) (stands bool) {
	if !fallen && l.plausible(*st) && !l.wilder(*st, h) {
		if l.th != nil && !alone {
			w := 0.5 // the one-step prediction's, which κ and the theta method's σ fit
			if h > 0 {
				w = l.cal.weight
			}
			l.blend(st, l.thMean[h], l.thSD[h], w)
		}
		return true
	}
	st.Mean, st.Std = l.values.Mean, l.values.sd()
	st.Lo, st.Hi = st.Mean-l.z*st.Std, st.Mean+l.z*st.Std
	if l.th != nil {
		st.Mean, st.Std = l.thMean[h], l.thSD[h]
		st.Lo, st.Hi = l.partnerBand(st.Mean, st.Std)
	}
	st.Fallback = true
	return false
}

// plausible reports whether a step of the model's forecast, in the series'
// units, stays within what the series has shown (ValueStats): a band wider
// than implausibleRanges times the range of its values, or a point
// forecast farther than that beyond them, or farther than recordRanges of
// it beyond a bound the later values have not extended
// (ValueStats.extended), is not, nor is one that is not finite. Such a
// step is the model extrapolating where its values say nothing: a young
// series' log model with lags 1, 12 and 13 multiplying a trough by a
// year-old peak over an older, deeper trough, or the
// linearised variance of an iterated chaotic forecast growing without the
// bound the attractor sets (the Santa Fe laser's 100-step bands reached
// ±20 000 on values in [2, 255]; docs/benchmarks.md). Steps are judged in
// y whatever the form, as a consumer reads them: in logs, the young log
// model's 2.4 M against a largest value of 58 676 (docs/benchmarks.md,
// "Cold start") is within ten ranges of ln y.
func (l *Learner) plausible(st ForecastStep) bool {
	return l.values.plausible(st.Mean, st.Lo, st.Hi)
}

// wilder reports whether step h+1 of the model's forecast (st, in the
// series' units) is more than partnerRatio times as uncertain as the
// theta partner's of the same step, when the series has one: the
// linearised variance of an iterated forecast running away (an RBF model
// of gold prices' log increments; docs/benchmarks.md), long before it
// leaves ten ranges of the values (plausible).
func (l *Learner) wilder(st ForecastStep, h int) bool {
	return l.th != nil && h < len(l.thSD) && l.thSD[h] > 0 && st.Std > partnerRatio*l.thSD[h]
}

// partnerRatio is how many times the theta partner's predictive std a
// step of the model's may reach before it falls back (wilder). The partner
// is exponential smoothing with a drift, whose band grows with the horizon
// as a random walk's (or as its forecasts' errors did, measured: a growth
// near 0 keeps it nearly flat, and the test stricter far ahead), or an
// autoregression, whose band stops at the process's spread; ten times
// either says nothing the partner does not, as
// ten ranges say nothing the range does not (implausibleRanges). Much less
// would throw away a young growth series' wide but accurate log forecasts
// (docs/benchmarks.md, "Values that never varied", measures four).
const partnerRatio = 10

// implausibleRanges bounds a series' plausible forecasts in ranges of its
// values (plausible): a band ten times wider than all it has done says
// nothing the range itself does not, and a trend that moves a series ten
// times its whole range within a horizon shorter than its history would
// have shown in it. A random walk's h-step band is about 2.5·√(h/n) of the
// range of its n values, below 10 for any h ≤ n; a geometric walk's upper
// quantile grows with its level, and one whose values span 20× can pass
// 10 ranges from h ≈ 0.4·n on (its later steps are then the fallback's).
const implausibleRanges = 10

// blend averages st with the theta forecaster's normal predictive of mean
// and standard deviation sd (see Combine), the model's weighing w: the
// point forecasts, the band's bounds and the stds, each the weighted mean
// of the two. w is ½ but where the calibration over the horizon has
// chosen another from the shadows' errors (horizonCal.weigh).
func (l *Learner) blend(st *ForecastStep, mean, sd, w float64) {
	lo, hi := l.partnerBand(mean, sd)
	if w == 0.5 {
		// The equal weights in the order of their first build: the same
		// forecasts to the bit (the partner's bound not censored).
		if lo == mean-l.z*sd {
			st.Lo = (st.Lo + mean - l.z*sd) / 2
		} else {
			st.Lo = (st.Lo + lo) / 2
		}
		st.Hi = (st.Hi + mean + l.z*sd) / 2
		st.Mean = (st.Mean + mean) / 2
		st.Std = (st.Std + sd) / 2
		return
	}
	st.Lo = w*st.Lo + (1-w)*lo
	st.Hi = w*st.Hi + (1-w)*hi
	st.Mean = w*st.Mean + (1-w)*mean
	st.Std = w*st.Std + (1-w)*sd
}

// partnerBand returns the band of the theta partner's predictive of mean
// and standard deviation sd: the normal's quantiles, mean ∓ z·sd, the lower
// one at least 0 where the model's form is a log one. The re-choice found
// the series positive and multiplicative, and its model's band is a
// log-normal's, above zero; averaged with a normal band reaching below
// zero (sd > mean/z), the published band of a positive series did too.
// The bound is then the quantile of the partner's predictive censored at
// zero, max(Y, 0), exact under that monotone map; a band above zero keeps
// the normal's quantiles (a log-normal of the same two moments raised the
// lower bounds of NN3's forecasts, missing more values below them;
// docs/benchmarks.md, "Positive bands"). O(1).
func (l *Learner) partnerBand(mean, sd float64) (lo, hi float64) {
	lo, hi = mean-l.z*sd, mean+l.z*sd
	if l.form.Log {
		lo = max(lo, 0)
	}
	return lo, hi
}

// Forecast computes a what-if forecast of len(dst) steps from the current state
// for the planned future inputs (inputs[h] = u at step h+1, in the series'
// units; ignored when the series has no inputs), without changing the model.
// It returns an error if the model is not fitted or the inputs do not fit.
func (l *Learner) Forecast(dst []ForecastStep, inputs [][]float64) error {
	if l.nUser > 0 && len(inputs) < len(dst) {
		return fmt.Errorf("%d input rows for %d steps", len(inputs), len(dst))
	}
	for h := 0; l.nUser > 0 && h < len(dst); h++ {
		if len(inputs[h]) != l.nUser {
			return fmt.Errorf("step %d has %d inputs, want %d", h+1, len(inputs[h]), l.nUser)
		}
		for i, u := range inputs[h] {
			if math.IsNaN(u) || math.IsInf(u, 0) {
				return fmt.Errorf("step %d input %d is not finite", h+1, i)
			}
			if math.Abs(u) > MaxAbsValue {
				return fmt.Errorf("step %d input %d, %g, is beyond ±%g", h+1, i, u, MaxAbsValue)
			}
		}
	}
	if !l.model.Fitted() {
		if !l.youngSteps(dst) {
			return narx.ErrNotFitted
		}
		return nil // the theta method's alone: the inputs checked, not used
	}
	norm := make([][]float64, len(dst))
	for h := range norm {
		norm[h] = make([]float64, l.nu)
		l.calendarNorm(norm[h], l.StepTime(l.lastT, int64(h+1)))
		for i := 0; i < l.nUser; i++ {
			norm[h][i] = standardise(inputs[h][i], l.uLoc[i], l.uScale[i])
		}
	}
	if len(dst) > len(l.steps) {
		l.steps = make([]narx.Step, len(dst))
	}
	l.forecastNormalised(dst, norm)
	l.cal.apply(dst, l.form.Log)
	return nil
}

// ForecastCopy returns a Learner whose Forecast gives exactly what l's
// would now, and which shares nothing l changes as it observes: its model
// is the model's narx.Model.ForecastCopy, its lag history and
// normalisation copied, without the values kept for the re-choices (but
// for a series not fitted yet, whose young forecast is theirs) or the
// robust scale. A long what-if forecast then runs on the copy, off the
// goroutine that owns l, while l goes on learning. The copy supports
// Forecast and the read-only accessors (Model, Form, Scale, Inputs,
// LastT); it must not Observe. O(M² + M·n); it allocates.
func (l *Learner) ForecastCopy() *Learner {
	c := *l
	c.model = l.model.ForecastCopy()
	c.hist = narx.NewHistory(c.model.Config().Embedding)
	c.hist.CopyFrom(l.hist)
	c.uLoc, c.uScale = slices.Clone(l.uLoc), slices.Clone(l.uScale)
	c.changed = slices.Clone(l.changed)
	c.warmY, c.warmU, c.warmT, c.rscale = nil, nil, nil, nil
	if !l.model.Fitted() {
		c.warmY, c.warmT = slices.Clone(l.warmY), slices.Clone(l.warmT)
	}
	c.uRaw, c.x, c.uNorm, c.uHold, c.steps, c.out, c.thMean, c.thSD = nil, nil, nil, nil, nil, nil, nil, nil
	c.cal, c.calOut, c.fcModel = l.cal.forecastCopy(), nil, nil
	if l.th != nil {
		c.th = l.th.Clone()
	}
	return &c
}

// fit chooses the structure on the samples kept (structure.go), fits the
// model on them and primes the lag history, and schedules the next
// re-choice (or, after the last, releases the samples). On error l keeps
// its model, if any.
func (l *Learner) fit() error {
	var periods []int // the re-choice's proposal, which the schedule follows
	defer func() { l.schedule(periods) }()
	N := len(l.warmY)
	l.outliers += int64(cleanGross(l.warmY))
	// The statistics count the values kept, cleaned: every value so far,
	// or, for a series that could not be fitted before Warmup, the last
	// Warmup before its fit and every one since (the older ones, uncleaned,
	// may hold a gross error).
	l.values = countValues(l.warmY, l.values.Arm)
	// The kept values' calendar features are those of their steps on the
	// grid of this fit's spacing (calendarAt; a value before the first fit,
	// or on another fit's grid, was given its own time's or that grid's).
	sp := spacingOf(l.warmT, l.cfg.Calendar.Location, l.timed)
	// The structure is chosen, and the model fitted, on the samples in
	// time: a lag is the same time back in every sample.
	season := 0 // the main period the time step implies, for the fills
	if ps := l.cfg.knownPeriods(l.warmT, l.timed); len(ps) > 0 {
		season = ps[0]
	}
	ys, rawU, ts := regularised(sp, l.warmY, l.warmU, l.warmT, l.nu, season)
	l.fitT = ts
	defer func() { l.fitT = nil }()
	N = len(ys)
	if l.nu > l.nUser {
		for k, t := range ts {
			l.calendarAt(rawU[k*l.nu:(k+1)*l.nu], sp.onGrid(t))
		}
	}
	uLoc, uScale := make([]float64, l.nu), make([]float64, l.nu)
	col := make([]float64, N)
	for i := 0; i < l.nu; i++ {
		for k := 0; k < N; k++ {
			col[k] = rawU[k*l.nu+i]
		}
		uLoc[i], uScale[i] = scaleOf(col, l.cfg.Scale)
	}
	us := make([]float64, N*l.nu)
	for k := 0; k < N; k++ {
		for i := 0; i < l.nu; i++ {
			us[k*l.nu+i] = standardise(rawU[k*l.nu+i], uLoc[i], uScale[i])
		}
	}
	st, err := l.choose(ys, us)
	if err != nil {
		return err
	}
	periods = st.periods
	d := st.data
	m, err := l.fitWeighted(st.cfg, d.ws, d.us)
	if err != nil {
		return err
	}
	l.setStructure(m)
	l.setSpacing(sp)
	l.form, l.floor = d.form, l.logFloor(ys)
	l.yLoc, l.yScale, l.uLoc, l.uScale = d.loc, d.scale, uLoc, uScale
	if l.rscale != nil {
		// The residuals so far are in the units of the previous form.
		l.rscale = robust.NewStreamingScale(l.cfg.Robust.Window, l.cfg.Robust.Scale)
	}
	for k := range d.ws {
		l.hist.Push(d.ws[k], d.us[k*l.nu:(k+1)*l.nu])
	}
	l.lastZ = d.form.transformed(ys[N-1], l.floor)
	l.cal.reset(l.learned)
	l.th = nil
	if st.theta {
		// A failure (fewer values than the theta method needs: not at a
		// re-choice, which validated it on fewer) leaves the model to
		// forecast alone.
		if l.th = fitPartner(ys, st.partner, st); l.th == nil && st.partner.ar {
			// No autoregression on all the values (none AIC keeps, or an
			// overflow) where one fitted on fewer: the smoothing on the
			// same adjustment.
			l.th = fitPartner(ys, partner{profile: st.partner.profile, sub: st.partner.sub, weight: theta.DefaultWeight}, st)
		}
		if l.th != nil && st.partner.measured {
			l.th.SetGrowth(st.partner.growth)
		}
	}
	return nil
}

// schedule sets the next re-choice after a fit or re-choice that proposed
// periods: the next doubling (or, sooner, the values at which the time
// step's season first joins the lag sets), none after the last (the kept
// samples are released), or, for a series still without a model after
// Warmup, another
// try a quarter of Warmup later (a re-choice beyond Warmup, lastFit, is for
// fitted series).
func (l *Learner) schedule(periods []int) {
	last := l.cfg.Warmup
	if l.model.Fitted() {
		last = l.cfg.lastFit(l.warmT, l.timed, periods)
	}
	l.nextFit = int64(l.cfg.nextFit(int(l.seen), last))
	// The time step's season joins the lag sets at 2(s + 3) values
	// (periodsOf): a re-choice then, if none falls there, rather than a
	// model without it until the next (a daily series' week at 20
	// values, not 32).
	if l.model.Fitted() && l.nextFit > 0 {
		if ps := l.cfg.knownPeriods(l.warmT, l.timed); len(ps) > 0 {
			if at := int64(2 * (ps[0] + 3)); at > l.seen && at < l.nextFit {
				l.nextFit = at
			}
		}
	}
	fitted := l.model.Fitted()
	l.flatY, l.flatInputs = false, nil
	if fitted {
		l.flatY, l.flatInputs = l.unflat()
	}
	switch {
	case l.nextFit > 0:
	case !fitted:
		l.nextFit = l.seen + int64(max(l.cfg.Warmup/4, FirstFit))
	default:
		// After the last re-choice the values are released, but for a flat
		// y the last restartKeep, which a restart replays; an input that
		// never varied stays without effect: no re-choice is left to fit it.
		l.flatInputs = nil
		n := 0
		if l.flatY {
			n = restartKeep
		}
		l.keepLast(n)
	}
}

// keepLast drops all but the last n raw samples kept (all for n = 0).
func (l *Learner) keepLast(n int) {
	if n == 0 {
		l.warmY, l.warmU, l.warmT = nil, nil, nil
		return
	}
	k := max(len(l.warmY)-n, 0)
	l.warmY = slices.Clone(l.warmY[k:])
	l.warmU = slices.Clone(l.warmU[k*l.nu:])
	l.warmT = slices.Clone(l.warmT[k:])
}

// restartKeep is how many of a flat series' values a restart keeps: the
// young theta forecaster's level before the change (youngForecast
// forecasts from a series' 4th value).
const restartKeep = 4

// restart starts a series whose values never varied afresh, when o is the
// first to vary (and is not a glitch, grossError): the model chosen on them
// has the noise level's floor and a regression fitted on one point, and
// the first choices on values that vary would still fit it mostly (such a
// model forecasts a ramp after 80 constants near the constant until its
// next re-choice; docs/benchmarks.md, "Values that never varied"). l
// becomes a new Learner of its configuration that has observed its last
// restartKeep values and then o: a young series, forecast by the theta
// method until its first fit at its FirstFit-th value, the kept ones
// included. Observe has changed l's state for o already; all of it is
// replaced.
func (l *Learner) restart(o Observation) (Result, error) {
	fresh, err := NewLearner(l.cfg)
	if err != nil {
		return Result{}, err
	}
	fresh.changed, fresh.yield, fresh.outliers = l.changed, l.yield, l.outliers
	for k := max(0, len(l.warmY)-restartKeep); k < len(l.warmY); k++ {
		u := l.warmU[k*l.nu : k*l.nu+l.nUser]
		if _, err := fresh.Observe(Observation{T: l.warmT[k], Time: l.timed, Y: l.warmY[k], U: u}); err != nil {
			return Result{}, err
		}
	}
	*l = *fresh
	res, err := l.Observe(o)
	res.Restarted = err == nil
	return res, err
}

// unflat reports what the kept values never varied in: y, or else the
// observation's inputs listed (nothing when none are kept). O(N·n_u).
func (l *Learner) unflat() (y bool, inputs []int) {
	if len(l.warmY) == 0 {
		return false, nil
	}
	if !varied(l.warmY, 0, 1) {
		return true, nil
	}
	for i := range l.nUser {
		if !varied(l.warmU, i, l.nu) {
			inputs = append(inputs, i)
		}
	}
	return false, inputs
}

// varied reports whether x[from], x[from+stride], … are not all equal.
func varied(x []float64, from, stride int) bool {
	for k := from + stride; k < len(x); k += stride {
		if x[k] != x[from] {
			return true
		}
	}
	return false
}

// flatValue is the constant of a series whose kept values never varied
// (flatY): the first of them, as every one.
func (l *Learner) flatValue() float64 { return l.warmY[0] }

// varies reports whether o is the first observation of a fitted series
// to vary where its kept values did not (flatY, flatInputs). O(n_u).
func (l *Learner) varies(o Observation) bool {
	if !l.model.Fitted() || len(l.warmY) == 0 {
		return false
	}
	if l.flatY {
		return o.Y != l.flatValue()
	}
	for _, i := range l.flatInputs {
		if i < len(o.U) && o.U[i] != l.warmU[i] {
			return true
		}
	}
	return false
}

// robustFitIter bounds the weighted refits of the warm-up (the book finds two
// or three enough).
const robustFitIter = 4

// tuneGamma reports whether the fit chooses γ by iterated validation and
// holds it afterwards (TuneIterated with AutoGamma).
func (l *Learner) tuneGamma() bool {
	return l.cfg.Tuning == TuneIterated && l.cfg.Model.AutoGamma
}

// setStructure installs a model whose embedding may differ from the
// configured one, resizing what depends on the regressor dimension. With
// tuneGamma the model holds its γ (restoring a snapshot builds the model from
// the configuration, AutoGamma on, and passes here too).
func (l *Learner) setStructure(m *narx.Model) {
	if l.tuneGamma() && m.Config().AutoGamma {
		g := m.Config().Gamma
		if m.Fitted() {
			g = m.Info().Gamma
		}
		_ = m.SetGamma(g) // a γ the model already holds: it cannot fail
	}
	e := m.Config().Embedding
	l.model = m
	l.hist = narx.NewHistory(e)
	l.x = make([]float64, e.Dim())
	l.shift = shiftState{}
}

// embed returns the regressors (row-major) and targets for targets k ≥ from
// of the normalised series ys with inputs us (N×n_u).
func embed(e narx.Embedding, ys, us []float64, nu, from int) (X, y []float64) {
	h := narx.NewHistory(e)
	x := make([]float64, e.Dim())
	for k := range ys {
		u := us[k*nu : (k+1)*nu]
		if k >= from && h.Ready() {
			h.Regressor(x, u)
			X = append(X, x...)
			y = append(y, ys[k])
		}
		h.Push(ys[k], u)
	}
	return X, y
}

// maxStandardised bounds a standardised value. A finite value 1e8 robust
// standard deviations out is corrupt data, not signal; bounded, it still
// counts as a huge residual, but its square (and the statistics that
// accumulate it) cannot overflow.
const maxStandardised = 1e8

func standardise(v, loc, scale float64) float64 {
	return min(max((v-loc)/scale, -maxStandardised), maxStandardised)
}

// scaleOf returns the location and scale of x: median and IQR/1.349, or mean
// and standard deviation, falling back to the other and then to 1 when the
// scale is zero (a constant warm-up must not divide by zero).
func scaleOf(x []float64, s Scale) (loc, scale float64) {
	if s == ScaleNone {
		return 0, 1
	}
	sorted := slices.Clone(x)
	slices.Sort(sorted)
	med, iqr := robust.SortedQuantile(sorted, 0.5), robust.SortedIQRScale(sorted)
	var mean float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(x)))
	loc, scale = med, iqr
	if s == ScaleStandard {
		loc, scale = mean, sd
	}
	if !(scale > 0) {
		scale = max(iqr, sd)
	}
	if !(scale > 0) {
		scale = max(math.Abs(loc)*1e-3, 1)
	}
	return loc, scale
}

// cleanGross replaces the values of ys grossZ robust scales from their
// median, corrupt (see grossZ), by the median, and returns how many.
func cleanGross(ys []float64) int {
	n := 0
	if loc, scale := scaleOf(ys, ScaleRobust); scale > 0 {
		for k, y := range ys {
			if math.Abs(y-loc) > grossZ*scale {
				ys[k] = loc
				n++
			}
		}
	}
	return n
}
