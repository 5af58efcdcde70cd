package online

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/streamd/streamd/internal/narx"
)

// shadowOf returns H steps of mean 0 and band [−hw, hw].
func shadowOf(H int, hw float64) []ForecastStep {
	s := make([]ForecastStep, H)
	for i := range s {
		s[i] = ForecastStep{H: i + 1, Mean: 0, Std: hw / 1.96, Lo: -hw, Hi: hw}
	}
	return s
}

// binRef is the definition of the steps a bin scores, written apart from
// binSteps: bin b holds the steps h with h − 1 in [2^b, min(2^(b+1), H)),
// and scores one every ⌈size/4⌉ of them from its first.
func binRef(H, h int) (b int, scored bool) {
	for 1<<(b+1) <= h-1 {
		b++
	}
	size := min(1<<(b+1), H) - 1<<b
	stride := (size + 3) / 4
	return b, (h-1-1<<b)%stride == 0
}

// A bin's factor is the closed form of update's definition on the scores
// of its last calWindow shadows: the ⌈0.95(n+1)⌉-th smallest of its n
// scores, its log shrunk by m/(m + calPrior), m all the scores the bin has
// taken (the ring's and those it dropped), a quantile of 0 taken as the
// narrowest factor before the shrinking. With H = 20 the bins hold 1, 2,
// 4, 4 and 4 steps of 1, 2, 4, 8 and 4, so the scored steps, the rings'
// order and their wrapping are all exercised; the band [−1, 1] makes a
// score |y|. The reference keeps every bin's scores in a list of its own,
// sorts the same numbers and takes the same logarithm: equal but for the
// product's rounding, 1e-15 relative.
func TestCalibrationFollowsItsDefinition(t *testing.T) {
	const H = 20
	c := newHorizonCal(H, 0.95)
	rng := rand.New(rand.NewPCG(1, 2))
	ref := make([][]float64, len(c.logS))
	perShadow := make([]int, len(c.logS))
	for h := 2; h <= H; h++ {
		if b, scored := binRef(H, h); scored {
			perShadow[b]++
		}
	}
	for i := range calWindow + 40 {
		c.setShadow(shadowOf(H, 1), false, nil, nil)
		c.live = true
		for h := 1; h <= H; h++ {
			y := 2*rng.Float64() - 1
			if (i+h)%23 == 0 {
				y = 0 // a point forecast hit exactly scores 0
			}
			c.score(h, y, true)
			if b, scored := binRef(H, h); scored && h >= 2 {
				ref[b] = append(ref[b], math.Abs(y))
			}
		}
		if c.live {
			t.Fatal("a shadow's last step did not complete it")
		}
		for b := range ref {
			last := ref[b][max(len(ref[b])-calWindow*perShadow[b], 0):]
			n := len(last)
			s := slices.Sorted(slices.Values(last))
			lq := -calMaxLog
			if q := s[min(int(math.Ceil(0.95*float64(n+1)))-1, n-1)]; q > 0 {
				lq = math.Log(q)
			}
			m := float64(len(ref[b]))
			want := max(min(lq*m/(m+calPrior), calMaxLog), -calMaxLog)
			if math.Abs(c.logS[b]-want) > 1e-15*math.Abs(want) || c.n[b] != n || c.seen[b] != len(ref[b]) {
				t.Fatalf("after %d shadows, bin %d: log factor %v from %d scores of %d, want %v from %d of %d",
					i+1, b, c.logS[b], c.n[b], c.seen[b], want, n, len(ref[b]))
			}
		}
	}
	// A state of version 21 or before has no count of the scores seen: its
	// rings' counts stand for it. A count below the ring's is refused.
	st := c.state()
	st.Seen = nil
	if d := newHorizonCal(H, 0.95); !d.setState(st, 0, 0) || !slices.Equal(d.seen, c.n) {
		t.Errorf("a state without Seen restored seen %v, want the rings' counts %v", d.seen, c.n)
	}
	st.Seen = slices.Clone(c.n)
	st.Seen[1]--
	if d := newHorizonCal(H, 0.95); d.setState(st, 0, 0) {
		t.Errorf("a state that saw fewer scores than its ring holds was restored")
	}
	// A band of zero width, missed, scores calMaxR; a gross error is not
	// scored, and still completes the shadow; nor is a step not finite.
	c = newHorizonCal(2, 0.95)
	c.setShadow(shadowOf(2, 0), false, nil, nil)
	c.live = true
	c.score(2, 0.5, true)
	if c.r[0] != calMaxR || c.logS[0] != math.Log(calMaxR)/(1+calPrior) {
		t.Errorf("missed zero-width band: score %v, log factor %v", c.r[0], c.logS[0])
	}
	c.live = true
	c.score(2, 0.5, false)
	if c.n[0] != 1 || c.live {
		t.Errorf("a gross error was scored (%d scores) or left the shadow live", c.n[0])
	}
	inf := shadowOf(2, 1)
	inf[1].Hi = math.Inf(1)
	c.setShadow(inf, false, nil, nil)
	c.live = true
	c.score(2, 0.5, true)
	if c.n[0] != 1 || c.live || !c.setState(c.state(), 0, 0) {
		t.Errorf("an infinite step was scored (%d scores), left the shadow live, or its state is refused", c.n[0])
	}
}

