// Package calendar derives model inputs from a sample's time: the hour of
// the day, the day of the week, the month, the day of the year and a holiday
// flag. They are known for every future step, so a forecast gets the true
// calendar of each step it predicts instead of the last one held.
//
// The encodings follow what each effect is like:
//
//   - hour of day and day of year act smoothly and periodically (a load or a
//     temperature curve through the day or the year), so they are encoded as
//     the first harmonics of their period, sin and cos of 2πk·x/P: no
//     discontinuity at midnight or at the new year, few values, and a kernel
//     model can form any smooth periodic shape from them (3 harmonics of the
//     day, 2 of the year, enough for a daily double peak and a yearly
//     cycle with an asymmetric winter);
//   - day of week and month differ categorically (a Sunday is not "between"
//     a Saturday and a Monday; a holiday month is not a smooth function of
//     its neighbours), so they are one-hot: each day or month its own
//     indicator, the model free to weigh each;
//   - a holiday is a 0/1 flag from a list of dates.
//
// Everything is computed in the Spec's time zone (UTC by default), so a day
// begins at local midnight.
package calendar

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Feature is one calendar feature.
type Feature int

// The features, each with its encoding and number of values (Dim).
const (
	// HourOfDay: sin, cos of 2πk·h/24 for k = 1, 2, 3, h the hour with its
	// fraction (minutes, seconds and milliseconds): 6 values, in the order
	// sin k=1, cos k=1, sin k=2, cos k=2, sin k=3, cos k=3.
	HourOfDay Feature = iota
	// DayOfWeek: one-hot, Monday first: 7 values.
	DayOfWeek
	// Month: one-hot, January first: 12 values.
	Month
	// DayOfYear: sin, cos of 2πk·d/365.25 for k = 1, 2, d the days since
	// January 1 00:00 (0 on January 1 at midnight, 364.5 at noon on
	// December 31 of a common year): 4 values, sin k=1, cos k=1, sin k=2,
	// cos k=2. The period is the mean year, so December 31 and the next
	// January 1 are 1.25 (common year) or 0.25 (leap year) days apart on
	// the circle, never a jump of a year.
	DayOfYear
	// Holiday: 1 on a date of Spec.Holidays (in Spec.Location), else 0: 1
	// value.
	Holiday
	numFeatures
)

var featureNames = [numFeatures]string{"hour_of_day", "day_of_week", "month", "day_of_year", "holiday"}
var featureDims = [numFeatures]int{2 * hourHarmonic, 7, 12, 2 * yearHarmonic, 1}

// FeatureNames lists the names ParseFeature accepts, in Feature order.
func FeatureNames() []string { return featureNames[:] }

// ParseFeature returns the Feature named hour_of_day, day_of_week, month,
// day_of_year or holiday.
func ParseFeature(name string) (Feature, error) {
	if i := slices.Index(featureNames[:], name); i >= 0 {
		return Feature(i), nil
	}
	return 0, fmt.Errorf("unknown calendar feature %q (want one of %s)", name, strings.Join(featureNames[:], ", "))
}

// String returns the feature's name, as ParseFeature reads it.
func (f Feature) String() string {
	if f < 0 || f >= numFeatures {
		return fmt.Sprintf("Feature(%d)", int(f))
	}
	return featureNames[f]
}

// Dim is the number of values the feature writes.
func (f Feature) Dim() int {
	if f < 0 || f >= numFeatures {
		return 0
	}
	return featureDims[f]
}

// Spec says which calendar features a series' model gets. The zero value
// has none (Dim 0).
//
// FeaturesTo needs the holidays as day numbers: Compile parses them once (and
// validates the Spec). Without Compile, the first FeaturesTo compiles, which
// writes to the Spec: that first call must not run concurrently with another
// use of it. After Compile, FeaturesTo only reads the Spec, and copies share
// the parsed holidays, so one compiled Spec may serve many goroutines.
// Holidays must not change after compilation.
type Spec struct {
	// Features in the order their values are written.
	Features []Feature
	// Holidays are ISO dates, YYYY-MM-DD, in Location.
	Holidays []string
	// Location is the time zone of the hour, day and date; nil = UTC.
	Location *time.Location

	compiled bool
	holidays []int64 // sorted, unique day numbers (days since 1970-01-01) of Holidays
}

