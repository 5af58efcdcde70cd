package online

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/recursive"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/theta"
)

// SnapshotVersion is the format version written by MarshalBinary. Decoding
// reads it and versions 6 to 22, which lack the fields tagged with a later
// version (binenc.go), and rejects every other version with
// ErrSnapshotVersion.
const SnapshotVersion = 23

// oldestSnapshot is the oldest version decoding reads.
const oldestSnapshot = 6

var snapshotMagic = [4]byte{'S', 'D', 'L', 'S'}

// ErrSnapshotVersion is returned (wrapped) for a snapshot of an unknown version.
var ErrSnapshotVersion = errors.New("online: unknown snapshot version")

// learnerState is the complete state of a Learner, model and RNG included.
type learnerState struct {
	YLags []int // the lag order chosen at the fit
	Model narx.ModelState
	Hist  narx.HistoryState

	WarmY   []float64
	WarmU   []float64
	WarmT   []int64
	NextFit int64

	Form         Form
	LastZ, Floor float64
	Gross        int
	YLoc, YScale float64
	ULoc, UScale []float64

	RobustScale *robust.StreamingScaleState
	Outliers    int64

	LastT               int64
	HaveT               bool
	Step, Seen, Learned int64
	SinceForecast       int

	// Config is the configuration the state was learned with, as
	// configKeys renders it: a restore under another one says which keys
	// changed (ConfigChanged).
	Config []string

	// InputLags are the input lags of the model (calendar columns
	// included), which the fit may have chosen fewer of than configured;
	// nil in version 6, whose models had every configured input lag.
	InputLags [][]int `snapshot:"7"`

	// Theta is the theta forecaster's state when the forecasts are
	// combined (Config.Combine); nil before version 8, whose series are not
	// combined until their next re-choice.
	Theta *theta.State `snapshot:"8"`

	// Values is what the series' values have been (ValueStats); absent
	// before version 9, whose restore counts again from the values kept,
	// or, with none, arms the statistics after Warmup values.
	Values ValueStats `snapshot:"9"`

	// LastBig, GlitchSeen and GlitchY are the gate's memory of surprises
	// (grossError); zero before version 11, whose restore judges the next
	// surprise as the series' first.
	LastBig    int64   `snapshot:"11"`
	GlitchSeen int64   `snapshot:"11"`
	GlitchY    float64 `snapshot:"11"`

	// Cal is the calibration over the horizon (horizonCal); before version
	// 13 a restore calibrates from the next sample on.
	Cal calState `snapshot:"13"`

	// Size is the model's working-set size, which a re-choice may have
	// grown beyond the configured one (Config.Growth); 0 before version 14,
	// whose models have the configured size.
	Size int `snapshot:"14"`

	// Shift is the watch for a location shift of the model's residuals
	// (shiftState); zero before version 15, whose restore watches from the
	// next sample.
	Shift shiftState `snapshot:"15"`

	// Off is the weekdays without values of a daily or finer series, Slots
	// the steps of its working days that carry values (nil: all), and Local
	// whether its spacing is read on the wall clock of the calendar's time
	// zone (spacing); 0 and false before version 16, whose restore steps
	// by calendar days of UTC until the next fit.
	Off   uint8   `snapshot:"16"`
	Slots []int32 `snapshot:"16"`
	Local bool    `snapshot:"16"`
	// Phase is the grid's phase of a fixed step when Grid (spacing);
	// absent before version 17, whose forecasts count their steps from
	// the last value's own time until the next fit.
	Phase int64 `snapshot:"17"`
	Grid  bool  `snapshot:"17"`
	// Timed says the series' t are times (Observation.Time); absent
	// before version 19, whose series were timed when their first t
	// looked like one (looksTimed).
	Timed bool `snapshot:"19"`
}

// MarshalBinary encodes the Learner's complete state: magic, version (uint16,
// big-endian), then the state in the binary layout of binenc.go. The configuration is not
// included; restore into a Learner built from the same configuration.
func (l *Learner) MarshalBinary() ([]byte, error) {
	st := learnerState{
		YLags: l.model.Config().Embedding.YLags,
		Model: l.model.State(), Hist: l.hist.State(),
		WarmY: slices.Clone(l.warmY), WarmU: slices.Clone(l.warmU), WarmT: slices.Clone(l.warmT), NextFit: l.nextFit,
		Form: l.form, LastZ: l.lastZ, Floor: l.floor, Gross: l.gross,
		YLoc: l.yLoc, YScale: l.yScale, ULoc: slices.Clone(l.uLoc), UScale: slices.Clone(l.uScale),
		Outliers: l.outliers,
		LastT:    l.lastT, HaveT: l.haveT, Step: l.sp.step, Off: l.sp.off, Slots: l.sp.slots, Local: l.sp.loc != nil, Phase: l.sp.phase, Grid: l.sp.grid, Timed: l.timed, Seen: l.seen, Learned: l.learned, SinceForecast: l.sinceFc,
		Config:    configKeys(l.cfg),
		InputLags: l.model.Config().Embedding.InputLags,
		Values:    l.values,
		LastBig:   l.lastBig, GlitchSeen: l.glitchSeen, GlitchY: l.glitchY,
		Cal:   l.cal.state(),
		Size:  l.model.Config().Size,
		Shift: l.shift,
	}
	if l.rscale != nil {
		rs := l.rscale.State()
		st.RobustScale = &rs
	}
	if l.th != nil {
		ts := l.th.State()
		st.Theta = &ts
	}
	b := append([]byte(nil), snapshotMagic[:]...)
	b = binary.BigEndian.AppendUint16(b, SnapshotVersion)
	return encodeValue(b, reflect.ValueOf(st), SnapshotVersion), nil
}

