package online

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/calendar"
)

// TestStepTimeFollowsTheCalendar: a median spacing of 28–31, 89–92 or
// 365–366 days steps by calendar months (1, 3, 12), keeping the day of
// the month and the time of day, a month end staying at month ends; any
// other spacing adds h·step; spacing.steps inverts it.
func TestStepTimeFollowsTheCalendar(t *testing.T) {
	ms := func(s string) int64 {
		tt, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tt.UnixMilli()
	}
	const month, quarter, year = 31 * day, 92 * day, 365 * day
	for _, tc := range []struct {
		from string
		step int64
		h    int64
		want string
	}{
		{"2021-12-01T00:00:00Z", month, 1, "2022-01-01T00:00:00Z"},
		{"2021-12-01T00:00:00Z", month, 3, "2022-03-01T00:00:00Z"},
		{"2022-01-15T06:30:00Z", 30 * day, 1, "2022-02-15T06:30:00Z"},
		{"2022-01-31T00:00:00Z", month, 1, "2022-02-28T00:00:00Z"}, // a month end stays one
		{"2022-02-28T00:00:00Z", month, 1, "2022-03-31T00:00:00Z"},
		{"2022-01-30T00:00:00Z", month, 1, "2022-02-28T00:00:00Z"}, // no 30 February: its last day
		{"2022-01-30T00:00:00Z", month, 2, "2022-03-30T00:00:00Z"},
		{"2021-10-01T00:00:00Z", quarter, 2, "2022-04-01T00:00:00Z"},
		{"2020-02-29T00:00:00Z", year, 1, "2021-02-28T00:00:00Z"},
		{"2020-02-29T00:00:00Z", year, 4, "2024-02-29T00:00:00Z"},
		{"2022-01-01T00:00:00Z", 7 * day, 2, "2022-01-15T00:00:00Z"},  // weekly: fixed
		{"2022-01-01T00:00:00Z", 27 * day, 1, "2022-01-28T00:00:00Z"}, // not a calendar spacing
	} {
		got := spacing{step: tc.step}.after(ms(tc.from), tc.h)
		if want := ms(tc.want); got != want {
			t.Errorf("%s + %d × %d days: %s, want %s", tc.from, tc.h, tc.step/day, time.UnixMilli(got).UTC().Format(time.RFC3339), tc.want)
		}
		sp := spacing{step: tc.step}
		if k := sp.steps(ms(tc.from), got); k != uint64(tc.h) {
			t.Errorf("%s to %s: %d steps of %d days, want %d", tc.from, tc.want, k, tc.step/day, tc.h)
		}
	}
	// Back in time (gap filling anchors at the value after the gap).
	for _, tc := range []struct {
		from string
		step int64
		h    int64
		want string
	}{
		{"2022-03-31T00:00:00Z", month, -1, "2022-02-28T00:00:00Z"},
		{"2022-03-01T00:00:00Z", month, -2, "2022-01-01T00:00:00Z"},
		{"2022-01-15T00:00:00Z", 7 * day, -2, "2022-01-01T00:00:00Z"},
	} {
		if got, want := (spacing{step: tc.step}).after(ms(tc.from), tc.h), ms(tc.want); got != want {
			t.Errorf("%s %d × %d days: %s, want %s", tc.from, tc.h, tc.step/day, time.UnixMilli(got).UTC().Format(time.RFC3339), tc.want)
		}
	}
	if got := (spacing{step: 1}).after(10, 3); got != 13 {
		t.Errorf("sequence numbers: 10 + 3 steps of 1 = %d", got)
	}
}

