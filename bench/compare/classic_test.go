package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestClassicOrigins: the origins run from First by Step while H values
// follow, and each cut holds exactly the values before and the H after it.
func TestClassicOrigins(t *testing.T) {
	s := classicSet{Name: "x", H: 3, First: 4, Step: 2}
	if got := classicOrigins(s, 10); !slices.Equal(got, []int{4, 6}) {
		t.Errorf("origins on 10 values: %v, want [4 6]", got)
	}
	if got := classicOrigins(s, 6); got != nil {
		t.Errorf("origins on 6 values: %v, want none", got)
	}
	y := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	cut := classicSeries(s, y)
	if len(cut) != 2 || cut[1].Name != "x@6" || !slices.Equal(cut[1].Train, y[:6]) || !slices.Equal(cut[1].Test, []float64{6, 7, 8}) {
		t.Fatalf("cuts %+v", cut)
	}
	// The training slice has no room to grow into the test values.
	if cap(cut[0].Train) != 4 {
		t.Errorf("training capacity %d, want 4", cap(cut[0].Train))
	}
}

// TestScoreClassic against hand-computed values: two origins, one method
// failing on the second.
func TestScoreClassic(t *testing.T) {
	series := []nn3Series{
		{Name: "a", Train: []float64{1, 3, 2}, Test: []float64{4, 6}}, // scale (2 + 1)/2 = 1.5
		{Name: "b", Train: []float64{2, 2, 4}, Test: []float64{1, 1}}, // scale (0 + 2)/2 = 1
	}
	fc := map[string]forecast{
		"a": {Mean: []float64{5, 6}, Lo: []float64{4.5, 5}, Hi: []float64{6, 7}}, // errors 1, 0; covers the second
		"b": {Mean: []float64{2, 3}, Lo: []float64{0, 0}, Hi: []float64{3, 4}},   // errors 1, 2; covers both
	}
	sc := scoreClassic(series, fc)
	const tol = 1e-12 // sums of a few exact binary fractions and two divisions
	// sMAPE of a: (200·1/9 + 0)/2; of b: (200·1/3 + 200·2/4)/2.
	wantSMAPE := (100.0/9 + (200.0/3+100)/2) / 2
	switch {
	case sc.Origins != 2 || sc.Forecast != 2 || sc.Covered != 3 || sc.Values != 4:
		t.Errorf("counts %+v", sc)
	case math.Abs(sc.MAE-(0.5+1.5)/2) > tol:
		t.Errorf("MAE %v, want 1", sc.MAE)
	case math.Abs(sc.MASE-(0.5/1.5+1.5/1)/2) > tol:
		t.Errorf("MASE %v, want %v", sc.MASE, (0.5/1.5+1.5)/2)
	case math.Abs(sc.SMAPE-wantSMAPE) > tol:
		t.Errorf("sMAPE %v, want %v", sc.SMAPE, wantSMAPE)
	}
	delete(fc, "b")
	if sc := scoreClassic(series, fc); sc.Forecast != 1 || sc.Values != 2 || math.Abs(sc.MAE-0.5) > tol {
		t.Errorf("with b failed: %+v", sc)
	}
	// Nothing forecast: no score, printed "—", not a perfect 0.
	if sc := scoreClassic(series, nil); sc.Forecast != 0 || !math.IsNaN(sc.MAE) || !math.IsNaN(sc.SMAPE) || !math.IsNaN(sc.MASE) ||
		f3(sc.MAE) != "—" || fmtCoverage(sc.Covered, sc.Values) != "—" {
		t.Errorf("nothing forecast: %+v", sc)
	}
}

// TestGeoRatio against closed forms: the geometric mean of 2, 1/2 and 4 is
// 4^(1/3); a set whose ratio is not positive and finite, or no sets, give
// none. exp(log sums) of three exact powers of two: 1e-15 relative.
func TestGeoRatio(t *testing.T) {
	got, ok := geoRatio([]float64{2, 1, 8}, []float64{1, 2, 2})
	if want := math.Cbrt(4); !ok || math.Abs(got-want) > 1e-15*want {
		t.Errorf("geoRatio = %v, %v; want %v", got, ok, want)
	}
	for name, c := range map[string][2][]float64{
		"none":      {nil, nil},
		"lengths":   {{1, 2}, {1}},
		"zero":      {{0, 1}, {1, 1}},
		"zero base": {{1, 1}, {0, 1}},
		"NaN":       {{math.NaN()}, {1}},
	} {
		if _, ok := geoRatio(c[0], c[1]); ok {
			t.Errorf("%s: a ratio was given", name)
		}
	}
}