// UnmarshalBinary restores a state written by MarshalBinary. On error l is
// unchanged. A state is read from a topic anyone with access may write:
// one that would panic while the Learner is rebuilt from it (a case the
// checks below miss) is returned as an error too, so that a daemon
// starting on it starts the series afresh instead of crashing at every
// restart.
func (l *Learner) UnmarshalBinary(b []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("online: snapshot could not be restored: %v", p)
		}
	}()
	return l.unmarshal(b)
}

// unmarshal is UnmarshalBinary without its recover.
func (l *Learner) unmarshal(b []byte) error {
	if len(b) < 6 || !bytes.Equal(b[:4], snapshotMagic[:]) {
		return fmt.Errorf("online: not a learner snapshot")
	}
	v := binary.BigEndian.Uint16(b[4:6])
	if v < oldestSnapshot || v > SnapshotVersion {
		return fmt.Errorf("%w: %d (this build reads %d to %d)", ErrSnapshotVersion, v, oldestSnapshot, SnapshotVersion)
	}
	var st learnerState
	d := decoder{b: b[6:], version: int(v)}
	if err := d.decodeValue(reflect.ValueOf(&st).Elem()); err != nil {
		return fmt.Errorf("online: decode snapshot: %w", err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("online: decode snapshot: %d bytes after the state", len(d.b))
	}
	fresh, err := NewLearner(l.cfg)
	if err != nil {
		return err
	}
	if st.Model.Fitted {
		// No re-choice ranks a lag deeper than half its samples, and the
		// last is on at most max(Warmup, maxLastFit) values: a deeper lag
		// is a corrupt snapshot, refused before its history is allocated
		// (depth × inputs numbers).
		deepest := max(l.cfg.Warmup, maxLastFit)
		if !lagsWithin(st.YLags, deepest) || slices.ContainsFunc(st.InputLags, func(ls []int) bool { return !lagsWithin(ls, deepest) }) {
			return fmt.Errorf("online: snapshot lags beyond %d", deepest)
		}
		mc := fresh.cfg.Model
		mc.Embedding.YLags = st.YLags
		if v >= 7 { // InputLags's version; before it, every configured input lag
			if len(st.InputLags) != fresh.nu {
				return fmt.Errorf("online: snapshot has %d inputs' lags, the configuration %d inputs", len(st.InputLags), fresh.nu)
			}
			mc.Embedding.InputLags = st.InputLags
		}
		mc.Summed = st.Form.Diff
		if st.Size > 0 && st.Size != mc.Size {
			mc = fresh.cfg.Growth.resize(mc, st.Size)
		}
		m, err := narx.NewModel(mc)
		if err != nil {
			return fmt.Errorf("online: snapshot lags: %w", err)
		}
		fresh.setStructure(m)
	}
	if err := fresh.model.SetState(st.Model); err != nil {
		return err
	}
	if err := fresh.hist.SetState(st.Hist); err != nil {
		return err
	}
	fitted := st.Model.Fitted
	if fitted && !fresh.hist.Ready() {
		return fmt.Errorf("online: snapshot of a fitted model holds fewer records than its lags")
	}
	if len(st.ULoc) != len(st.UScale) {
		return fmt.Errorf("online: snapshot input scales do not match")
	}
	if fitted && (len(st.ULoc) != l.nu || len(st.UScale) != l.nu || !finiteScale(st.YLoc, st.YScale) || st.Step < 1) || !validOff(st.Off, st.Slots, st.Step) || (st.Grid && (!fitted || st.Step < 1 || st.Step > maxGridStep || calendarMonths(st.Step) != 0 || st.Phase < 0 || st.Phase >= st.Step)) ||
		len(st.WarmU) != len(st.WarmY)*l.nu || len(st.WarmT) != len(st.WarmY) {
		return fmt.Errorf("online: snapshot does not fit the configuration")
	}
	for i := range st.ULoc {
		if !finiteScale(st.ULoc[i], st.UScale[i]) {
			return fmt.Errorf("online: snapshot has a bad input scale")
		}
	}
	if math.IsNaN(st.LastZ) || math.IsInf(st.LastZ, 0) || !(st.Floor >= 0) || math.IsInf(st.Floor, 0) || (st.Form.Log && !(st.Floor > 0)) ||
		st.NextFit < 0 || len(st.WarmY) > l.cfg.keptMax(fitted, st.NextFit) || st.Gross < 0 ||
		st.LastBig < 0 || st.LastBig > st.Seen || st.GlitchSeen < 0 || st.GlitchSeen > st.LastBig ||
		math.IsNaN(st.GlitchY) || math.IsInf(st.GlitchY, 0) {
		return fmt.Errorf("online: snapshot level or schedule is not valid")
	}
	if !(fitted || st.NextFit > 0) || (fitted || len(st.WarmY) > 0) && !st.HaveT || st.LastT > maxAbsT || st.LastT < -maxAbsT ||
		st.Seen < 0 || st.Seen > maxSeen || st.Learned < 0 || st.Learned > st.Seen || st.Outliers < 0 || st.Outliers > st.Seen ||
		int64(st.Gross) > st.Seen || st.SinceForecast < 0 || !recursive.AllFinite(st.WarmY) || !recursive.AllFinite(st.WarmU) ||
		slices.ContainsFunc(st.WarmT, func(t int64) bool { return t > maxAbsT || t < -maxAbsT }) || !slices.IsSorted(st.WarmT) {
		return fmt.Errorf("online: snapshot counts or kept values are not valid")
	}
	if v < 20 {
		st.Values.unknownRefs()
	}
	if !st.Values.valid() {
		return fmt.Errorf("online: snapshot value statistics are not valid")
	}
	if !st.Shift.valid() {
		return fmt.Errorf("online: snapshot shift watch is not valid")
	}
	for _, v := range st.Hist.Buf {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("online: snapshot history is not finite")
		}
	}
	// The robust weighting as configured now: a scale of the same window
	// and kind is restored; robust weighting switched on, or another
	// window or kind, starts from an empty scale, as a re-choice does
	// (ConfigChanged names the keys); switched off drops it.
	if st.RobustScale != nil && fresh.rscale != nil && st.RobustScale.Window == l.cfg.Robust.Window && st.RobustScale.Kind == l.cfg.Robust.Scale {
		rs, err := robust.StreamingScaleFromState(*st.RobustScale)
		if err != nil || rs.Window() != l.cfg.Robust.Window || rs.Kind() != l.cfg.Robust.Scale {
			return fmt.Errorf("online: snapshot robust scale does not fit: %v", err)
		}
		fresh.rscale = rs
	}
	// A configuration that no longer combines drops the theta forecaster;
	// one that newly does combines from the next re-choice (a series past
	// its last re-choice, which keeps no values to fit it on, never).
	if st.Theta != nil && fresh.cfg.Combine != CombineNone {
		if !fitted {
			return fmt.Errorf("online: snapshot has a theta forecaster without a model")
		}
		if v < 17 {
			st.Theta.Weight = theta.DefaultWeight
		}
		th, err := theta.FromState(*st.Theta)
		if err != nil {
			return fmt.Errorf("online: snapshot: %w", err)
		}
		fresh.th = th
	}
	fresh.outliers = st.Outliers
	fresh.warmY, fresh.warmU, fresh.warmT, fresh.nextFit = st.WarmY, st.WarmU, st.WarmT, st.NextFit
	fresh.values = st.Values
	switch {
	case v >= 9:
	case len(st.WarmY) > 0:
		fresh.values = countValues(st.WarmY, 0)
	default:
		fresh.values = ValueStats{Arm: int64(l.cfg.Warmup)}
	}
	fresh.form, fresh.lastZ, fresh.floor, fresh.gross = st.Form, st.LastZ, st.Floor, st.Gross
	fresh.lastBig, fresh.glitchSeen, fresh.glitchY = st.LastBig, st.GlitchSeen, st.GlitchY
	// Under NoLevelShift a correction the checkpoint held is dropped, and
	// the calibration over the horizon, which scored the corrected
	// forecasts since the correction started, starts again (below).
	dropped := fresh.cfg.NoLevelShift && st.Shift.On
	if !fresh.cfg.NoLevelShift {
		fresh.shift = st.Shift
	}
	fresh.yLoc, fresh.yScale, fresh.uLoc, fresh.uScale = st.YLoc, st.YScale, st.ULoc, st.UScale
	fresh.lastT, fresh.haveT, fresh.seen, fresh.learned, fresh.sinceFc =
		st.LastT, st.HaveT, st.Seen, st.Learned, st.SinceForecast
	fresh.timed = st.Timed
	if v < 19 {
		first := st.LastT
		if len(st.WarmT) > 0 {
			first = st.WarmT[0]
		}
		fresh.timed = looksTimed(first)
	}
	sp := spacing{step: st.Step, off: st.Off, slots: nilIfEmpty(st.Slots), phase: st.Phase, grid: st.Grid, timed: fresh.timed}
	if st.Local && fresh.cfg.Calendar.Location != time.UTC {
		// The zone is the configuration's: under another one (a changed
		// key the restore names) the wall clock is the new zone's.
		sp.loc = fresh.cfg.Calendar.Location
	}
	fresh.setSpacing(sp)
	// A calibration of another horizon or level (the configuration
	// changed) or from before version 13 starts again at the next sample.
	switch {
	case v >= 13 && fresh.cal.fits(st.Cal) && !dropped:
		if !fresh.cal.setState(st.Cal, st.Learned, st.LastT) {
			return fmt.Errorf("online: snapshot calibration is not valid")
		}
	default:
		fresh.cal.reset(st.Learned)
	}
	fresh.changed = changedKeys(st.Config, configKeys(fresh.cfg))
	if fresh.model.Fitted() {
		// As schedule set them: what varied since has chosen again (or
		// restarted), and a flat y's kept values are all its constant.
		fresh.flatY, fresh.flatInputs = fresh.unflat()
	}
	*l = *fresh
	return nil
}

