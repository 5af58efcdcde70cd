package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/source"
)

func TestEmptyConfigIsDefault(t *testing.T) {
	for _, in := range []string{"", "\n", "# nothing\n", "---\n", "{}\n", "model: {}\n"} {
		c, err := ParseConfig([]byte(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if !reflect.DeepEqual(c, DefaultConfig()) {
			t.Errorf("%q: got %+v, want DefaultConfig", in, c)
		}
	}
	def := DefaultConfig()
	if err := def.Validate(); err != nil {
		t.Errorf("DefaultConfig is invalid: %v", err)
	}
}

// TestDefaultYAMLIsDefault keeps the documented config/default.yaml equal to
// DefaultConfig, so the documentation cannot drift from the code.
func TestDefaultYAMLIsDefault(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "..", "config", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Errorf("config/default.yaml differs from DefaultConfig:\n got %+v\nwant %+v", c, DefaultConfig())
	}
}

// TestConfigFilesLoad loads every config/*.yaml (new files are covered
// automatically) and maps its model onto a valid online.Config and calendar.
func TestConfigFilesLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found %d config files, want at least default, santafe, sinc", len(files))
	}
	for _, f := range files {
		c, err := LoadConfig(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		oc := c.Model.Learner(c.Forecast, c.Robust)
		if err := oc.Validate(); err != nil {
			t.Errorf("%s: online config: %v", f, err)
		}
		if _, err := c.Model.calendar(); err != nil {
			t.Errorf("%s: model.calendar: %v", f, err)
		}
		for i := range c.Series {
			m, err := c.seriesModel(i)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if err := m.Learner(c.Forecast, c.Robust).Validate(); err != nil {
				t.Errorf("%s: series[%d] online config: %v", f, i, err)
			}
		}
	}
}

