package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/calendar"
)

func TestReadPlain(t *testing.T) {
	s, err := readSeries(strings.NewReader("# laser\n86\n\n141\r\n 95 \n# end\n"), columns{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.y, []float64{86, 141, 95}) || !slices.Equal(s.t, []int64{1, 2, 3}) ||
		!slices.Equal(s.line, []int{2, 4, 5}) || s.nu != 0 {
		t.Errorf("got y %v t %v lines %v", s.y, s.t, s.line)
	}
}

func TestReadCSV(t *testing.T) {
	const in = "date, temp ,load,flag\n" +
		"1997-01-01,0.5,797,1\n" +
		"1997-01-02,-1.5,704,0\n" +
		"1997-01-03,2,,0\n" + // trailing empty y cells end the series
		"1997-01-04,3,,1\n"
	s, err := readSeries(strings.NewReader(in), columns{y: "load", inputs: []string{"temp", "3"}, time: "0"})
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(1997, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	if !slices.Equal(s.y, []float64{797, 704}) || !slices.Equal(s.t, []int64{day, day + 86400000}) || !s.timed ||
		s.nu != 2 || !slices.Equal(s.u, []float64{0.5, 1, -1.5, 0}) || !slices.Equal(s.line, []int{2, 3}) {
		t.Errorf("got y %v t %v u %v lines %v", s.y, s.t, s.u, s.line)
	}
	if got := s.inputs(1); !slices.Equal(got, []float64{-1.5, 0}) {
		t.Errorf("inputs(1) = %v", got)
	}

	// One column besides the time: it is y by default; t is RFC 3339.
	s, err = readSeries(strings.NewReader("t,v\n2024-05-01T00:00:00Z,1\n2024-05-01T00:00:01.5Z,2\n"), columns{time: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.y, []float64{1, 2}) || s.t[1]-s.t[0] != 1500 || !s.timed {
		t.Errorf("got y %v t %v", s.y, s.t)
	}
}

// The time column is read as the daemon reads t: integers in
// model.time_unit, timestamps whatever the unit.
func TestReadCSVTimeUnit(t *testing.T) {
	const in = "t,y\n1735084800,1\n1735088400,2\n"
	xmas := time.Date(2024, 12, 25, 0, 0, 0, 0, time.UTC).UnixMilli()
	for _, tc := range []struct {
		unit  calendar.Unit
		t     []int64
		timed bool
	}{
		{calendar.Sequence, []int64{1735084800, 1735088400}, false},
		{calendar.Seconds, []int64{xmas, xmas + 3600_000}, true},
		{calendar.Millis, []int64{1735084800, 1735088400}, true},
	} {
		s, err := readSeries(strings.NewReader(in), columns{time: "t", unit: tc.unit})
		if err != nil || !slices.Equal(s.t, tc.t) || s.timed != tc.timed {
			t.Errorf("%v: t %v timed %v (%v), want %v %v", tc.unit, s.t, s.timed, err, tc.t, tc.timed)
		}
	}
	// A calendar needs times: sequence numbers and plain files are refused,
	// with the keys to change; dates pass.
	for _, tc := range []struct {
		in   string
		cols columns
		want string
	}{
		{in, columns{time: "t", needTime: true}, "--time t holds sequence numbers"},
		{"1\n2\n", columns{needTime: true}, "t is the sample number"},
		{"y\n1\n2\n", columns{needTime: true}, "model.time_unit: ms or s"},
	} {
		if _, err := readSeries(strings.NewReader(tc.in), tc.cols); err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, errData) {
			t.Errorf("%q with a calendar: %v, want an errData containing %q", tc.in, err, tc.want)
		}
	}
	if s, err := readSeries(strings.NewReader("d,y\n2024-12-25,1\n"), columns{time: "d", needTime: true}); err != nil || s.t[0] != xmas {
		t.Errorf("dates with a calendar: %v, %v", s, err)
	}
	// The model section sets both.
	c, err := ParseConfig([]byte("model: {time_unit: s, calendar: {features: [month]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cols := columns{time: "t"}
	cols.fromModel(&c.Model)
	if cols.unit != calendar.Seconds || !cols.needTime {
		t.Errorf("fromModel: unit %v needTime %v", cols.unit, cols.needTime)
	}
	if s, err := readSeries(strings.NewReader(in), cols); err != nil || s.t[0] != xmas {
		t.Errorf("seconds with a calendar: %v, %v", s, err)
	}
}

// A missing value (NA, NaN, null; an empty CSV cell) is a gap: no sample,
// its t skipped, in a plain file and a CSV file, with or without a time
// column; a missing sample's inputs and truth are not read; trailing empty
// cells still end a CSV series.
func TestReadSeriesMissingValues(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		cols     columns
		y        []float64
		t        []int64
	}{
		{"plain", "1\nNA\n3\nnull\nnan\n6\n", columns{}, []float64{1, 3, 6}, []int64{1, 3, 6}},
		{"plain, first missing", "NA\n2\n", columns{}, []float64{2}, []int64{2}},
		{"CSV with t", "t,y\n10,1\n20,\n30,NA\n40,4\n", columns{time: "t"}, []float64{1, 4}, []int64{10, 40}},
		{"CSV without t", "y\n1\nNaN\n3\n", columns{}, []float64{1, 3}, []int64{1, 3}},
		{"CSV, inputs of a missing row", "x,y\n1,1\nNA,NA\n3,3\n", columns{y: "y", inputs: []string{"x"}}, []float64{1, 3}, []int64{1, 3}},
		{"CSV, trailing empties", "t,y\n1,1\n2,\n3,3\n4,\n5,\n", columns{time: "t"}, []float64{1, 3}, []int64{1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := readSeries(strings.NewReader(tc.in), tc.cols)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.y, tc.y) || !slices.Equal(s.t, tc.t) || len(s.u) != s.nu*len(s.y) {
				t.Errorf("y %v t %v u %v, want y %v t %v", s.y, s.t, s.u, tc.y, tc.t)
			}
			for k, tk := range s.t {
				if j, ok := s.at(tk, 0); !ok || j != k {
					t.Errorf("at(%d) = %d, %v; want %d", tk, j, ok, k)
				}
			}
			if _, ok := s.at(s.t[len(s.t)-1]+1, 0); ok {
				t.Error("at a t after the last sample found one")
			}
		})
	}
}

func TestReadSeriesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		cols     columns
		want     string
		isData   bool
	}{
		{"empty", "# only a comment\n\n", columns{}, "no data", true},
		{"not a number", "1\n2\nthree\n", columns{}, "line 3", true},
		{"not finite", "1\ninf\n", columns{}, "line 2", true},
		{"columns on a plain file", "1\n2\n", columns{y: "x"}, "CSV", true},
		{"empty y inside", "y\n1\n\n3\n", columns{}, "", true}, // blank CSV lines are skipped: no error expected
		{"empty truth cell", "t,y,c\n1,1,1\n2,2,\n3,3,3\n", columns{y: "y", truth: "c"}, "line 3: column c is missing", true},
		{"NA truth cell", "t,y,c\n1,1,1\n2,2,NA\n", columns{y: "y", truth: "c"}, "line 3: column c is missing", true},
		{"t not increasing", "t,y\n1,1\n3,2\n2,3\n", columns{time: "t"}, "line 4: column t: t 2 is not after the previous row's 3", true},
		{"t repeated by a missing row", "t,y\n1,1\n2,NA\n2,3\n", columns{time: "t"}, "line 4: column t: t 2 is not after", true},
		{"bad input beside a value", "x,y\nNA,1\n", columns{y: "y", inputs: []string{"x"}}, "line 2: column x", true},
		{"empty input", "x,y\n,1\n", columns{y: "y", inputs: []string{"x"}}, "line 2: column x", true},
		{"ragged row", "x,y\n1,2\n3\n", columns{y: "y"}, "line 3", true},
		{"bad time", "t,y\nmonday,1\n", columns{time: "t"}, "monday", true},
		{"seconds overflow", "t,y\n9223372036854776,1\n", columns{time: "t", unit: calendar.Seconds}, "line 2: column t: 9223372036854776 seconds overflow", true},
		{"mixed kinds of t", "t,y\n1,1\n2024-12-25,2\n", columns{time: "t"}, `line 3: column t: "2024-12-25" is a time but the first row's t is a sequence number`, true},
		{"no such column", "a,b\n1,2\n", columns{y: "c"}, "no such column", false},
		{"semicolons", "t;y\n2024-03-04;211,813\n", columns{y: "y", time: "t"}, "its header looks separated by another character", false},
		{"index out of range", "a,b\n1,2\n", columns{y: "2"}, "no such column", false},
		{"y is an input", "a,b\n1,2\n", columns{y: "a", inputs: []string{"a"}}, "both", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readSeries(strings.NewReader(tc.in), tc.cols)
			if tc.want == "" {
				if err != nil {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v does not contain %q", err, tc.want)
			}
			if errors.Is(err, errData) != tc.isData {
				t.Errorf("errors.Is(err, errData) = %v, want %v", !tc.isData, tc.isData)
			}
		})
	}
}