// Validate reports an unknown or repeated feature, a holiday that is not a
// date YYYY-MM-DD, the holiday feature without holidays, and holidays
// without the holiday feature (they would be ignored).
func (s Spec) Validate() error {
	var errs []error
	seen := map[Feature]bool{}
	hasHoliday := false
	for i, f := range s.Features {
		switch {
		case f < 0 || f >= numFeatures:
			errs = append(errs, fmt.Errorf("features[%d]: unknown feature %d", i, int(f)))
		case seen[f]:
			errs = append(errs, fmt.Errorf("features[%d]: %s is listed twice", i, f))
		}
		seen[f] = true
		hasHoliday = hasHoliday || f == Holiday
	}
	for i, h := range s.Holidays {
		if _, err := dayOfDate(h); err != nil {
			errs = append(errs, fmt.Errorf("holidays[%d]: %v", i, err))
		}
	}
	switch {
	case hasHoliday && len(s.Holidays) == 0:
		errs = append(errs, errors.New("the holiday feature needs a list of holidays"))
	case !hasHoliday && len(s.Holidays) > 0:
		errs = append(errs, errors.New("holidays are listed but the features do not include holiday, so they would be ignored"))
	}
	return errors.Join(errs...)
}

// Compile validates s and parses its holidays for FeaturesTo.
func (s *Spec) Compile() error {
	if err := s.Validate(); err != nil {
		return err
	}
	days := make([]int64, 0, len(s.Holidays))
	for _, h := range s.Holidays {
		d, _ := dayOfDate(h)
		days = append(days, d)
	}
	slices.Sort(days)
	s.holidays = slices.Compact(days)
	s.compiled = true
	return nil
}

// Dim is the number of values FeaturesTo writes: the sum of the features'
// Dim (at most 30).
func (s Spec) Dim() int {
	n := 0
	for _, f := range s.Features {
		n += f.Dim()
	}
	return n
}

// Periods of the smooth encodings: a day in hours, the mean Gregorian year
// in days (so that the yearly terms do not drift over the leap cycle).
const (
	hoursPerDay  = 24
	daysPerYear  = 365.25
	msPerHour    = 3600 * 1000
	hourHarmonic = 3
	yearHarmonic = 2
)

// FeaturesTo writes the Dim() calendar values of the instant tMillis (Unix
// milliseconds) into dst[:Dim()], feature after feature in s.Features order,
// each encoded as its constant's doc says, in s.Location (UTC if nil).
//
// It panics if len(dst) < Dim() or if s is invalid (Validate), both
// programmer errors. It does not allocate once s is compiled (Compile, or
// the first call); cost O(Dim + log(len(Holidays))).
func (s *Spec) FeaturesTo(dst []float64, tMillis int64) {
	if n := s.Dim(); len(dst) < n {
		panic(fmt.Sprintf("calendar: len(dst) = %d, want ≥ Dim() = %d", len(dst), n))
	}
	if len(s.Features) == 0 {
		return
	}
	if !s.compiled {
		if err := s.Compile(); err != nil {
			panic("calendar: invalid Spec: " + err.Error())
		}
	}
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	t := time.UnixMilli(tMillis).In(loc)
	hh, mm, ss := t.Clock()
	msOfDay := int64(hh)*msPerHour + int64(mm)*60_000 + int64(ss)*1000 + int64(t.Nanosecond()/1e6)
	hour := float64(msOfDay) / msPerHour
	i := 0
	for _, f := range s.Features {
		switch f {
		case HourOfDay:
			i = harmonics(dst, i, hour/hoursPerDay, hourHarmonic)
		case DayOfWeek:
			clear(dst[i : i+7])
			dst[i+(int(t.Weekday())+6)%7] = 1 // time.Sunday is 0
			i += 7
		case Month:
			clear(dst[i : i+12])
			dst[i+int(t.Month())-1] = 1
			i += 12
		case DayOfYear:
			d := float64(t.YearDay()-1) + hour/hoursPerDay
			i = harmonics(dst, i, d/daysPerYear, yearHarmonic)
		case Holiday:
			dst[i] = 0
			if _, ok := slices.BinarySearch(s.holidays, civilDay(t)); ok {
				dst[i] = 1
			}
			i++
		default:
			panic(fmt.Sprintf("calendar: unknown feature %d", int(f)))
		}
	}
}

// harmonics writes sin, cos of 2πk·phase for k = 1..K at dst[i:] and returns
// the index after them.
func harmonics(dst []float64, i int, phase float64, K int) int {
	for k := 1; k <= K; k++ {
		sin, cos := math.Sincos(2 * math.Pi * float64(k) * phase)
		dst[i], dst[i+1] = sin, cos
		i += 2
	}
	return i
}

// civilDay is the day number (days since 1970-01-01) of t's date in t's
// location.
func civilDay(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// ParseDate reads an ISO date YYYY-MM-DD, exactly (zero-padded, a day the
// month has, no time), as midnight UTC: the form of Spec.Holidays.
func ParseDate(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return time.Time{}, fmt.Errorf("%q is not a date YYYY-MM-DD", s)
	}
	return t, nil
}

// dayOfDate parses a ParseDate date into its day number.
func dayOfDate(s string) (int64, error) {
	t, err := ParseDate(s)
	if err != nil {
		return 0, err
	}
	return civilDay(t), nil
}
