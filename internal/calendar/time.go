package calendar

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unit says what an integer time is: a sequence number (no time at all) or
// a Unix time in milliseconds or seconds.
type Unit int

// The units of an integer t. The zero value is Sequence.
const (
	Sequence Unit = iota // a sequence number: an order, not a time
	Millis               // Unix milliseconds
	Seconds              // Unix seconds
)

var unitNames = [...]string{Sequence: "sequence", Millis: "ms", Seconds: "s"}

// ParseUnit returns the Unit named sequence, ms or s.
func ParseUnit(name string) (Unit, error) {
	for u, n := range unitNames {
		if n == name {
			return Unit(u), nil
		}
	}
	return 0, fmt.Errorf("unknown time unit %q (want sequence, ms or s)", name)
}

// String returns the unit's name, as ParseUnit reads it.
func (u Unit) String() string {
	if u < 0 || int(u) >= len(unitNames) {
		return fmt.Sprintf("Unit(%d)", int(u))
	}
	return unitNames[u]
}

// timestampLayouts are the text forms of a time, tried in order. Parsing
// accepts fractional seconds after the seconds of any of them. All but the
// first have no zone and are read as UTC. Times to the minute and months
// (ISO 8601's reduced precision, as spreadsheets and monthly data sets
// write them: "1949-01") are the first of their minute or month.
var timestampLayouts = [...]string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05",
	"2006-01-02T15:04", "2006-01-02 15:04", time.DateOnly, "2006-01"}

// ParseTime reads a sample's time t, in one of two kinds:
//
//   - an integer (decimal, optional sign): with unit Sequence a sequence
//     number, returned as is with isTime false; with Millis or Seconds a
//     Unix time, returned in Unix milliseconds with isTime true. Seconds
//     whose milliseconds overflow int64 are an error, not a wrapped value;
//   - a timestamp, whatever the unit: RFC 3339 with or without fractional
//     seconds ("2024-12-25T06:30:00Z", "2024-12-25T06:30:00.5+01:00"),
//     "2006-01-02T15:04:05" or "2006-01-02 15:04:05" (UTC), the same to the
//     minute ("2006-01-02 15:04"), an ISO date YYYY-MM-DD (midnight UTC) or
//     a month YYYY-MM (its first day); returned in Unix milliseconds (fractions of
//     a millisecond truncated toward the past), isTime true.
//
// A time in milliseconds feeds the calendar features; a sequence number has
// no calendar. Anything else is an error that quotes s. s does not escape
// (errors hold a copy), so a caller may pass string(b) of a byte slice
// without allocating on success.
func ParseTime(s string, unit Unit) (t int64, isTime bool, err error) {
	// A timestamp is not tried as an integer: strconv's error would cost it
	// two allocations.
	if integerShape(s) {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return fromInteger(s, v, unit)
		}
	}
	if t, err := ParseTimestamp(s); err == nil {
		return t, true, nil
	}
	return 0, false, fmt.Errorf("%q is not an integer, an RFC 3339 time, a date YYYY-MM-DD or a month YYYY-MM", strings.Clone(s))
}

// fromInteger is ParseTime of the integer v, written s.
func fromInteger(s string, v int64, unit Unit) (int64, bool, error) {
	switch unit {
	case Sequence:
		return v, false, nil
	case Millis:
		return v, true, nil
	case Seconds:
		if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
			return 0, false, fmt.Errorf("%s seconds overflow int64 milliseconds", strings.Clone(s))
		}
		return v * 1000, true, nil
	}
	return 0, false, fmt.Errorf("calendar: unknown time unit %d", int(unit))
}

// integerShape reports whether s is an optional sign and decimal digits.
func integerShape(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ParseTimestamp reads the timestamp forms of ParseTime only (not an
// integer) into Unix milliseconds: for a field whose type already says it
// holds text, such as a JSON string.
func ParseTimestamp(s string) (int64, error) {
	if norm, ok := timestampShape(s); ok {
		for _, layout := range timestampLayouts {
			if ts, err := time.Parse(layout, norm); err == nil {
				return ts.UnixMilli(), nil
			}
		}
	}
	return 0, fmt.Errorf("%q is not an RFC 3339 time, a date YYYY-MM-DD or a month YYYY-MM", strings.Clone(s))
}

// timestampShape checks s against the grammar of the timestamp forms —
// YYYY-MM[-DD[(T|t| )hh:mm[:ss[.f…][Z|z|±hh:mm]]]], every field of its
// width, an offset's hours at most 23 and minutes at most 59 — and returns
// it as time.Parse's layouts read it: a lower-case t or z (RFC 3339 §5.6
// allows them) upper-cased, and a space before a time with a zone made a
// T (§5.6's note allows the space). time.Parse alone, when its RFC 3339
// path fails, falls back to a lenient reading that takes one-digit hours
// and offsets of +24:00 or +00:60. The string is copied only when changed.
func timestampShape(s string) (string, bool) {
	digits := func(i, n int) bool {
		if i+n > len(s) {
			return false
		}
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	two := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	if !digits(0, 4) || len(s) < 7 || s[4] != '-' || !digits(5, 2) {
		return "", false
	}
	if len(s) == 7 {
		return s, true
	}
	if s[7] != '-' || !digits(8, 2) {
		return "", false
	}
	if len(s) == 10 {
		return s, true
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' || !digits(11, 2) || len(s) < 16 || s[13] != ':' || !digits(14, 2) {
		return "", false
	}
	i := 16
	if i < len(s) { // seconds, a fraction, a zone
		if s[i] != ':' || !digits(i+1, 2) {
			return "", false
		}
		i += 3
		if i < len(s) && s[i] == '.' { // a fraction: at least one digit
			if !digits(i+1, 1) {
				return "", false
			}
			for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			}
		}
	}
	zone := s[i:]
	switch {
	case zone == "":
	case zone == "Z" || zone == "z":
	case len(zone) == 6 && (zone[0] == '+' || zone[0] == '-') && digits(i+1, 2) && zone[3] == ':' && digits(i+4, 2):
		if two(i+1) > 23 || two(i+4) > 59 {
			return "", false
		}
	default:
		return "", false
	}
	if s[10] == 'T' && zone != "z" || zone == "" && s[10] != 't' {
		return s, true
	}
	b := []byte(s)
	b[10] = 'T'
	if zone == "z" {
		b[len(b)-1] = 'Z'
	}
	return string(b), true
}

// UnitHint returns a hint when integer Unix times t (milliseconds, as
// ParseTime returns them) read in unit look like the other unit's: in
// milliseconds, all before 1973-03-03 (1e11 ms), where epoch seconds of
// any recent date fall; in seconds, all after the year 5138 (1e14 ms),
// where epoch milliseconds read as seconds fall; as sequence numbers, all
// from 1973-03-03 to 5138 as milliseconds, where epoch milliseconds fall
// (sequence numbers have no calendar: no seasons from the time step, no
// days off). "" otherwise. lo and hi are the smallest and largest t.
func UnitHint(lo, hi int64, unit Unit) string {
	switch {
	case unit == Sequence && lo >= 1e11 && hi < 1e14:
		return "the integer t look like Unix milliseconds; with model.time_unit: sequence they are sequence numbers, without a calendar; if they are times, set model.time_unit: ms"
	case unit == Millis && lo >= 0 && hi < 1e11:
		return "the integer times are all before 1973-03-03 as milliseconds; if they are Unix seconds, set model.time_unit: s"
	case unit == Seconds && lo > 1e14:
		return "the integer times are all after the year 5138 as seconds; if they are Unix milliseconds, set model.time_unit: ms"
	}
	return ""
}
