package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The krlst suite's scoring and readers against hand-computed values; no
// Octave needed.

func TestScoreGaussian(t *testing.T) {
	// Errors −0.5, 0, 2 with stds 1, 0.5, 1: z = −0.5, 0, 2. The last two
	// targets have no proper forecast and are left out.
	y := []float64{1, 2, 4, 10, 11}
	mean := []float64{1.5, 2, 2, math.NaN(), 11}
	std := []float64{1, 0.5, 1, 1, 0}
	m := scoreGaussian(y, mean, std)
	if m.N != 3 || m.Invalid != 2 {
		t.Fatalf("N = %d, Invalid = %d, want 3, 2", m.N, m.Invalid)
	}
	// SSE 4.25; targets 1, 2, 4: mean 7/3, variance (16+1+25)/9/3 = 14/9.
	closeTo(t, "MSE", m.MSE, 4.25/3)
	closeTo(t, "NMSE", m.NMSE, 51.0/56)
	// Mean of ½log 2π + log s + ½z²: log s sums to log ½, ½z² to 0.125 + 0 + 2.
	closeTo(t, "NLPD", m.NLPD, 0.5*math.Log(2*math.Pi)-math.Log(2)/3+2.125/3)
	// |z| ≤ 0.994 (68 %): 2 of 3; ≤ 1.960 (95 %): 2 of 3; ≤ 2.576 (99 %): 3.
	for i, want := range []float64{2.0 / 3, 2.0 / 3, 1} {
		closeTo(t, "coverage", m.Cover[i], want)
	}
	closeTo(t, "max |z|", m.MaxAbsZ, 2)
}

func TestScoreGaussianLevels(t *testing.T) {
	// The intervals are the exact central ones of the levels, bounds
	// included: z = 0.9944579, 1.9599640, 2.5758293 lie inside; just beyond,
	// outside.
	for i, z := range []float64{0.994457883209753, 1.959963984540054, 2.575829303548901} {
		in := scoreGaussian([]float64{z * (1 - 1e-12)}, []float64{0}, []float64{1})
		out := scoreGaussian([]float64{z * (1 + 1e-12)}, []float64{0}, []float64{1})
		if in.Cover[i] != 1 || out.Cover[i] != 0 {
			t.Errorf("level %g: z = %g covered %g, just beyond %g", krlstLevels[i], z, in.Cover[i], out.Cover[i])
		}
	}
	if m := scoreGaussian([]float64{1}, []float64{math.Inf(1)}, []float64{1}); m.N != 0 || !math.IsNaN(m.NMSE) || !math.IsNaN(m.NLPD) {
		t.Errorf("no valid forecast: %+v", m)
	}
}

// A Student-t forecast (ν = 4, std 1, so scale √(1/2)) is scored with its
// own density and quantiles: at e = 0, −log t₄(0; scale) =
// −lnΓ(5/2) + lnΓ(2) + ½ln(4π) + ln√(1/2) = 0.634255662731754
// (lnΓ(5/2) = ln(3√π/4) = 0.284682870472919);
// its 95 % half-width is t₄,0.975·√(1/2) = 2.776445·0.707107 = 1.963231
// stds, so e = 1.963 is inside where the normal's 1.959964 would not be, and
// e = 1.9635 outside. ν ≤ 2 has no variance: invalid.
func TestScoreStudentT(t *testing.T) {
	m := scorePredictive([]float64{0}, []float64{0}, []float64{1}, []float64{4})
	closeTo(t, "NLPD", m.NLPD, -math.Log(3*math.Sqrt(math.Pi)/4)+0.5*math.Log(4*math.Pi)+math.Log(math.Sqrt(0.5)))
	in := scorePredictive([]float64{1.963}, []float64{0}, []float64{1}, []float64{4})
	out := scorePredictive([]float64{1.9635}, []float64{0}, []float64{1}, []float64{4})
	if in.Cover[1] != 1 || out.Cover[1] != 0 {
		t.Errorf("95 %% coverage of e = 1.963: %g, of 1.9635: %g; want 1, 0", in.Cover[1], out.Cover[1])
	}
	if m := scorePredictive([]float64{0}, []float64{0}, []float64{1}, []float64{2}); m.Invalid != 1 {
		t.Errorf("ν = 2 scored: %+v", m)
	}
}

