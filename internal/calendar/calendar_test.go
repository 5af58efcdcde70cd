package calendar

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the binary embeds it too (cmd/streamd)
)

func ms(y int, m time.Month, d, hh, mm int, loc *time.Location) int64 {
	return time.Date(y, m, d, hh, mm, 0, 0, loc).UnixMilli()
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Closed-form encodings at known instants: 2024-12-25 was a Wednesday (a
// holiday in the list), 2024-12-23 a Monday. The tolerance 1e-12 covers the
// rounding of 2πk·x in float64 for x < 1 and k ≤ 3.
func TestFeaturesClosedForm(t *testing.T) {
	s := Spec{Features: []Feature{HourOfDay, DayOfWeek, Month, DayOfYear, Holiday},
		Holidays: []string{"2024-12-25", "2024-01-01"}}
	if s.Dim() != 30 {
		t.Fatalf("Dim = %d, want 6+7+12+4+1 = 30", s.Dim())
	}
	dst := make([]float64, s.Dim())

	// Christmas 2024, 06:00 UTC: hour 6 = a quarter day.
	s.FeaturesTo(dst, ms(2024, 12, 25, 6, 0, time.UTC))
	hour := []float64{1, 0, 0, -1, -1, 0} // sin, cos of 2πk/4, k = 1, 2, 3
	for i, w := range hour {
		if !near(dst[i], w, 1e-12) {
			t.Errorf("hour_of_day[%d] = %v, want %v", i, dst[i], w)
		}
	}
	if want := []float64{0, 0, 1, 0, 0, 0, 0}; !slices.Equal(dst[6:13], want) {
		t.Errorf("day_of_week = %v, want Wednesday %v", dst[6:13], want)
	}
	if want := []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}; !slices.Equal(dst[13:25], want) {
		t.Errorf("month = %v, want December %v", dst[13:25], want)
	}
	// Day 359 of the leap year 2024 (0-based), plus a quarter day.
	d := (359 + 0.25) / 365.25
	for k := 1; k <= 2; k++ {
		sin, cos := math.Sin(2*math.Pi*float64(k)*d), math.Cos(2*math.Pi*float64(k)*d)
		if !near(dst[25+2*(k-1)], sin, 1e-12) || !near(dst[26+2*(k-1)], cos, 1e-12) {
			t.Errorf("day_of_year k=%d = %v, %v, want %v, %v", k, dst[25+2*(k-1)], dst[26+2*(k-1)], sin, cos)
		}
	}
	if dst[29] != 1 {
		t.Errorf("holiday = %v on 2024-12-25, want 1", dst[29])
	}

	// Monday 2024-12-23 12:30: no holiday; hour 12.5 (fractional minutes).
	s.FeaturesTo(dst, ms(2024, 12, 23, 12, 30, time.UTC))
	if want := []float64{1, 0, 0, 0, 0, 0, 0}; !slices.Equal(dst[6:13], want) {
		t.Errorf("day_of_week = %v, want Monday %v", dst[6:13], want)
	}
	if !near(dst[0], math.Sin(2*math.Pi*12.5/24), 1e-12) || !near(dst[1], math.Cos(2*math.Pi*12.5/24), 1e-12) {
		t.Errorf("hour 12.5: %v, %v", dst[0], dst[1])
	}
	if dst[29] != 0 {
		t.Errorf("holiday = %v on 2024-12-23, want 0", dst[29])
	}

	// Sunday 2024-12-29 is the last one-hot slot; 2024-01-01 is a holiday,
	// day 0 of the year: day_of_year sin = 0, cos = 1 at midnight.
	s.FeaturesTo(dst, ms(2024, 12, 29, 0, 0, time.UTC))
	if dst[12] != 1 || dst[6] != 0 {
		t.Errorf("day_of_week on a Sunday = %v", dst[6:13])
	}
	s.FeaturesTo(dst, ms(2024, 1, 1, 0, 0, time.UTC))
	if dst[29] != 1 || dst[13] != 1 || dst[25] != 0 || dst[26] != 1 || dst[27] != 0 || dst[28] != 1 {
		t.Errorf("2024-01-01: month %v day_of_year %v holiday %v", dst[13:25], dst[25:29], dst[29])
	}
}

// The features are written in Spec order, each block where Dim puts it.
func TestFeaturesOrder(t *testing.T) {
	s := Spec{Features: []Feature{Month, DayOfWeek}}
	dst := make([]float64, s.Dim()+1)
	dst[19] = 42 // past Dim: to be left untouched
	// 2024-03-04 was a Monday.
	s.FeaturesTo(dst, ms(2024, 3, 4, 0, 0, time.UTC))
	if dst[2] != 1 || dst[12] != 1 || dst[19] != 42 {
		t.Errorf("month then day_of_week: %v", dst)
	}
	var sum float64
	for _, v := range dst[:19] {
		sum += v
	}
	if sum != 2 {
		t.Errorf("two one-hot blocks sum to %v, want 2", sum)
	}
}

// December 31 and the next January 1 are close on the day-of-year circle
// (0.25 or 1.25 days of 365.25 apart), never a year apart: the encoding has
// no jump at the new year. The distance of two points at phase difference
// Δ on the k-th harmonic circle is 2·sin(πkΔ).
func TestDayOfYearContinuity(t *testing.T) {
	s := Spec{Features: []Feature{DayOfYear}}
	a, b := make([]float64, 4), make([]float64, 4)
	for _, tc := range []struct {
		year int
		gap  float64 // days on the circle from Dec 31 00:00 to Jan 1 00:00
	}{{2023, 1.25}, {2024, 0.25}} {
		s.FeaturesTo(a, ms(tc.year, 12, 31, 0, 0, time.UTC))
		s.FeaturesTo(b, ms(tc.year+1, 1, 1, 0, 0, time.UTC))
		for k := 1; k <= 2; k++ {
			dist := math.Hypot(a[2*k-2]-b[2*k-2], a[2*k-1]-b[2*k-1])
			want := 2 * math.Sin(math.Pi*float64(k)*tc.gap/365.25)
			if !near(dist, want, 1e-12) {
				t.Errorf("%d→%d k=%d: distance %v, want %v", tc.year, tc.year+1, k, dist, want)
			}
		}
	}
	// The hour terms are continuous at midnight the same way.
	h := Spec{Features: []Feature{HourOfDay}}
	a, b = make([]float64, 6), make([]float64, 6)
	h.FeaturesTo(a, ms(2024, 5, 1, 23, 59, time.UTC))
	h.FeaturesTo(b, ms(2024, 5, 2, 0, 0, time.UTC))
	for i := range a {
		if !near(a[i], b[i], 2*math.Pi*3/(24*60)) {
			t.Errorf("hour term %d jumps at midnight: %v → %v", i, a[i], b[i])
		}
	}
}

// In a time zone the day, the hour and the holiday are local: 2024-12-24
// 23:30 UTC is Christmas 00:30 in Paris (UTC+1), a Wednesday.
func TestFeaturesTimeZone(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris") // from time/tzdata if the host has none
	if err != nil {
		t.Fatal(err)
	}
	utc := ms(2024, 12, 24, 23, 30, time.UTC)
	for _, tc := range []struct {
		loc     *time.Location
		weekday int // Monday = 0
		hour    float64
		holiday float64
	}{{nil, 1, 23.5, 0}, {time.UTC, 1, 23.5, 0}, {paris, 2, 0.5, 1}} {
		s := Spec{Features: []Feature{HourOfDay, DayOfWeek, Holiday}, Holidays: []string{"2024-12-25"}, Location: tc.loc}
		dst := make([]float64, s.Dim())
		s.FeaturesTo(dst, utc)
		if dst[6+tc.weekday] != 1 || dst[13] != tc.holiday || !near(dst[0], math.Sin(2*math.Pi*tc.hour/24), 1e-12) {
			t.Errorf("%v: weekday %v hour sin %v holiday %v, want day %d, hour %v, holiday %v",
				tc.loc, dst[6:13], dst[0], dst[13], tc.weekday, tc.hour, tc.holiday)
		}
	}
}

// After the first call (which parses the holidays) FeaturesTo allocates
// nothing, in UTC and in a zone; Compile makes even the first call free.
func TestFeaturesNoAlloc(t *testing.T) {
	locs := []*time.Location{nil}
	if paris, err := time.LoadLocation("Europe/Paris"); err == nil {
		locs = append(locs, paris)
	}
	for _, loc := range locs {
		s := Spec{Features: []Feature{HourOfDay, DayOfWeek, Month, DayOfYear, Holiday},
			Holidays: []string{"2024-12-25", "2024-12-26", "2025-01-01"}, Location: loc}
		dst := make([]float64, s.Dim())
		tm := ms(2024, 12, 25, 6, 0, time.UTC)
		s.FeaturesTo(dst, tm)
		if n := testing.AllocsPerRun(100, func() { tm += 3600_000; s.FeaturesTo(dst, tm) }); n != 0 {
			t.Errorf("%v: FeaturesTo allocates %v times per call", loc, n)
		}
		c := Spec{Features: s.Features, Holidays: s.Holidays, Location: loc}
		if err := c.Compile(); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(1, func() { c.FeaturesTo(dst, tm) }); n != 0 {
			t.Errorf("%v: first call after Compile allocates %v times", loc, n)
		}
	}
}

// A compiled Spec copied by value computes the same as the original.
func TestCompiledCopy(t *testing.T) {
	s := Spec{Features: []Feature{Holiday}, Holidays: []string{"2025-01-01", "2024-12-25", "2024-12-25"}}
	if err := s.Compile(); err != nil {
		t.Fatal(err)
	}
	c := s
	got := make([]float64, 1)
	for _, tc := range []struct {
		day  int64
		want float64
	}{{ms(2024, 12, 25, 13, 0, time.UTC), 1}, {ms(2025, 1, 1, 0, 0, time.UTC), 1}, {ms(2024, 12, 31, 23, 59, time.UTC), 0}} {
		c.FeaturesTo(got, tc.day)
		if got[0] != tc.want {
			t.Errorf("%v: holiday %v, want %v", time.UnixMilli(tc.day).UTC(), got[0], tc.want)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want string // "" = valid
	}{
		{"zero", Spec{}, ""},
		{"all", Spec{Features: []Feature{HourOfDay, DayOfWeek, Month, DayOfYear, Holiday}, Holidays: []string{"2024-12-25"}}, ""},
		{"unknown", Spec{Features: []Feature{7}}, "features[0]: unknown feature 7"},
		{"twice", Spec{Features: []Feature{Month, Month}}, "features[1]: month is listed twice"},
		{"bad date", Spec{Features: []Feature{Holiday}, Holidays: []string{"2024-12-25", "25/12/2024"}}, `holidays[1]: "25/12/2024" is not a date`},
		{"not padded", Spec{Features: []Feature{Holiday}, Holidays: []string{"2024-1-1"}}, `"2024-1-1"`},
		{"no such day", Spec{Features: []Feature{Holiday}, Holidays: []string{"2023-02-29"}}, `"2023-02-29"`},
		{"holiday without list", Spec{Features: []Feature{Holiday}}, "needs a list of holidays"},
		{"list without holiday", Spec{Features: []Feature{Month}, Holidays: []string{"2024-12-25"}}, "would be ignored"},
	} {
		err := tc.spec.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if tc.want != "" {
			s := tc.spec
			if s.Compile() == nil {
				t.Errorf("%s: Compile accepts an invalid Spec", tc.name)
			}
		}
	}
}

func TestParseFeature(t *testing.T) {
	for i, name := range FeatureNames() {
		f, err := ParseFeature(name)
		if err != nil || f != Feature(i) || f.String() != name {
			t.Errorf("ParseFeature(%q) = %v, %v", name, f, err)
		}
	}
	if _, err := ParseFeature("weekday"); err == nil || !strings.Contains(err.Error(), "day_of_week") {
		t.Errorf("ParseFeature(weekday): %v, want an error listing the names", err)
	}
}

// FeaturesTo with too short a dst is a programmer error.
func TestFeaturesShortDstPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for len(dst) < Dim()")
		}
	}()
	s := Spec{Features: []Feature{Month}}
	s.FeaturesTo(make([]float64, 11), 0)
}

func BenchmarkFeaturesTo(b *testing.B) {
	s := Spec{Features: []Feature{HourOfDay, DayOfWeek, Month, DayOfYear, Holiday}, Holidays: []string{"2024-12-25", "2025-01-01"}}
	if err := s.Compile(); err != nil {
		b.Fatal(err)
	}
	dst := make([]float64, s.Dim())
	tm := ms(2024, 1, 1, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		tm += 3600_000
		s.FeaturesTo(dst, tm)
	}
	sink = dst[0]
}

var sink float64