// On errors of half the band's normal scale, N(0, 0.5²) against bands of
// ±1.96 (σ = 1), every bin's factor tends to the closed form: the score r =
// |e|/1.96 = 0.5|Z|/1.96, and the ⌈0.95(n+1)⌉-th of n scores estimates its
// quantile of p = ⌈0.95(n+1)⌉/(n+1), 0.5·Φ⁻¹((1+p)/2)/1.96, so log s =
// m/(m + calPrior)·ln of that, m the scores seen (three rings' worth: the
// prior is then worth a twelfth of them). The tolerance is three standard errors of
// the sample quantile of n independent scores, √(p(1−p)/n)/f(q) with f the
// scores' density at q, carried to log s: about 0.14 for the bins of four
// steps, which tells a 90 % quantile (0.14 lower before the shrinking)
// from the 95 % one only with the exact test above.
func TestCalibrationFactorOfTooWideBands(t *testing.T) {
	const H = 48
	c := newHorizonCal(H, 0.95)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3 * calWindow {
		c.setShadow(shadowOf(H, 1.96), false, nil, nil)
		c.live = true
		for h := 1; h <= H; h++ {
			c.score(h, 0.5*rng.NormFloat64(), true)
		}
		if c.live {
			t.Fatal("the shadow was not completed at step H")
		}
	}
	checkHalfScale(t, c)
	// The factors apply from step 2, interpolated between the bins, and
	// from H on as at H; step 1 is the one-step prediction's, untouched.
	dst := shadowOf(2*H, 1.96)
	c.apply(dst, false)
	if dst[0].Hi != 1.96 || dst[0].Lo != -1.96 || dst[0].Std != 1 {
		t.Errorf("step 1 was scaled: %+v", dst[0])
	}
	lo, hi := slices.Min(c.logS), slices.Max(c.logS)
	for i := 1; i < len(dst); i++ {
		s := dst[i].Hi / 1.96
		if ls := math.Log(s); ls < lo-1e-12 || ls > hi+1e-12 || math.Abs(dst[i].Lo+dst[i].Hi) > 1e-12 ||
			math.Abs(dst[i].Std-s) > 1e-12 {
			t.Errorf("step %d: %+v, factor %v outside the bins' [%v, %v]", i+1, dst[i], s, math.Exp(lo), math.Exp(hi))
		}
	}
	for _, h := range []int{H + 1, 2 * H} {
		if dst[h-1].Hi != dst[H-1].Hi {
			t.Errorf("step %d's band %v, want step H's %v", h, dst[h-1].Hi, dst[H-1].Hi)
		}
	}
}

// checkHalfScale checks every bin's log factor of c, fed scores r =
// 0.5|Z|/1.96, against its closed form within three standard errors
// (TestCalibrationFactorOfTooWideBands).
func checkHalfScale(t *testing.T, c horizonCal) {
	t.Helper()
	for b, ls := range c.logS {
		n := float64(c.n[b])
		p := math.Ceil(0.95*(n+1)) / (n + 1)
		z := distuv.UnitNormal.Quantile((1 + p) / 2)
		q := 0.5 * z / 1.96
		f := 2 * (1.96 / 0.5) * distuv.UnitNormal.Prob(z) // the density of 0.5|Z|/1.96 at q
		m := float64(c.seen[b])
		shrink := m / (m + calPrior)
		se := math.Sqrt(p*(1-p)/n) / f / q * shrink
		if want := shrink * math.Log(q); math.Abs(ls-want) > 3*se {
			t.Errorf("bin %d (%v scores): log factor %.4f, want %.4f ± %.4f", b, n, ls, want, 3*se)
		}
	}
}

