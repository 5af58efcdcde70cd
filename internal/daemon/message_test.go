package daemon

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/theta"
)

// TestMessageJSONShape pins the wire format of docs/messages.md: field names, nesting,
// and the omission of "observed" when there is no one-step verdict.
func TestMessageJSONShape(t *testing.T) {
	res := online.Result{Fitted: true, Prediction: 85, Std: 2, Residual: 1, Weight: 1,
		Forecast: []online.ForecastStep{
			{H: 1, T: 1038, Mean: 90, Std: 2, Lo: 86.08, Hi: 93.92, OneStepStd: 2},
			{H: 2, T: 1039, Mean: 91, Std: 3, Lo: 85.12, Hi: 96.88, OneStepStd: 2},
		}}
	var m sink.Message
	SetResult(&m, "s1", 1037, 86, res)
	m.IssuedAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	m.Model = sink.ModelInfo{M: 100, Lags: []int{1, 2}, Kernel: "rbf", Form: "log", Sigma2: 40, Gamma: 100, NoiseStd: 0.5, DEff: 12.5, Swaps: 3,
		Combine: "theta", Theta: &sink.ThetaInfo{Alpha: 0.25, Drift: -1.5, SlopeShare: 0.5, Period: 12, ModelWeight: 0.375, DF: 10}, BandScale: 0.75}
	b, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"series": "s1", "t": 1037.0, "issued_at": "2025-01-02T03:04:05Z",
		"observed": map[string]any{"y": 86.0, "prediction": 85.0, "std": 2.0, "residual": 1.0,
			"weight": 1.0, "outlier": false},
		"steps": []any{
			map[string]any{"h": 1.0, "t": 1038.0, "mean": 90.0, "std": 2.0, "lo": 86.08, "hi": 93.92},
			map[string]any{"h": 2.0, "t": 1039.0, "mean": 91.0, "std": 3.0, "lo": 85.12, "hi": 96.88},
		},
		"model": map[string]any{"m": 100.0, "lags": []any{1.0, 2.0}, "kernel": "rbf", "form": "log", "sigma2": 40.0, "gamma": 100.0,
			"noise_std": 0.5, "d_eff": 12.5, "swaps": 3.0, "combine": "theta",
			"theta": map[string]any{"alpha": 0.25, "drift": -1.5, "slope_share": 0.5, "period": 12.0, "model_weight": 0.375, "df": 10.0}, "band_scale": 0.75},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("message JSON\n got %s\nwant %v", b, want)
	}

	// The end of warm-up: no one-step verdict, a forecast; then a sample with
	// a verdict and no forecast (Every > 1).
	SetResult(&m, "s1", 1038, 90, online.Result{Forecast: res.Forecast[:1]})
	b, _ = json.Marshal(&m)
	got = nil
	_ = json.Unmarshal(b, &got)
	if _, ok := got["observed"]; ok {
		t.Errorf("unfitted result has an observed field: %s", b)
	}
	SetResult(&m, "s1", 1039, 91, online.Result{Fitted: true, Weight: 1})
	b, _ = json.Marshal(&m)
	got = nil
	_ = json.Unmarshal(b, &got)
	if steps, ok := got["steps"].([]any); !ok || len(steps) != 0 {
		t.Errorf(`no forecast: want "steps": [], got %s`, b)
	}
}

// TestMessageCopiesSteps: a Result's forecast aliases the Learner's buffer,
// so the message must not share it.
func TestMessageCopiesSteps(t *testing.T) {
	buf := []online.ForecastStep{{H: 1, Mean: 1}}
	var m sink.Message
	SetResult(&m, "s", 1, 0, online.Result{Forecast: buf})
	buf[0].Mean = 2
	if m.Steps[0].Mean != 1 {
		t.Errorf("message step changed with the Learner's buffer")
	}
}

func TestMessageSetResultNoAllocSteps(t *testing.T) {
	steps := make([]online.ForecastStep, 20)
	var m sink.Message
	SetSteps(&m, steps)
	allocs := testing.AllocsPerRun(100, func() { SetSteps(&m, steps) })
	if allocs != 0 {
		t.Errorf("SetSteps allocates %v times once grown", allocs)
	}
}

// thetaInfo names a measured growth, 0 included, and nothing where the
// band is the local-level model's; the growth is a copy of the partner's.
func TestThetaInfoGrowth(t *testing.T) {
	x := []float64{5, 9, 7, 4, 6, 10, 8, 5, 7, 11, 9, 6, 8, 12, 10, 7}
	th, err := theta.Fit(x, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	if info := thetaInfo(th, 0.5); info.Growth != nil {
		t.Errorf("unmeasured: growth %v, want none", *info.Growth)
	}
	for _, g := range []float64{0, 0.25} {
		th.SetGrowth(g)
		info := thetaInfo(th, 0.5)
		if info.Growth == nil || *info.Growth != g || info.Growth == &th.Growth {
			t.Errorf("measured %v: growth %v, want a copy of it", g, info.Growth)
		}
	}
}
