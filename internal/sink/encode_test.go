package sink

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// plain mirrors Message's fields without its MarshalJSON methods: what
// encoding/json writes of them is the reference AppendJSON is held to.
type plain struct {
	Series   string         `json:"series"`
	T        int64          `json:"t"`
	IssuedAt time.Time      `json:"issued_at"`
	Observed *plainObserved `json:"observed,omitempty"`
	Steps    []Step         `json:"steps"`
	Model    plainModel     `json:"model"`
}

type plainObserved Observed

// plainModel has ModelInfo's fields and tags without its MarshalJSON.
type plainModel ModelInfo

func plainOf(m *Message) *plain {
	p := &plain{Series: m.Series, T: m.T, IssuedAt: m.IssuedAt, Steps: m.Steps, Model: plainModel(m.Model)}
	if m.Observed != nil {
		p.Observed = (*plainObserved)(m.Observed)
	}
	return p
}

// AppendJSON must write exactly what encoding/json writes (the wire format
// consumers parse, and the bytes earlier releases published), including its
// float formatting at the 1e-6 and 1e21 switches, omitempty, nil slices and
// its string escaping; fail where it fails on times; and write null where it
// fails on a non-finite number.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	at := time.Date(2026, 11, 21, 20, 31, 11, 448551968, time.UTC)
	full := func() Message {
		return Message{Series: "s1", T: 42, IssuedAt: at,
			Observed: &Observed{Y: 10.5, Prediction: 10.25, Std: 0.125, Residual: 0.25, Weight: 1, Outlier: true, DF: 4, Fallback: true},
			Steps:    []Step{{H: 1, T: 43, Mean: 1, Std: 2, Lo: -3, Hi: 4}, {H: 2, T: 44, Mean: 1e-7, Std: 1e21, Lo: -1e-300, Hi: 5e-324, Fallback: true}},
			Model: ModelInfo{M: 50, Lags: []int{1, 2, 10}, Sigma2: 20, Gamma: 3665.338028987852, NoiseStd: 0.0031894442740, DEff: 97.8, Swaps: 3, DF: 6,
				Combine: "theta", Theta: &ThetaInfo{Alpha: 0.3125, Drift: -1.5e-7, SlopeShare: 1, Period: 12, Growth: new(0.0625), ModelWeight: 0.375, DF: 10}, BandScale: 0.6180339887498949, LevelShift: -2.5,
				DaysOff: []string{"Friday", "Saturday"}, WorkingMinutes: []int32{540, 600, 660}}}
	}
	cases := map[string]func(*Message){
		"full":                   func(*Message) {},
		"no observed, nil steps": func(m *Message) { m.Observed, m.Steps = nil, nil },
		"empty steps, nil lags":  func(m *Message) { m.Steps, m.Model.Lags = []Step{}, nil },
		"sigma2 zero omitted":    func(m *Message) { m.Model.Sigma2 = 0 },
		"df zero omitted":        func(m *Message) { m.Model.DF, m.Observed.DF = 0, 0 },
		"no fallback":            func(m *Message) { m.Steps[1].Fallback, m.Observed.Fallback = false, false },
		"no theta":               func(m *Message) { m.Model.Combine, m.Model.Theta = "none", nil },
		"theta with a profile":   func(m *Message) { m.Model.Theta.Period, m.Model.Theta.Profile = 0, 336 },
		"additive season":        func(m *Message) { m.Model.Theta.Additive = true },
		"growth not measured":    func(m *Message) { m.Model.Theta.Growth = nil },
		"growth measured 0":      func(m *Message) { m.Model.Theta.Growth = new(0.0) },
		"damped trend":           func(m *Message) { m.Model.Theta.SlopeShare, m.Model.Theta.Phi = 0, 0.95 },
		"holt-winters": func(m *Message) {
			m.Model.Theta.SlopeShare, m.Model.Theta.Phi, m.Model.Theta.SeasonSmoothing = 0, 0.9, new(0.05)
		},
		"holt-winters γ 0": func(m *Message) {
			m.Model.Theta.SlopeShare, m.Model.Theta.Phi, m.Model.Theta.SeasonSmoothing = 0, 0.9, new(0.0)
		},
		"autoregression": func(m *Message) {
			m.Model.Theta.Alpha, m.Model.Theta.SlopeShare, m.Model.Theta.AR = 0, 0, []float64{1.25, -0.5, 1e-7}
		},
		"input lags":           func(m *Message) { m.Model.InputLags = [][]int{{0, 1}, {1, 2, 3}} },
		"an input left out":    func(m *Message) { m.Model.InputLags = [][]int{{1, 2}, nil, {}} },
		"no band scale":        func(m *Message) { m.Model.BandScale = 0 },
		"no level shift":       func(m *Message) { m.Model.LevelShift = 0 },
		"no days off":          func(m *Message) { m.Model.DaysOff = nil },
		"one day off":          func(m *Message) { m.Model.DaysOff = []string{"Sunday"} },
		"no working minutes":   func(m *Message) { m.Model.WorkingMinutes = nil },
		"sigma2 negative zero": func(m *Message) { m.Model.Sigma2 = math.Copysign(0, -1) },
		"negative zero":        func(m *Message) { m.Observed.Residual = math.Copysign(0, -1) },
		"switch points": func(m *Message) {
			m.Steps[0].Mean, m.Steps[0].Std, m.Steps[0].Lo = 1e-6, 9.999999999999999e20, 999999999999999999999.0
		},
		"large and small":         func(m *Message) { m.Steps[0].Mean, m.Steps[0].Std = -1.7976931348623157e308, 2.2250738585072014e-308 },
		"html and quotes":         func(m *Message) { m.Series = `a<b>&"c"\d` },
		"control and unicode":     func(m *Message) { m.Series = "tab\there\nß€\u2028\x01" },
		"invalid utf-8":           func(m *Message) { m.Series = "bad\xff\xfe" },
		"empty series":            func(m *Message) { m.Series = "" },
		"zoned time, no fraction": func(m *Message) { m.IssuedAt = time.Date(1999, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -5*3600-1800)) },
		"zero time":               func(m *Message) { m.IssuedAt = time.Time{} },
		"negative t":              func(m *Message) { m.T, m.Steps[0].T = -7, math.MinInt64 },
	}
	for name, edit := range cases {
		m := full()
		edit(&m)
		want, err := json.Marshal(plainOf(&m))
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		if viaMethod, err := json.Marshal(&m); err != nil || !bytes.Equal(viaMethod, want) {
			t.Errorf("%s: Message.MarshalJSON: %s, %v", name, viaMethod, err)
		}
		got, err := m.AppendJSON([]byte("prefix"))
		if err != nil {
			t.Fatalf("%s: AppendJSON: %v", name, err)
		}
		if !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for name, c := range map[string]struct {
		edit func(*Message)
		path []string // of the field that must be null
	}{
		"NaN mean":    {func(m *Message) { m.Steps[1].Mean = math.NaN() }, []string{"steps", "1", "mean"}},
		"Inf std":     {func(m *Message) { m.Observed.Std = math.Inf(1) }, []string{"observed", "std"}},
		"-Inf gamma":  {func(m *Message) { m.Model.Gamma = math.Inf(-1) }, []string{"model", "gamma"}},
		"NaN sigma2":  {func(m *Message) { m.Model.Sigma2 = math.NaN() }, []string{"model", "sigma2"}},
		"NaN weight":  {func(m *Message) { m.Observed.Weight = math.NaN() }, []string{"observed", "weight"}},
		"Inf d_eff":   {func(m *Message) { m.Model.DEff = math.Inf(1) }, []string{"model", "d_eff"}},
		"NaN noise":   {func(m *Message) { m.Model.NoiseStd = math.NaN() }, []string{"model", "noise_std"}},
		"Inf hi last": {func(m *Message) { m.Steps[1].Hi = math.Inf(1) }, []string{"steps", "1", "hi"}},
	} {
		m := full()
		c.edit(&m)
		got, err := m.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: AppendJSON: %v", name, err)
		}
		var v any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("%s: invalid JSON %s: %v", name, got, err)
		}
		for _, k := range c.path {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				v = x[int(k[0]-'0')]
			}
		}
		if v != nil {
			t.Errorf("%s: %v at %v, want null in %s", name, v, c.path, got)
		}
	}
	m := full()
	m.IssuedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := m.AppendJSON(nil); err == nil {
		t.Errorf("year 10000: AppendJSON accepted what Marshal refuses")
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("s1", int64(3), 1.5, 1e-7, -2e21, int64(1763757071448551968), true)
	f.Add("<&>\xff", int64(-1), 0.0, math.Copysign(0, -1), 5e-324, int64(0), false)
	f.Fuzz(func(t *testing.T, series string, tt int64, a, b, c float64, nanos int64, outlier bool) {
		m := Message{Series: series, T: tt, IssuedAt: time.Unix(0, nanos).UTC(),
			Observed: &Observed{Y: a, Prediction: b, Std: c, Residual: a - b, Weight: c, Outlier: outlier},
			Steps:    []Step{{H: 1, T: tt, Mean: a, Std: b, Lo: c, Hi: a}},
			Model:    ModelInfo{M: 1, Lags: []int{1}, Sigma2: b, Gamma: c, NoiseStd: a, DEff: b, Swaps: 1}}
		want, werr := json.Marshal(plainOf(&m))
		got, gerr := m.AppendJSON(nil)
		finite := true
		for _, v := range []float64{a, b, c} {
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		switch {
		case finite && (werr == nil) != (gerr == nil):
			t.Fatalf("Marshal error %v, AppendJSON error %v", werr, gerr)
		case finite && werr == nil && !bytes.Equal(got, want):
			t.Fatalf("got  %s\nwant %s", got, want)
		case !finite && gerr == nil && !json.Valid(got):
			t.Fatalf("non-finite input: invalid JSON %s", got)
		}
	})
}

// BenchmarkEncodeForecast compares AppendJSON with encoding/json on a
// forecast message of the daemon benchmarks' shape (10 steps, 10 lags).
func BenchmarkEncodeForecast(b *testing.B) {
	m := Message{Series: "s123", T: 1000, IssuedAt: time.Now().UTC(),
		Observed: &Observed{Y: 10.53, Prediction: 10.49, Std: 0.031, Residual: 0.04, Weight: 1},
		Model:    ModelInfo{M: 50, Lags: []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, Sigma2: 20, Gamma: 3665.3, NoiseStd: 0.0031, DEff: 47.9, Swaps: 12}}
	for h := 1; h <= 10; h++ {
		m.Steps = append(m.Steps, Step{H: h, T: 1000 + int64(h), Mean: 10 + 0.1*float64(h), Std: 0.03 * float64(h), Lo: 9.9, Hi: 10.7})
	}
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(plainOf(&m)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = m.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