func TestStandardize(t *testing.T) {
	// First three: mean 2, sample std √((1+0+1)/2) = 1.
	z, mu, sd, err := standardize([]float64{1, 2, 3, 10}, 3)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "mean", mu, 2)
	closeTo(t, "std", sd, 1)
	for i, want := range []float64{-1, 0, 1, 8} {
		closeTo(t, "z", z[i], want)
	}
	if _, _, _, err := standardize([]float64{5, 5, 5}, 3); err == nil {
		t.Error("constant values: no error")
	}
	if _, _, _, err := standardize([]float64{1, 2}, 3); err == nil {
		t.Error("too few values: no error")
	}
}

func TestScoreTargetsUnits(t *testing.T) {
	// Targets krlstFrom and krlstFrom+1 of a standardised series (mean 10,
	// std 2 undo it); the forecasts are in the data's units. The target
	// without a forecast is invalid.
	z := make([]float64, krlstFrom+2)
	z[krlstFrom-1], z[krlstFrom], z[krlstFrom+1] = 1, -1, 0
	mean := map[int]float64{krlstFrom: 12.5, krlstFrom + 1: 8}
	std := map[int]float64{krlstFrom: 1, krlstFrom + 1: 2}
	m := scoreTargets(z, 10, 2, mean, std, nil)
	if m.N != 2 || m.Invalid != 1 {
		t.Fatalf("N = %d, Invalid = %d, want 2, 1", m.N, m.Invalid)
	}
	// y = 12, 8: errors −0.5, 0; variance of the targets 4.
	closeTo(t, "NMSE", m.NMSE, 0.125/4)
	closeTo(t, "NLPD", m.NLPD, 0.5*math.Log(2*math.Pi)+math.Log(2)/2+0.125/2)
}

func TestStreamdOneStep(t *testing.T) {
	z := []float64{0.5, 1, 2}
	p := func(y, pred, sd float64) *observed { return &observed{Y: num(y), Prediction: num(pred), Std: num(sd)} }
	msgs := []oneStepMessage{{T: 1}, {T: 2, Observed: p(1, 0.9, 0.1)}, {T: 3, Observed: p(2, 2.2, 0.3)}}
	msgs[2].Observed.DF = 4
	mean, std, df, err := streamdOneStep(msgs, z)
	if err != nil {
		t.Fatal(err)
	}
	if len(mean) != 2 || mean[2] != 0.9 || std[2] != 0.1 || mean[3] != 2.2 || std[3] != 0.3 || df[2] != 0 || df[3] != 4 {
		t.Errorf("got mean %v, std %v, df %v", mean, std, df)
	}
	// A message whose observed y is not the sample of its t: t is not the
	// sample number the harness assumes.
	if _, _, _, err := streamdOneStep([]oneStepMessage{{T: 2, Observed: p(2, 0, 1)}}, z); err == nil {
		t.Error("mismatched y: no error")
	}
	if _, _, _, err := streamdOneStep([]oneStepMessage{{T: 4, Observed: p(2, 0, 1)}}, z); err == nil {
		t.Error("t beyond the data: no error")
	}
}

