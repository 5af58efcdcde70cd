package online

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// spacing is the time between a series' consecutive values, frozen at its
// fit (spacingOf): step, the median difference of the times, read as
// calendar months where calendarMonths says so; and, for a step of a day
// or one that divides a day, the weekdays that carry no values (off, bit
// d for time.Weekday d in UTC): a business-day series, Monday to Friday,
// has off Saturday and Sunday, so that Friday's next step is Monday (an
// hourly one's Friday 23:00 is followed by Monday 00:00), its week five
// days of steps (stepPeriods), and a weekend is no gap to fill. Without off the weekend
// would be two missing values a week, filled with predictions that lags
// and seasons then count as values (one-step NMSE 0.50 against 0.16 for
// the same values without their dates, docs/benchmarks.md "Business
// days").
//
// The spacing is read on a clock: UTC's, or, with loc, the wall clock of
// the calendar's time zone (model.calendar.time_zone), when the values
// keep a local time of day that UTC's shifts by the zone's daylight-saving
// changes (daily values at local midnight are at 22:00 UTC in a Paris
// summer and 23:00 in its winter). On that clock a day is a calendar day
// of the zone, 23 or 25 hours across a change: steps keep the local time
// of day, days off are local weekdays, and a change is no gap. Values at
// a constant UTC time of day (dates) keep UTC's clock whatever the zone.
type spacing struct {
	step int64
	off  uint8
	loc  *time.Location // nil: UTC
}

// spacingOf returns the spacing of samples at times ts, on the wall clock
// of loc (nil: UTC) when their times of day are constant there and either
// not in UTC (they have crossed a daylight-saving change) or at local
// midnight where UTC's are not; else on UTC's. Values that have not yet
// crossed a change keep their time of day on both clocks, and only a
// local midnight says which they keep: dates parse to UTC midnights, and
// a time such as 22:30 UTC may be either. O(len(ts)), and it allocates the
// wall times with a zone.
func spacingOf(ts []int64, loc *time.Location) spacing {
	s := spacing{}
	if loc != nil && loc != time.UTC && len(ts) > 1 && isTime(ts[0]) {
		local := spacing{loc: loc}
		walls := make([]int64, len(ts))
		for i, t := range ts {
			walls[i] = local.wall(t)
		}
		utc := sameTimeOfDay(ts)
		if sameTimeOfDay(walls) && (!utc || floorMod(walls[0], day) == 0 && floorMod(ts[0], day) != 0) {
			s, ts = local, walls
		}
	}
	s.step = timeStep(ts)
	s.off = weekdaysOff(ts, s.step)
	return s
}

// sameTimeOfDay reports whether every time of ts is at the same time of
// day in UTC.
func sameTimeOfDay(ts []int64) bool {
	for _, t := range ts[1:] {
		if floorMod(t, day) != floorMod(ts[0], day) {
			return false
		}
	}
	return true
}

// floorMod returns a − b·⌊a/b⌋ for b > 0: in [0, b).
func floorMod(a, b int64) int64 { return a - b*floorDiv(a, b) }

// wall returns t as s's clock reads it, in milliseconds of a UTC that
// keeps no daylight saving: t plus loc's offset at t (t itself on UTC's).
func (s spacing) wall(t int64) int64 {
	if s.loc == nil {
		return t
	}
	_, off := time.UnixMilli(t).In(s.loc).Zone()
	return t + int64(off)*1000
}

// instant returns the time at which s's clock reads w (wall's inverse; a
// wall time that a change skips or repeats resolves as time.Date does).
func (s spacing) instant(w int64) int64 {
	if s.loc == nil {
		return w
	}
	u := time.UnixMilli(w).UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), s.loc).UnixMilli()
}

// minOffSpan is how many days the times must span before weekdays without
// values can be read as days off: two weeks, so that every weekday had two
// chances (one missing Saturday in a week of otherwise daily values is no
// weekend off); whether their absence is more than chance is weekdaysOff's
// test. A business-day series' young forecasts are dated in calendar days
// until then.
const minOffSpan = 14