// TestMoreSetsOrigins: each of the datasets suite's sets is cut at four
// origins a horizon apart, the last a horizon before its end (the lengths
// are those of R's objects).
func TestMoreSetsOrigins(t *testing.T) {
	length := map[string]int{"austres": 89, "JohnsonJohnson": 84, "freeny.y": 39, "woolyrnq": 119, "ldeaths": 72,
		"UKDriverDeaths": 192, "wineind": 176, "gas": 476, "Nile": 100, "LakeHuron": 98, "nhtemp": 60, "discoveries": 100,
		"airmiles": 24, "uspop": 19, "BJsales": 150, "WWWusage": 100, "lh": 48}
	if len(length) != len(moreSets) {
		t.Fatalf("%d sets, %d lengths", len(moreSets), len(length))
	}
	for _, s := range moreSets {
		n, ok := length[s.Name]
		o := classicOrigins(s, n)
		if !ok || len(o) != 4 || s.Step != s.H || o[3] != n-s.H {
			t.Errorf("%s (%d values): origins %v, step %d, horizon %d", s.Name, n, o, s.Step, s.H)
		}
	}
}

// TestQuarterlySetsOrigins: each of the quarterly suite's sets is cut at
// four origins a year apart, the last a year before its end, or from 12
// values on where it has 24 (the lengths are those of R's objects, in
// quarters after sumOver).
func TestQuarterlySetsOrigins(t *testing.T) {
	length := map[string]int{"UKgas": 108, "JohnsonJohnson": 84, "woolyrnq": 119, "austres": 89, "AirPassengers": 144,
		"co2": 468, "nottem": 240, "UKDriverDeaths": 192, "wineind": 176, "gas": 476, "USAccDeaths": 72, "ldeaths": 72}
	if len(length) != len(quarterlySets) {
		t.Fatalf("%d sets, %d lengths", len(quarterlySets), len(length))
	}
	for _, s := range quarterlySets {
		n, ok := length[s.Name]
		if s.Sum > 1 {
			n /= s.Sum
		}
		o := classicOrigins(s, n)
		want := 4
		if n == 24 {
			want = 3
		}
		if !ok || s.Freq != 4 || s.H != 4 || len(o) != want || s.Step != s.H || o[len(o)-1] != n-s.H || o[0] < 12 {
			t.Errorf("%s (%d quarters): origins %v, step %d, horizon %d", s.Name, n, o, s.Step, s.H)
		}
	}
}

// TestSumOver: sums of three, the oldest values that do not fill a sum
// dropped, so that the last sum ends at the last value; exact, as the
// values are small integers.
func TestSumOver(t *testing.T) {
	for _, c := range []struct {
		y       []float64
		want    []float64
		dropped int
	}{
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{6, 15, 24}, 0},
		{[]float64{50, 60, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []float64{6, 15, 24}, 2},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8}, []float64{12, 21}, 2},
		{[]float64{1, 2}, nil, 2},
	} {
		if sums, dropped := sumOver(c.y, 3); !slices.Equal(sums, c.want) || dropped != c.dropped {
			t.Errorf("%v: sums %v, dropped %d; want %v, %d", c.y, sums, dropped, c.want, c.dropped)
		}
	}
}

// TestWriteSetDatedSummed: a summed set's cuts are dated by the first
// month of each sum, three months apart, from R's start (a month) moved
// past the dropped months: from 1980-02 with two dropped, 1980-04 (read
// as a quarter, period 2 would start in April before the shift, June
// after it).
func TestWriteSetDatedSummed(t *testing.T) {
	dir := t.TempDir()
	start := filepath.Join(dir, "wineind.start")
	if err := os.WriteFile(start, []byte("1980,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := classicSet{Name: "wineind", Freq: 4, H: 4, Kind: "quarterly", Sum: 3}
	series := []nn3Series{{Name: "wineind@5", File: filepath.Join(dir, "wineind@5.txt"), Train: []float64{1, 2, 3, 4, 5}}}
	if err := writeSetDated(s, series, start, 9, 2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(series[0].Dated)
	if err != nil {
		t.Fatal(err)
	}
	want := "t,y\n1980-04-01,1\n1980-07-01,2\n1980-10-01,3\n1981-01-01,4\n1981-04-01,5\n"
	if string(b) != want {
		t.Errorf("dated file:\n%s\nwant:\n%s", b, want)
	}
}