func TestReadOneStepMessagesAndSpan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	text := `{"series":"s","t":2,"issued_at":"2026-01-01T00:00:00.000Z","observed":{"y":1,"prediction":"NaN","std":null},"steps":[]}

{"series":"s","t":5,"issued_at":"2026-01-01T00:00:00.003Z","observed":{"y":2,"prediction":2.5,"std":0.5},"steps":[{"h":1,"t":6,"mean":1}]}
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs, err := readOneStepMessages(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1].T != 5 || float64(msgs[1].Observed.Prediction) != 2.5 || !math.IsNaN(float64(msgs[0].Observed.Prediction)) {
		t.Fatalf("got %+v", msgs)
	}
	// 3 ms over the 3 samples after sample 2: 1 ms each.
	closeTo(t, "span", issuedSpan(msgs, 2, 5), 1e-3)
	if s := issuedSpan(msgs, 2, 7); !math.IsNaN(s) {
		t.Errorf("missing last message: span %g, want NaN", s)
	}
}

func TestReadKrlstPredictions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "krlst_M50.csv")
	if err := os.WriteFile(path, []byte("t,mean,var\n21,0.5,0.25\n22,-1,NaN\n23,1,-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mean, std, err := readKrlstPredictions(path)
	if err != nil {
		t.Fatal(err)
	}
	if mean[21] != 0.5 || std[21] != 0.5 || mean[22] != -1 || !math.IsNaN(std[22]) || !math.IsNaN(std[23]) {
		t.Errorf("got mean %v, std %v", mean, std)
	}
	if err := os.WriteFile(path, []byte("t,mu,var\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readKrlstPredictions(path); err == nil {
		t.Error("wrong header: no error")
	}
}

func TestParseMs(t *testing.T) {
	ms, err := parseMs(" 50, 100,,400")
	if err != nil || joinInts(ms) != "50,100,400" {
		t.Errorf("got %v, %v", ms, err)
	}
	for _, bad := range []string{"", "0", "x", "50,-1"} {
		if _, err := parseMs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestStreamdConfig(t *testing.T) {
	c := streamdConfig(20, 100)
	for _, want := range []string{"lags: 20\n", "working_set: 100\n", "sigma2: auto\n", "gamma: auto\n", "scale: standard\n",
		"transform: none\n", "difference: 0\n", "warmup: 1000\n"} {
		if !strings.Contains(c, want) {
			t.Errorf("configuration lacks %q:\n%s", want, c)
		}
	}
}

func TestRefCheck(t *testing.T) {
	own := &sideResult{Metrics: gaussMetrics{NMSE: 0.01144, NLPD: 2.787}}
	res := func(nmse, nlpd float64) *sideResult {
		return &sideResult{Metrics: gaussMetrics{NMSE: nmse, NLPD: nlpd}}
	}
	if s := refCheck(res(0.0120, 3.015), own); !strings.Contains(s, "— reproduced.") || !strings.Contains(s, "NMSE 0.01144, NLPD 2.787") {
		t.Errorf("within tolerance: %s", s)
	}
	if s := refCheck(res(0.0125, 3.009), own); !strings.Contains(s, "NOT reproduced") {
		t.Errorf("NMSE 4.6 %% off: %s", s)
	}
	if s := refCheck(res(0.01195, 3.04), own); !strings.Contains(s, "NOT reproduced") {
		t.Errorf("NLPD 0.031 off: %s", s)
	}
	if s := refCheck(&sideResult{Metrics: gaussMetrics{NMSE: math.NaN(), NLPD: math.NaN()}, Fail: "octave: boom"}, own); !strings.Contains(s, "NOT reproduced (octave: boom)") {
		t.Errorf("failed run: %s", s)
	}
}

func TestPatchKafbox(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"lib/base/base_estimator.m":         "classdef base_estimator < matlab.mixin.Copyable\nend\n",
		"lib/util/kernel_adaptive_filter.m": "classdef kernel_adaptive_filter < matlab.mixin.Copyable\nend\n",
		"lib/krlst.m":                       "classdef krlst < kernel_adaptive_filter\nend\n",
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(s), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := patchKafbox(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"base/base_estimator.m":         "classdef base_estimator < handle\nend\n",
		"util/kernel_adaptive_filter.m": "classdef kernel_adaptive_filter < handle\nend\n",
		"krlst.m":                       files["lib/krlst.m"],
	} {
		b, err := os.ReadFile(filepath.Join(lib, p))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", p, b, err, want)
		}
	}
	// The source is untouched.
	if b, _ := os.ReadFile(filepath.Join(src, "lib/base/base_estimator.m")); string(b) != files["lib/base/base_estimator.m"] {
		t.Errorf("source modified: %q", b)
	}
}

func closeTo(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
		t.Errorf("%s = %.17g, want %.17g", what, got, want)
	}
}
