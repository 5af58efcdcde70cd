package calendar

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	xmas := time.Date(2024, 12, 25, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		in     string
		unit   Unit
		want   int64
		isTime bool
	}{
		{"1037", Sequence, 1037, false},
		{"-5", Sequence, -5, false},
		{"1735084800000", Millis, xmas, true},
		{"1735084800", Seconds, xmas, true},
		{"-1", Seconds, -1000, true},
		{"2024-12-25", Sequence, xmas, true}, // a timestamp whatever the unit
		{"2024-12-25", Seconds, xmas, true},
		{"2024-12-25T00:00:00Z", Sequence, xmas, true},
		{"2024-12-25T01:00:00+01:00", Millis, xmas, true},
		{"2024-12-25T00:00:00.5Z", Sequence, xmas + 500, true},
		{"2024-12-25T00:00:00.123456789Z", Sequence, xmas + 123, true},
		{"2024-12-25T06:30:00", Sequence, xmas + 6*3600_000 + 1800_000, true}, // no zone: UTC
		{"2024-12-25 06:30:00", Sequence, xmas + 6*3600_000 + 1800_000, true},
		{"2024-12-25 06:30:00.25", Sequence, xmas + 6*3600_000 + 1800_000 + 250, true},
		{"2024-12-25 06:30", Sequence, xmas + 6*3600_000 + 1800_000, true}, // to the minute
		{"2024-12-25T06:30", Millis, xmas + 6*3600_000 + 1800_000, true},
		{"2024-12", Sequence, time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), true}, // a month: its first day
		{"1949-01", Seconds, time.Date(1949, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), true},
		{"1969-12-31T23:59:59.9995Z", Sequence, -1, true}, // truncated toward the past
		{strconv.FormatInt(math.MaxInt64/1000, 10), Seconds, math.MaxInt64 / 1000 * 1000, true},
		{strconv.FormatInt(math.MaxInt64, 10), Millis, math.MaxInt64, true},
	} {
		got, isTime, err := ParseTime(tc.in, tc.unit)
		if err != nil || got != tc.want || isTime != tc.isTime {
			t.Errorf("ParseTime(%q, %v) = %d, %v, %v; want %d, %v", tc.in, tc.unit, got, isTime, err, tc.want, tc.isTime)
		}
	}
	for _, tc := range []struct {
		in   string
		unit Unit
		want string
	}{
		{"monday", Sequence, `"monday" is not an integer`},
		{"1.5", Millis, `"1.5"`},
		{"1e3", Sequence, `"1e3"`},
		{" 5", Sequence, `" 5"`},
		{"", Sequence, `""`},
		{"2024-13-01", Sequence, `"2024-13-01"`},
		{"2024-13", Sequence, `"2024-13"`},
		{"2024-1", Sequence, `"2024-1"`},
		{"24-12", Sequence, `"24-12"`},
		{"9223372036854775808", Sequence, "9223372036854775808"}, // beyond int64
		{strconv.FormatInt(math.MaxInt64/1000+1, 10), Seconds, "overflow"},
		{strconv.FormatInt(math.MinInt64/1000-1, 10), Seconds, "overflow"},
		{"5", Unit(9), "unknown time unit"},
	} {
		if got, isTime, err := ParseTime(tc.in, tc.unit); err == nil || !strings.Contains(err.Error(), tc.want) || got != 0 || isTime {
			t.Errorf("ParseTime(%q, %v) = %d, %v, %v; want an error containing %q", tc.in, tc.unit, got, isTime, err, tc.want)
		}
	}
	if _, err := ParseTimestamp("1037"); err == nil {
		t.Error("ParseTimestamp accepts an integer")
	}
}

func TestParseUnit(t *testing.T) {
	for _, u := range []Unit{Sequence, Millis, Seconds} {
		if got, err := ParseUnit(u.String()); err != nil || got != u {
			t.Errorf("ParseUnit(%q) = %v, %v", u.String(), got, err)
		}
	}
	if _, err := ParseUnit("ns"); err == nil || !strings.Contains(err.Error(), "sequence, ms or s") {
		t.Errorf("ParseUnit(ns): %v", err)
	}
}