// weekdaysOff returns the weekdays (bit d for time.Weekday d, on the
// spacing's clock) that carry no values, for a step of a day or one that
// divides a day (ts times) over at least minOffSpan days; 0 otherwise, and
// 0 when more than two weekdays are off (a sparse series, not a working
// week: its gaps are gaps). A weekday is off when values fell on at most
// one in offStrays of its days in the span (a stray record on a Saturday
// does not make Saturdays working days), and chance cannot explain it:
// were days missing independently at the rate r of the other weekdays
// (Laplace's estimate, (days with values + 1)/(days + 2)), a weekday that
// occurs k times in the span would have as few values with probability
// P(Binomial(k, r) ≤ its count); the product over the days off, times the
// sets of as many weekdays there are to test (7 single days, 21 pairs),
// must be below offChance. Clean business days pass over two weeks
// (21·(1/13)⁴ = 7·10⁻⁴ at eleven values) and with a holiday over four;
// a daily series that missed the same weekday twice in two and a half
// weeks does not (7·(1/18)² = 0.02), nor one missing a day in five.
func weekdaysOff(ts []int64, step int64) uint8 {
	if step <= 0 || step > day || day%step != 0 || len(ts) < 2 || !isTime(ts[0]) || ts[len(ts)-1]-ts[0] < minOffSpan*day {
		return 0
	}
	// Days with values (ts increase) and days in the span, by weekday.
	var seen, k [7]int
	prev := int64(math.MinInt64)
	for _, t := range ts {
		if d := floorDiv(t, day); d != prev {
			seen[weekday(t)]++
			prev = d
		}
	}
	first, last := floorDiv(ts[0], day), floorDiv(ts[len(ts)-1], day)
	for d := first; d <= min(last, first+6); d++ {
		k[weekday(d*day)] = int((last-d)/7 + 1)
	}
	var off uint8
	var with, days int
	for d := range 7 {
		if offStrays*seen[d] <= k[d] {
			off |= 1 << d
		} else {
			with, days = with+seen[d], days+k[d]
		}
	}
	if off == 0 || bits.OnesCount8(off) > 2 {
		return 0
	}
	r := float64(with+1) / float64(days+2)
	p := 7.0 // sets of one weekday
	if bits.OnesCount8(off) == 2 {
		p = 21 // of two
	}
	for d := range 7 {
		if off&(1<<d) != 0 {
			p *= binomialCDF(seen[d], k[d], r)
		}
	}
	if p >= offChance {
		return 0
	}
	return off
}

// validOff reports whether off can be a spacing's days off with step:
// none, or one or two weekdays of a step of a day or one that divides a
// day (what weekdaysOff returns; after divides by the days' steps).
func validOff(off uint8, step int64) bool {
	return off == 0 || off&0x80 == 0 && bits.OnesCount8(off) <= 2 && step > 0 && step <= day && day%step == 0
}

// offStrays: a weekday off may carry values on one in offStrays of its
// days.
const offStrays = 20

