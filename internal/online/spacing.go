package online

import (
	"math"
	"math/bits"
	"slices"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// spacing is the time between a series' consecutive values, frozen at its
// fit (spacingOf): step, the median difference of the times, read as
// calendar months where calendarMonths says so; and, for a step of a day
// or one that divides a day, the weekdays that carry no values (off, bit
// d for time.Weekday d in UTC): a business-day series, Monday to Friday,
// has off Saturday and Sunday, so that Friday's next step is Monday (an
// hourly one's Friday 23:00 is followed by Monday 00:00), its week five
// days of steps (stepPeriods), and a weekend is no gap to fill. Without
// off the weekend would be two missing values a week, filled with
// predictions that lags and seasons then count as values (one-step NMSE
// 0.50 against 0.16 for the same values without their dates,
// docs/benchmarks.md "Business days"). Where a step divides a day, slots
// are the steps of a working day that carry values when the others never
// do (business hours: 09:00 to 16:00, so that 16:00 is followed by the
// next working day's 09:00 and a night is no gap either).
//
// The spacing is read on a clock: UTC's, or, with loc, the wall clock of
// the calendar's time zone (model.calendar.time_zone), when the values
// keep a local time of day that UTC's shifts by the zone's daylight-saving
// changes (daily values at local midnight are at 22:00 UTC in a Paris
// summer and 23:00 in its winter). On that clock a day is a calendar day
// of the zone, 23 or 25 hours across a change: steps keep the local time
// of day, days off are local weekdays, and a change is no gap. Values at
// a constant UTC time of day (dates) keep UTC's clock whatever the zone.
//
// With grid, a fixed step's times are phase + k·step on the clock (phase
// in [0, step), the first values' as phaseOf reads it), and a
// forecast's steps are counted from the step nearest its last value's time
// (onGrid): a value logged at 15:59:59.870 is followed by 17:00, not
// 16:59:59.870, and a daily value a second before midnight by the next
// day's midnight, whose calendar features are the next day's.
type spacing struct {
	step  int64
	off   uint8
	slots []int32        // a day's steps that carry values, ascending; nil: all
	loc   *time.Location // nil: UTC
	phase int64
	grid  bool
	// timed: the times are Unix milliseconds (Observation.Time), which
	// have a calendar; else sequence numbers, which have none.
	timed bool
}

// maxGridStep is the longest step kept on a grid: a century. A
// checkpoint claiming a longer one was not written by a fit, and onGrid's
// sums would overflow near the int64 range.
const maxGridStep = 36525 * day

// onGrid returns the time of the step of s's grid nearest t (t itself
// without a grid: a calendar spacing, or a checkpoint's from before the
// grid was kept).
func (s spacing) onGrid(t int64) int64 {
	if !s.grid {
		return t
	}
	return s.instant(s.phase + floorDiv(s.wall(t)-s.phase+s.step/2, s.step)*s.step)
}

// perDay returns the working steps of a working day: the slots', or every
// step of the day.
func (s spacing) perDay() int {
	if s.slots != nil {
		return len(s.slots)
	}
	return int(max(day/s.step, 1))
}

// rank returns how many of a day's working steps come before its step j.
func (s spacing) rank(j int64) int64 {
	if s.slots == nil {
		return min(j, int64(s.perDay()))
	}
	i, _ := slices.BinarySearch(s.slots, int32(j))
	return int64(i)
}

// upTo returns how many working steps of t's day come up to t: none on a
// day off.
func (s spacing) upTo(t int64) int64 {
	if s.off&(1<<weekday(t)) != 0 {
		return 0
	}
	D := floorDiv(t, day)
	return s.rank((t-D*day)/s.step + 1)
}

// works reports whether a day's step j carries values.
func (s spacing) works(j int64) bool {
	if s.slots == nil {
		return true
	}
	_, ok := slices.BinarySearch(s.slots, int32(j))
	return ok
}

// slot returns the step of the day of working step q (0 ≤ q < perDay).
func (s spacing) slot(q int64) int64 {
	if s.slots == nil {
		return q
	}
	return int64(s.slots[q])
}

// spacingOf returns the spacing of samples at times ts, on the wall clock
// of loc (nil: UTC) when their times of day are steady there (within
// jitter: steadyTimeOfDay) and either not in UTC (they have crossed a
// daylight-saving change) or at local midnight where UTC's are not; or,
// for a step below a day, when the wall clock finds fewer working steps a
// week (hourly values from 10:00 to 15:00 in New York are 14:00 to 19:00
// UTC in summer and 15:00 to 20:00 in winter: seven working hours a day on
// UTC's clock, one of them empty on every day, and six on the zone's) and
// none of its working steps is in an hour a change skips or repeats
// (clearOfChanges); else on UTC's. Values that have not yet crossed a
// change keep their time of day on both clocks, and only a local midnight
// says which they keep: dates parse to UTC midnights, and a time such as
// 22:30 UTC may be either. O(len(ts)), and it allocates the wall times
// with a zone.
func spacingOf(ts []int64, loc *time.Location, timed bool) spacing {
	utc := onClock(spacing{timed: timed}, ts)
	if !timed || loc == nil || loc == time.UTC || len(ts) < 2 {
		return utc
	}
	walls := make([]int64, len(ts))
	local := spacing{loc: loc, timed: true}
	for i, t := range ts {
		walls[i] = local.wall(t)
	}
	if steadyTimeOfDay(walls) {
		wallMidnight, _ := phaseOf(walls, day)
		utcTime, _ := phaseOf(ts, day)
		if !steadyTimeOfDay(ts) || wallMidnight == 0 && utcTime != 0 {
			return onClock(local, walls)
		}
		return utc
	}
	if utc.step < day {
		if l := onClock(local, walls); l.step == utc.step && l.weekSteps() < utc.weekSteps() && l.clearOfChanges(walls[0], walls[len(walls)-1]) {
			return l
		}
	}
	return utc
}

// clearOfChanges reports whether no working step of the wall-clock spacing
// s, on the days from wall time a to b, lies in an hour a daylight-saving
// change skips or repeats: each such step must last one step of real time.
// Across a change a step of the wall clock is not one of time (the spring
// change's 02:00 does not exist, and the autumn's 01:00 comes twice), and
// after and steps would count it wrongly; market hours are clear of the
// changes, a series with values at nearly every hour is not, and stays on
// UTC's clock. O(days · working steps a day).
func (s spacing) clearOfChanges(a, b int64) bool {
	for D := floorDiv(a, day); D <= floorDiv(b, day); D++ {
		if s.off&(1<<weekday(D*day)) != 0 {
			continue
		}
		for q := range int64(s.perDay()) {
			w := D*day + s.slot(q)*s.step
			if s.wall(s.instant(w)) != w || s.instant(w+s.step)-s.instant(w) != s.step {
				return false
			}
		}
	}
	return true
}

// onClock returns s with the step, days off, working steps and grid of
// times ts read on s's clock; sequence numbers (s.timed false) have no
// calendar: no days off, no working steps.
func onClock(s spacing, ts []int64) spacing {
	s.step = timeStep(ts, s.timed)
	if s.timed {
		s.off = weekdaysOff(ts, s.step)
		s.slots = workingSlots(ts, s.step, s.off)
	}
	if s.step > 0 && s.step <= maxGridStep && calendarMonths(s.step) == 0 && len(ts) > 0 {
		s.phase, s.grid = phaseOf(ts, s.step)
	}
	return s
}

// weekSteps returns the working steps of a week.
func (s spacing) weekSteps() int { return s.week() * s.perDay() }

// steadyTimeOfDay reports whether the times of ts keep one time of day, up
// to jitter: every one within maxDaySpread of their circular mean (a
// spread would hide the few values of the first days after a
// daylight-saving change, an hour off the others).
func steadyTimeOfDay(ts []int64) bool {
	mean, _ := circular(ts, day)
	m := int64(math.Round(mean))
	for _, t := range ts {
		if d := floorMod(t-m+day/2, day) - day/2; abs64(d) > maxDaySpread {
			return false
		}
	}
	return true
}

// maxDaySpread bounds the spread of the times of day of values that keep
// one: ten minutes, far beyond a clock's jitter, far below the hour a
// daylight-saving change moves the other clock's by.
const maxDaySpread = 10 * 60000

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
// 1/emptyShare of its days as often as on the best-covered weekday's (a
// stray record on a Saturday or two does not make Saturdays working days),
// and chance cannot explain it: were days missing independently at the
// rate r of the other weekdays (Laplace's estimate, (days with values +
// 1)/(days + 2)), a weekday that occurs k times in the span would have as
// few values with probability P(Binomial(k, r) ≤ its count); the product
// over the days off, times the sets of as many weekdays there are to test
// (7 single days, 21 pairs), must be below offChance. Clean business days
// pass over two weeks (21·(1/13)⁴ = 7·10⁻⁴ at eleven values) and with a
// holiday over four; a daily series that missed the same weekday twice in
// two and a half weeks does not (7·(1/18)² = 0.02), nor one missing a day
// in five. Each time counts at its nearest step of the series' grid, so
// that a value logged a second before midnight is the next day's.
func weekdaysOff(ts []int64, step int64) uint8 {
	if step <= 0 || step > day || day%step != 0 || len(ts) < 2 || ts[len(ts)-1]-ts[0] < minOffSpan*day {
		return 0
	}
	// Days with values (ts increase) and days in the span, by weekday.
	var seen, k [7]int
	grid := gridOf(ts, step)
	prev := int64(math.MinInt64)
	for _, t := range ts {
		if d := floorDiv(grid(t), day); d != prev {
			seen[weekday(d*day)]++
			prev = d
		}
	}
	first, last := floorDiv(grid(ts[0]), day), floorDiv(grid(ts[len(ts)-1]), day)
	for d := first; d <= min(last, first+6); d++ {
		k[weekday(d*day)] = int((last-d)/7 + 1)
	}
	best := 0.0
	for d := range 7 {
		best = max(best, float64(seen[d])/float64(k[d]))
	}
	var off uint8
	var with, days int
	for d := range 7 {
		if emptyShare*float64(seen[d]) <= best*float64(k[d]) {
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

// gridOf returns the function that moves a time to the nearest step of
// the series' grid of step, so that jitter below half a step does not move
// a value to another step or day. The grid's phase is the most common
// within a step among the first 64 times (a value logged a second early
// does not shift it).
func gridOf(ts []int64, step int64) func(int64) int64 {
	phase, _ := phaseOf(ts, step)
	return func(t int64) int64 { return phase + floorDiv(t-phase+step/2, step)*step }
}

// phaseOf returns the phase in [0, step) of the first 64 times of ts (at
// least one), and whether they keep one. The most common phase when half
// of them share it (a value logged a second early among exact ones does
// not shift it); else, when the times are off by jitter of their own (a
// few may share a millisecond, or a second, by chance), their circular
// mean, moved to the nearest whole hour, minute or second: the coarsest
// that divides the step and is within two standard errors of the mean or
// a sixtieth of the unit (a second of a minute, a minute of an hour). A
// jitter of a minute either way leaves the mean of 64 times some seconds
// off their midnight, and four times logged early (a young series') a
// second off their hour. They keep none when their spread (the circular
// standard deviation) is above an eighth of the step: values logged at
// any time of day.
func phaseOf(ts []int64, step int64) (int64, bool) {
	var phases [64]int64
	n := min(len(ts), len(phases))
	for i := range n {
		phases[i] = floorMod(ts[i], step)
	}
	slices.Sort(phases[:n])
	phase, best := phases[0], 0
	for i := 0; i < n; {
		j := i
		for j < n && phases[j] == phases[i] {
			j++
		}
		if j-i > best {
			phase, best = phases[i], j-i
		}
		i = j
	}
	if best >= 2 && 2*best >= n {
		return phase, true
	}
	mean, sd := circular(phases[:n], step)
	if sd > float64(step)/8 {
		return phases[0], false
	}
	tol := 2 * sd / math.Sqrt(float64(n))
	phase = int64(math.Round(mean))
	for _, u := range []int64{3600000, 60000, 1000} {
		if u < step && step%u == 0 {
			if r := math.Round(mean/float64(u)) * float64(u); math.Abs(mean-r) <= max(tol, float64(u)/60) {
				phase = int64(r)
				break
			}
		}
	}
	return floorMod(phase, step), true
}

// circular returns the circular mean of times mod period (in (−period/2,
// period/2]) and their circular standard deviation √(−2 ln R̄), R̄ the
// mean resultant length, both in the times' units. O(len(ts)).
func circular(ts []int64, period int64) (mean, sd float64) {
	var c, s float64
	for _, t := range ts {
		a := 2 * math.Pi * float64(floorMod(t, period)) / float64(period)
		c, s = c+math.Cos(a), s+math.Sin(a)
	}
	perRad := float64(period) / (2 * math.Pi)
	R := min(math.Hypot(c, s)/float64(len(ts)), 1)
	return math.Atan2(s, c) * perRad, math.Sqrt(-2*math.Log(R)) * perRad
}

// offChance is the probability below which weekdays or a day's steps
// without values are not taken for chance (weekdaysOff, workingSlots).
const offChance = 1e-3

// emptyShare: a weekday or a step of the day is empty when it carries
// values at most 1/emptyShare as often as the best-covered one.
const emptyShare = 4

// maxSlots is the most steps a day may have for workingSlots to look for
// empty ones: a minute's (a finer step's day is rarely half empty, and
// its counts would cost a day's worth of steps).
const maxSlots = 1440

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// workingSlots returns the steps of a working day that carry values (step
// j at j·step after midnight on the spacing's clock, counted at the
// nearest step of the series' grid), for a step that divides a day into
// at most maxSlots, when the others are empty on the working days (days
// not off) of at least minOffSpan days, as a night is in business hours'
// values: nil when every step carries values. A step is empty when it
// carries values at most 1/emptyShare as often as the best-covered step
// (a stray value or two at night does not make the night working), and
// chance cannot explain it: at the other steps' rate of values (Laplace's
// estimate) P(Binomial(days, r) ≤ its count) must be below offChance over
// the day's steps (Bonferroni). O(len(ts) + day/step).
func workingSlots(ts []int64, step int64, off uint8) []int32 {
	if step <= 0 || step >= day || day%step != 0 || day/step > maxSlots || len(ts) < 2 || ts[len(ts)-1]-ts[0] < minOffSpan*day {
		return nil
	}
	P := int(day / step)
	c := make([]int, P) // values at each step of the day
	grid := gridOf(ts, step)
	days, prev := 0, int64(math.MinInt64)
	for _, t := range ts {
		g := grid(t)
		if off&(1<<weekday(g)) != 0 {
			continue
		}
		if d := floorDiv(g, day); d != prev {
			days, prev = days+1, d
		}
		c[floorMod(g, day)/step]++
	}
	best := slices.Max(c)
	var with, cells, empty int
	for _, n := range c {
		if emptyShare*n <= best {
			empty++
		} else {
			with, cells = with+n, cells+days
		}
	}
	if empty == 0 || empty == P {
		return nil
	}
	r := float64(with+1) / float64(cells+2)
	slots := make([]int32, 0, P-empty)
	for j, n := range c {
		if emptyShare*n > best {
			slots = append(slots, int32(j))
		} else if float64(P)*binomialCDF(n, days, r) >= offChance {
			return nil
		}
	}
	return slots
}

// binomialCDF returns P(X ≤ n) for X ~ Binomial(k, r).
func binomialCDF(n, k int, r float64) float64 {
	return distuv.Binomial{N: float64(k), P: r}.CDF(float64(n))
}

// validOff reports whether off and slots can be a spacing's days off and
// working steps of a day with step: none, or one or two weekdays of a
// step of a day or one that divides a day (what weekdaysOff returns), and
// fewer than all of a day's steps, ascending (workingSlots'); after
// divides by the working steps of a day.
func validOff(off uint8, slots []int32, step int64) bool {
	divides := step > 0 && step <= day && day%step == 0
	if off != 0 && !(off&0x80 == 0 && bits.OnesCount8(off) <= 2 && divides) {
		return false
	}
	if len(slots) == 0 { // nil: the decoder's empty slice
		return true
	}
	if !divides || step == day || len(slots) >= int(day/step) {
		return false
	}
	for i, j := range slots {
		if j < 0 || int64(j) >= day/step || i > 0 && j <= slots[i-1] {
			return false
		}
	}
	return true
}

// weekday returns t's day of the week in UTC (time.Weekday).
func weekday(t int64) int { return int(time.UnixMilli(t).UTC().Weekday()) }

// looksTimed reports whether a series whose first t is t was read as
// timed by snapshots before version 19, which did not record what its t
// were: t ≥ 1e11 (March 1973 in milliseconds). Times before that were read
// as sequence numbers, without a calendar.
func looksTimed(t int64) bool { return t >= 1e11 }

// week returns the working days of a week: 7 less the days off.
func (s spacing) week() int { return 7 - bits.OnesCount8(s.off) }

// after returns the time h steps after t (ms; h < 0: before it), counted
// on the spacing's clock: t + h·step; for a calendar spacing
// (calendarMonths) h times its months later, at the same time of day and
// day of the month, or at the month's last day when t is at its month's
// (a month-end series stays at month ends) or the day does not exist
// there; with days off or working steps, the h-th working step after t
// (on days not off, at the slots' times of day). O(1) but for a binary
// search of the slots: whole weeks are counted, at most seven days walked.
func (s spacing) after(t, h int64) int64 {
	return s.instant(s.afterWall(s.wall(t), h))
}

// afterWall is after on the spacing's clock.
func (s spacing) afterWall(t, h int64) int64 {
	if s.off != 0 || s.slots != nil {
		if h == 0 {
			return t
		}
		// t is working step q of day D (Q working steps a day, at the
		// slots' times; one for a daily series), o into its step: step
		// q + h is working step q2 of the dd-th working day after D.
		Q := int64(s.perDay())
		D := floorDiv(t, day)
		j := (t - D*day) / s.step
		o := t - D*day - j*s.step
		q := s.rank(j)
		switch {
		case s.off&(1<<weekday(t)) != 0:
			// A time on a day off lies between the last step of the
			// working day before and the first of the one after: its
			// first step either way is one of those.
			if h > 0 {
				D, q, h = D+s.workingDays(t, 1), 0, h-1
			} else {
				D, q, h = D+s.workingDays(t, -1), Q-1, h+1
			}
		case !s.works(j):
			// So does a time at a slot without values, between the
			// working slots around it (q of them before it).
			if h > 0 {
				h--
			} else {
				q, h = q-1, h+1
			}
		}
		total := q + h
		dd := floorDiv(total, Q)
		return (D+s.workingDays(D*day, dd))*day + s.slot(total-dd*Q)*s.step + o
	}
	m := calendarMonths(s.step)
	if m == 0 {
		return satAddMul(t, h, s.step)
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
	if s.off != 0 || s.slots != nil {
		// The working steps in (a, t], t rounded to a's grid: those of
		// the working days from a's to t's (t's excluded), and of t's day
		// up to t less those of a's up to a (none on a day off).
		k := stepsBetween(a, t, s.step)
		tr := a + int64(k)*s.step
		Da, Dt := floorDiv(a, day), floorDiv(tr, day)
		n := s.workingBetween(Da-1, Dt-1)*int64(s.perDay()) + s.upTo(tr) - s.upTo(a)
		return uint64(max(n, 0))
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
// none): the spacing assumed for forecast timestamps; for times (timed),
// niceStep of it.
func timeStep(t []int64, timed bool) int64 {
	d := make([]int64, 0, len(t))
	for i := 1; i < len(t); i++ {
		d = append(d, t[i]-t[i-1])
	}
	if len(d) == 0 {
		return 1
	}
	slices.Sort(d)
	m := max(d[len(d)/2], 1)
	if timed {
		return niceStep(m)
	}
	return m
}

// niceStep returns the multiple of the coarsest of a day, an hour, a
// minute and a second within stepTolerance of d, or d when none is. Times
// logged with jitter (a clock read a little early or late) have a median
// difference a little off their step (3 600 035 ms for hourly values
// logged within ±2 s, 300 of them), and forecast steps a little off would
// drift off the hour by that much a step. A median that is not a
// calendar step (calendarMonths) is not rounded into one, nor one out.
func niceStep(d int64) int64 {
	for _, u := range []int64{day, 3600000, 60000, 1000} {
		k := (d + u/2) / u
		if k >= 1 && float64(abs64(d-k*u)) <= stepTolerance*float64(d) && calendarMonths(k*u) == calendarMonths(d) {
			return k * u
		}
	}
	return d
}

// stepTolerance is how far, relative to the step, a median difference of
// jittered times may be from the step it is rounded to: 1 %, 36 s of an
// hour, far beyond the median's error under a jitter of a few seconds and
// below any irregular step worth keeping (a step of 59.5 s would be read
// as a minute's).
const stepTolerance = 0.01

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// nilIfEmpty returns s, or nil when it is empty (a decoded nil slice).
func nilIfEmpty(s []int32) []int32 {
	if len(s) == 0 {
		return nil
	}
	return s
}

// satAddMul returns t + h·step (h ≥ 0, step > 0), saturated at the int64
// limits: a forecast step of an absurd spacing (two times 2^54 ms apart)
// is dated at the end of time, not wrapped around to before its origin.
func satAddMul(t, h, step int64) int64 {
	if h > 0 && step > (math.MaxInt64-max(t, 0))/h {
		return math.MaxInt64
	}
	return t + h*step
}

// maxRegularGap is the longest gap, in missing steps, that regularised
// fills: a longer one (an outage of days in an hourly series) would be a
// guess in place of several cycles, and stays closed.
const maxRegularGap = 64

// regularised returns the samples ys at times ts (inputs us, nu per
// sample) with the missing steps of each gap of at most maxRegularGap
// steps on sp's grid inserted at their steps' times, so that a lag is the
// same time back in every sample the fit sees. A missing y is interpolated
// linearly in steps between the gap's ends, or, with a season of period
// s > 0 whose values a season back are all known and in time (no gap
// kept closed among them), its value a season back plus the seasonal
// difference y − y₋ₛ interpolated so (a missing Monday is last Monday
// moved by the change in level), kept within the range of the values
// (a positive series stays positive); inputs linearly. The fills are
// samples like the others (targets too). When they would be more than a
// third of the samples (times mostly off the grid, or a series young
// enough that its nights are not yet known as such), none are made:
// guesses would outweigh values. Without fills (or without a step) it
// returns its arguments themselves. O(len(ys)·nu + the steps inserted).
func regularised(sp spacing, ys, us []float64, ts []int64, nu, s int) (rys, rus []float64, rts []int64) {
	if sp.step <= 0 || len(ts) != len(ys) || len(ys) == 0 {
		return ys, us, ts
	}
	miss := make([]uint64, len(ts)) // the steps missing before sample k
	extra := 0
	for k := 1; k < len(ts); k++ {
		if n := sp.steps(sp.onGrid(ts[k-1]), sp.onGrid(ts[k])); n > 1 {
			miss[k] = n - 1
		}
		if miss[k] <= maxRegularGap {
			extra += int(miss[k])
		}
	}
	if extra == 0 || 2*extra > len(ys) {
		return ys, us, ts
	}
	lo, hi := slices.Min(ys), slices.Max(ys)
	n := len(ys) + extra
	rys, rus, rts = make([]float64, 0, n), make([]float64, 0, n*nu), make([]int64, 0, n)
	inTime := 0 // the first sample after the last gap kept closed
	for k := range ys {
		if k > 0 {
			g := int(miss[k])
			if miss[k] > maxRegularGap { // kept closed
				g, inTime = 0, len(rys)
			}
			a := len(rys) - 1 // the gap's ends: a, and b = a + g + 1
			t0 := sp.onGrid(ts[k-1])
			seasonal := s > 0 && a-s >= inTime && g < s // y₋ₛ of every step to b known by then, in time
			for j := 1; j <= g; j++ {
				f := float64(j) / float64(g+1)
				y := ys[k-1] + f*(ys[k]-ys[k-1])
				if seasonal {
					da, db := ys[k-1]-rys[a-s], ys[k]-rys[a+g+1-s]
					y = min(max(rys[a+j-s]+da+f*(db-da), lo), hi)
				}
				rys = append(rys, y)
				for i := range nu {
					u0, u1 := us[(k-1)*nu+i], us[k*nu+i]
					rus = append(rus, u0+f*(u1-u0))
				}
				rts = append(rts, sp.after(t0, int64(j)))
			}
		}
		rys = append(rys, ys[k])
		rus = append(rus, us[k*nu:(k+1)*nu]...)
		rts = append(rts, ts[k])
	}
	return rys, rus, rts
}
