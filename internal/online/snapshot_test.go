package online

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/theta"
)

// A Learner restored from a snapshot continues bit-identically: same
// predictions, bars, forecasts and swap decisions (the RNG state travels in the
// snapshot). Checked at a point in warm-up and at points after the fit, with
// swaps allowed so the RNG and the window matter, under both swap rules
// (the gain rule picks its newcomer from the window), and with the
// forecasts combined with the theta method, whose state travels too.
func TestSnapshotRoundTripIsBitIdentical(t *testing.T) {
	for _, c := range []struct {
		name    string
		rule    narx.SwapRule
		combine Combine
		shift   float64 // added to the series
	}{{"entropy", narx.SwapEntropy, CombineNone, 0}, {"gain", narx.SwapGain, CombineNone, 0}, {"gain+theta", narx.SwapGain, CombineTheta, 0},
		// Through zero: the theta method's season is additive.
		{"gain+theta through zero", narx.SwapGain, CombineTheta, -10}} {
		t.Run(c.name, func(t *testing.T) { snapshotRoundTrip(t, c.rule, c.combine, c.shift) })
	}
}

func snapshotRoundTrip(t *testing.T, rule narx.SwapRule, combine Combine, shift float64) {
	cfg := testConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0, 2}}
	cfg.Model.SwapRule = rule
	cfg.Combine = combine
	cfg.AutoSigma2 = true
	y := noisySine(900, 0.1, 5)
	for i := range y {
		if combine == CombineTheta {
			// A season of 12, so that the theta method is seasonal: the
			// sine's own period, 2π/0.3, is no common one.
			y[i] = 10 + 3*math.Sin(2*math.Pi*float64(i)/12) + (y[i] - 10 - 3*math.Sin(0.3*float64(i)))
		}
		y[i] += shift
	}
	obs := func(i int) Observation {
		return Observation{T: int64(10 * i), Y: y[i], U: []float64{math.Sin(0.05 * float64(i))}}
	}
	for _, cut := range []int{50, 100, 333, 600} {
		a, _ := NewLearner(cfg)
		for i := 0; i < cut; i++ {
			if _, err := a.Observe(obs(i)); err != nil {
				t.Fatal(err)
			}
		}
		snap, err := a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewLearner(cfg)
		if err := b.UnmarshalBinary(snap); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		swaps := 0
		for i := cut; i < len(y); i++ {
			ra, _ := a.Observe(obs(i))
			rb, err := b.Observe(obs(i))
			if err != nil {
				t.Fatal(err)
			}
			if ra.Prediction != rb.Prediction || ra.Std != rb.Std || ra.Swapped != rb.Swapped || len(ra.Forecast) != len(rb.Forecast) {
				t.Fatalf("cut %d, sample %d: %+v vs %+v", cut, i, ra, rb)
			}
			for h := range ra.Forecast {
				if ra.Forecast[h] != rb.Forecast[h] {
					t.Fatalf("cut %d, sample %d, step %d: %+v vs %+v", cut, i, h, ra.Forecast[h], rb.Forecast[h])
				}
			}
			if ra.Swapped {
				swaps++
			}
		}
		if cut > 100 && swaps == 0 && combine != CombineTheta {
			// (The theta cases' seasonal series make no swaps after 119.)
			t.Errorf("cut %d: no swaps after the restore; the RNG path is untested", cut)
		}
		if (b.Theta() != nil) != (combine == CombineTheta) {
			t.Errorf("cut %d: theta forecaster %v with combine %v", cut, b.Theta() != nil, combine)
		}
		if th := b.Theta(); th != nil && cut > 100 && (len(th.Season) > 0 && th.Additive) != (shift < 0) {
			t.Errorf("cut %d: theta season %v additive %v for a series shifted by %g", cut, th.Season, th.Additive, shift)
		}
	}
}

