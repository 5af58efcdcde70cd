package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
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
	if !slices.Equal(s.y, []float64{797, 704}) || !slices.Equal(s.t, []int64{day, day + 86400000}) ||
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
	if !slices.Equal(s.y, []float64{1, 2}) || s.t[1]-s.t[0] != 1500 {
		t.Errorf("got y %v t %v", s.y, s.t)
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
		{"not finite", "1\nNaN\n", columns{}, "line 2", true},
		{"columns on a plain file", "1\n2\n", columns{y: "x"}, "CSV", true},
		{"empty y inside", "y\n1\n\n3\n", columns{}, "", true}, // blank CSV lines are skipped: no error expected
		{"empty y cell inside", "t,y\n1,1\n2,\n3,3\n", columns{y: "y"}, "line 3", true},
		{"empty input", "x,y\n,1\n", columns{y: "y", inputs: []string{"x"}}, "line 2: column x", true},
		{"ragged row", "x,y\n1,2\n3\n", columns{y: "y"}, "line 3", true},
		{"bad time", "t,y\nmonday,1\n", columns{time: "t"}, "monday", true},
		{"no such column", "a,b\n1,2\n", columns{y: "c"}, "no such column", false},
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