// Every horizon's steps from H on take step H's factor, the last bin's,
// whether that bin is whole or cut short by H.
func TestCalibrationFactorFromH(t *testing.T) {
	for H := 2; H <= 70; H++ {
		c := newHorizonCal(H, 0.95)
		for b := range c.logS {
			c.logS[b] = 0.1 * float64(b+1)
		}
		last := c.logS[len(c.logS)-1]
		for _, h := range []int{H, H + 1, 3 * H} {
			if f := c.factor(h); math.Abs(math.Log(f)-last) > 1e-15 {
				t.Errorf("H = %d: step %d's factor %v, want the last bin's %v", H, h, f, math.Exp(last))
			}
		}
		// Every step a bin scores is one of its own, and some bin scores H.
		for h := 2; h <= H; h++ {
			b, scored := binRef(H, h)
			if calBin(h) != b || c.sampled(h) != scored {
				t.Errorf("H = %d, step %d: bin %d scored %v, want bin %d scored %v", H, h, calBin(h), c.sampled(h), b, scored)
			}
		}
	}
}

// A log form's band is scored and scaled in logs: on log-normal values
// whose log-scale is half the band's the scores are those of the normal
// case in logs, and so are the factors (checkHalfScale); a widened
// positive band stays positive: mean·(lo/mean)^s. A fallback's normal band
// is scaled in y; so is a band whose lower bound is 0 (the theta partner's
// censored, blend), whose bound stays 0.
func TestCalibrationInLogs(t *testing.T) {
	const H = 8
	c := newHorizonCal(H, 0.95)
	rng := rand.New(rand.NewPCG(5, 6))
	band := make([]ForecastStep, H)
	for i := range band {
		band[i] = ForecastStep{Mean: 100, Lo: 100 * math.Exp(-1.96), Hi: 100 * math.Exp(1.96)} // ln y ~ N(ln 100, 1)
	}
	for range 2 * calWindow {
		c.setShadow(band, true, nil, nil)
		c.live = true
		for h := 1; h <= H; h++ {
			c.score(h, 100*math.Exp(0.5*rng.NormFloat64()), true)
		}
	}
	checkHalfScale(t, c)
	c.logS[len(c.logS)-1] = math.Log(3)
	st := []ForecastStep{{}, {Mean: 10, Lo: 1, Hi: 100}, {Mean: 10, Lo: 1, Hi: 19, Fallback: true}, {Mean: 10, Lo: 0, Hi: 19}, {Mean: 10, Lo: 0, Hi: 19, Fallback: true}}
	c.apply(st, true)
	for i := 3; i < len(st); i++ {
		if s := c.factor(i + 1); st[i].Lo != 0 || math.Abs(st[i].Hi-(10+9*s)) > 1e-12 {
			t.Errorf("censored band scaled by %v: %+v, want lo 0, hi 10 + 9s", s, st[i])
		}
	}
	if s := c.factor(2); math.Abs(st[1].Lo-10*math.Pow(0.1, s)) > 1e-12 || math.Abs(st[1].Hi-10*math.Pow(10, s)) > 1e-9 || !(st[1].Lo > 0) {
		t.Errorf("log band scaled by %v: %+v", s, st[1])
	}
	if s := c.factor(3); math.Abs(st[2].Lo-(10-9*s)) > 1e-12 || math.Abs(st[2].Hi-(10+9*s)) > 1e-12 {
		t.Errorf("fallback band scaled by %v: %+v, want mean ∓ 9s", s, st[2])
	}
}

// ar1 returns n values of a stationary AR(1), y = 10 + 0.5(y' − 10) + e.
func ar1(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	y := make([]float64, n)
	v := 10.0
	for i := range y {
		v = 10 + 0.5*(v-10) + rng.NormFloat64()
		y[i] = v
	}
	return y
}