func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // substrings of the error
	}{
		{"unknown top-level key", "modle:\n  lags: 3\n", []string{"line 1", "modle"}},
		{"unknown model key", "model:\n  lags: 3\n  workingset: 5\n", []string{"line 3", "workingset"}},
		{"unknown kernel key", "model:\n  kernel:\n    sigma: 3\n", []string{"line 3", "sigma"}},
		{"unknown key in a series override", "series:\n  - match: a*\n    model:\n      lag: 3\n",
			[]string{"line 4", "series[0].model.lag"}},
		{"unknown nested key in a series override", "series:\n  - match: a*\n    model:\n      kernel: {sigm2: 3}\n",
			[]string{"line 4", "series[0].model.kernel.sigm2"}},
		{"wrong type", "model:\n  warmup: many\n", []string{"line 2: model.warmup: cannot unmarshal", "many"}},
		{"wrong type for an auto key", "model:\n  working_set: many\n", []string{"line 2: model.working_set: want auto or an integer", "many"}},
		{"wrong type in a flow map", "kafka: {group: g, max_record_bytes: big}\n", []string{"line 1: kafka.max_record_bytes: cannot unmarshal", "big"}},
		{"wrong type in a list", "kafka:\n  brokers: [a:1, {x: 1}]\n", []string{"line 2: kafka.brokers[1]: cannot unmarshal !!map"}},
		// The library quotes a long value by its first 7 bytes.
		{"a long value of the wrong type", "kafka:\n  brokers: kafka-1.example:9092\n", []string{"line 2: kafka.brokers: cannot unmarshal", "kafka-1..."}},
		{"a long word for a number", "forecast: {horizon: twenty-four}\n", []string{"line 1: forecast.horizon: cannot unmarshal"}},
		{"lags not a number", "model:\n  lags: often\n", []string{"line 2", "lag", "often"}},
		{"lag list with a string", "model:\n  lags: [1, two]\n", []string{"line 2", "two"}},
		{"gamma not a number", "model:\n  gamma: big\n", []string{"line 2", "auto", "big"}},
		{"two documents", "model: {}\n---\nmodel: {}\n", []string{"line 2", "second"}},
		{"working set too small", "model: {working_set: 1}\n", []string{"model.working_set: must be auto or in [2, 4096] (got 1)"}},
		// Typos that would allocate gigabytes per series, pin a CPU or
		// overflow, refused before anything runs.
		{"working set too large", "model: {working_set: 100000000}\n", []string{"model.working_set: must be auto or in [2, 4096] (got 100000000)"}},
		{"growth too large", "model: {max_working_set: 100000}\n", []string{"model.max_working_set: must be in [2, 4096] (got 100000)"}},
		{"tuning set too large", "model: {tune_working_set: 5000}\n", []string{"model.tune_working_set: must be auto or in [1, 4096] (got 5000)"}},
		{"warm-up too long", "model: {warmup: 9223372036854775807}\n", []string{"model.warmup: must be at most 1048576 (got 9223372036854775807)"}},
		{"poly degree too high", "model: {kernel: {type: poly, degree: 1000000000}}\n", []string{"model.kernel.degree: must be in [1, 64] (got 1000000000)"}},
		{"robust window too long", "robust: {enabled: true, window: 3000000000}\n", []string{"robust.window: must be in [20, 100000] (got 3000000000)"}},
		{"memory limit overflows", "process: {memory_limit_mib: 17592186044417}\n", []string{"process.memory_limit_mib: must be in [0, 1073741824] (got 17592186044417)"}},
		{"an input topic twice", "kafka: {input_topics: [a, b, a]}\n", []string{`kafka.input_topics[2]: lists "a" a second time`}},
		{"dead letters to an input", "kafka: {input_topics: [a], dead_letter_topic: a}\n", []string{`kafka.dead_letter_topic: must differ from the input, forecast and state topics (got "a")`}},
		{"dead letters to the forecasts", "kafka: {dead_letter_topic: forecasts}\n", []string{`kafka.dead_letter_topic: must differ`}},
		{"TLS files without TLS", "kafka: {tls: {ca_file: ca.pem}}\n", []string{"kafka.tls.enabled: is false, but other kafka.tls settings are set"}},
		{"a topic name Kafka refuses", "kafka: {input_topics: [\"bad topic/name\"]}\n", []string{`kafka.input_topics[0]: must be a Kafka topic name`, `"bad topic/name"`}},
		{"a forecast topic Kafka refuses", "kafka: {forecast_topic: \"..\"}\n", []string{`kafka.forecast_topic: must be a Kafka topic name`}},
		{"a group that makes the state topic invalid", "kafka: {group: \"my group\"}\n", []string{`kafka.state_topic: must be a Kafka topic name`, `"my group-state"`}},
		{"a state topic per input too long", "kafka: {input_topics: [a, " + strings.Repeat("b", 248) + "], state_topic: st}\n", []string{"with several input topics each has its state topic <state>.<input>"}},
		{"a broker without a port", "kafka: {brokers: [\"kafka-1:\"]}\n", []string{`kafka.brokers[0]: must be host:port with a port in 1..65535 (got "kafka-1:")`}},
		{"credentials without SASL", "kafka: {sasl: {username: u, password: p}}\n", []string{`kafka.sasl.mechanism: is "" (none), but a username or password is set`}},
		{"no what-if slot", "http: {what_if: {max_concurrent: 0}}\n", []string{"http.what_if.max_concurrent: must be ≥ 1 (got 0)"}},
		{"what-if horizon cap", "http: {what_if: {max_horizon: 0}}\n", []string{"http.what_if.max_horizon: must be 1..1000000 (got 0)"}},
		{"no read timeout", "http: {read_timeout: 0s}\n", []string{"http.read_timeout: must be a duration", "got 0s"}},
		{"cert without key", "http: {tls: {cert_file: a.pem}}\n", []string{"http.tls: cert_file and key_file go together"}},
		{"client CA without TLS", "http: {tls: {client_ca_file: ca.pem}}\n", []string{"http.tls.client_ca_file: needs http.tls.cert_file"}},
		{"two token sources", "http: {auth: {token_file: t, token_env: T}}\n", []string{"http.auth: token_file and token_env exclude each other"}},
		{"small dead letters", "kafka: {dead_letter_max_bytes: 100}\n", []string{"kafka.dead_letter_max_bytes: must be ≥ 4096 (got 100)"}},
		{"negative lag count", "model: {lags: -3}\n", []string{"model.lags", "-3"}},
		{"lag zero", "model: {lags: [0, 1]}\n", []string{"model.lags", "[0 1]"}},
		{"unsorted lags", "model: {lags: [3, 1]}\n", []string{"model.lags", "increasing", "[3 1]"}},
		{"no regressors", "model: {lags: 0}\n", []string{"model.lags", "no regressors"}},
		{"inputs with no input lag", "model: {inputs: 1, input_lags: []}\n", []string{"model.input_lags", "inputs is 1"}},
		{"input lags without inputs", "model: {input_lags: 2}\n", []string{"model.input_lags", "inputs is 0"}},
		{"negative input lag", "model: {inputs: 1, input_lags: [-1, 0]}\n", []string{"model.input_lags", "[-1 0]"}},
		{"sigma2 zero", "model: {kernel: {sigma2: 0}}\n", []string{"model.kernel.sigma2", "got 0"}},
		{"sigma2 nan", "model: {kernel: {sigma2: .nan}}\n", []string{"model.kernel.sigma2", "NaN"}},
		{"kernel type", "model: {kernel: {type: gauss}}\n", []string{"model.kernel.type", `"gauss"`}},
		{"poly degree", "model: {kernel: {type: poly, degree: 0}}\n", []string{"model.kernel.degree", "got 0"}},
		{"gamma negative", "model: {gamma: -1}\n", []string{"model.gamma", "got -1"}},
		{"forgetting", "model: {forgetting: 1.5}\n", []string{"model.forgetting", "got 1.5"}},
		{"warm-up within the lags", "model: {lags: 20, warmup: 20}\n", // 20 lags: 20 + 1 + 2·21 values
			[]string{"model.warmup", "must be ≥ 63", "got 20"}},
		{"warm-up for the inputs", "model: {lags: 2, inputs: 3, input_lags: [0, 1], calendar: {features: [day_of_week]}, warmup: 34}\n",
			[]string{"model.warmup", "must be ≥ 35", "15 regressors", "got 34"}}, // 2 + 6 + 7 regressors: depth 2 + 1 + 2·(15 + 1)
		{"transform", "model: {transform: sqrt}\n", []string{"model.transform", `"sqrt"`}},
		{"combine", "model: {combine: ets}\n", []string{"model.combine", `"ets"`}},
		{"level_shift", "model: {level_shift: \"no\"}\n", []string{"model.level_shift", `"no"`}},
		{"difference", "model: {difference: 2}\n", []string{"model.difference", "got 2"}},
		{"season", "model: {season: 1}\n", []string{"model.season", "got 1"}},
		{"cutoff", "model: {cutoff: 1}\n", []string{"model.cutoff", "got 1"}},
		{"window", "model: {window: 0}\n", []string{"model.window", "got 0"}},
		{"window not an integer", "model: {window: 2.5}\n", []string{"line 1", "integer", "2.5"}},
		{"fraction for an integer", "model:\n  working_set: 2.5\n", []string{"line 2", "model.working_set", "integer", "2.5"}},
		{"fraction in an override", "series:\n  - match: a\n    model: {warmup: 1.5}\n",
			[]string{"line 3", "series[0].model.warmup", "integer", "1.5"}},
		{"syntax error", "model:\n\tlags: 3\n", []string{"line 2"}},
		{"swap interval", "model: {swap_interval: -1}\n", []string{"model.swap_interval", "got -1"}},
		{"scale", "model: {scale: minmax}\n", []string{"model.scale", `"minmax"`}},
		{"select iter", "model: {select_iter: -5}\n", []string{"model.select_iter", "got -5"}},
		{"horizon", "forecast: {horizon: -1}\n", []string{"forecast.horizon", "got -1"}},
		{"every", "forecast: {every: 0}\n", []string{"forecast.every", "got 0"}},
		{"level", "forecast: {level: 95}\n", []string{"forecast.level", "got 95"}},
		{"robust weight", "robust: {weight: tukey}\n", []string{"robust.weight", `"tukey"`}},
		{"robust c2", "robust: {c1: 3, c2: 2}\n", []string{"robust.c2", "got 2"}},
		{"sasl mechanism", "kafka: {sasl: {mechanism: gssapi}}\n", []string{"kafka.sasl.mechanism", `"gssapi"`}},
		{"sasl user", "kafka: {sasl: {mechanism: plain}}\n", []string{"kafka.sasl.username"}},
		{"tls cert without key", "kafka: {tls: {enabled: true, cert_file: c.pem}}\n", []string{"kafka.tls", "go together"}},
		{"robust scale", "robust: {scale: sn}\n", []string{"robust.scale", `"sn"`}},
		{"window too large", "model: {window: 2000000000}\n", []string{"model.window", "got 2000000000"}},
		{"iterated tuning needs a horizon", "model: {tuning: iterated}\nforecast: {horizon: 0}\n", []string{"model", "iterated tuning"}},
		{"robust window", "robust: {enabled: true, window: 15}\n", []string{"robust.window", "got 15"}},
		{"tuning", "model: {tuning: crossval}\n", []string{"model.tuning", `"crossval"`, "robust-cv"}},
		{"broker", "kafka: {brokers: [localhost]}\n", []string{"kafka.brokers[0]", `"localhost"`}},
		{"no brokers", "kafka: {brokers: []}\n", []string{"kafka.brokers"}},
		{"state topic consumed", "kafka: {input_topics: [streamd-state]}\n", []string{"kafka.input_topics"}},
		{"listen", "http: {listen: 9464}\n", []string{"http.listen", `"9464"`}},
		{"empty glob", "series: [{model: {lags: 3}}]\n", []string{"series[0].match"}},
		{"bad glob", "series: [{match: \"[a\"}]\n", []string{"series[0].match", `"[a"`}},
		{"bad override value", "series: [{match: a*}, {match: b*, model: {working_set: 0}}]\n",
			[]string{"series[1].model.working_set: must be auto or in [2, 4096] (got 0)"}},
		{"bad override type", "series:\n  - match: a*\n    model: {working_set: lots}\n",
			[]string{"series[0].model", "line 3", "lots"}},
		{"time unit", "model: {time_unit: us}\n", []string{"model.time_unit", `"us"`, "sequence, ms or s"}},
		{"time unit in an override", "series: [{match: a*, model: {time_unit: s}}]\n", []string{"series[0].model.time_unit", "one unit", `"s"`}},
		{"planned index beyond the inputs", "model: {inputs: 2, input_lags: [0], planned_inputs: [0, 2]}\n",
			[]string{"model.planned_inputs[1]", "model.inputs = 2", "got 2"}},
		{"planned without inputs", "model: {planned_inputs: [0]}\n", []string{"model.planned_inputs[0]", "model.inputs = 0", "got 0"}},
		{"planned negative", "model: {inputs: 1, input_lags: [0], planned_inputs: [-1]}\n", []string{"model.planned_inputs[0]", "got -1"}},
		{"planned not increasing", "model: {inputs: 3, input_lags: [0], planned_inputs: [2, 1]}\n",
			[]string{"model.planned_inputs[1]", "strictly increasing", "[2 1]"}},
		{"planned repeated", "model: {inputs: 3, input_lags: [0], planned_inputs: [1, 1]}\n", []string{"model.planned_inputs[1]", "[1 1]"}},
		{"planned not integers", "model: {planned_inputs: [first]}\n", []string{"line 1", "first"}},
		{"calendar feature", "model: {calendar: {features: [weekday]}}\n", []string{"model.calendar.features[0]", `"weekday"`, "day_of_week"}},
		{"calendar feature twice", "model: {calendar: {features: [month, day_of_week, month]}}\n", []string{"model.calendar.features[2]", `"month" twice`}},
		{"holiday date", "model: {calendar: {features: [holiday], holidays: [2024-12-25, 25.12.2024]}}\n",
			[]string{"model.calendar.holidays[1]", `"25.12.2024"`, "YYYY-MM-DD"}},
		{"holiday not a day", "model: {calendar: {features: [holiday], holidays: [\"2023-02-29\"]}}\n", []string{"model.calendar.holidays[0]", `"2023-02-29"`}},
		{"holiday without dates", "model: {calendar: {features: [holiday]}}\n", []string{"model.calendar.holidays", "got []"}},
		{"dates without holiday", "model: {calendar: {features: [month], holidays: [2024-12-25]}}\n", []string{"model.calendar.features", "holiday", "[month]"}},
		{"time zone", "model: {calendar: {time_zone: Mars/Olympus}}\n", []string{"model.calendar.time_zone", `"Mars/Olympus"`}},
		{"local time zone", "model: {calendar: {time_zone: Local}}\n", []string{"model.calendar.time_zone", `"Local"`}},
		{"unknown calendar key", "model:\n  calendar:\n    zone: UTC\n", []string{"line 3", "model.calendar.zone"}},
		{"bad calendar in an override", "series: [{match: a*, model: {calendar: {features: [hour]}}}]\n", []string{"series[0].model.calendar.features[0]", `"hour"`}},
		{"future field empty", "kafka: {fields: {future: \"\"}}\n", []string{"kafka.fields.future: must not be empty"}},
		{"future field is u", "kafka: {fields: {future: u}}\n", []string{"kafka.fields.future", "kafka.fields.u", `"u"`}},
		{"several problems are all reported", "model: {working_set: 1, forgetting: 0}\nforecast: {every: 0}\n",
			[]string{"model.working_set", "model.forgetting", "forecast.every"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			if err == nil {
				t.Fatalf("no error for %q", tc.yaml)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestValidateFieldError: validation problems have identity, so callers can
// tell a bad value from an unreadable file.
func TestValidateFieldError(t *testing.T) {
	_, err := ParseConfig([]byte("model: {working_set: 1}\n"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Path != "model.working_set" {
		t.Fatalf("got %v, want a *FieldError for model.working_set", err)
	}
}

func TestLagForms(t *testing.T) {
	for _, tc := range []struct {
		yaml       string
		ylags      []int
		inputLags  [][]int
		autoSigma2 bool
		orders     int // online.Config.InputLagOrders
	}{
		{"model: {lags: auto}", narx.Lags(30), nil, true, 0}, // the largest candidate bounds the depth
		{"model: {lags: 3}", []int{1, 2, 3}, nil, true, 0},
		{"model: {lags: [1, 2, 6, 12], warmup: 200}", []int{1, 2, 6, 12}, nil, true, 0},
		{"model: {lags: 2, inputs: 2, input_lags: 2}", []int{1, 2}, [][]int{{1, 2}, {1, 2}}, true, 0},
		{"model: {lags: 0, inputs: 1, input_lags: [0]}", []int{}, [][]int{{0}}, true, 0},
		{"model: {lags: [], inputs: 1, input_lags: [0, 3], kernel: {sigma2: 3}}", []int{}, [][]int{{0, 3}}, false, 0},
		// input_lags: auto, the default: the deepest of the lags ranked,
		// from 0 for the planned input and from 1 for the other.
		{"model: {lags: 2, inputs: 2, planned_inputs: [1]}", []int{1, 2}, [][]int{{1, 2, 3, 4}, {0, 1, 2, 3}}, true, autoInputLagOrders},
	} {
		c, err := ParseConfig([]byte(tc.yaml))
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		oc := c.Model.Learner(c.Forecast, c.Robust)
		e := oc.Model.Embedding
		if !slices.Equal(e.YLags, tc.ylags) || !reflect.DeepEqual(e.InputLags, tc.inputLags) {
			t.Errorf("%s: embedding %v %v, want %v %v", tc.yaml, e.YLags, e.InputLags, tc.ylags, tc.inputLags)
		}
		if oc.AutoSigma2 != tc.autoSigma2 {
			t.Errorf("%s: AutoSigma2 = %v", tc.yaml, oc.AutoSigma2)
		}
		if oc.InputLagOrders != tc.orders {
			t.Errorf("%s: InputLagOrders = %d, want %d", tc.yaml, oc.InputLagOrders, tc.orders)
		}
		if err := oc.Validate(); err != nil {
			t.Errorf("%s: online config: %v", tc.yaml, err)
		}
	}
}

// TestLearnerMapping checks every key's way onto online.Config, autos included.
func TestLearnerMapping(t *testing.T) {
	c, err := ParseConfig([]byte(`
model:
  lags: 4
  working_set: 50
  kernel: {type: poly, degree: 3, offset: 0.5}
  gamma: 7
  forgetting: 0.99
  warmup: 300
  cutoff: 1e-8
  swap_interval: 0
  noise_every: 5
  seed: 42
  scale: standard
  selection: entropy
  select_iter: 11
  select_patience: 12
  level_shift: off
forecast: {horizon: 5, every: 2, level: 0.9}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := c.Model.Learner(c.Forecast, c.Robust)
	want := online.Config{
		Model: narx.Config{
			Embedding:  narx.Embedding{YLags: []int{1, 2, 3, 4}},
			Kernel:     narx.Kernel{Type: narx.Polynomial, Degree: 3, Offset: 0.5},
			Size:       50,
			Gamma:      7,
			Forgetting: 0.99,
			Cutoff:     1e-8,
			// window: auto with λ = 0.99: max(min(6·50, 1600), 4·50, 200, 5/(1−0.99)) = 500
			Window:     500,
			NoiseEvery: 5,
			Seed:       42,
			SwapRule:   narx.SwapGain,
			Select:     narx.SelectOptions{Method: narx.SelectEntropy, MaxIter: 11, Patience: 12},
		},
		Warmup: 300, Horizon: 5, Calibrate: 5, Every: 2, Level: 0.9, Scale: online.ScaleStandard, TuneSize: 50, TuneHorizon: 5,
		// transform, difference, season and combine: auto (the defaults).
		Forms:        []online.Form{{}, {Diff: true}, {Log: true}, {Log: true, Diff: true}},
		Combine:      online.CombineAuto,
		NoLevelShift: true,
		Robust: online.Robust{Enabled: false, Window: 200, Scale: robust.ScaleIQR, Clean: true,
			Weights: robust.Weights{Func: robust.Hampel, C1: 2.5, C2: 3, Floor: robust.DefaultFloor}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mapping\n got %+v\nwant %+v", got, want)
	}

	def := DefaultConfig()
	d := def.Model.Learner(def.Forecast, def.Robust)
	if d.Model.Gamma != DefaultAutoGamma || !d.Model.AutoGamma || !d.AutoSigma2 || d.Model.Kernel.Sigma2 != 2*30 || d.NoLevelShift ||
		!slices.Equal(d.LagCandidates, autoLagOrders) ||
		d.Model.Window != 600 || d.Model.Select.MaxIter != 20*500 || d.Model.Select.Patience != 400 {
		t.Errorf("defaults resolve to %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestAutoWindow: window: auto is six samples per member, at most 1600
// unless four per member are more, at least 200.
func TestAutoWindow(t *testing.T) {
	for _, tc := range []struct{ m, want int }{
		{10, 200}, {32, 200}, {34, 204}, {50, 300}, {100, 600}, {266, 1596}, {267, 1600}, {400, 1600}, {401, 1604}, {500, 2000},
	} {
		c, err := ParseConfig([]byte(fmt.Sprintf("model: {working_set: %d}", tc.m)))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Model.Learner(c.Forecast, c.Robust).Model.Window; got != tc.want {
			t.Errorf("M = %d: window %d, want %d", tc.m, got, tc.want)
		}
	}
}

// TestWorkingSetGrowth: working_set: auto starts at 100 and may grow to
// max_working_set, its derived settings following the grown size; a
// smaller max is also the starting size; a number fixes M (no growth,
// whatever max_working_set says); a max below 2 is refused.
func TestWorkingSetGrowth(t *testing.T) {
	for _, tc := range []struct {
		yaml      string
		size, max int
	}{
		{"model: {}", DefaultWorkingSet, DefaultMaxWorkingSet},
		{"model: {max_working_set: 800}", DefaultWorkingSet, 800},
		{"model: {max_working_set: 50}", 50, 50},
		{"model: {working_set: 200, max_working_set: 800}", 200, 0},
	} {
		c, err := ParseConfig([]byte(tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		l := c.Model.Learner(c.Forecast, c.Robust)
		auto := c.Model.WorkingSet.Auto
		if l.Model.Size != tc.size || l.Growth.Max != tc.max ||
			l.Growth.Window != auto || l.Growth.NoiseEvery != auto || l.Growth.Patience != auto {
			t.Errorf("%s: M = %d, growth %+v; want M = %d, up to %d", tc.yaml, l.Model.Size, l.Growth, tc.size, tc.max)
		}
		if err := l.Validate(); err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
		}
	}
	if _, err := ParseConfig([]byte("model: {max_working_set: 1}")); err == nil || !strings.Contains(err.Error(), "model.max_working_set: must be in [2, 4096] (got 1)") {
		t.Errorf("max_working_set 1: %v", err)
	}
}

// TestAutoLagCandidates: lags: auto offers the orders the warm-up can hold.
func TestAutoLagCandidates(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []int
	}{
		{"model: {lags: auto, working_set: 100, warmup: 500}", autoLagOrders},
		{"model: {lags: auto, working_set: 10, warmup: 20}", []int{1, 2, 3, 4, 6, 8}}, // p < warmup/2
		{"model: {lags: auto, working_set: 100, warmup: 12}", []int{1, 2, 3, 4}},      // M is cut to the regressors
		{"model: {lags: auto, working_set: 2, warmup: 10}", []int{1, 2, 3, 4}},        // the least that works: lag 1 and 8 targets
	} {
		c, err := ParseConfig([]byte(tc.yaml))
		if err != nil {
			t.Errorf("%s: %v", tc.yaml, err)
			continue
		}
		oc := c.Model.Learner(c.Forecast, c.Robust)
		if !slices.Equal(oc.LagCandidates, tc.want) {
			t.Errorf("%s: candidates %v, want %v", tc.yaml, oc.LagCandidates, tc.want)
		}
		if err := oc.Validate(); err != nil {
			t.Errorf("%s: online config: %v", tc.yaml, err)
		}
	}
	if _, err := ParseConfig([]byte("model: {lags: auto, working_set: 2, warmup: 3}")); err == nil ||
		!strings.Contains(err.Error(), "model.warmup: must be ≥ 4 with lags: auto") {
		t.Errorf("too short a warm-up for auto: %v", err)
	}
	if _, err := ParseConfig([]byte("model: {lags: auto, working_set: 2, warmup: 9}")); err == nil ||
		!strings.Contains(err.Error(), "model.warmup: must be ≥ 10") {
		t.Errorf("too short a warm-up for lag 1 and 8 targets: %v", err)
	}
}

// TestPlannedAndCalendar: the two sections the Learner reads beside
// online.Config's mapping, and the decoder the daemon gets.
func TestPlannedAndCalendar(t *testing.T) {
	c, err := ParseConfig([]byte(`
kafka:
  fields: {future: plan}
model:
  inputs: 3
  input_lags: [0]
  planned_inputs: [0, 2]
  time_unit: s
  calendar:
    features: [day_of_week, holiday]
    holidays: [2024-12-25, "2025-01-01"]
    time_zone: Europe/Paris
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Model.planned(); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("planned() = %v, want [0 2]", got)
	}
	spec, err := c.Model.calendar()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Features, []calendar.Feature{calendar.DayOfWeek, calendar.Holiday}) ||
		!slices.Equal(spec.Holidays, []string{"2024-12-25", "2025-01-01"}) || spec.Location.String() != "Europe/Paris" || spec.Dim() != 8 {
		t.Errorf("calendar() = %+v", spec)
	}
	// Compiled: copies compute without allocating. 2024-12-24 23:30 UTC is
	// Christmas, a Wednesday, in Paris.
	dst := make([]float64, spec.Dim())
	tm := time.Date(2024, 12, 24, 23, 30, 0, 0, time.UTC).UnixMilli()
	if n := testing.AllocsPerRun(1, func() { spec.FeaturesTo(dst, tm) }); n != 0 {
		t.Errorf("the Spec calendar() returns is not compiled: %v allocations", n)
	}
	if dst[2] != 1 || dst[7] != 1 {
		t.Errorf("features of Christmas 00:30 in Paris: %v", dst)
	}
	d := c.decoder()
	want := source.Decoder{Fields: source.Fields{Series: "series", T: "t", Y: "y", U: "u", Future: "plan"},
		MaxBytes: 1 << 20, MaxSeriesBytes: 256, Planned: 2, Unit: calendar.Seconds}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("decoder() = %+v, want %+v", d, want)
	}
	// An override planning another number of inputs leaves the width to
	// each series' model; one planning as many keeps the decoder's check.
	for _, tc := range []struct {
		override string
		planned  int
	}{{"{planned_inputs: [1, 2]}", 2}, {"{planned_inputs: [1]}", -1}, {"{inputs: 1, planned_inputs: []}", -1}} {
		c2, err := ParseConfig([]byte("model: {inputs: 3, input_lags: [0], planned_inputs: [0, 2]}\nseries: [{match: a*, model: " + tc.override + "}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if got := c2.decoder().Planned; got != tc.planned {
			t.Errorf("override %s: decoder Planned = %d, want %d", tc.override, got, tc.planned)
		}
	}
	// The defaults: no planned inputs, no calendar, sequence numbers, the
	// field "future".
	def := DefaultConfig()
	if spec, err := def.Model.calendar(); err != nil || spec.Dim() != 0 || def.Model.planned() != nil {
		t.Errorf("defaults: calendar %+v (%v), planned %v", spec, err, def.Model.planned())
	}
	if d := def.decoder(); d.Unit != calendar.Sequence || d.Planned != 0 || d.Fields != source.DefaultFields {
		t.Errorf("default decoder %+v", d)
	}
}

// config/eunite.yaml declares what the EUNITE run of bench/compare needs:
// both inputs planned (their lags chosen from the day predicted on) and a
// calendar from the date.
func TestEuniteConfig(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "..", "config", "eunite.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Model
	spec, err := m.calendar()
	if err != nil {
		t.Fatal(err)
	}
	if m.Inputs != 2 || !slices.Equal(m.planned(), []int{0, 1}) || !m.InputLags.Auto ||
		!slices.Equal(spec.Features, []calendar.Feature{calendar.DayOfWeek, calendar.DayOfYear}) {
		t.Errorf("eunite model: %+v, calendar %+v", m, spec)
	}
	// Everything else is the default.
	def := DefaultConfig().Model
	m.Inputs, m.InputLags, m.PlannedInputs, m.Calendar = def.Inputs, def.InputLags, def.PlannedInputs, def.Calendar
	if !reflect.DeepEqual(m, def) {
		t.Errorf("eunite.yaml sets model keys beyond inputs, input_lags, planned_inputs and calendar:\n got %+v\nwant %+v", m, def)
	}
}

// The default state topic follows the group, so deployments with different
// groups do not share state; an explicit name, or "" (no state), is kept.
func TestStateTopicFollowsGroup(t *testing.T) {
	for _, c := range []struct{ group, topic, want string }{
		{"streamd", "auto", "streamd-state"}, {"billing", "auto", "billing-state"},
		{"billing", "shared-state", "shared-state"}, {"billing", "", ""},
	} {
		k := KafkaConfig{Group: c.group, StateTopic: c.topic}
		if got := k.stateTopic(); got != c.want {
			t.Errorf("group %q, state_topic %q: %q, want %q", c.group, c.topic, got, c.want)
		}
	}
	if got := DefaultConfig().Kafka.StateTopic; got != "auto" {
		t.Errorf("default state_topic %q", got)
	}
}

// http.auth's token is read from its file or variable at start; an empty
// one stops the start, naming the key.
func TestHTTPTokenSources(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/token"
	if err := os.WriteFile(file, []byte("  s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := DefaultConfig().HTTP
	h.Auth.TokenFile = file
	if dc, err := h.server(); err != nil || dc.Token != "s3cret" || dc.WhatIfMaxConcurrent != 4 || dc.WhatIfMaxHorizon != 10000 {
		t.Errorf("token file: %+v, %v", dc, err)
	}
	h.Auth.TokenFile, h.Auth.TokenEnv = "", "STREAMD_TEST_TOKEN"
	t.Setenv("STREAMD_TEST_TOKEN", "from-env")
	if dc, err := h.server(); err != nil || dc.Token != "from-env" {
		t.Errorf("token env: %+v, %v", dc, err)
	}
	t.Setenv("STREAMD_TEST_TOKEN", "")
	if _, err := h.server(); err == nil || !strings.Contains(err.Error(), "http.auth.token_env") {
		t.Errorf("empty token env: %v", err)
	}
}

// TestTimeZoneWithoutFeatures: a time zone alone, with no calendar
// feature, still reaches the Learner (it says on which clock a series'
// days and working hours are read); UTC, the default, is none.
func TestTimeZoneWithoutFeatures(t *testing.T) {
	for zone, want := range map[string]string{"America/New_York": "America/New_York", "UTC": ""} {
		c, err := ParseConfig([]byte("model:\n  calendar:\n    time_zone: " + zone + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if loc := c.Model.Learner(c.Forecast, c.Robust).Calendar.Location; loc != nil {
			got = loc.String()
		}
		if got != want {
			t.Errorf("time_zone %s: the Learner's zone %q, want %q", zone, got, want)
		}
	}
}
