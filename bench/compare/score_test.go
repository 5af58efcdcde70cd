package main

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The expected values below are computed by hand (the arithmetic is written
// out in the comments). Floats are compared with a relative tolerance of
// 1e-12 (absolute 1e-12 near zero): every value is a short sum or ratio of
// exact inputs, so only rounding in the last bits can differ.
const tol = 1e-12

func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func checkFloat(t *testing.T, name string, got, want float64) {
	t.Helper()
	if !near(got, want) {
		t.Errorf("%s = %.17g, want %.17g", name, got, want)
	}
}

func TestSAPE(t *testing.T) {
	checkFloat(t, "sAPE(100, 110)", sAPE(100, 110), 200.0*10/210) // 9.5238…
	checkFloat(t, "sAPE(0, 0)", sAPE(0, 0), 0)
	checkFloat(t, "sAPE(-50, 50)", sAPE(-50, 50), 200) // 100·100/((50+50)/2)
	checkFloat(t, "sAPE(1, NaN)", sAPE(1, math.NaN()), math.NaN())
	checkFloat(t, "aPE(200, 190)", aPE(200, 190), 5)
}

// series A: y = 100, 200, 50; ŷ = 110, 190, 50; bands [95, 115] [195, 205]
// [40, 49]. series B: y = 10, 20; ŷ = 10, 30; no band.
func fixture() (seriesScore, seriesScore) {
	a := scoreSeries([]float64{100, 200, 50}, forecast{
		Mean: []float64{110, 190, 50}, Lo: []float64{95, 195, 40}, Hi: []float64{115, 205, 49}})
	b := scoreSeries([]float64{10, 20, 99}, forecast{Mean: []float64{10, 30}}) // the 3rd test value has no step
	return a, b
}

func TestScoreSeries(t *testing.T) {
	a, b := fixture()
	// sAPE: 200·10/210, 200·10/390, 0.
	checkFloat(t, "A.SAPE[0]", a.SAPE[0], 9.523809523809524)
	checkFloat(t, "A.SAPE[1]", a.SAPE[1], 5.128205128205128)
	checkFloat(t, "A.SAPE[2]", a.SAPE[2], 0)
	checkFloat(t, "A.SMAPE", a.SMAPE, (9.523809523809524+5.128205128205128)/3) // 4.884004884…
	checkFloat(t, "A.MAPE", a.MAPE, 5)                                         // (10 + 5 + 0)/3
	checkFloat(t, "A.MaxAE", a.MaxAE, 10)
	if a.Covered != 2 || a.Banded != 3 { // 100 ∈ [95,115], 200 ∈ [195,205], 50 ∉ [40,49]
		t.Errorf("A: covered %d of %d banded, want 2 of 3", a.Covered, a.Banded)
	}
	if len(b.SAPE) != 2 {
		t.Fatalf("B scored %d steps, want 2", len(b.SAPE))
	}
	checkFloat(t, "B.SMAPE", b.SMAPE, 20) // (0 + 200·10/50)/2
	checkFloat(t, "B.MAPE", b.MAPE, 25)   // (0 + 50)/2
	if b.Covered != 0 || b.Banded != 0 || b.Band[0] != noBand {
		t.Errorf("B: covered %d of %d banded, band %v; want 0 of 0, noBand", b.Covered, b.Banded, b.Band[0])
	}
	// A band with an infinite bound covers nothing; a bound equal to y covers.
	c := scoreSeries([]float64{1, 2}, forecast{Mean: []float64{1, 2}, Lo: []float64{math.Inf(-1), 2}, Hi: []float64{5, 2}})
	if c.Band[0] != outOfBand || c.Band[1] != inBand {
		t.Errorf("bands %v, want [outOfBand inBand]", c.Band)
	}
}

func TestNaiveForecast(t *testing.T) {
	f := naiveForecast([]float64{1, 2, 3}, 2)
	if len(f.Mean) != 2 || f.Mean[0] != 3 || f.Mean[1] != 3 || f.Lo != nil || f.Hi != nil {
		t.Errorf("naive = %+v, want mean [3 3] without band", f)
	}
}

func TestSummarize(t *testing.T) {
	a, b := fixture()
	m := summarize([]seriesScore{a, b, {}}) // an empty score is skipped
	if m.Series != 2 || m.Values != 5 {
		t.Fatalf("series %d values %d, want 2 and 5", m.Series, m.Values)
	}
	// Pooled over the 5 (series, step) pairs: (9.5238… + 5.1282… + 0 + 0 + 40)/5.
	checkFloat(t, "MeanSMAPE", m.MeanSMAPE, (9.523809523809524+5.128205128205128+40)/5)
	// Per-series sMAPE sorted: 4.884004884…, 20. Type-7 quantiles:
	// median = 4.884… + 0.5·(20 − 4.884…); p90 = 4.884… + 0.9·(20 − 4.884…).
	sa := (9.523809523809524 + 5.128205128205128) / 3
	checkFloat(t, "MedianSMAPE", m.MedianSMAPE, sa+0.5*(20-sa))
	checkFloat(t, "P90SMAPE", m.P90SMAPE, sa+0.9*(20-sa))
	checkFloat(t, "MeanMAPE", m.MeanMAPE, 13) // (10 + 5 + 0 + 0 + 50)/5
	checkFloat(t, "MaxAE", m.MaxAE, 10)
	// Coverage: 2 covered of 5 values (B's 2 have no band), 2 of 3 banded.
	if m.Covered != 2 || m.Banded != 3 {
		t.Errorf("covered %d banded %d, want 2 and 3", m.Covered, m.Banded)
	}
	checkFloat(t, "Coverage", m.Coverage, 0.4)
	checkFloat(t, "BandedCoverage", m.BandedCoverage, 2.0/3)
	// By horizon: h=1 {A: 9.52…, in; B: 0, none}; h=2 {A: 5.128…, in; B: 40,
	// none}; h=3 {A: 0, out}.
	want := []horizonSummary{
		{H: 1, N: 2, MeanSMAPE: 9.523809523809524 / 2, MeanAPE: 5, Covered: 1, Coverage: 0.5, BandedOnly: 1},
		{H: 2, N: 2, MeanSMAPE: (5.128205128205128 + 40) / 2, MeanAPE: 27.5, Covered: 1, Coverage: 0.5, BandedOnly: 1},
		{H: 3, N: 1, MeanSMAPE: 0, MeanAPE: 0, Covered: 0, Coverage: 0, BandedOnly: 0},
	}
	if len(m.ByH) != len(want) {
		t.Fatalf("%d horizons, want %d", len(m.ByH), len(want))
	}
	for i, w := range want {
		g := m.ByH[i]
		if g.H != w.H || g.N != w.N || g.Covered != w.Covered {
			t.Errorf("h=%d: H %d N %d covered %d, want %d %d %d", i+1, g.H, g.N, g.Covered, w.H, w.N, w.Covered)
		}
		checkFloat(t, fmt.Sprintf("h=%d MeanSMAPE", w.H), g.MeanSMAPE, w.MeanSMAPE)
		checkFloat(t, fmt.Sprintf("h=%d MeanAPE", w.H), g.MeanAPE, w.MeanAPE)
		checkFloat(t, fmt.Sprintf("h=%d Coverage", w.H), g.Coverage, w.Coverage)
		checkFloat(t, fmt.Sprintf("h=%d BandedOnly", w.H), g.BandedOnly, w.BandedOnly)
	}
	empty := summarize(nil)
	if !math.IsNaN(empty.MeanSMAPE) || !math.IsNaN(empty.Coverage) || !math.IsNaN(empty.MedianSMAPE) {
		t.Errorf("empty summary %+v, want NaN scores", empty)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	checkFloat(t, "q(0.5)", quantile(x, 0.5), 2.5) // R: quantile(1:4, .5)
	checkFloat(t, "q(0.9)", quantile(x, 0.9), 3.7) // R: quantile(1:4, .9); position 2.7
	checkFloat(t, "q(0)", quantile(x, 0), 1)
	checkFloat(t, "q(1)", quantile(x, 1), 4)
	checkFloat(t, "single", quantile([]float64{5}, 0.9), 5)
	checkFloat(t, "empty", quantile(nil, 0.5), math.NaN())
}

// y = 10, 12, 11, 15, 14, 16 (1-based 1..6), scored from the 3rd value:
//
//	target 2: a forecast before the scored range (sets First = 2 only)
//	target 3: ŷ 12 in [10, 14]; y 11; naive 12; range of 10, 12 = 2, band 4 ≤ 20
//	target 4: ŷ 13 in [0, 100]; y 15; naive 11; range of 10, 12, 11 = 2, band 100 > 20: wide
//	target 5: no forecast (missing)
//	target 6: NaN forecast: non-finite, sAPE 200, not covered, not counted wide; naive 14
//	target 7: beyond the series, ignored
func TestScoreColdstart(t *testing.T) {
	y := []float64{10, 12, 11, 15, 14, 16}
	nan := math.NaN()
	fc := map[int]oneStep{
		2: {12, 11, 13},
		3: {12, 10, 14},
		4: {13, 0, 100},
		6: {nan, nan, nan},
		7: {1, 0, 2},
	}
	s := scoreColdstart(y, fc, 3)
	if s.First != 2 || s.Targets != 4 || s.Scored != 3 || s.Missing != 1 || s.Covered != 2 || s.NonFinite != 1 || s.Wide != 1 {
		t.Errorf("got %+v, want First 2, Targets 4, Scored 3, Missing 1, Covered 2, NonFinite 1, Wide 1", s)
	}
	// sAPE: 200·1/23, 200·2/28, 200; naive: 200·1/23, 200·4/26, 200·2/30.
	checkFloat(t, "SAPESum", s.SAPESum, 200.0/23+400.0/28+200)
	checkFloat(t, "NaiveSAPESum", s.NaiveSAPESum, 200.0/23+800.0/26+400.0/30)

	none := scoreColdstart([]float64{1, 2, 3, 4}, nil, 3)
	if none.First != 0 || none.Targets != 2 || none.Missing != 2 || none.Scored != 0 {
		t.Errorf("no forecasts: got %+v", none)
	}
	c := summarizeCold([]coldScore{s, none})
	if c.Series != 2 || c.ByFrom != 1 || c.Targets != 6 || c.Scored != 3 || c.Covered != 2 || c.NonFinite != 1 || c.Wide != 1 {
		t.Errorf("summary %+v", c)
	}
	checkFloat(t, "pooled sMAPE", c.SMAPE, (200.0/23+400.0/28+200)/3)
	checkFloat(t, "pooled naive", c.Naive, (200.0/23+800.0/26+400.0/30)/3)
	checkFloat(t, "coverage", c.Coverage, 2.0/3)
	checkFloat(t, "median first", c.MedianFirst, 2)
}

func TestReadMessages(t *testing.T) {
	in := `{"series":"s","t":30,"steps":[{"h":2,"t":32,"mean":5,"std":1,"lo":3,"hi":7},{"h":1,"t":31,"mean":4,"std":1,"lo":null,"hi":"NaN"}],"model":{"m":3}}

{"series":"s","t":31,"observed":{"y":4.5,"prediction":4,"std":1,"residual":0.5,"weight":1,"outlier":false},"steps":[{"h":1,"t":32,"mean":6,"std":1,"lo":4,"hi":8},{"h":2,"t":33,"mean":7,"std":1,"lo":5,"hi":"+Inf"}]}
{"series":"s","t":32,"steps":[]}
`
	msgs, err := readMessages(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[1].Observed == nil || float64(msgs[1].Observed.Y) != 4.5 {
		t.Fatalf("messages %+v", msgs)
	}
	if !math.IsNaN(float64(msgs[0].Steps[1].Lo)) || !math.IsNaN(float64(msgs[0].Steps[1].Hi)) {
		t.Errorf("null and \"NaN\" should read as NaN: %+v", msgs[0].Steps[1])
	}
	// The iterated forecast is the last message with steps.
	f, err := iteratedForecast(msgs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if f.Mean[0] != 6 || f.Mean[1] != 7 || f.Lo[1] != 5 || !math.IsInf(f.Hi[1], 1) {
		t.Errorf("iterated forecast %+v", f)
	}
	if _, err := iteratedForecast(msgs, 3); err == nil {
		t.Error("a forecast without step 3 accepted for H = 3")
	}
	if _, err := iteratedForecast(msgs[2:], 2); err == nil {
		t.Error("no steps accepted")
	}
	bad, _ := readMessages(strings.NewReader(`{"t":1,"steps":[{"h":1,"mean":null,"lo":0,"hi":1}]}`))
	if _, err := iteratedForecast(bad, 1); err == nil {
		t.Error("a non-finite mean accepted")
	}
	// One-step forecasts by target: message T + 1.
	one := oneStepForecasts(msgs)
	if len(one) != 2 || one[31].Mean != 4 || one[32].Mean != 6 || one[32].Lo != 4 {
		t.Errorf("one-step forecasts %+v", one)
	}
	if _, err := readMessages(strings.NewReader("{\"t\": \"x\"}\n")); err == nil {
		t.Error("a bad line accepted")
	}
}

func TestReadColumns(t *testing.T) {
	names, cols, err := readColumns(strings.NewReader("A,B,C\n1,2,3\n4,,5.5\n,,6\n"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(names, " ") != "A B C" || fmt.Sprint(cols) != "[[1 4] [2] [3 5.5 6]]" {
		t.Errorf("names %v cols %v", names, cols)
	}
	if _, _, err := readColumns(strings.NewReader("A,B\n1,\n2,3\n")); err == nil {
		t.Error("a value after an empty cell accepted")
	}
	if _, _, err := readColumns(strings.NewReader("A\nx\n")); err == nil {
		t.Error("a non-number accepted")
	}
}

func TestReadRForecasts(t *testing.T) {
	in := `method,series,h,mean,lo,hi
ets,s1,1,10,8,12
ets,s1,2,11,NA,NA
ets,s2,1,5,4,6
arima,s1,1,NaN,1,2
arima,s1,2,3,1,4
ets,s1,3,99,98,100
`
	fc, err := readRForecasts(strings.NewReader(in), 2)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := fc["ets"]["s1"]
	if !ok || f.Mean[0] != 10 || f.Mean[1] != 11 || f.Lo[0] != 8 || !math.IsNaN(f.Lo[1]) {
		t.Errorf("ets s1 = %+v", f)
	}
	if _, ok := fc["ets"]["s2"]; ok {
		t.Error("ets s2 lacks step 2 but was kept")
	}
	if _, ok := fc["arima"]["s1"]; ok {
		t.Error("arima s1 has a NaN mean but was kept")
	}
	if _, err := readRForecasts(strings.NewReader("a,b\n"), 2); err == nil {
		t.Error("a wrong header accepted")
	}
}

// euniteHeader is the raw load files' header: date, Holiday, Weekday, 48
// half-hours and daily_max.
func euniteHeader() string {
	h := []string{"date", "Holiday", "Weekday"}
	for i := 1; i <= 48; i++ {
		h = append(h, fmt.Sprintf("h%02d.%02d", i/2, 30*(i%2)))
	}
	return strings.Join(append(h, "daily_max"), ",") + "\n"
}

func euniteDay(date string, holiday, peak int) string {
	row := []string{date, fmt.Sprint(holiday), "1"}
	for i := 1; i <= 48; i++ {
		v := 500 + i
		if i == 20 {
			v = peak
		}
		row = append(row, fmt.Sprint(v))
	}
	return strings.Join(append(row, "0"), ",") + "\n" // daily_max is not read
}

func TestBuildEunite(t *testing.T) {
	train := euniteHeader() + euniteDay("1997-01-01", 1, 800) + euniteDay("1997-01-02", 0, 510)
	test := euniteHeader() + euniteDay("1997-01-03", 1, 700)
	temps := "date,temperature\n1995-01-03,1\n1996-01-03,2\n1997-01-01,-5\n1997-01-02,6\n1997-01-03,4\n1995-01-04,9\n"
	rows, err := buildEunite(strings.NewReader(train), strings.NewReader(test), strings.NewReader(temps))
	if err != nil {
		t.Fatal(err)
	}
	// Loads: the max of the 48 half-hours (800; 548 = 500 + 48 beats the
	// 510 peak; 700). The test day's temperature: mean of the 1995–1998
	// values of 01-03 = (1 + 2 + 4)/3.
	want := []euniteRow{{"1997-01-01", 800, 1, -5}, {"1997-01-02", 548, 0, 6}, {"1997-01-03", 700, 1, 7.0 / 3}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Date != w.Date || r.Load != w.Load || r.Holiday != w.Holiday || !near(r.Temperature, w.Temperature) {
			t.Errorf("row %d = %+v, want %+v", i, r, w)
		}
	}
	gap := euniteHeader() + euniteDay("1997-01-05", 0, 600)
	if _, err := buildEunite(strings.NewReader(train), strings.NewReader(gap), strings.NewReader(temps)); err == nil {
		t.Error("a gap between the training and test days accepted")
	}
	noTemp := "date,temperature\n1997-01-01,1\n"
	if _, err := buildEunite(strings.NewReader(train), strings.NewReader(test), strings.NewReader(noTemp)); err == nil {
		t.Error("a training day without temperature accepted")
	}
}

func TestMarkdownTable(t *testing.T) {
	got := markdownTable([]string{"method", "x"}, [][]string{{"a", "1.00"}, {"long name", "2"}})
	want := "| method    |    x |\n| --------- | ---: |\n| a         | 1.00 |\n| long name |    2 |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGroupReasons(t *testing.T) {
	got := groupReasons(map[string]string{
		"s1": "has 51 values",
		"s2": "has 60 values",
		"s3": "other",
		"s4": "backtest: /d/NN3_101.txt: has 9 values",
		"s5": "backtest: /d/NN3.002.txt: has 8 values",
	})
	// Larger groups first, ties by their first series.
	want := []string{"2 × has 51 values [s1 s2]", "2 × backtest: /d/NN3_101.txt: has 9 values [s4 s5]", "1 × other [s3]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// holdOut moves the last h training values of each series to its test
// values, and refuses a series too short to keep as many to fit on.
func TestHoldOut(t *testing.T) {
	in := []nn3Series{{Name: "a", Train: []float64{1, 2, 3, 4, 5}, Test: []float64{9}}}
	out, err := holdOut(in, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := out[0]; !reflect.DeepEqual(got.Train, []float64{1, 2, 3}) || !reflect.DeepEqual(got.Test, []float64{4, 5}) {
		t.Errorf("holdOut: train %v test %v, want [1 2 3] [4 5]", got.Train, got.Test)
	}
	if len(in[0].Train) != 5 {
		t.Error("holdOut changed its input")
	}
	if _, err := holdOut(in, 3); err == nil {
		t.Error("holding out 3 of 5 values was accepted")
	}
}