// The theta method's band grows like a random walk's, σ√(1 + (h−1)α²),
// unless its growth was measured, where a stationary series' errors level
// off: averaged with the model's,
// the combined 24-step band of an AR(1) holds nearly every value. Its
// calibration brings it to the nominal 95 %, and leaves the one-step
// predictions as they were, and every step's point forecast while the
// combination's weight is ½; the weight itself goes to the model, whose
// form the series has. Coverage is
// counted over 150 origins 24 values apart (independent forecasts): its
// binomial standard deviation at 0.95 is 0.018, so [0.90, 0.99] is more
// than two of them each side.
func TestCalibrationNarrowsTheCombinedBand(t *testing.T) {
	const H = 24
	y := ar1(6000, 5)
	cfg := testConfig()
	// The last re-choice at 200 values leaves too few origins after its
	// first half to measure the partner's growth (partnerGrowth): its band
	// is the formula's.
	cfg.Combine, cfg.Model.Kernel.Type, cfg.Horizon, cfg.Warmup = CombineTheta, narx.Linear, H, 200
	raw, _ := NewLearner(cfg)
	cfg.Calibrate = H
	cal, _ := NewLearner(cfg)
	var covRaw, covCal, n int
	var wRaw, wCal, eRaw, eCal float64
	var mid *Learner
	for i, v := range y {
		o := Observation{T: int64(i), Y: v}
		a, err := raw.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := cal.Observe(o)
		if a.Prediction != b.Prediction || a.Lo != b.Lo || a.Hi != b.Hi {
			t.Fatalf("value %d: one-step %v [%v, %v] calibrated, %v [%v, %v] not", i+1, b.Prediction, b.Lo, b.Hi, a.Prediction, a.Lo, a.Hi)
		}
		if len(a.Forecast) != len(b.Forecast) {
			t.Fatalf("value %d: %d and %d steps", i+1, len(a.Forecast), len(b.Forecast))
		}
		for h := range a.Forecast {
			if (cal.cal.weight == 0.5 && a.Forecast[h].Mean != b.Forecast[h].Mean) || (h == 0 && a.Forecast[0] != b.Forecast[0]) {
				t.Fatalf("value %d step %d: %+v calibrated, %+v not", i+1, h+1, b.Forecast[h], a.Forecast[h])
			}
		}
		// A restore while a shadow is being scored goes on as the original.
		if mid != nil {
			m, _ := mid.Observe(o)
			if len(m.Forecast) != H || math.Float64bits(m.Forecast[H-1].Hi) != math.Float64bits(b.Forecast[H-1].Hi) {
				t.Fatalf("value %d: the restored calibration forecasts %+v, the original %+v", i+1, m.Forecast[H-1], b.Forecast[H-1])
			}
		}
		if i >= 2400 && (i-2400)%H == 0 && i+H < len(y) {
			target := y[i+H]
			fa, fb := a.Forecast[H-1], b.Forecast[H-1]
			covRaw += boolInt(fa.Lo <= target && target <= fa.Hi)
			covCal += boolInt(fb.Lo <= target && target <= fb.Hi)
			wRaw += fa.Hi - fa.Lo
			wCal += fb.Hi - fb.Lo
			eRaw += math.Abs(target - fa.Mean)
			eCal += math.Abs(target - fb.Mean)
			n++
		}
		if mid == nil && i >= 3000 && cal.cal.live && cal.cal.n[len(cal.cal.n)-1] > 0 {
			mid = restored(t, cfg, cal)
		}
	}
	if mid == nil {
		t.Fatal("no shadow was live after value 3000")
	}
	pr, pc := float64(covRaw)/float64(n), float64(covCal)/float64(n)
	t.Logf("%d origins: step %d covered %.3f raw, %.3f calibrated; widths %.2f, %.2f; MAE %.3f, %.3f with the model's weight %v",
		n, H, pr, pc, wRaw/float64(n), wCal/float64(n), eRaw/float64(n), eCal/float64(n), cal.cal.weight)
	if pr < 0.99 {
		t.Fatalf("the raw band covers %.3f: the test needs one too wide", pr)
	}
	if pc < 0.90 || pc > 0.99 || wCal > 0.85*wRaw {
		t.Errorf("calibrated band covers %.3f at %.2f of the raw width, want [0.90, 0.99] at most 0.85", pc, wCal/wRaw)
	}
	// An AR(1) is the linear model's own: its weight goes to 1, and the
	// 24-step point forecasts (the mean, 10, for both) gain by it.
	if cal.cal.weight != 1 || eCal > eRaw {
		t.Errorf("the model's weight %v, MAE %.3f against %.3f at equal weights", cal.cal.weight, eCal/float64(n), eRaw/float64(n))
	}
}