// TestMonthlyForecastsLandOnTheMonths: a Learner on monthly dates (the
// 1st of each month, UTC) labels every step of its forecasts with the 1st
// of the months ahead: a young series' (the theta method's, before its
// first fit at 16 values) and a fitted one's.
func TestMonthlyForecastsLandOnTheMonths(t *testing.T) {
	cfg := testConfig()
	cfg.Horizon = 14
	cfg.Combine = CombineAuto // young forecasts from the 4th value
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ys := noisySine(130, 0.1, 3)
	for i, y := range ys {
		tt := time.Date(2010, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC)
		res, err := l.Observe(Observation{T: tt.UnixMilli(), Time: true, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if i != 10 && i != len(ys)-1 { // a young series, a fitted one
			continue
		}
		if len(res.Forecast) != cfg.Horizon {
			t.Fatalf("value %d: %d forecast steps, want %d", i+1, len(res.Forecast), cfg.Horizon)
		}
		for h, st := range res.Forecast {
			want := time.Date(2010, time.Month(i+2+h), 1, 0, 0, 0, 0, time.UTC)
			if got := time.UnixMilli(st.T).UTC(); !got.Equal(want) {
				t.Errorf("value %d: step %d at %s, want %s", i+1, h+1, got.Format(time.DateOnly), want.Format(time.DateOnly))
			}
		}
	}
}

// walkSteps is the reference for steps with days off: h steps of step
// after t (h < 0: before), one at a time, skipping the times on days off
// and, with hours, those whose hour of the day is not one of them.
func walkSteps(t, h, step int64, off uint8, hours ...int) int64 {
	dir := int64(1)
	if h < 0 {
		dir, h = -1, -h
	}
	for h > 0 {
		t += dir * step
		tt := time.UnixMilli(t).UTC()
		if off&(1<<tt.Weekday()) == 0 && (hours == nil || slices.Contains(hours, tt.Hour())) {
			h--
		}
	}
	return t
}

// TestWorkingDaySteps: with days off, a step is the next working day
// (Friday's is Monday), after agrees with a day-by-day walk from every
// weekday for h in [−40, 40], and steps inverts it; the same of hourly
// and half-hourly steps on working days only (Friday 23:00's next hour is
// Monday 00:00), from every hour of a week for h in [−200, 200], and of
// business hours (Friday 16:00 is followed by Monday 09:00).
func TestWorkingDaySteps(t *testing.T) {
	const satSun = 1<<time.Saturday | 1<<time.Sunday
	const friSat = 1<<time.Friday | 1<<time.Saturday
	const sun = 1 << time.Sunday
	mon := time.Date(2024, 3, 4, 16, 30, 0, 0, time.UTC).UnixMilli() // a Monday, at a market's close
	for _, off := range []uint8{satSun, friSat, sun} {
		sp := spacing{step: day, off: off}
		for d := int64(0); d < 7; d++ {
			t0 := mon + d*day
			for h := int64(-40); h <= 40; h++ {
				got, want := sp.after(t0, h), walkSteps(t0, h, day, off)
				if got != want {
					t.Fatalf("off %07b: %s %+d working days: %s, want %s", off, time.UnixMilli(t0).UTC().Format(time.DateOnly), h,
						time.UnixMilli(got).UTC().Format(time.DateOnly), time.UnixMilli(want).UTC().Format(time.DateOnly))
				}
				if h >= 0 {
					if k := sp.steps(t0, got); k != uint64(h) {
						t.Fatalf("off %07b: %s to %s: %d steps, want %d", off, time.UnixMilli(t0).UTC().Format(time.DateOnly),
							time.UnixMilli(got).UTC().Format(time.DateOnly), k, h)
					}
				}
			}
		}
	}
	for _, step := range []int64{3600 * 1000, 1800 * 1000} {
		sp := spacing{step: step, off: satSun}
		for t0 := mon - 16*3600*1000; t0 < mon+7*day; t0 += 3 * step { // from Monday 00:30 on
			for h := int64(-200); h <= 200; h += 7 {
				got, want := sp.after(t0, h), walkSteps(t0, h, step, satSun)
				if got != want {
					t.Fatalf("step %v: %s %+d: %s, want %s", time.Duration(step)*time.Millisecond, time.UnixMilli(t0).UTC().Format(time.RFC3339), h,
						time.UnixMilli(got).UTC().Format(time.RFC3339), time.UnixMilli(want).UTC().Format(time.RFC3339))
				}
				if h >= 0 {
					if k := sp.steps(t0, got); k != uint64(h) {
						t.Fatalf("step %v: %s to %s: %d steps, want %d", time.Duration(step)*time.Millisecond, time.UnixMilli(t0).UTC().Format(time.RFC3339),
							time.UnixMilli(got).UTC().Format(time.RFC3339), k, h)
					}
				}
			}
		}
	}
	// Business hours: 09:00 to 16:00 on working days.
	hours := []int{9, 10, 11, 12, 13, 14, 15, 16}
	sp := spacing{step: 3600 * 1000, off: satSun, slots: []int32{9, 10, 11, 12, 13, 14, 15, 16}}
	for t0 := mon - 16*3600*1000; t0 < mon+7*day; t0 += 3600 * 1000 {
		tt := time.UnixMilli(t0).UTC()
		for h := int64(-100); h <= 100; h += 3 {
			got, want := sp.after(t0, h), walkSteps(t0, h, 3600*1000, satSun, hours...)
			if got != want {
				t.Fatalf("business hours: %s %+d: %s, want %s", tt.Format(time.RFC3339), h,
					time.UnixMilli(got).UTC().Format(time.RFC3339), time.UnixMilli(want).UTC().Format(time.RFC3339))
			}
			if h >= 0 {
				if k := sp.steps(t0, got); k != uint64(h) {
					t.Fatalf("business hours: %s to %s: %d steps, want %d", tt.Format(time.RFC3339), time.UnixMilli(got).UTC().Format(time.RFC3339), k, h)
				}
			}
		}
	}
	fri := mon + 4*day
	if got := (spacing{step: day, off: satSun}).after(fri, 1); got != mon+7*day {
		t.Errorf("Friday's next business day: %s", time.UnixMilli(got).UTC().Format(time.RFC3339))
	}
	// Jitter below half a day rounds, as for any spacing.
	if k := (spacing{step: day, off: satSun}).steps(fri, mon+7*day+3*3600*1000); k != 1 {
		t.Errorf("Friday to Monday 03:00 later: %d steps, want 1", k)
	}
}

// TestWeekdaysOff: days off are the weekdays on which no time of a daily
// series over two weeks or more falls, at most two of them; read in UTC,
// so local midnights east of Greenwich put a business week on Sunday to
// Thursday.
func TestWeekdaysOff(t *testing.T) {
	days := func(start time.Time, n int, keep func(time.Weekday) bool) []int64 {
		var ts []int64
		for d := start; len(ts) < n; d = d.AddDate(0, 0, 1) {
			if keep(d.UTC().Weekday()) {
				ts = append(ts, d.UnixMilli())
			}
		}
		return ts
	}
	weekdays := func(w time.Weekday) bool { return w != time.Saturday && w != time.Sunday }
	all := func(time.Weekday) bool { return true }
	mon := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	cet := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		name string
		ts   []int64
		want uint8
	}{
		{"business days, four weeks", days(mon, 20, weekdays), 1<<time.Saturday | 1<<time.Sunday},
		{"business days, two weeks and a day", days(mon, 11, weekdays), 1<<time.Saturday | 1<<time.Sunday},
		{"business days, under two weeks", days(mon, 10, weekdays), 0},
		{"every day", days(mon, 60, all), 0},
		{"Sundays off", days(mon, 30, func(w time.Weekday) bool { return w != time.Sunday }), 1 << time.Sunday},
		{"business days, a holiday", func() []int64 { ts := days(mon, 20, weekdays); return append(ts[:7], ts[8:]...) }(), 1<<time.Saturday | 1<<time.Sunday},
		{"every day but two Fridays in two and a half weeks: chance", func() []int64 {
			var ts []int64
			for _, t := range days(mon, 18, all) {
				if d := time.UnixMilli(t).UTC().Day(); d != 8 && d != 15 {
					ts = append(ts, t)
				}
			}
			return ts
		}(), 0},
		{"business days and a stray Saturday", func() []int64 {
			ts := days(mon, 300, weekdays)
			sat := mon.AddDate(0, 0, 40).UnixMilli()
			i, _ := slices.BinarySearch(ts, sat)
			return slices.Insert(ts, i, sat)
		}(), 1<<time.Saturday | 1<<time.Sunday},
		{"every day, one in five missing: Wednesdays by chance", func() []int64 {
			var ts []int64
			for i, t := range days(mon, 21, all) { // three weeks
				if w := time.UnixMilli(t).UTC().Weekday(); w != time.Wednesday && i%5 != 3 {
					ts = append(ts, t)
				}
			}
			return ts
		}(), 0},
		{"three days off: sparse, not a week", days(mon, 30, func(w time.Weekday) bool { return w%2 == 1 || w == time.Sunday+2 }), 0},
		{"local midnights, CET", days(time.Date(2024, 3, 4, 0, 0, 0, 0, cet), 20, func(w time.Weekday) bool { return w != time.Friday && w != time.Saturday }),
			1<<time.Friday | 1<<time.Saturday},
		{"sequence numbers", []int64{1, 2, 3, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 20, 21, 22, 23, 24}, 0},
	} {
		if got := weekdaysOff(tc.ts, timeStep(tc.ts, true)); got != tc.want {
			t.Errorf("%s: off %07b, want %07b", tc.name, got, tc.want)
		}
	}
	// On the wall clock of the zone the same local midnights have their
	// local days off (spacingOf).
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	// Local midnights kept on UTC's Sunday to Thursday: Paris's Monday to
	// Friday, across the change of 27 October.
	local := days(time.Date(2024, 10, 7, 0, 0, 0, 0, paris), 20, func(w time.Weekday) bool { return w != time.Friday && w != time.Saturday })
	if sp := spacingOf(local, paris, true); sp.loc != paris || sp.off != 1<<time.Saturday|1<<time.Sunday {
		t.Errorf("Paris business days on Paris's clock: off %07b (clock %v), want Saturday and Sunday", sp.off, sp.loc)
	}
	if sp := spacingOf(local, nil, true); sp.off != 1<<time.Friday|1<<time.Saturday {
		t.Errorf("Paris business days on UTC's clock: off %07b, want Friday and Saturday", sp.off)
	}
	// Business days at 22:30 UTC before any change: constant on both
	// clocks, not a local midnight, so UTC's (on Paris's their days would
	// be Tuesday to Saturday, and the steps would move at the change).
	late := days(time.Date(2024, 6, 3, 22, 30, 0, 0, time.UTC), 20, weekdays)
	if sp := spacingOf(late, paris, true); sp.loc != nil || sp.off != 1<<time.Saturday|1<<time.Sunday {
		t.Errorf("business days at 22:30 UTC, zone Paris: off %07b on clock %v, want Saturday and Sunday on UTC's", sp.off, sp.loc)
	}
}

// TestBusinessDaySeries: a series of business days (values Monday to
// Friday, dated) steps from Friday to Monday: no weekend is filled as a
// gap (a missing Wednesday is, once), its forecasts are dated on working
// days, its week is five steps long, and a restore keeps all of it.
func TestBusinessDaySeries(t *testing.T) {
	cfg := testConfig()
	cfg.Horizon = 8
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ys := noisySine(200, 0.1, 4)
	const satSun = 1<<time.Saturday | 1<<time.Sunday
	holiday := time.Date(2024, 7, 3, 0, 0, 0, 0, time.UTC) // a Wednesday
	d := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	var prev time.Time
	var snap []byte
	var after []Observation // the observations after the snapshot
	var last Result
	for i := 0; i < len(ys); d = d.AddDate(0, 0, 1) {
		if w := d.Weekday(); w == time.Saturday || w == time.Sunday || d.Equal(holiday) {
			continue
		}
		obs := Observation{T: d.UnixMilli(), Time: true, Y: ys[i]}
		if snap != nil {
			after = append(after, obs)
		}
		res, err := l.Observe(obs)
		if err != nil {
			t.Fatal(err)
		}
		last = res
		i++
		if !l.Fitted() {
			prev = d
			continue
		}
		if l.WeekdaysOff() != satSun {
			t.Fatalf("value %d: weekdays off %07b, want Saturday and Sunday", i, l.WeekdaysOff())
		}
		wantFilled := 0
		if prev.AddDate(0, 0, 2).Equal(d) && prev.Weekday() == time.Tuesday {
			wantFilled = 1 // the holiday
		}
		if res.Filled != wantFilled {
			t.Errorf("%s (after %s): filled %d, want %d", d.Format(time.DateOnly), prev.Format(time.DateOnly), res.Filled, wantFilled)
		}
		last := d
		for _, st := range res.Forecast {
			next := last.AddDate(0, 0, 1)
			for next.Weekday() == time.Saturday || next.Weekday() == time.Sunday {
				next = next.AddDate(0, 0, 1)
			}
			if got := time.UnixMilli(st.T).UTC(); !got.Equal(next) {
				t.Fatalf("forecast from %s: step %d at %s, want %s", d.Format(time.DateOnly), st.H, got.Format("Mon 2006-01-02"), next.Format("Mon 2006-01-02"))
			}
			last = next
		}
		prev = d
		if i == 150 {
			if snap, err = l.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if p := l.cfg.knownPeriods(l.warmT, l.timed); len(p) == 0 || p[0] != 5 {
		t.Errorf("calendar periods %v, want the five-day week first", p)
	}
	// A restore keeps the days off: the forecasts after it are the
	// original's, to the bit.
	r, _ := NewLearner(cfg)
	if err := r.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	if r.WeekdaysOff() != satSun {
		t.Fatalf("restored weekdays off %07b", r.WeekdaysOff())
	}
	// Days off that no spacing has are refused, not divided by: every day
	// off (no steps in a week), or days off of a weekly step.
	for _, bad := range []func(*learnerState){
		func(st *learnerState) { st.Off = 0x7f },
		func(st *learnerState) { st.Step = 7 * day },
	} {
		st := stateOf(t, snap)
		bad(&st)
		nl, _ := NewLearner(cfg)
		if err := nl.UnmarshalBinary(encodeState(snap, st, SnapshotVersion)); err == nil {
			t.Errorf("a snapshot with days off %07b at a step of %d ms restored", st.Off, st.Step)
		}
	}
	var res Result
	for _, obs := range after {
		if res, err = r.Observe(obs); err != nil {
			t.Fatal(err)
		}
	}
	if len(res.Forecast) != len(last.Forecast) {
		t.Fatalf("restored: %d forecast steps, want %d", len(res.Forecast), len(last.Forecast))
	}
	for h, st := range res.Forecast {
		if st != last.Forecast[h] {
			t.Errorf("restored: step %d %+v, want %+v", h+1, st, last.Forecast[h])
		}
	}
}

// TestStepsKeepTheZonesDays: daily values at midnight in Paris (22:00 UTC
// in summer, 23:00 in winter) with the calendar in Europe/Paris step by
// the zone's calendar days across both daylight-saving changes: every
// forecast step is at a local midnight, no change is a gap, the day of
// the week of each step is its local one (the level is 5 higher on
// Saturdays and Sundays), and a restore keeps the clock. Dates (midnight
// UTC) keep UTC's days in the same zone, and without the zone the local
// midnights drift by the change's hour.
func TestStepsKeepTheZonesDays(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	level := func(tt time.Time) float64 {
		if wd := tt.Weekday(); wd == time.Saturday || wd == time.Sunday {
			return 15
		}
		return 10
	}
	run := func(loc *time.Location, in *time.Location, check func(i int, res Result)) *Learner {
		cfg := autoConfig()
		cfg.LagCandidates = nil
		cfg.Model.Embedding.YLags = []int{1}
		cfg.Calendar = calendar.Spec{Features: []calendar.Feature{calendar.DayOfWeek}, Location: loc}
		cfg.Horizon = 14
		l, err := NewLearner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(8, 9))
		for i := range 320 { // 3 June 2024 to 19 April 2025: both changes
			d := time.Date(2024, 6, 3+i, 0, 0, 0, 0, in)
			res, err := l.Observe(Observation{T: d.UnixMilli(), Time: true, Y: level(d) + 0.1*rng.NormFloat64()})
			if err != nil {
				t.Fatal(err)
			}
			if l.Fitted() {
				check(i, res)
			}
		}
		return l
	}
	midnights := func(name string, in *time.Location) func(int, Result) {
		return func(i int, res Result) {
			if res.Filled != 0 {
				t.Fatalf("%s, value %d: %d filled", name, i, res.Filled)
			}
			for _, st := range res.Forecast {
				tt := time.UnixMilli(st.T).In(in)
				if tt.Hour() != 0 || tt.Minute() != 0 {
					t.Fatalf("%s, forecast from value %d: step %d at %s", name, i, st.H, tt.Format(time.RFC3339))
				}
				if i == 319 && math.Abs(st.Mean-level(tt)) > 1 {
					t.Errorf("%s: step %d (%v): forecast %.2f, level %v", name, st.H, tt.Weekday(), st.Mean, level(tt))
				}
			}
		}
	}
	l := run(paris, paris, midnights("local midnights", paris))
	if l.sp.loc != paris {
		t.Fatalf("local midnights: the spacing's clock is %v, want Paris", l.sp.loc)
	}
	snap, err := l.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewLearner(l.Config())
	if err := r.UnmarshalBinary(snap); err != nil {
		t.Fatal(err)
	}
	// From the last value (19 April) back across the change of 30 March.
	for h := int64(-30); h <= 200; h += 10 {
		if tt := time.UnixMilli(r.StepTime(l.LastT(), h)).In(paris); tt.Hour() != 0 {
			t.Fatalf("restored: step %d at %s", h, tt.Format(time.RFC3339))
		}
	}
	run(paris, time.UTC, midnights("dates", time.UTC))
	drifted := false
	run(nil, paris, func(i int, res Result) {
		for _, st := range res.Forecast {
			drifted = drifted || time.UnixMilli(st.T).In(paris).Hour() != 0
		}
	})
	if !drifted {
		t.Error("without the zone every step stayed at a local midnight: the test shows nothing")
	}
}

// TestHourlyWorkingDays: hourly values on working days only (24 a day,
// Monday to Friday, as a currency market's) have Saturday and Sunday off
// from the re-choice at which they span two weeks: from then on Friday
// 23:00's next step is Monday 00:00, no weekend is filled as a gap, and
// the week is 120 steps.
func TestHourlyWorkingDays(t *testing.T) {
	learnWorkingHours(t, func(tm time.Time) bool { return tm.Weekday() != time.Saturday && tm.Weekday() != time.Sunday }, []int{24, 120})
}

// learnWorkingHours feeds a Learner (Warmup 300, 20-step forecasts) 400
// hourly values at the hours open keeps, from Monday 4 March 2024, and
// checks that once it has found their days off or working steps no value
// is preceded by filled ones, every forecast step is at the next hour open
// keeps, and the calendar's periods are periods.
func learnWorkingHours(t *testing.T, open func(time.Time) bool, periods []int) {
	t.Helper()
	cfg := testConfig()
	cfg.Warmup = 300
	cfg.Horizon = 20
	l, err := NewLearner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ys := noisySine(400, 0.1, 7)
	first := int64(0)
	found := false
	for i, tm := 0, time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC); i < len(ys); tm = tm.Add(time.Hour) {
		if !open(tm) {
			continue
		}
		if first == 0 {
			first = tm.UnixMilli()
		}
		res, err := l.Observe(Observation{T: tm.UnixMilli(), Time: true, Y: ys[i]})
		if err != nil {
			t.Fatal(err)
		}
		i++
		if l.sp.off == 0 && l.sp.slots == nil {
			continue
		}
		found = true
		if res.Filled != 0 {
			t.Fatalf("%s: %d filled", tm.Format(time.RFC3339), res.Filled)
		}
		want := tm
		for _, st := range res.Forecast {
			for want = want.Add(time.Hour); !open(want); want = want.Add(time.Hour) {
			}
			if got := time.UnixMilli(st.T).UTC(); !got.Equal(want) {
				t.Fatalf("forecast from %s: step %d at %s, want %s", tm.Format("Mon 15:04"), st.H, got.Format("Mon 15:04"), want.Format("Mon 15:04"))
			}
		}
	}
	if !found {
		t.Fatal("the working hours were never found")
	}
	if p := stepPeriods(l.sp); !slices.Equal(p, periods) {
		t.Errorf("calendar periods %v, want %v", p, periods)
	}
}

// TestBusinessHours: hourly values from 09:00 to 16:00 on working days
// have their working day's eight hours found (workingSlots) once they span
// two weeks, not before, and not for values at every hour that miss one
// in twenty at random; a Learner on them then steps from 16:00 to the next
// working day's 09:00, fills no night or weekend, and has periods of 8 and
// 40 steps.
func TestBusinessHours(t *testing.T) {
	hours := []int32{9, 10, 11, 12, 13, 14, 15, 16}
	times := func(days int, keep func(time.Time) bool) []int64 {
		var ts []int64
		for tm := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC); tm.Before(time.Date(2024, 3, 4+days, 0, 0, 0, 0, time.UTC)); tm = tm.Add(time.Hour) {
			if keep(tm) {
				ts = append(ts, tm.UnixMilli())
			}
		}
		return ts
	}
	open := func(tm time.Time) bool {
		return tm.Weekday() != time.Saturday && tm.Weekday() != time.Sunday && slices.Contains(hours, int32(tm.Hour()))
	}
	const hour = 3600 * 1000
	if sp := spacingOf(times(19, open), nil, true); !slices.Equal(sp.slots, hours) || sp.off != 1<<time.Saturday|1<<time.Sunday {
		t.Errorf("business hours over 19 days: slots %v, off %07b", sp.slots, sp.off)
	}
	if got := workingSlots(times(12, open), hour, 1<<time.Saturday|1<<time.Sunday); got != nil {
		t.Errorf("business hours over 12 days: slots %v, want none yet", got)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	if sp := spacingOf(times(40, func(time.Time) bool { return rng.IntN(20) != 0 }), nil, true); sp.slots != nil || sp.off != 0 {
		t.Errorf("every hour, one in twenty missing: slots %v, off %07b", sp.slots, sp.off)
	}
	// Two stray values at 19:00 and one at 03:00, and 09:00 logged a
	// second early on one day in four: still the eight hours.
	odd := times(21, func(tm time.Time) bool {
		return open(tm) || tm.Hour() == 19 && (tm.Day() == 6 || tm.Day() == 19) || tm.Hour() == 3 && tm.Day() == 13
	})
	for i, tm := range odd {
		if tt := time.UnixMilli(tm).UTC(); tt.Hour() == 9 && tt.Day()%4 == 0 {
			odd[i] -= 1000
		}
	}
	if sp := spacingOf(odd, nil, true); !slices.Equal(sp.slots, hours) {
		t.Errorf("business hours with strays and jitter: slots %v", sp.slots)
	}
	// A step of a millisecond (bursts): no day of 86 400 000 steps is
	// counted.
	var bursts []int64
	for d := range 60 {
		for k := range 5 {
			bursts = append(bursts, time.Date(2024, 3, 4+d, 12, 0, 0, 0, time.UTC).UnixMilli()+int64(k))
		}
	}
	if sp := spacingOf(bursts, nil, true); sp.step != 1 || sp.slots != nil {
		t.Errorf("bursts: step %d, slots %v", sp.step, sp.slots)
	}
	// A time on a day off or at an empty step counts the working steps
	// after it: Friday 16:00 to Saturday 03:00 or 20:00 is none, Saturday
	// noon to Monday 09:00 one.
	bh := spacing{step: hour, off: 1<<time.Saturday | 1<<time.Sunday, slots: hours}
	fri16 := time.Date(2024, 3, 8, 16, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct{ a, t, want int64 }{
		{fri16, fri16 + 11*hour, 0}, {fri16, fri16 + 28*hour, 0}, {fri16 + 20*hour, fri16 + 65*hour, 1}, {fri16 - 10*hour, fri16 + 65*hour, 9},
	} {
		if got := bh.steps(tc.a, tc.t); got != uint64(tc.want) {
			t.Errorf("steps from %s to %s: %d, want %d", time.UnixMilli(tc.a).UTC().Format("Mon 15:04"), time.UnixMilli(tc.t).UTC().Format("Mon 15:04"), got, tc.want)
		}
	}

	learnWorkingHours(t, open, []int{8, 40})
}

// TestStepsOnTheGrid: a forecast's steps are counted from the step of the
// series' grid nearest its last value's time. Hourly values logged up to
// two seconds either side of the hour (jitter, not gaps) are forecast on
// the hour, the last one's 1.5 s early or late whatever; values at half
// past keep their half-hour; a daily series whose last value came a second
// before Monday's midnight is forecast from Tuesday on, and that value is
// learned with Monday's one-hot weekday (the calendar's first column). The
// grid is checkpointed; a version-16 snapshot has none and steps from the
// value's own time until the next fit, and a phase outside the step is
// refused.
func TestStepsOnTheGrid(t *testing.T) {
	const hour = int64(time.Hour / time.Millisecond)
	start := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC).UnixMilli() // a Monday
	learn := func(cfg Config, ts []int64) (*Learner, Result) {
		l, err := NewLearner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ys := noisySine(len(ts), 0.1, 6)
		var res Result
		for i, tm := range ts {
			if res, err = l.Observe(Observation{T: tm, Time: true, Y: ys[i]}); err != nil {
				t.Fatal(err)
			}
		}
		return l, res
	}
	cfg := testConfig()
	cfg.Horizon = 3
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name          string
		phase, last   int64 // the grid's phase; the last value's offset from its step
		wantFirstStep int64 // its first forecast step, in hours after start
	}{
		{"early", 0, -1500, 300}, {"late", 0, 1500, 300}, {"half past, early", hour / 2, -1500, 300},
	} {
		ts := make([]int64, 300)
		for i := range ts {
			ts[i] = start + tc.phase + int64(i)*hour + rng.Int64N(4001) - 2000
		}
		ts[len(ts)-1] = start + tc.phase + int64(len(ts)-1)*hour + tc.last
		l, res := learn(cfg, ts)
		if len(res.Forecast) != cfg.Horizon {
			t.Fatalf("%s: %d steps", tc.name, len(res.Forecast))
		}
		for _, st := range res.Forecast {
			if want := start + tc.phase + (tc.wantFirstStep+int64(st.H)-1)*hour; st.T != want {
				t.Errorf("%s: step %d at %s, want %s", tc.name, st.H, time.UnixMilli(st.T).UTC(), time.UnixMilli(want).UTC())
			}
		}
		if tc.name != "early" {
			continue
		}
		// The checkpoint keeps the grid; without it (version 16) the
		// steps follow the last value's own time.
		snap, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		st := stateOf(t, snap)
		r, _ := NewLearner(cfg)
		if err := r.UnmarshalBinary(snap); err != nil || r.StepTime(ts[len(ts)-1], 1) != start+300*hour {
			t.Errorf("restored: %v, step 1 at %d, want %d", err, r.StepTime(ts[len(ts)-1], 1), start+300*hour)
		}
		r, _ = NewLearner(cfg)
		if err := r.UnmarshalBinary(encodeState(snap, st, 16)); err != nil || r.StepTime(ts[len(ts)-1], 1) != ts[len(ts)-1]+hour {
			t.Errorf("restored from version 16: %v, step 1 at %d, want %d", err, r.StepTime(ts[len(ts)-1], 1), ts[len(ts)-1]+hour)
		}
		for name, mutate := range map[string]func(*learnerState){
			"phase −1":        func(s *learnerState) { s.Phase = -1 },
			"phase a step":    func(s *learnerState) { s.Phase = hour },
			"a step of 1e18":  func(s *learnerState) { s.Step, s.Phase = 1e18, 0 },
			"a calendar step": func(s *learnerState) { s.Step, s.Phase = 30*day, 0 },
			"not fitted":      func(s *learnerState) { s.Model.Fitted = false },
		} {
			bad := st
			mutate(&bad)
			if err := r.UnmarshalBinary(encodeState(snap, bad, SnapshotVersion)); err == nil {
				t.Errorf("a snapshot with a grid and %s was restored", name)
			}
		}
	}
	// Daily at midnight, the last value a second before Monday's.
	cfg.Calendar = calendar.Spec{Features: []calendar.Feature{calendar.DayOfWeek}}
	ts := make([]int64, 150)
	for i := range ts {
		ts[i] = start + int64(i)*day
	}
	for len(ts) > 0 && time.UnixMilli(ts[len(ts)-1]).UTC().Weekday() != time.Monday {
		ts = ts[:len(ts)-1]
	}
	monday := ts[len(ts)-1]
	ts[len(ts)-1] -= 1000
	l, res := learn(cfg, ts)
	if got := time.UnixMilli(res.Forecast[0].T).UTC(); !got.Equal(time.UnixMilli(monday + day).UTC()) {
		t.Errorf("daily: step 1 at %s, want Tuesday %s", got, time.UnixMilli(monday+day).UTC())
	}
	if u := l.uRaw[l.nUser:]; u[0] != 1 || u[6] != 0 {
		t.Errorf("the value a second before Monday learned the weekday features %v, want Monday's", u)
	}
}

