package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLoadHalfHours: each day's 48 columns become 48 values half an hour
// apart from its midnight, the days in order; a day missing, a column short
// or a cell not a number is refused.
func TestLoadHalfHours(t *testing.T) {
	day := func(date string, base int) string {
		cells := []string{date, "0", "1"}
		for k := range loadPerDay {
			cells = append(cells, strconv.Itoa(base+k))
		}
		return strings.Join(append(cells, "999"), ",") // the day's maximum

	}
	head := "date,Holiday,Weekday"
	for k := range loadPerDay {
		head += ",h" + strconv.Itoa(k)
	}
	head += ",daily_max"
	ts, ys, err := loadHalfHours(strings.NewReader(head + "\n" + day("1998-12-31", 100) + "\n" + day("1999-01-01", 200) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ys) != 2*loadPerDay || ys[0] != 100 || ys[loadPerDay-1] != 147 || ys[loadPerDay] != 200 {
		t.Fatalf("values %v", ys)
	}
	start := time.Date(1998, 12, 31, 0, 0, 0, 0, time.UTC).UnixMilli()
	for k, tk := range ts {
		if want := start + int64(k)*30*60_000; tk != want {
			t.Fatalf("time %d: %d, want %d", k, tk, want)
		}
	}
	for name, body := range map[string]string{
		"a day missing": day("1998-12-30", 0) + "\n" + day("1999-01-01", 0),
		"a short row":   "1998-12-30,0,1,5",
		"not a number":  strings.Replace(day("1998-12-30", 0), ",5,", ",x,", 1),
		"not finite":    strings.Replace(day("1998-12-30", 0), ",5,", ",NaN,", 1),
	} {
		if _, _, err := loadHalfHours(strings.NewReader(head + "\n" + body + "\n")); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLoadCutsAndMAPE: the origins are loadOrigins midnights loadEvery
// days apart, in order, the last a day before the end, each training on
// every value before it; MAPE is over the values forecast, series without
// a forecast left out.
func TestLoadCutsAndMAPE(t *testing.T) {
	ys := make([]float64, (2+loadEvery*loadOrigins)*loadPerDay)
	for i := range ys {
		ys[i] = 100 + float64(i%loadPerDay)
	}
	cuts := loadCuts(ys)
	if len(cuts) != loadOrigins {
		t.Fatalf("%d cuts", len(cuts))
	}
	for i, c := range cuts {
		o := len(ys) - loadPerDay*(1+loadEvery*(loadOrigins-1-i))
		if len(c.Train) != o || len(c.Test) != loadPerDay || c.Test[0] != ys[o] || o%loadPerDay != 0 {
			t.Fatalf("cut %d: %d training values, want %d", i, len(c.Train), o)
		}
	}
	if last := cuts[len(cuts)-1]; len(last.Train)+loadPerDay != len(ys) {
		t.Errorf("the last cut ends %d values before the end", len(ys)-len(last.Train)-loadPerDay)
	}
	// 10 % above every value of the first cut; the others not forecast.
	f := forecast{Mean: make([]float64, loadPerDay)}
	for h, y := range cuts[0].Test {
		f.Mean[h] = 1.1 * y
	}
	if got := loadMAPE(cuts, map[string]forecast{cuts[0].Name: f}); math.Abs(got-10) > 1e-12 {
		t.Errorf("MAPE %v, want 10", got)
	}
	if got := loadMAPE(cuts, nil); !math.IsNaN(got) || f2(got) != "—" {
		t.Errorf("no forecasts: MAPE %v, printed %q; want NaN, \"—\"", got, f2(got))
	}
}