// binomialCDF returns P(X ≤ n) for X ~ Binomial(k, r), 0 < r < 1.
func binomialCDF(n, k int, r float64) float64 {
	p := 0.0
	for i := 0; i <= min(n, k); i++ {
		lc, _ := math.Lgamma(float64(k + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lk, _ := math.Lgamma(float64(k - i + 1))
		p += math.Exp(lc - li - lk + float64(i)*math.Log(r) + float64(k-i)*math.Log1p(-r))
	}
	return p
}

// offChance is the probability below which weekdays without values are
// not taken for chance (weekdaysOff).
const offChance = 1e-3

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// weekday returns t's day of the week in UTC (time.Weekday).
func weekday(t int64) int { return int(time.UnixMilli(t).UTC().Weekday()) }

// isTime reports whether t (of a series' first sample) reads as Unix
// milliseconds: a sequence number is not a time, and one past 1e11 (March
// 1973 in milliseconds) would be a counter of implausible size.
func isTime(t int64) bool { return t >= 1e11 }

// week returns the steps in a week of a daily spacing: 7 less the days off.
func (s spacing) week() int { return 7 - bits.OnesCount8(s.off) }

// after returns the time h steps after t (ms; h < 0: before it), counted
// on the spacing's clock: t + h·step; for a calendar spacing
// (calendarMonths) h times its months later, at the same time of day and day of the month, or at the
// month's last day when t is at its month's (a month-end series stays at
// month ends) or the day does not exist there; with days off, h working
// days later at the same time of day. O(1): whole weeks are counted, at
// most seven days walked.
func (s spacing) after(t, h int64) int64 {
	return s.instant(s.afterWall(s.wall(t), h))
}

// afterWall is after on the spacing's clock.
func (s spacing) afterWall(t, h int64) int64 {
	if s.off != 0 {
		if h == 0 {
			return t
		}
		P := day / s.step
		if s.off&(1<<weekday(t)) != 0 {
			// A time on a day off lies between the last step of the
			// working day before and the first of the one after (on the
			// grid of its time within a step, o): its first step either
			// way is one of those.
			D := floorDiv(t, day)
			o := (t - D*day) % s.step
			if h > 0 {
				t, h = (D+s.workingDays(t, 1))*day+o, h-1
			} else {
				t, h = (D+s.workingDays(t, -1))*day+(P-1)*s.step+o, h+1
			}
		}
		// t is step j of its day (P steps a day, one for a daily
		// series): step j + h is step j2 of the dd-th working day after.
		j := (t - floorDiv(t, day)*day) / s.step
		dd := floorDiv(j+h, P)
		j2 := j + h - dd*P
		return t + s.workingDays(t, dd)*day + (j2-j)*s.step
	}
	m := calendarMonths(s.step)
	if m == 0 {
		return t + h*s.step
	}
	tt := time.UnixMilli(t).UTC()
	y, mo, d := tt.Date()
	first := time.Date(y, mo+time.Month(h*int64(m)), 1, tt.Hour(), tt.Minute(), tt.Second(), tt.Nanosecond(), time.UTC)
	ty, tm, _ := first.Date()
	if d == daysIn(y, mo) || d > daysIn(ty, tm) {
		d = daysIn(ty, tm)
	}
	return first.AddDate(0, 0, d-1).UnixMilli()
}

// workingDays returns the calendar days (negative for h < 0) from t to the
// h-th day after it, or before it for h < 0, that is not off: any seven
// consecutive days hold week() of them, and the rest of h, 1 to week() of
// them, is walked (so that the step lands on a working day where t is not
// one).
func (s spacing) workingDays(t, h int64) int64 {
	if h == 0 {
		return 0
	}
	dir := int64(1)
	if h < 0 {
		dir, h = -1, -h
	}
	w := int64(s.week())
	q := (h - 1) / w
	days := q * 7
	d := int64(weekday(t))
	for r := h - q*w; r > 0; {
		days++
		if s.off&(1<<((d+dir*days%7+7)%7)) == 0 {
			r--
		}
	}
	return dir * days
}

// workingBetween returns how many of the days (Unix day numbers) a+1..b
// are not off, for b ≥ a; O(1).
func (s spacing) workingBetween(a, b int64) int64 {
	k := b - a
	n := k / 7 * int64(s.week())
	for d := a + k/7*7 + 1; d <= b; d++ {
		if s.off&(1<<weekday(d*day)) == 0 {
			n++
		}
	}
	return n
}

// steps returns how many steps t is after a (after's inverse, rounded to
// the nearest step; 0 for t before a, which a zone's clock can read of
// two times less than an hour apart across the autumn change).
func (s spacing) steps(a, t int64) uint64 {
	a, t = s.wall(a), s.wall(t)
	if t < a {
		return 0
	}
	if s.off != 0 && s.step < day {
		// Whole working days between their days, and the steps within
		// them (rounded): a day of P steps counts P.
		P := day / s.step
		Da, Dt := floorDiv(a, day), floorDiv(t, day)
		ja := int64(stepsBetween(Da*day, a, s.step))
		jt := int64(stepsBetween(Dt*day, t, s.step))
		n := s.workingBetween(Da, Dt)*P + jt - ja
		return uint64(max(n, 0))
	}
	if s.off != 0 {
		k := stepsBetween(a, t, day) // calendar days, rounded
		n := k / 7 * uint64(s.week())
		d := weekday(a)
		for j := uint64(1); j <= k%7; j++ {
			if s.off&(1<<((d+int(j))%7)) == 0 {
				n++
			}
		}
		return n
	}
	m := calendarMonths(s.step)
	if m == 0 {
		return stepsBetween(a, t, s.step)
	}
	ta, tb := time.UnixMilli(a).UTC(), time.UnixMilli(t).UTC()
	months := (tb.Year()-ta.Year())*12 + int(tb.Month()-ta.Month())
	switch dd := tb.Day() - ta.Day(); { // to the nearest month
	case dd > 15:
		months++
	case dd < -15:
		months--
	}
	return uint64(max((months+m/2)/m, 0))
}

// stepsBetween returns how many time steps of step > 0 lead from a to b ≥
// a, rounded to the nearest (half a step up): in uint64, so that neither
// the difference nor the rounding overflows where int64 arithmetic would.
func stepsBetween(a, b, step int64) uint64 {
	d, s := uint64(b)-uint64(a), uint64(step)
	q, r := d/s, d%s
	if r >= (s+1)/2 {
		q++
	}
	return q
}

const day = 24 * 3600 * 1000 // ms

// calendarMonths returns the calendar months a series' spacing step (ms)
// stands for: 1, 3 or 12 for a median spacing of 28–31, 89–92 or 365–366
// days (monthly, quarterly, yearly times), else 0 (a fixed spacing). The
// months of a calendar have unequal lengths, and a fixed spacing of their
// median drifts off them: monthly dates forecast 31 days apart were
// labelled the 4th of March after the 1st of February.
func calendarMonths(step int64) int {
	switch {
	case step >= 28*day && step <= 31*day:
		return 1
	case step >= 89*day && step <= 92*day:
		return 3
	case step >= 365*day && step <= 366*day:
		return 12
	}
	return 0
}

// daysIn returns the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// timeStep returns the median positive difference of consecutive times (1 if
// none): the spacing assumed for forecast timestamps.
func timeStep(t []int64) int64 {
	d := make([]int64, 0, len(t))
	for i := 1; i < len(t); i++ {
		d = append(d, t[i]-t[i-1])
	}
	if len(d) == 0 {
		return 1
	}
	slices.Sort(d)
	return max(d[len(d)/2], 1)
}