// The shadow is the periodic forecast of its record, with the record's
// planned rows, before the calibration scales it; and the periodic
// forecast, which copies the shadow when one was just issued, is what the
// Learner's Forecast gives from the same state, to the bit, also when a
// retune changed the model after the shadow and with the theta partner
// averaged in at a learned weight. The published forecasts come from a
// Learner that only observes (a difference the copy left in its state
// would show in its later forecasts); Forecast runs on a twin.
func TestShadowIsThePublishedForecast(t *testing.T) {
	const H = 6
	cfg := testConfig()
	cfg.Model.Embedding.InputLags = [][]int{{0}}
	cfg.Planned, cfg.Horizon, cfg.Calibrate = []int{0}, H, H
	cfg.RetuneEvery, cfg.AutoSigma2 = 3, true
	cfg.Combine = CombineTheta
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	twin, _ := NewLearner(cfg)
	u := func(i int) float64 { return math.Sin(0.21 * float64(i)) }
	y := noisySine(700, 0.1, 8)
	y[350] += 3 // a jump that a retune answers
	compared, retuned, weighted := 0, 0, 0
	again := make([]ForecastStep, H)
	for i := range y {
		future := make([][]float64, H)
		for h := range future {
			future[h] = []float64{u(i + h + 1)}
		}
		o := Observation{T: int64(i), Y: y[i] + u(i), U: []float64{u(i)}, Future: future}
		issued := l.cal.issued
		res, err := l.Observe(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := twin.Observe(o); err != nil {
			t.Fatal(err)
		}
		if len(res.Forecast) == H && twin.Fitted() {
			if err := twin.Forecast(again, future); err != nil {
				t.Fatal(err)
			}
			for h := range again {
				a, b := res.Forecast[h], again[h]
				if !sameBits(a.Mean, b.Mean) || !sameBits(a.Std, b.Std) || !sameBits(a.Lo, b.Lo) || !sameBits(a.Hi, b.Hi) ||
					!sameBits(a.OneStepStd, b.OneStepStd) || a.Fallback != b.Fallback || a.H != b.H || a.T != b.T {
					t.Fatalf("value %d step %d: published %+v, Forecast %+v", i+1, h+1, a, b)
				}
			}
			if l.cal.weight != 0.5 {
				weighted++
			}
		}
		if l.cal.issued == issued {
			continue
		}
		if len(res.Forecast) != H {
			t.Fatalf("value %d: a shadow without a published forecast", i+1)
		}
		if res.Retuned {
			retuned++
			continue
		}
		for h, st := range res.Forecast {
			// The shadow keeps the band before scaling; the published
			// step is it scaled about the same mean.
			if !sameBits(l.cal.shadow[shadowStride*h], st.Mean) {
				t.Fatalf("value %d step %d: shadow mean %v, published %v", i+1, h+1, l.cal.shadow[shadowStride*h], st.Mean)
			}
		}
		compared++
	}
	if compared < 20 || retuned < 1 || weighted < 50 {
		t.Errorf("%d shadows compared, %d retuned after theirs, %d forecasts at a learned weight: want ≥ 20, ≥ 1, ≥ 50", compared, retuned, weighted)
	}
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// A restore under another horizon or level starts the calibration afresh
// (factors 1, the next shadow due at once); under the same, it is the
// state written.
func TestCalibrationRestoreUnderAnotherHorizon(t *testing.T) {
	cfg := testConfig()
	cfg.Calibrate = cfg.Horizon
	l, _ := NewLearner(cfg)
	for i, v := range noisySine(800, 0.1, 9) {
		if _, err := l.Observe(Observation{T: int64(i), Y: v}); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Max(l.cal.n) == 0 || !slices.ContainsFunc(l.cal.logS, func(v float64) bool { return v != 0 }) {
		t.Fatal("no factor was learned")
	}
	same := restored(t, cfg, l)
	if !slices.Equal(same.cal.logS, l.cal.logS) || !slices.Equal(same.cal.r, l.cal.r) || same.cal.due != l.cal.due {
		t.Error("a restore under the same configuration changed the calibration")
	}
	for _, other := range []Config{func() Config { c := cfg; c.Horizon, c.Calibrate = 12, 12; return c }(),
		func() Config { c := cfg; c.Level = 0.9; return c }()} {
		r := restored(t, other, l)
		if s, ok := r.BandScale(); !ok || s != 1 || slices.Max(r.cal.n) != 0 || r.cal.due != r.learned || r.cal.live {
			t.Errorf("horizon %d level %v: restored calibration %+v, want a fresh one", other.Calibrate, other.Level, r.cal.state())
		}
	}
}

// The combination's weight follows its definition: each shadow adds, for
// every candidate weight w, the mean over its averaged steps 2..H of |y −
// (w·model + (1−w)·theta)| to the candidate's error discounted by
// 1 − 1/calWindow; from weighMin shadows on the weight is the candidate of
// the smallest error, ties to the one listed first; a fallback's step does
// not count. Model, theta and y differ from step to step and shadow to
// shadow (the model nearer y, so the weight leaves ½ for the model's side
// at shadow weighMin, not before); the reference recomputes the discounted
// sums in the same order of operations, so they agree to the bit.
func TestCombinationWeightFollowsItsDefinition(t *testing.T) {
	const H = 6
	c := newHorizonCal(H, 0.95)
	rng := rand.New(rand.NewPCG(7, 7))
	model, theta, ys := make([]float64, H), make([]float64, H), make([]float64, H)
	steps := shadowOf(H, 1)
	steps[3].Fallback = true // step 4: not weighed
	ref := make([]float64, len(combWeights))
	for i := 1; i <= weighMin+4; i++ {
		for h := range model {
			ys[h] = rng.NormFloat64()
			model[h] = ys[h] + 0.3*rng.NormFloat64()
			theta[h] = ys[h] + 1 + rng.NormFloat64()
		}
		c.setShadow(steps, false, model, theta)
		c.live = true
		for h := 1; h <= H; h++ {
			c.score(h, ys[h-1], true)
		}
		for j, w := range combWeights {
			sum, n := 0.0, 0
			for h := 2; h <= H; h++ {
				if h != 4 {
					sum += math.Abs(ys[h-1] - (w*model[h-1] + (1-w)*theta[h-1]))
					n++
				}
			}
			ref[j] = (1-1.0/calWindow)*ref[j] + sum/float64(n)
		}
		want := 0.5
		if i >= weighMin {
			for j := range ref {
				if ref[j] < ref[slices.Index(combWeights[:], want)] {
					want = combWeights[j]
				}
			}
		}
		if !slices.Equal(c.wErr, ref) || c.weight != want || c.wShadows != int64(i) {
			t.Fatalf("after %d shadows: errors %v weight %v, want %v weight %v", i, c.wErr, c.weight, ref, want)
		}
	}
	if c.weight <= 0.5 {
		t.Errorf("the model nearer the values, its weight %v, want above ½", c.weight)
	}
	// A tie, the two forecasters equal, keeps the equal weights.
	c = newHorizonCal(H, 0.95)
	for range weighMin {
		for h := range model {
			model[h], theta[h] = rng.NormFloat64(), 0
			theta[h] = model[h]
		}
		c.setShadow(shadowOf(H, 1), false, model, theta)
		c.live = true
		for h := 1; h <= H; h++ {
			c.score(h, rng.NormFloat64(), true)
		}
	}
	if c.weight != 0.5 || c.wShadows != weighMin {
		t.Errorf("tied candidates: weight %v after %d shadows, want ½", c.weight, c.wShadows)
	}
	// A state whose weight left ½ before weighMin shadows is not one.
	st := c.state()
	st.Weight = 1
	st.WShadows = weighMin - 1
	if c.setState(st, 1000, 1000) {
		t.Error("accepted a weight chosen from too few shadows")
	}
}