// TestAtWithin: at finds the sample nearest t within the tolerance, the
// nearer of two on either side, and none beyond it.
func TestAtWithin(t *testing.T) {
	s := &series{t: []int64{100, 198, 305, 400}, y: []float64{1, 2, 3, 4}}
	for _, c := range []struct {
		t, tol int64
		want   int
		ok     bool
	}{
		{200, 0, 0, false}, {200, 2, 1, true}, {200, 1, 0, false}, {300, 49, 2, true}, {252, 60, 2, true},
		{250, 60, 1, true}, {95, 5, 0, true}, {94, 5, 0, false}, {450, 49, 0, false}, {405, 5, 3, true},
	} {
		j, ok := s.at(c.t, c.tol)
		if ok != c.ok || (ok && j != c.want) {
			t.Errorf("at(%d, %d) = %d, %v; want %d, %v", c.t, c.tol, j, ok, c.want, c.ok)
		}
	}
}

// A UTF-8 byte-order mark (a spreadsheet's export) is not part of the
// first value of a plain file, nor of the first column's name.
func TestReadByteOrderMark(t *testing.T) {
	s, err := readSeries(strings.NewReader("\ufeff1\n2\n3\n"), columns{})
	if err != nil || !slices.Equal(s.y, []float64{1, 2, 3}) {
		t.Errorf("plain: %v, %v", s, err)
	}
	s, err = readSeries(strings.NewReader("\ufefft,y\n1,5\n2,6\n"), columns{time: "t", y: "y"})
	if err != nil || !slices.Equal(s.y, []float64{5, 6}) || !slices.Equal(s.t, []int64{1, 2}) {
		t.Errorf("CSV: %v, %v", s, err)
	}
}

// In a one-column CSV a blank line is the empty cell of a missing value, a
// gap in t, as NA or "" are (encoding/csv alone would skip it and shift
// every later t); blank lines before the header are not values.
func TestReadOneColumnBlankLine(t *testing.T) {
	for _, in := range []string{"y\n1\n2\n\n4\n", "\n# c\ny\n1\n2\n\"\"\n4\n", "y\r\n1\r\n2\r\n\r\n4\r\n", "y\n1\n2\nNA\n4\n"} {
		s, err := readSeries(strings.NewReader(in), columns{y: "y"})
		if err != nil || !slices.Equal(s.y, []float64{1, 2, 4}) || !slices.Equal(s.t, []int64{1, 2, 4}) {
			t.Errorf("%q: %v, %v", in, s, err)
		}
	}
}