func TestSnapshotRejectsBadInput(t *testing.T) {
	a, _ := NewLearner(testConfig())
	for i, v := range noisySine(200, 0.1, 6) {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	snap, _ := a.MarshalBinary()
	bad := append([]byte(nil), snap...)
	bad[5] = 99
	b, _ := NewLearner(testConfig())
	if err := b.UnmarshalBinary(bad); !errors.Is(err, ErrSnapshotVersion) {
		t.Errorf("unknown version: %v", err)
	}
	for _, b2 := range [][]byte{nil, []byte("SDLS"), snap[:len(snap)/2], append([]byte("XXXX"), snap[4:]...)} {
		if err := b.UnmarshalBinary(b2); err == nil {
			t.Errorf("accepted a corrupt snapshot of %d bytes", len(b2))
		}
	}
	// Still a fresh learner: the failed restores changed nothing.
	if b.Fitted() {
		t.Error("a failed restore changed the learner")
	}
}

// TestSnapshotIntoAnotherWindow: a learner configured with another window
// size (a changed model.window, or its default after an upgrade) restores
// a snapshot keeping the newest samples its window holds, and goes on.
func TestSnapshotIntoAnotherWindow(t *testing.T) {
	a, _ := NewLearner(testConfig()) // window 100
	y := noisySine(400, 0.1, 6)
	for i, v := range y[:300] {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	snap, _ := a.MarshalBinary()
	aX, aY, _ := a.model.Window()
	for _, W := range []int{50, 100, 250} {
		other := testConfig()
		other.Model.Window = W
		c, _ := NewLearner(other)
		if err := c.UnmarshalBinary(snap); err != nil {
			t.Fatalf("W = %d: %v", W, err)
		}
		X, cy, _ := c.model.Window()
		keep := min(len(aY), W)
		n := len(aX) / len(aY)
		if !slices.Equal(cy, aY[len(aY)-keep:]) || !slices.Equal(X, aX[(len(aY)-keep)*n:]) {
			t.Errorf("W = %d: the window holds %d samples, want the newest %d of %d", W, len(cy), keep, len(aY))
		}
		for i, v := range y[300:] {
			res, err := c.Observe(Observation{T: int64(300 + i), Y: v})
			if err != nil || math.IsNaN(res.Prediction) {
				t.Fatalf("W = %d, sample %d: %v, prediction %v", W, 300+i, err, res.Prediction)
			}
		}
	}
}

// FuzzUnmarshalSnapshot: arbitrary bytes never panic, and a restore either
// succeeds or leaves the learner unchanged (still unfitted here, with its
// outputs on a fixed stream equal to a fresh learner's). The bands are
// calibrated over the horizon, so the seed carries a calibration's state.
func FuzzUnmarshalSnapshot(f *testing.F) {
	cfg := testConfig()
	cfg.Calibrate = cfg.Horizon
	a, _ := NewLearner(cfg)
	for i, v := range noisySine(150, 0.1, 11) {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	good, _ := a.MarshalBinary()
	f.Add(good)
	f.Add(good[:len(good)/3])
	f.Add([]byte("SDLS\x00\x02"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		l, _ := NewLearner(cfg)
		if err := l.UnmarshalBinary(b); err != nil {
			if l.Fitted() || l.seen != 0 {
				t.Fatalf("a failed restore changed the learner: %v", err)
			}
			return
		}
		// A successful restore must give finite outputs on more data.
		for i, v := range noisySine(50, 0.1, 12) {
			res, err := l.Observe(Observation{T: l.lastT + int64(i) + 1, Y: v})
			if err != nil {
				return // e.g. a restored stream whose inputs do not fit: rejected cleanly
			}
			if math.IsNaN(res.Prediction) || math.IsInf(res.Std, 0) {
				t.Fatalf("non-finite output after restore: %+v", res)
			}
		}
	})
}

// A snapshot claiming a huge slice is refused before anything is allocated
// for it: every length is checked against the bytes that are left.
func TestSnapshotHostileLengthIsBounded(t *testing.T) {
	hostile := []byte("SDLS")
	hostile = binary.BigEndian.AppendUint16(hostile, SnapshotVersion)
	hostile = binary.AppendUvarint(hostile, 1<<40) // YLags: 2⁴⁰ ints
	l, _ := NewLearner(testConfig())
	var err error
	allocs := testing.AllocsPerRun(10, func() { err = l.UnmarshalBinary(hostile) })
	if err == nil {
		t.Fatal("accepted")
	}
	if allocs > 20 {
		t.Errorf("%v allocations to refuse an 11-byte snapshot", allocs)
	}
	a, _ := NewLearner(testConfig())
	for i, v := range noisySine(300, 0.1, 13) {
		a.Observe(Observation{T: int64(i), Y: v})
	}
	snap, _ := a.MarshalBinary()
	t.Logf("snapshot of a fitted learner (M = 20, W = 100, 4 lags): %d bytes", len(snap))
	if err := l.UnmarshalBinary(append(snap, 0)); err == nil {
		t.Error("accepted trailing bytes")
	}
}

// TestRestoreUnderAnotherConfiguration: a state learned with lags 1..5 and
// restored with lags 1..3 and another horizon keeps its lags and names the
// keys that changed; under the same configuration it names none.
func TestRestoreUnderAnotherConfiguration(t *testing.T) {
	cfg := testConfig()
	cfg.Model.Embedding.YLags = narx.Lags(5)
	l, _ := NewLearner(cfg)
	for i, v := range noisySine(150, 0.1, 1) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := MarshalCheckpoint(l, 7)
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := RestoreCheckpoint(cfg, snap)
	if err != nil || same.ConfigChanged() != nil {
		t.Errorf("same configuration: changed %v, err %v", same.ConfigChanged(), err)
	}
	other := cfg
	other.Model.Embedding.YLags = narx.Lags(3)
	other.Horizon = 7
	r, _, err := RestoreCheckpoint(other, snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ConfigChanged(); !slices.Equal(got, []string{"lags", "horizon"}) {
		t.Errorf("changed keys %v, want [lags horizon]", got)
	}
	if got := r.Model().Config().Embedding.YLags; !slices.Equal(got, narx.Lags(5)) {
		t.Errorf("restored lags %v, want the learned 1..5", got)
	}
}

// restored returns a Learner of cfg restored from l's snapshot.
func restored(t testing.TB, cfg Config, l *Learner) *Learner {
	t.Helper()
	snap, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	return r
}

// A model fitted on fewer input lags than configured (inputs join as the
// values allow) is restored with its own input lags, and continues
// bit-identically, through the re-choice that lets every input in.
func TestSnapshotOfAModelWithFewerInputs(t *testing.T) {
	const nu = 6
	cfg := manyInputsConfig(nu)
	cfg.LagCandidates = []int{1, 2}
	cfg.Warmup = 64
	rng := rand.New(rand.NewPCG(3, 3))
	obs := make([]Observation, 120)
	for i := range obs {
		u := make([]float64, nu)
		for k := range u {
			u[k] = rng.NormFloat64()
		}
		obs[i] = Observation{T: int64(i), Y: u[0] - u[nu-1] + 0.1*rng.NormFloat64(), U: u}
	}
	a, _ := NewLearner(cfg)
	for _, o := range obs[:20] {
		if _, err := a.Observe(o); err != nil {
			t.Fatal(err)
		}
	}
	if e := a.Model().Config().Embedding; e.Dim()-len(e.YLags) == 2*nu {
		t.Fatalf("20 values: every input lag in (%v); the test needs fewer", e.InputLags)
	}
	b := restored(t, cfg, a)
	for i, o := range obs[20:] {
		ra, _ := a.Observe(o)
		rb, err := b.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		if ra.Prediction != rb.Prediction || len(ra.Forecast) != len(rb.Forecast) ||
			len(ra.Forecast) > 0 && ra.Forecast[0] != rb.Forecast[0] {
			t.Fatalf("value %d: %+v vs %+v", 21+i, ra, rb)
		}
	}
	if e := b.Model().Config().Embedding; e.Dim()-len(e.YLags) != 2*nu {
		t.Errorf("after %d values the restored model has input lags %v, want all", len(obs), e.InputLags)
	}
}

// Snapshots of versions 6 (before learnerState.InputLags: its model had
// every configured input lag), 7 (before Theta), 8 (before Values), 9
// (before the calibration's feedback κ), 10 (before the gate's memory of
// surprises), 11 (before the theta method's moving profile) and 12 (before
// the calibration over the horizon) are still read.
func TestOlderSnapshotVersionsAreRead(t *testing.T) {
	for v := oldestSnapshot; v < SnapshotVersion; v++ {
		t.Run(fmt.Sprint("v", v), func(t *testing.T) { testOlderSnapshot(t, v) })
	}
}

func testOlderSnapshot(t *testing.T, version int) {
	cfg := testConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0, 2}}
	y := noisySine(300, 0.1, 7)
	obs := func(i int) Observation {
		return Observation{T: int64(i), Y: y[i], U: []float64{math.Sin(0.05 * float64(i))}}
	}
	a, _ := NewLearner(cfg)
	for i := range 200 {
		if _, err := a.Observe(obs(i)); err != nil {
			t.Fatal(err)
		}
	}
	snap, _ := a.MarshalBinary()
	// Re-encode it as the version wrote it: without the fields added since.
	old := encodeState(snap, stateOf(t, snap), version)
	b, _ := NewLearner(cfg)
	if err := b.UnmarshalBinary(old); err != nil {
		t.Fatal(err)
	}
	for i := 200; i < len(y); i++ {
		ra, _ := a.Observe(obs(i))
		rb, err := b.Observe(obs(i))
		if err != nil || ra.Prediction != rb.Prediction {
			t.Fatalf("value %d: %v %v vs %v", i+1, err, ra.Prediction, rb.Prediction)
		}
	}
}

// Snapshots written by the builds of versions 6 to 22 themselves
// (testdata/learner-v6.snap from 939e5e3^, learner-v7.snap from 45d7605,
// learner-v8.snap from 8339c35, learner-v9.snap from 8c13a56,
// learner-v10.snap from e62b660, learner-v11.snap from dee6fd4,
// learner-v12.snap from e42fb79, learner-v13.snap from a6e3a27,
// learner-v14.snap from afba534, learner-v15.snap from c93acf8,
// learner-v16.snap from 8c53811, learner-v17.snap from 5459e6a,
// learner-v18.snap from 149b41c, learner-v19.snap from 9cdfcf3,
// learner-v20.snap from 8924aee, learner-v21.snap from afb0c2d,
// learner-v22.snap from b7e8c7a: the
// configuration below, 400 values of noisySine(900, 0.1, 5), gain rule) are
// read by today's decoder: the fields added since (InputLags in v7, Theta
// and the window's swap scores in v8, the value statistics in v9, the
// calibration's κ in v10, the gate's memory of surprises in v11, the theta
// method's moving profile in v12, the calibration over the horizon in v13,
// the model's own working-set size in v14, the shift watch in v15, the
// days off and working steps in v16, the theta drift's weight in v17, the
// theta method's additive season in v18, whether t are times in v19,
// where the values last extended their range in v20, the theta partner's
// autoregression in v21, the calibration's count of scores seen and the
// theta partner's measured growth in v22, Holt–Winters' partner in v23)
// are absent, and the Learner goes on as a working model: before v8 with the combination configured but absent (the series
// is past its last re-choice, value 100, and keeps no values to fit it
// on), from v8 with it; before v9 the value statistics counted from the
// restore, judging after Warmup values, from v9 as written, their bounds
// extended for all they know (ValueStats.unknownRefs); a theta
// method written before v17 drifts by half its line's slope, as thetaf,
// the only weight there was, and one written before v18 has a
// multiplicative season, if any. Its 95 % band must cover at
// least 90 % of the next 500 values: a model mis-restored from bytes read
// out of place predicts nothing like a sine.
func TestGoldenOlderSnapshots(t *testing.T) {
	for _, file := range []string{"learner-v6.snap", "learner-v7.snap", "learner-v8.snap", "learner-v9.snap", "learner-v10.snap", "learner-v11.snap", "learner-v12.snap", "learner-v13.snap", "learner-v14.snap", "learner-v15.snap", "learner-v16.snap", "learner-v17.snap", "learner-v18.snap", "learner-v19.snap", "learner-v20.snap", "learner-v21.snap", "learner-v22.snap"} {
		t.Run(file, func(t *testing.T) {
			snap, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig()
			cfg.Model.Embedding.InputLags = [][]int{{0, 2}}
			cfg.Model.SwapRule = narx.SwapGain
			cfg.AutoSigma2 = true
			cfg.Combine = CombineTheta
			l, _ := NewLearner(cfg)
			if err := l.UnmarshalBinary(snap); err != nil {
				t.Fatal(err)
			}
			valuesKept := !slices.Contains([]string{"learner-v6.snap", "learner-v7.snap", "learner-v8.snap"}, file)
			wantTheta := file == "learner-v8.snap" || valuesKept
			if l.seen != 400 || !l.Fitted() || (l.Theta() != nil) != wantTheta || l.LastT() != 3990 {
				t.Fatalf("restored: seen %d, fitted %v, theta %v, last t %d", l.seen, l.Fitted(), l.Theta() != nil, l.LastT())
			}
			if th := l.Theta(); th != nil && !slices.Contains([]string{"learner-v17.snap", "learner-v18.snap", "learner-v19.snap", "learner-v20.snap", "learner-v21.snap", "learner-v22.snap"}, file) && th.Weight != theta.DefaultWeight {
				t.Fatalf("restored theta method's drift weight %v, want thetaf's %v", th.Weight, theta.DefaultWeight)
			}
			if th := l.Theta(); th != nil && th.Additive {
				t.Fatalf("restored theta method with an additive season from a snapshot before v18")
			}
			if l.timed {
				t.Fatalf("restored as timed: its t (10, 20, …) look like sequence numbers")
			}
			// Version 22 wrote both; before it neither was.
			if th := l.Theta(); file != "learner-v22.snap" && (th != nil && th.Measured || !slices.Equal(l.cal.seen, l.cal.n)) {
				t.Fatalf("restored a measured growth (%v) or a count of scores seen %v other than the window's %v", th != nil && th.Measured, l.cal.seen, l.cal.n)
			}
			if th := l.Theta(); th != nil && th.HW {
				t.Fatalf("restored a Holt–Winters partner from a snapshot before v23")
			}
			if valuesKept {
				refs := file == "learner-v20.snap" || file == "learner-v21.snap" || file == "learner-v22.snap" // written with its references
				if v := l.values; v.N != 400 || !v.armed() || !refs && (!v.extended(true) || !v.extended(false)) || refs && v.LoRef == v.Hi {
					t.Fatalf("restored value statistics %+v, want the 400 values', armed, their bounds' references as written (from v20) or extended for all they know", v)
				}
			} else if l.values.N != 0 || l.values.Arm != int64(cfg.Warmup) {
				t.Fatalf("restored value statistics %+v, want none, armed after %d", l.values, cfg.Warmup)
			}
			y := noisySine(900, 0.1, 5)
			covered := 0
			for i := 400; i < 900; i++ {
				res, err := l.Observe(Observation{T: int64(10 * i), Y: y[i], U: []float64{math.Sin(0.05 * float64(i))}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Lo <= y[i] && y[i] <= res.Hi {
					covered++
				}
			}
			if covered < 450 || l.Model().Info().Swaps == 0 {
				t.Errorf("after the restore: %d of 500 values in the 95 %% band, %d swaps", covered, l.Model().Info().Swaps)
			}
		})
	}
}

// stateOf decodes the state of snapshot snap, written by this build.
func stateOf(t *testing.T, snap []byte) learnerState {
	t.Helper()
	var st learnerState
	d := decoder{b: snap[6:], version: SnapshotVersion}
	if err := d.decodeValue(reflect.ValueOf(&st).Elem()); err != nil {
		t.Fatal(err)
	}
	return st
}

// encodeState encodes st as snapshot version version lays it out, with
// snap's magic.
func encodeState(snap []byte, st learnerState, version int) []byte {
	return encodeValue(append(append([]byte(nil), snap[:4]...), 0, byte(version)), reflect.ValueOf(st), version)
}

// TestSnapshotRefusesImpossibleStates: a snapshot that no Learner could
// have written — a lag deeper than any re-choice ranks, a fitted model
// with fewer records than its lags, a young series with no fit to come,
// counts that overflow or contradict each other, kept values that are not
// finite or not in time order, a log form whose floor is 0 — is refused
// at the restore, without a panic and, for the lags, without allocating
// the history they would need; the unchanged state restores.
func TestSnapshotRefusesImpossibleStates(t *testing.T) {
	cfg := testConfig()
	fitted, _ := NewLearner(cfg)
	young, _ := NewLearner(cfg)
	for i, v := range noisySine(300, 0.1, 13) {
		fitted.Observe(Observation{T: int64(i), Y: v})
		if i < 10 {
			young.Observe(Observation{T: int64(i), Y: v})
		}
	}
	for _, c := range []struct {
		name   string
		young  bool
		mutate func(*learnerState)
	}{
		{"lag MaxInt64", false, func(s *learnerState) { s.YLags[len(s.YLags)-1] = math.MaxInt64 }},
		{"lag 2^24", false, func(s *learnerState) { s.YLags[len(s.YLags)-1] = 1 << 24 }},
		{"no records in the history", false, func(s *learnerState) { s.Hist.Count = 0 }},
		{"no t yet a fitted model", false, func(s *learnerState) { s.HaveT = false }},
		{"gross run beyond the values seen", false, func(s *learnerState) { s.Gross = math.MaxInt }},
		{"values seen beyond 2^62", false, func(s *learnerState) { s.Seen = math.MaxInt64 }},
		{"learned more than seen", false, func(s *learnerState) { s.Learned = s.Seen + 1 }},
		{"negative samples since a forecast", false, func(s *learnerState) { s.SinceForecast = -1 }},
		{"last t beyond 2^53", false, func(s *learnerState) { s.LastT = math.MaxInt64 - 5 }},
		{"log form with a floor of 0", false, func(s *learnerState) { s.Form.Log, s.Floor = true, 0 }},
		{"young with no fit to come", true, func(s *learnerState) { s.NextFit = 0 }},
		{"kept value NaN", true, func(s *learnerState) { s.WarmY[3] = math.NaN() }},
		{"kept times out of order", true, func(s *learnerState) { s.WarmT[2], s.WarmT[3] = s.WarmT[3], s.WarmT[2] }},
	} {
		src := fitted
		if c.young {
			src = young
		}
		snap, _ := src.MarshalBinary()
		st := stateOf(t, snap)
		c.mutate(&st)
		bad := encodeState(snap, st, SnapshotVersion)
		r, _ := NewLearner(cfg)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := r.UnmarshalBinary(bad)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: restored", c.name)
		}
		// The largest legitimate allocation of a restore is the state's own
		// size a few times over; 2^24 lags would be 128 MB of history.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("%s: %d MB allocated to refuse a %d-byte snapshot", c.name, grew>>20, len(bad))
		}
		if err := r.UnmarshalBinary(snap); err != nil {
			t.Errorf("%s: the unchanged snapshot: %v", c.name, err)
		}
	}
}

// TestRestoreUnderAnotherRobustConfiguration: a series keeps its state when
// its robust weighting is switched on or off or given another window: the
// change is named (ConfigChanged) and takes effect at once, from an empty
// scale when on; under the same configuration the scale is restored and the
// series goes on bit for bit.
func TestRestoreUnderAnotherRobustConfiguration(t *testing.T) {
	on := robustConfig(false)
	off := testConfig()
	wider := robustConfig(false)
	wider.Robust.Window = 300
	y, _ := spiky(400, 8)
	for _, c := range []struct {
		name     string
		from, to Config
	}{
		{"on → off", on, off},
		{"off → on", off, on},
		{"window 200 → 300", on, wider},
		{"on → on", on, on},
	} {
		a, _ := NewLearner(c.from)
		for i, v := range y[:300] {
			a.Observe(Observation{T: int64(i), Y: v})
		}
		snap, _ := a.MarshalBinary()
		r, _ := NewLearner(c.to)
		if err := r.UnmarshalBinary(snap); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		changed := slices.Contains(r.ConfigChanged(), "robust")
		if same := c.from.Robust == c.to.Robust; changed == same {
			t.Errorf("%s: changed keys %v", c.name, r.ConfigChanged())
		}
		if (r.rscale != nil) != c.to.Robust.Enabled {
			t.Errorf("%s: robust scale %v with robust weighting %v", c.name, r.rscale != nil, c.to.Robust.Enabled)
		}
		for i, v := range y[300:] {
			ra, errA := a.Observe(Observation{T: int64(300 + i), Y: v})
			rr, errR := r.Observe(Observation{T: int64(300 + i), Y: v})
			if errR != nil || math.IsNaN(rr.Prediction) {
				t.Fatalf("%s: sample %d: %v, prediction %v", c.name, 300+i, errR, rr.Prediction)
			}
			if c.from.Robust == c.to.Robust && (errA != nil || ra.Prediction != rr.Prediction) {
				t.Fatalf("%s: sample %d: %v against %v", c.name, 300+i, rr.Prediction, ra.Prediction)
			}
		}
	}
}