func finiteScale(loc, scale float64) bool {
	return !math.IsNaN(loc) && !math.IsInf(loc, 0) && scale > 0 && !math.IsInf(scale, 0)
}

// configKeys renders the parts of c that shape what a Learner learns, one
// "name=value" per key, in a fixed order.
func configKeys(c Config) []string {
	m := c.Model
	cal := c.Calendar
	kv := []struct {
		name string
		v    any
	}{
		{"lags", m.Embedding.YLags}, {"lag_candidates", c.LagCandidates}, {"input_lags", m.Embedding.InputLags},
		{"kernel", m.Kernel}, {"kernels", c.Kernels}, {"working_set", m.Size}, {"gamma", m.Gamma},
		{"gamma_auto", m.AutoGamma}, {"forgetting", m.Forgetting}, {"cutoff", m.Cutoff}, {"window", m.Window},
		{"swap_interval", m.SwapInterval}, {"swap_rule", m.SwapRule}, {"select", m.Select}, {"noise_every", m.NoiseEvery}, {"seed", m.Seed},
		{"warmup", c.Warmup}, {"forms", c.Forms}, {"season", c.Season}, {"planned", c.Planned},
		{"calendar", fmt.Sprint(cal.Features, cal.Holidays, cal.Location)},
		{"horizon", c.Horizon}, {"calibrate", c.Calibrate}, {"every", c.Every}, {"level", c.Level}, {"scale", c.Scale},
		{"sigma2_auto", c.AutoSigma2}, {"tuning", c.Tuning}, {"retune_every", c.RetuneEvery},
		{"tune_size", c.TuneSize}, {"tune_horizon", c.TuneHorizon}, {"robust", c.Robust}, {"combine", c.Combine}, {"growth", c.Growth},
	}
	out := make([]string, len(kv), len(kv)+1)
	for i, p := range kv {
		out[i] = fmt.Sprintf("%s=%v", p.name, p.v)
	}
	// Rendered only when not the default, so that checkpoints written
	// before the key existed do not report it changed.
	if c.NoLevelShift {
		out = append(out, "level_shift=off")
	}
	if c.InputLagOrders > 0 {
		out = append(out, fmt.Sprintf("input_lag_orders=%d", c.InputLagOrders))
	}
	return out
}

// changedKeys returns the names of the keys whose values differ between two
// configKeys renderings: present in both with other values, or in one only
// (an old snapshot's may lack keys added since; a key rendered only when
// not its default is absent at the default), now's order first.
func changedKeys(was, now []string) []string {
	old := make(map[string]string, len(was))
	for _, kv := range was {
		k, v, _ := strings.Cut(kv, "=")
		old[k] = v
	}
	var out []string
	for _, kv := range now {
		k, v, _ := strings.Cut(kv, "=")
		if w, ok := old[k]; !ok || w != v {
			out = append(out, k)
		}
		delete(old, k)
	}
	for _, kv := range was {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := old[k]; ok { // in was only
			out = append(out, k)
			delete(old, k)
		}
	}
	return out
}

// maxSeen bounds a restored series' count of values: 2^62 is beyond any
// series (a thousand years at a million values a second is 2^55), and the
// counts kept beside it cannot overflow.
const maxSeen = 1 << 62

// lagsWithin reports whether every lag of ls is in [0, deepest].
func lagsWithin(ls []int, deepest int) bool {
	return !slices.ContainsFunc(ls, func(a int) bool { return a < 0 || a > deepest })
}
