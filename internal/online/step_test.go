package online

import (
	"testing"
	"time"
)

// TestStepTimeFollowsTheCalendar: a median spacing of 28–31, 89–92 or
// 365–366 days steps by calendar months (1, 3, 12), keeping the day of
// the month and the time of day, a month end staying at month ends; any
// other spacing adds h·step; stepsFrom inverts it.
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
		got := stepTime(ms(tc.from), tc.h, tc.step)
		if want := ms(tc.want); got != want {
			t.Errorf("%s + %d × %d days: %s, want %s", tc.from, tc.h, tc.step/day, time.UnixMilli(got).UTC().Format(time.RFC3339), tc.want)
		}
		l := &Learner{step: tc.step}
		if k := l.stepsFrom(ms(tc.from), got); k != uint64(tc.h) {
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
		if got, want := stepTime(ms(tc.from), tc.h, tc.step), ms(tc.want); got != want {
			t.Errorf("%s %d × %d days: %s, want %s", tc.from, tc.h, tc.step/day, time.UnixMilli(got).UTC().Format(time.RFC3339), tc.want)
		}
	}
	if got := stepTime(10, 3, 1); got != 13 {
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
		res, err := l.Observe(Observation{T: tt.UnixMilli(), Y: y})
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