// FuzzParseTime: no input panics; an integer is what strconv reads, scaled
// exactly by its unit or refused when the scaling overflows (checked in
// big.Int); any other accepted input is a timestamp, the same whatever the
// unit, and ParseTimestamp agrees with it; every error quotes the input.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"1037", "-5", "1735084800", "9223372036854775", "9223372036854776", "-9223372036854776",
		"2024-12-25", "2024-12-25T00:00:00Z", "2024-12-25T00:00:00.5+01:00", "2024-12-25 06:30:00", "2024-12-25T06:30:00",
		"+7", "0x10", "1_000", "", " 5", "monday", "2024-02-30"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, u uint8) {
		unit := Unit(u % 3)
		got, isTime, err := ParseTime(s, unit)
		if v, ierr := strconv.ParseInt(s, 10, 64); ierr == nil {
			want := new(big.Int).SetInt64(v)
			if unit == Seconds {
				want.Mul(want, big.NewInt(1000))
			}
			switch {
			case !want.IsInt64():
				if err == nil {
					t.Fatalf("ParseTime(%q, %v) = %d: the scaled value %v overflows int64", s, unit, got, want)
				}
			case err != nil || got != want.Int64() || isTime != (unit != Sequence):
				t.Fatalf("ParseTime(%q, %v) = %d, %v, %v; want %v, %v", s, unit, got, isTime, err, want, unit != Sequence)
			}
			return
		}
		ts, terr := ParseTimestamp(s)
		if (err == nil) != (terr == nil) || err == nil && (got != ts || !isTime) {
			t.Fatalf("ParseTime(%q, %v) = %d, %v, %v; ParseTimestamp %d, %v", s, unit, got, isTime, err, ts, terr)
		}
		for other := range Unit(3) {
			if g, it, e := ParseTime(s, other); g != got || it != isTime || (e == nil) != (err == nil) {
				t.Fatalf("ParseTime(%q) depends on the unit for a timestamp: %v gives %d, %v; %v gives %d, %v", s, unit, got, err, other, g, e)
			}
		}
		if err != nil && !strings.Contains(err.Error(), strconv.Quote(s)) {
			t.Fatalf("error %q does not quote the input %q", err, s)
		}
	})
}

// RFC 3339's lower-case t and z, and a space before a time with a zone
// (§5.6 and its note), read as the upper-case T form; forms time.Parse's
// lenient fallback would take — one-digit hours, an offset's hours of 24
// or minutes of 60, fields of the wrong width — are refused.
func TestParseTimestampStrictRFC3339(t *testing.T) {
	want, err := ParseTimestamp("2024-12-25T06:30:00Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"2024-12-25t06:30:00z", "2024-12-25T06:30:00z", "2024-12-25t06:30:00Z", "2024-12-25 06:30:00Z",
		"2024-12-25T07:30:00+01:00", "2024-12-25 01:00:00-05:30"} {
		got, err := ParseTimestamp(s)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := ParseTimestamp("2024-12-25t06:30"); err != nil || got != want {
		t.Errorf("lower-case t to the minute: %v, %v", got, err)
	}
	if got, err := ParseTimestamp("2024-12-25T06:30:00.250z"); err != nil || got != want+250 {
		t.Errorf("fraction and z: %v, %v", got, err)
	}
	for _, s := range []string{"2024-12-25T06:30:00+00:60", "2024-12-25T06:30:00+24:00", "2024-12-25T6:30:00Z",
		"2024-12-25T6:30", "2024-12-25 6:30:00", "2024-1-25", "2024-12-5", "24-12-25", "2024-12-25T06:30Z",
		"2024-12-25T06:30:00.Z", "2024-12-25T06:30:00+0100", "2024-12-25x06:30:00Z", "2024-12-25T06:30:00.5.5Z"} {
		if got, err := ParseTimestamp(s); err == nil {
			t.Errorf("%q: taken as %v", s, got)
		}
	}
}

// A timestamp in UTC read from a byte slice (string(b), which does not
// escape) allocates nothing on success; its lower-case form one copy.
// (An offset other than Z costs time.Parse its zone.)
func TestParseTimeDoesNotAllocate(t *testing.T) {
	b := []byte("2024-12-25T06:30:00.5Z")
	if n := testing.AllocsPerRun(100, func() { ParseTime(string(b), Millis) }); n != 0 {
		t.Errorf("%v allocations per timestamp", n)
	}
	i := []byte("1735108200000")
	if n := testing.AllocsPerRun(100, func() { ParseTime(string(i), Millis) }); n != 0 {
		t.Errorf("%v allocations per timestamp", n)
	}
	lower := []byte("2024-12-25t06:30:00.5z")
	if n := testing.AllocsPerRun(100, func() { ParseTime(string(lower), Millis) }); n > 1 {
		t.Errorf("%v allocations per lower-case timestamp", n)
	}
}

// UnitHint: epoch seconds read as milliseconds fall before 1973-03-03 (1e11
// ms), epoch milliseconds read as seconds after the year 5138 (1e14 ms);
// times in range, sequence numbers and a span that reaches the range get
// no hint.
func TestUnitHint(t *testing.T) {
	const sec2024, ms2024 = int64(1_704_067_200), int64(1_704_067_200_000)
	for _, c := range []struct {
		lo, hi int64
		unit   Unit
		want   string // a substring; "" for no hint
	}{
		{sec2024, sec2024 + 3600, Millis, "model.time_unit: s"},
		{ms2024, ms2024 + 3_600_000, Millis, ""},
		{ms2024 * 1000, (ms2024 + 3_600_000) * 1000, Seconds, "model.time_unit: ms"},
		{ms2024, ms2024 + 3_600_000, Seconds, ""},
		{-5, 1e12, Millis, ""},
		{sec2024, sec2024 + 3600, Sequence, ""},
		{ms2024, ms2024 + 3_600_000, Sequence, "model.time_unit: ms"},
		{1, 1000, Sequence, ""},
	} {
		got := UnitHint(c.lo, c.hi, c.unit)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("UnitHint(%d, %d, %v) = %q, want %q", c.lo, c.hi, c.unit, got, c.want)
		}
	}
}