// TestNiceStepAndPhase: a median difference within 1 % of a whole number of
// days, hours, minutes or seconds is that (the coarsest unit first), and
// any other is kept, and none into or out of calendar months; a phase
// shared by half the times is theirs, and jittered times' is their
// circular mean, wrapping at the step, moved to the whole hour, minute or
// second within two standard errors or a sixtieth of the unit: daily
// values within a minute of midnight or of 12:30 are at those, hourly ones
// logged to the second at ±1 s on the hour; times spread over the step
// keep no phase.
func TestNiceStepAndPhase(t *testing.T) {
	const hour, minute = 3600000, 60000
	for _, c := range [][2]int64{
		{3600035, hour}, {hour - 30000, hour}, {90 * minute, 90 * minute}, {90*minute + 20000, 90 * minute}, {90*minute + 40000, 91 * minute},
		{1500, 1500}, {1003, 1000}, {59500, minute}, {7*day + 100, 7 * day}, {31 * day, 31 * day}, {250, 250},
		{36 * hour, 36 * hour}, {15040, 15000}, {27*day + 20*hour, 27*day + 20*hour}, {89*day - 2*hour, 89*day - 2*hour},
		{31*day + 7*hour, 31*day + 7*hour},
	} {
		if got := niceStep(c[0]); got != c[1] {
			t.Errorf("niceStep(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ phase, jitter int64 }{{0, 2000}, {hour / 2, 2000}, {hour - 5000, 2000}, {17 * minute, 300}} {
		ts := make([]int64, 64)
		for i := range ts {
			ts[i] = 1.7e12 + c.phase + int64(i)*hour + rng.Int64N(2*c.jitter+1) - c.jitter
		}
		if got, ok := phaseOf(ts, hour); !ok || got != floorMod(1.7e12+c.phase, hour) {
			t.Errorf("phase of times jittered by ±%d ms about %d: %d (%v), want %d", c.jitter, c.phase, got, ok, floorMod(1.7e12+c.phase, hour))
		}
		for i := range 32 { // half at one phase: theirs
			ts[2*i] = ts[0] + int64(2*i)*hour
		}
		if got, ok := phaseOf(ts, hour); !ok || got != floorMod(ts[0], hour) {
			t.Errorf("phase with 32 of 64 times at %d: %d (%v)", floorMod(ts[0], hour), got, ok)
		}
	}
	// Jittered to the second (a clock read in whole seconds): a third of
	// the values at each of −1, 0 and +1 s, the hour.
	ts := make([]int64, 63)
	for i := range ts {
		ts[i] = 1.7e12 - floorMod(1.7e12, hour) + int64(i)*hour + int64(i%3-1)*1000
	}
	if got, ok := phaseOf(ts, hour); !ok || got != 0 {
		t.Errorf("hourly values at ±1 s: phase %d (%v), want 0", got, ok)
	}
	// Values logged at any time of the day keep no grid.
	for i := range ts {
		ts[i] = 1.7e12 + int64(i)*day + rng.Int64N(day)
	}
	if _, ok := phaseOf(ts, day); ok {
		t.Error("daily values at random times of day keep a phase")
	}
	for _, at := range []int64{0, 12*hour + 30*minute} {
		ts := make([]int64, 64)
		for i := range ts {
			ts[i] = 1.7e12 - floorMod(1.7e12, day) + at + int64(i)*day + rng.Int64N(120001) - 60000
		}
		if got, ok := phaseOf(ts, day); !ok || got != at {
			t.Errorf("daily values within a minute of %d: phase %d (%v)", at, got, ok)
		}
	}
}

// TestSubDailyHoursOnTheZonesClock: hourly values from 10:00 to 15:00 New
// York time on weekdays, across the March change, are six working hours a
// day on the zone's clock and seven (14:00 to 20:00, one of them empty on
// every day) on UTC's: with the zone they are read on its clock. Values at
// every hour of the day stay on UTC's, whose days have no missing or
// repeated hour, and so do values at every hour but noon, whose working
// hours on the zone's clock include the hours a change skips or repeats;
// without a zone, business hours are UTC's. Daily values at 09:00 Paris
// time are on the zone's clock from the first value after a change.
func TestSubDailyHoursOnTheZonesClock(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var market, allDay []int64
	for d := time.Date(2023, 1, 2, 0, 0, 0, 0, ny); d.Before(time.Date(2023, 5, 1, 0, 0, 0, 0, ny)); d = d.AddDate(0, 0, 1) {
		for h := range 24 {
			tm := time.Date(d.Year(), d.Month(), d.Day(), h, 0, 0, 0, ny).UnixMilli()
			if wd := d.Weekday(); wd != time.Saturday && wd != time.Sunday && h >= 10 && h <= 15 {
				market = append(market, tm)
			}
		}
	}
	for tm := time.Date(2023, 1, 2, 0, 0, 0, 0, time.UTC); tm.Month() < 5; tm = tm.Add(time.Hour) {
		allDay = append(allDay, tm.UnixMilli())
	}
	sp := spacingOf(market, ny, true)
	if sp.loc != ny || !slices.Equal(sp.slots, []int32{10, 11, 12, 13, 14, 15}) || sp.off != 1<<time.Saturday|1<<time.Sunday {
		t.Errorf("New York market hours with the zone: clock %v, slots %v, off %07b", sp.loc, sp.slots, sp.off)
	}
	if sp := spacingOf(market, nil, true); sp.loc != nil || !slices.Equal(sp.slots, []int32{14, 15, 16, 17, 18, 19, 20}) {
		t.Errorf("New York market hours without a zone: clock %v, slots %v", sp.loc, sp.slots)
	}
	if sp := spacingOf(allDay, ny, true); sp.loc != nil || sp.slots != nil || sp.off != 0 || sp.step != 3600000 {
		t.Errorf("every hour with the zone: clock %v, slots %v, off %07b, step %d", sp.loc, sp.slots, sp.off, sp.step)
	}
	// Every hour but noon, New York's: 23 working hours on the zone's
	// clock against 24 on UTC's, but the night's hours a change skips or
	// repeats are among them, so UTC's clock it is.
	var noNoon []int64
	for _, tm := range allDay {
		if time.UnixMilli(tm).In(ny).Hour() != 12 {
			noNoon = append(noNoon, tm)
		}
	}
	if sp := spacingOf(noNoon, ny, true); sp.loc != nil {
		t.Errorf("every hour but noon with the zone: clock %v, slots %v", sp.loc, sp.slots)
	}
	// Daily values at 09:00 Paris time, ending a day after the March
	// change: a single value an hour off UTC's time of day says the
	// zone's clock.
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	var nine []int64
	for d := time.Date(2022, 10, 31, 9, 0, 0, 0, paris); d.Before(time.Date(2023, 3, 28, 0, 0, 0, 0, paris)); d = d.AddDate(0, 0, 1) {
		nine = append(nine, d.UnixMilli())
	}
	if sp := spacingOf(nine, paris, true); sp.loc != paris {
		t.Errorf("09:00 in Paris to a day after the change: clock %v", sp.loc)
	}
	// Steps over the change: Friday 10 March 15:00 is followed by Monday
	// 13 March 10:00 New York time, an hour less after it in UTC than the
	// week before.
	fri := time.Date(2023, 3, 10, 15, 0, 0, 0, ny).UnixMilli()
	if got := time.UnixMilli(sp.after(fri, 1)).In(ny); !got.Equal(time.Date(2023, 3, 13, 10, 0, 0, 0, ny)) {
		t.Errorf("the step after Friday 15:00: %s", got)
	}
}

// TestRegularisedFillsGapsInTime: the missing days of a daily series are
// inserted at their days. Without a season the fill is the line between
// the gap's ends, so a line is filled exactly; with a season s it is the
// value a season back plus the seasonal difference interpolated, so a
// period-7 pattern on a line (whose seasonal difference is constant) is
// filled exactly, gaps up to s − 1 long; a gap beyond maxRegularGap stays
// closed; without a gap the arguments come back as they are. Tolerance
// 1e-12 relative: a few roundings of values of order 100.
func TestRegularisedFillsGapsInTime(t *testing.T) {
	const day = int64(86_400_000)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	pattern := []float64{3, -1, 4, -1, 5, -9, 2}
	truth := func(i int, s int) float64 {
		y := 100 + 0.5*float64(i)
		if s > 0 {
			y += pattern[i%7]
		}
		return y
	}
	missing := map[int]bool{9: true, 20: true, 21: true, 22: true, 40: true, 41: true, 42: true, 43: true, 44: true, 45: true}
	for _, s := range []int{0, 7} {
		var ys, us []float64
		var ts []int64
		for i := range 60 {
			if !missing[i] {
				ys, us, ts = append(ys, truth(i, s)), append(us, float64(i), 1), append(ts, start+int64(i)*day)
			}
		}
		sp := spacingOf(ts, nil, true)
		if sp.step != day {
			t.Fatalf("step %d", sp.step)
		}
		ry, ru, rt := regularised(sp, ys, us, ts, 2, s)
		if len(ry) != 60 || len(ru) != 120 || len(rt) != 60 {
			t.Fatalf("s = %d: %d samples, %d inputs, %d times; want 60, 120, 60", s, len(ry), len(ru), len(rt))
		}
		for i := range 60 {
			if rt[i] != start+int64(i)*day || math.Abs(ry[i]-truth(i, s)) > 1e-12*100 || math.Abs(ru[2*i]-float64(i)) > 1e-12*60 || ru[2*i+1] != 1 {
				t.Errorf("s = %d, day %d (missing %v): t %d y %g u %v; want %d, %g, [%d 1]", s, i, missing[i], rt[i], ry[i], ru[2*i:2*i+2], start+int64(i)*day, truth(i, s), i)
			}
		}
	}
	ys, us, ts := []float64{1, 2, 3}, []float64{}, []int64{start, start + day, start + (maxRegularGap+3)*day}
	if ry, _, rt := regularised(spacing{step: day}, ys, us, ts, 0, 0); len(ry) != 3 || &ry[0] != &ys[0] || &rt[0] != &ts[0] {
		t.Errorf("a gap of %d missing days filled: %v", maxRegularGap+1, rt)
	}
	ts[2] = start + 2*day
	if ry, _, rt := regularised(spacing{step: day}, ys, us, ts, 0, 0); len(ry) != 3 || &ry[0] != &ys[0] || &rt[0] != &ts[0] {
		t.Errorf("no gap, yet %v", rt)
	}
	// Fills that would be more than a third of the samples: none.
	var sparse []int64
	for i := range 10 {
		sparse = append(sparse, start+int64(4*i)*day)
	}
	if ry, _, _ := regularised(spacing{step: day}, make([]float64, 10), nil, sparse, 0, 0); len(ry) != 10 {
		t.Errorf("every fourth day: %d samples, want the 10 values alone", len(ry))
	}
	// A seasonal fill stays within the values' range: weekdays 100,
	// weekends 2, a level drop of 30 on the Friday before a missing
	// Saturday (a season back 2, the seasonal difference interpolated
	// from −30 would take it to −13).
	var wy []float64
	var wt []int64
	for i := range 21 {
		y := 100.0
		if i%7 >= 5 {
			y = 2
		}
		if i == 18 {
			y = 70
		}
		if i != 19 {
			wy, wt = append(wy, y), append(wt, start+int64(i)*day)
		}
	}
	if ry, _, _ := regularised(spacingOf(wt, nil, true), wy, nil, wt, 0, 7); len(ry) != 21 || ry[19] < 2 || ry[19] > 100 {
		t.Errorf("the missing Saturday filled with %v, want within [2, 100]", ry)
	}
}

// TestGapsKeepTheWeek: a daily series with a weekly pattern, with one day
// in 13 missing, is chosen and fitted on its days in time, so it predicts
// as well as the complete series does: after the last re-choice (at
// Warmup, 200 values), the RMSE of its one-step predictions is within 1.25
// times the complete series' (with the gaps closed, every later weekday
// was shifted, and the RMSE was several times the noise's 0.3).
func TestGapsKeepTheWeek(t *testing.T) {
	const day = int64(86_400_000)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	pattern := []float64{6, -2, 3, -1, 4, -8, -2}
	rmse := func(drop bool) float64 {
		rng := rand.New(rand.NewPCG(7, 1))
		l, err := NewLearner(autoConfig())
		if err != nil {
			t.Fatal(err)
		}
		var sse float64
		var n int
		for i := range 320 {
			y := 50 + pattern[i%7] + 0.3*rng.NormFloat64()
			if drop && i%13 == 5 {
				continue
			}
			res, err := l.Observe(Observation{T: start + int64(i)*day, Time: true, Y: y})
			if err != nil {
				t.Fatal(err)
			}
			if i >= 220 && res.Fitted {
				sse += (y - res.Prediction) * (y - res.Prediction)
				n++
			}
		}
		return math.Sqrt(sse / float64(n))
	}
	full, gaps := rmse(false), rmse(true)
	t.Logf("full %g gaps %g", full, gaps)
	if !(gaps <= 1.25*full) {
		t.Errorf("one-step RMSE %g with one day in 13 missing, %g without", gaps, full)
	}
}

// TestSeasonJoinsWhenItFits: a daily series is re-chosen when its week
// first fits the lag sets, at 2·(7 + 3) = 20 values, not only at the
// schedule's 32: from then on its lags hold the week (7), and its one-step
// errors over values 21–32 are a weekly model's. The noise's own MAE is
// 0.5·√(2/π) ≈ 0.40; a model fitted on 20 values may err 2.5 times that
// (below 1), where lag 1 alone errs by the pattern's day-to-day changes,
// several units.
func TestSeasonJoinsWhenItFits(t *testing.T) {
	const day = int64(86_400_000)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	pattern := []float64{6, -2, 3, -1, 4, -8, -2}
	rng := rand.New(rand.NewPCG(3, 1))
	l, err := NewLearner(autoConfig())
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n int
	for i := range 32 {
		y := 50 + pattern[i%7] + 0.5*rng.NormFloat64()
		res, err := l.Observe(Observation{T: start + int64(i)*day, Time: true, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		if i+1 == 20 && !slices.Contains(l.Model().Config().Embedding.YLags, 7) {
			t.Fatalf("after 20 values: lags %v, want the week's 7 among them", l.Model().Config().Embedding.YLags)
		}
		if i+1 > 20 && res.Fitted {
			sum += math.Abs(y - res.Prediction)
			n++
		}
	}
	if mae := sum / float64(n); !(mae < 1) {
		t.Errorf("one-step MAE %g over values 21–32, want below 1", mae)
	}
}
