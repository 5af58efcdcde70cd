package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "time/tzdata" // model.calendar.time_zone must not depend on the host's zone files

	"go.yaml.in/yaml/v3"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/robust"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// Config is the YAML configuration of streamd (docs/configuration.md). The model and
// forecast sections are shared by `run` and `backtest`; the others configure
// the daemon. Every key is optional: DefaultConfig holds the value of each one
// that is left out, and config/default.yaml documents them all.
type Config struct {
	Kafka    KafkaConfig    `yaml:"kafka"`
	HTTP     HTTPConfig     `yaml:"http"`
	Model    ModelConfig    `yaml:"model"`
	Robust   RobustConfig   `yaml:"robust"`
	Forecast ForecastConfig `yaml:"forecast"`
	Process  ProcessConfig  `yaml:"process"`
	// Series overrides model keys for the series whose id matches a glob.
	Series []SeriesConfig `yaml:"series"`
}

// KafkaConfig says where records come from and where results go.
type KafkaConfig struct {
	Brokers         []string `yaml:"brokers"`
	Group           string   `yaml:"group"`
	InputTopics     []string `yaml:"input_topics"`
	ForecastTopic   string   `yaml:"forecast_topic"`
	StateTopic      string   `yaml:"state_topic"`
	DeadLetterTopic string   `yaml:"dead_letter_topic"`
	// CheckpointRecords and CheckpointInterval bound how long a partition
	// leaves a series' change unsaved (and so its offset commits behind):
	// whichever comes first.
	CheckpointRecords  int           `yaml:"checkpoint_records"`
	CheckpointInterval time.Duration `yaml:"checkpoint_interval"`
	// MaxRecordBytes rejects larger input records (to the dead-letter topic).
	MaxRecordBytes int `yaml:"max_record_bytes"`
	// Partitioner partitions the forecasts and dead letters by key, as the
	// producers of the input should: murmur2, crc32 or fnv1a.
	Partitioner string `yaml:"partitioner"`
	// MaxSeriesBytes bounds a series id's length (ids with control
	// characters are rejected too).
	MaxSeriesBytes int `yaml:"max_series_bytes"`
	// DeadLetterMaxBytes is the dead-letter topic's max.message.bytes: a
	// larger dead letter is cut to fit.
	DeadLetterMaxBytes int `yaml:"dead_letter_max_bytes"`
	// MaxSeriesPerPartition caps the live series of one input partition; the
	// least recently seen series is evicted beyond it.
	MaxSeriesPerPartition int `yaml:"max_series_per_partition"`
	// Fields names the keys of an input value.
	Fields FieldsConfig `yaml:"fields"`
	TLS    TLSConfig    `yaml:"tls"`
	SASL   SASLConfig   `yaml:"sasl"`
}

// TLSConfig is kafka.tls: TLS to the brokers.
type TLSConfig struct {
	Enabled bool `yaml:"enabled"`
	// CAFile is a PEM bundle of the CAs that sign the brokers' certificates;
	// "" uses the system's.
	CAFile string `yaml:"ca_file"`
	// CertFile and KeyFile are a client certificate (mutual TLS); optional.
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	ServerName string `yaml:"server_name"`
	// InsecureSkipVerify disables certificate verification (tests only).
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// SASLConfig is kafka.sasl: SASL authentication to the brokers.
type SASLConfig struct {
	// Mechanism is "" (none), plain, scram-sha-256 or scram-sha-512.
	Mechanism string `yaml:"mechanism"`
	Username  string `yaml:"username"`
	Password  string `yaml:"password"`
}

// FieldsConfig names the JSON keys of an input value
// {"series": "s1", "t": 1037, "y": 86.0, "u": [0.3, 1], "future": [[0.4, 1]]}.
type FieldsConfig struct {
	Series string `yaml:"series"`
	T      string `yaml:"t"`
	Y      string `yaml:"y"`
	U      string `yaml:"u"`
	// Future is the key of the planned inputs of the steps ahead.
	Future string `yaml:"future"`
}

// stateTopic is the state topic's name: kafka.state_topic, where auto is
// "<group>-state" (a state topic belongs to one consumer group).
func (k *KafkaConfig) stateTopic() string {
	if k.StateTopic == "auto" {
		return k.Group + "-state"
	}
	return k.StateTopic
}

// ProcessConfig tunes the daemon's Go runtime.
type ProcessConfig struct {
	// MemoryLimitMiB is the Go runtime's soft memory limit
	// (debug.SetMemoryLimit), 0 = the GOMEMLIMIT environment variable or
	// none. Without one the heap may grow to twice the live data between
	// collections; a limit makes the collector work harder instead.
	MemoryLimitMiB int `yaml:"memory_limit_mib"`
	// Workers is the size of the pool that runs the series' heavy work
	// (fits, re-choices, retunes) off the partition goroutines: auto =
	// daemon.DefaultWorkers (GOMAXPROCS − 1, at least 1), 0 = none (all of
	// it inline). What-if forecasts run on their requests' goroutines.
	Workers Auto[int] `yaml:"workers"`
}

// maxWorkers bounds process.workers: the work is CPU-bound, and more
// workers than CPUs only share them.
const maxWorkers = 4096

// HTTPConfig is the HTTP server: metrics, health, the series API and the
// web view.
type HTTPConfig struct {
	Listen            string         `yaml:"listen"`
	ReadHeaderTimeout time.Duration  `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration  `yaml:"read_timeout"`
	WriteTimeout      time.Duration  `yaml:"write_timeout"`
	IdleTimeout       time.Duration  `yaml:"idle_timeout"`
	TLS               HTTPTLSConfig  `yaml:"tls"`
	Auth              HTTPAuthConfig `yaml:"auth"`
	WhatIf            WhatIfConfig   `yaml:"what_if"`
}

// HTTPTLSConfig is http.tls: HTTPS, and client certificates as
// authentication when ClientCAFile is set.
type HTTPTLSConfig struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// HTTPAuthConfig is http.auth: a bearer token, read from a file or an
// environment variable, that every route but /healthz (and /metrics with
// PublicMetrics) requires.
type HTTPAuthConfig struct {
	TokenFile     string `yaml:"token_file"`
	TokenEnv      string `yaml:"token_env"`
	PublicMetrics bool   `yaml:"public_metrics"`
}

// WhatIfConfig is http.what_if: the bounds of what-if forecasts, which run
// on their requests' goroutines from a copy of the model taken behind the
// series' pending work.
type WhatIfConfig struct {
	MaxConcurrent int `yaml:"max_concurrent"`
	MaxHorizon    int `yaml:"max_horizon"`
}

// maxWhatIfHorizon bounds http.what_if.max_horizon: a forecast of that many
// steps takes seconds at M = 100.
const maxWhatIfHorizon = 1000000

func (h *HTTPConfig) validate(p *problems) {
	if _, _, err := net.SplitHostPort(h.Listen); err != nil {
		p.add("http.listen", "must be host:port (got %q)", h.Listen)
	}
	for _, t := range []struct {
		path string
		v    time.Duration
	}{{"http.read_header_timeout", h.ReadHeaderTimeout}, {"http.read_timeout", h.ReadTimeout},
		{"http.write_timeout", h.WriteTimeout}, {"http.idle_timeout", h.IdleTimeout}} {
		if t.v < 100*time.Millisecond {
			p.add(t.path, "must be a duration of at least 100ms, such as 30s (got %v)", t.v)
		}
	}
	if (h.TLS.CertFile == "") != (h.TLS.KeyFile == "") {
		p.add("http.tls", "cert_file and key_file go together (got %q and %q)", h.TLS.CertFile, h.TLS.KeyFile)
	}
	if h.TLS.ClientCAFile != "" && h.TLS.CertFile == "" {
		p.add("http.tls.client_ca_file", "needs http.tls.cert_file and key_file: client certificates are checked over TLS (got %q)", h.TLS.ClientCAFile)
	}
	if h.Auth.TokenFile != "" && h.Auth.TokenEnv != "" {
		p.add("http.auth", "token_file and token_env exclude each other (got %q and %q)", h.Auth.TokenFile, h.Auth.TokenEnv)
	}
	if h.WhatIf.MaxConcurrent < 1 {
		p.add("http.what_if.max_concurrent", "must be ≥ 1 (got %d)", h.WhatIf.MaxConcurrent)
	}
	if h.WhatIf.MaxHorizon < 1 || h.WhatIf.MaxHorizon > maxWhatIfHorizon {
		p.add("http.what_if.max_horizon", "must be 1..%d (got %d)", maxWhatIfHorizon, h.WhatIf.MaxHorizon)
	}
}

// ModelConfig is the model section: the NARX embedding, the kernel, the
// fixed-size LS-SVM and the Learner's warm-up and normalisation.
type ModelConfig struct {
	// Lags of y: auto, a count p (lags 1..p; 0 = none) or a list.
	Lags Lags `yaml:"lags"`
	// InputLags applies to each exogenous input: auto, a count q (lags
	// 1..q) or a list in which 0 (the current input) is allowed.
	InputLags Lags `yaml:"input_lags"`
	// Inputs is the number n_u of exogenous inputs.
	Inputs     int       `yaml:"inputs"`
	WorkingSet Auto[int] `yaml:"working_set"`
	// MaxWorkingSet is the largest working set of working_set: auto.
	MaxWorkingSet int           `yaml:"max_working_set"`
	Kernel        KernelConfig  `yaml:"kernel"`
	Gamma         Auto[float64] `yaml:"gamma"`
	Forgetting    float64       `yaml:"forgetting"`
	Warmup        int           `yaml:"warmup"`
	Cutoff        float64       `yaml:"cutoff"`
	Window        Auto[int]     `yaml:"window"`
	// SwapInterval is the minimum number of samples between working-set swap
	// tests; 0 freezes the working set after the fit.
	SwapInterval int `yaml:"swap_interval"`
	// SwapRule is how a swap is decided: entropy (the book's Rényi test) or
	// gain (the member least needed, if the ridge objective drops).
	SwapRule   string    `yaml:"swap_rule"`
	NoiseEvery Auto[int] `yaml:"noise_every"`
	Seed       uint64    `yaml:"seed"`
	Scale      string    `yaml:"scale"`
	// Selection is how the fit chooses the working set: greedy (pivoted
	// Cholesky: the largest Nyström residual first) or entropy (the book's
	// Rényi entropy search, tuned by select_iter and select_patience).
	Selection  string    `yaml:"selection"`
	SelectIter Auto[int] `yaml:"select_iter"`
	// SelectPatience stops the batch entropy search after this many
	// consecutive rejected swaps.
	SelectPatience Auto[int] `yaml:"select_patience"`
	// Tuning ranks the lag orders of lags: auto (and σ² under robust-cv):
	// evidence (level 3, one-step), iterated (validation of
	// forecast.horizon-step iterated forecasts on the warm-up window) or
	// robust-cv (repeated 5-fold cross-validation, trimmed mean of squared
	// errors, book §5.3).
	Tuning string `yaml:"tuning"`
	// TuneWorkingSet is the working-set size used while ranking structures;
	// auto = min(working_set, 200).
	TuneWorkingSet Auto[int] `yaml:"tune_working_set"`
	// RetuneEvery re-runs the level-3 width search on the recent window
	// every this many samples (0 = never), at a per-series phase; needs
	// kernel.sigma2: auto.
	RetuneEvery int `yaml:"retune_every"`
	// Transform of y: auto (chosen: none, or log for a positive series),
	// none or log.
	Transform string `yaml:"transform"`
	// Difference: auto (chosen), 0 (levels) or 1 (the model learns the
	// increments).
	Difference Auto[int] `yaml:"difference"`
	// Season proposes seasonal lags s, s+1: auto (s detected from the
	// data), 0 (none) or a period s ≥ 2.
	Season Auto[int] `yaml:"season"`
	// Combine averages the model's forecasts with the theta method's:
	// auto (unless, at a re-choice, the model's validated forecasts alone
	// are better than the average's by 20 %), theta (always) or none.
	Combine string `yaml:"combine"`
	// LevelShift: auto (the forecasts are corrected for a shift of the
	// level the model has not learned yet; docs/design.md, "Level
	// shifts") or off.
	LevelShift string `yaml:"level_shift"`
	// TimeUnit is what an integer t is: sequence (a sequence number, no
	// calendar), ms or s (Unix time). Timestamp strings are times whatever
	// the unit. One for all series: the daemon reads t with one decoder.
	TimeUnit string `yaml:"time_unit"`
	// PlannedInputs are the 0-based indices into u of the inputs known in
	// advance, strictly increasing: a record's future rows carry their
	// values for the steps ahead, in this order, and a forecast uses them
	// instead of holding the last ones.
	PlannedInputs []int `yaml:"planned_inputs"`
	// Calendar derives inputs from t for every step, past and future.
	Calendar CalendarConfig `yaml:"calendar"`
}

// CalendarConfig is model.calendar: the calendar features of
// internal/calendar (encodings in its package doc).
type CalendarConfig struct {
	// Features: hour_of_day, day_of_week, month, day_of_year, holiday; []
	// = none. They need t as a time (RFC 3339, a date, or an integer with
	// time_unit ms or s).
	Features []string `yaml:"features"`
	// Holidays are the dates YYYY-MM-DD of the holiday feature.
	Holidays []string `yaml:"holidays"`
	// TimeZone is the IANA zone (Europe/Paris) in which the hour, the day
	// and the holidays are read.
	TimeZone string `yaml:"time_zone"`
}

// KernelConfig is model.kernel.
type KernelConfig struct {
	Type   string        `yaml:"type"`
	Sigma2 Auto[float64] `yaml:"sigma2"`
	Degree int           `yaml:"degree"`
	Offset float64       `yaml:"offset"`
}

// RobustConfig is the robust reweighting of docs/design.md, "The model".
type RobustConfig struct {
	Enabled bool    `yaml:"enabled"`
	Weight  string  `yaml:"weight"`
	C1      float64 `yaml:"c1"`
	C2      float64 `yaml:"c2"`
	// Window is the number of recent residuals of the robust scale estimate.
	Window int `yaml:"window"`
	// Scale is the robust scale of the residuals: iqr (IQR/1.349) or mad
	// (1.483·MAD).
	Scale string `yaml:"scale"`
	// Clean feeds an outlier's one-step prediction, not the outlier, into the
	// lag buffer.
	Clean bool `yaml:"clean"`
}

// ForecastConfig is the forecast section.
type ForecastConfig struct {
	Horizon int     `yaml:"horizon"`
	Every   int     `yaml:"every"`
	Level   float64 `yaml:"level"`
	// Calibrate scales the bands of steps 2..Horizon by the series' own
	// realised errors (online.Config.Calibrate).
	Calibrate bool `yaml:"calibrate"`
}

// SeriesConfig overrides model keys for the series whose id matches Match
// (path.Match syntax). Model holds only the keys it sets; they apply on top
// of the top-level model section.
type SeriesConfig struct {
	Match string    `yaml:"match"`
	Model yaml.Node `yaml:"model"`
}

// maxWindow bounds model.window: the retained samples cost W·(M+n+3) floats
// per series (their kernel columns included) and O(W·M) work per swap test.
// robust.window takes the same bound: its scale keeps 3 numbers per sample.
const maxWindow = 100000

// topicRule is Kafka's rule for a topic name, which the brokers would
// otherwise refuse only when the topic is first used.
const topicRule = "must be a Kafka topic name: 1 to 249 of a-z, A-Z, 0-9, '.', '_' and '-', not . or .."

// validTopic reports whether name keeps topicRule.
func validTopic(name string) bool {
	if name == "" || len(name) > 249 || name == "." || name == ".." {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Bounds that refuse a typo before it allocates gigabytes per series or
// pins a CPU: a working set of M costs several M×M matrices (4 096: about
// 130 MB each), the values kept for the re-choices three numbers per
// sample and input up to model.warmup, a polynomial kernel degree
// multiplications per kernel value, and process.memory_limit_mib is
// shifted into bytes (a petabyte is far below int64's range).
const (
	maxWorkingSet  = 4096
	maxWarmup      = 1 << 20
	maxDegree      = 64
	maxMemoryLimit = 1 << 30
)

// autoLagOrders are the lag orders p (lags 1..p) among which `lags: auto`
// chooses by level-3 evidence on the warm-up window.
var autoLagOrders = []int{1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 25, 30}

// autoInputLagOrders is the most consecutive lags of each input that
// `input_lags: auto` ranks (online.Config.InputLagOrders): a planned
// input's 0..3, another's 1..4 (a control loop's dead time of a few
// steps; y's lags carry the slower dynamics).
const autoInputLagOrders = 4

// Model defaults that are not a plain value of a key.
const (
	// DefaultAutoGamma is the γ a model starts from with `gamma: auto`,
	// until the first level-2 inference (at the fit) replaces it.
	DefaultAutoGamma = 100.0
	// maxLags bounds a lag count or a lag, to refuse typos that would allocate
	// gigabytes.
	maxLags = 10000
)

// DefaultConfig returns the configuration used for every key a file leaves
// out. It is the only place defaults are written down (config/default.yaml
// restates them and a test keeps the two equal).
func DefaultConfig() Config {
	http := daemon.DefaultHTTP()
	return Config{
		Kafka: KafkaConfig{
			Brokers:               []string{"127.0.0.1:9092"},
			Group:                 "streamd",
			InputTopics:           []string{"series"},
			ForecastTopic:         "forecasts",
			StateTopic:            "auto",
			DeadLetterTopic:       "series-dlq",
			CheckpointRecords:     daemon.DefaultCheckpointRecords,
			CheckpointInterval:    daemon.DefaultCheckpointEvery,
			MaxRecordBytes:        1 << 20,
			DeadLetterMaxBytes:    sink.DefaultDeadLetterMaxBytes,
			MaxSeriesBytes:        256,
			Partitioner:           "murmur2",
			MaxSeriesPerPartition: 100000,
			Fields:                FieldsConfig{Series: "series", T: "t", Y: "y", U: "u", Future: "future"},
		},
		HTTP: HTTPConfig{Listen: "127.0.0.1:9464", ReadHeaderTimeout: http.ReadHeaderTimeout, ReadTimeout: http.ReadTimeout,
			WriteTimeout: http.WriteTimeout, IdleTimeout: http.IdleTimeout,
			WhatIf: WhatIfConfig{MaxConcurrent: http.WhatIfMaxConcurrent, MaxHorizon: http.WhatIfMaxHorizon}},
		Model: ModelConfig{
			Lags:           Lags{Auto: true},
			InputLags:      Lags{Auto: true},
			Inputs:         0,
			WorkingSet:     Auto[int]{Auto: true},
			MaxWorkingSet:  DefaultMaxWorkingSet,
			Kernel:         KernelConfig{Type: "auto", Sigma2: Auto[float64]{Auto: true}, Degree: 2, Offset: 1},
			Gamma:          Auto[float64]{Auto: true},
			Forgetting:     1,
			Warmup:         500,
			Cutoff:         1e-10,
			Window:         Auto[int]{Auto: true},
			SwapInterval:   10,
			SwapRule:       "gain",
			NoiseEvery:     Auto[int]{Auto: true},
			Seed:           1,
			Scale:          "robust",
			Selection:      "greedy",
			SelectIter:     Auto[int]{Auto: true},
			SelectPatience: Auto[int]{Auto: true},
			Tuning:         "evidence",
			TuneWorkingSet: Auto[int]{Auto: true},
			Transform:      "auto",
			Difference:     Auto[int]{Auto: true},
			Season:         Auto[int]{Auto: true},
			Combine:        "auto",
			LevelShift:     "auto",
			TimeUnit:       "sequence",
			PlannedInputs:  []int{},
			Calendar:       CalendarConfig{Features: []string{}, Holidays: []string{}, TimeZone: "UTC"},
		},
		Robust:   RobustConfig{Enabled: false, Weight: "hampel", C1: 2.5, C2: 3, Window: 200, Scale: "iqr", Clean: true},
		Forecast: ForecastConfig{Horizon: 20, Every: 1, Level: 0.95, Calibrate: true},
		Process:  ProcessConfig{Workers: Auto[int]{Auto: true}},
	}
}

// LoadConfig reads the YAML file at path over DefaultConfig and validates it.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := ParseConfig(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes YAML over DefaultConfig, strictly (an unknown key, or
// a fraction for an integer, is an error naming its line), and validates the
// result. Empty input gives DefaultConfig.
func ParseConfig(b []byte) (Config, error) {
	c := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var root, extra yaml.Node
	switch err := dec.Decode(&root); {
	case errors.Is(err, io.EOF):
		return c, c.Validate()
	case err != nil:
		return Config{}, err
	}
	switch err := dec.Decode(&extra); {
	case err == nil:
		return Config{}, fmt.Errorf("line %d: a second YAML document; the configuration is one document", extra.Line)
	case !errors.Is(err, io.EOF):
		return Config{}, err
	}
	if err := checkNode(&root, reflect.TypeFor[Config](), ""); err != nil {
		return Config{}, err
	}
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(&c); err != nil {
		return Config{}, withPaths(err, &root)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// withPaths names the key of each value a *yaml.TypeError could not decode
// ("line 2: model.working_set: cannot unmarshal !!str `many` into int"):
// yaml's messages give only the line. The value is found by its line and
// its text, which the message quotes; a mapping or a list, which the
// message does not quote, by its line alone (the innermost on the line).
func withPaths(err error, root *yaml.Node) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	type scalar struct {
		line  int
		value string
	}
	paths := map[scalar]string{}
	collections := map[int]string{} // the last collection starting on a line
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			collections[n.Line] = path
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			paths[scalar{n.Line, n.Value}] = path
		}
	}
	walk(root, "")
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = m
		var line int
		if _, err := fmt.Sscanf(m, "line %d:", &line); err != nil {
			continue
		}
		p, ok := collections[line]
		if a, b := strings.Index(m, "`"), strings.LastIndex(m, "`"); a >= 0 && b > a {
			v := m[a+1 : b]
			p, ok = paths[scalar{line, v}]
			if prefix, cut := strings.CutSuffix(v, "..."); !ok && cut && len(prefix) == 7 {
				// The library quotes a value of more than 10 bytes as its
				// first 7 and "...": the scalar of the line it begins, if
				// only one does.
				n := 0
				for s, sp := range paths {
					if s.line == line && len(s.value) > 10 && strings.HasPrefix(s.value, prefix) {
						p, n = sp, n+1
					}
				}
				ok = n == 1
			}
		}
		if ok && p != "" {
			head := fmt.Sprintf("line %d:", line)
			msgs[i] = head + " " + p + ":" + strings.TrimPrefix(m, head)
		}
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// FieldError is a bad configuration value: Path is the YAML path
// (model.kernel.sigma2, series[1].match).
type FieldError struct {
	Path    string
	Problem string // "must be ≥ 2 (got 1)"
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Problem }

// problems collects FieldErrors.
type problems []error

func (p *problems) add(path, format string, args ...any) {
	*p = append(*p, &FieldError{Path: path, Problem: fmt.Sprintf(format, args...)})
}

// Validate reports every bad value, each a *FieldError naming its YAML path
// and the value, joined; nil if there is none.
func (c *Config) Validate() error {
	var p problems
	c.Kafka.validate(&p)
	c.HTTP.validate(&p)
	c.Robust.validate(&p)
	c.Forecast.validate(&p)
	if c.Process.MemoryLimitMiB < 0 || c.Process.MemoryLimitMiB > maxMemoryLimit {
		p.add("process.memory_limit_mib", "must be in [0, %d] (got %d); 0 = the GOMEMLIMIT environment variable, or none", maxMemoryLimit, c.Process.MemoryLimitMiB)
	}
	if w := c.Process.Workers; !w.Auto && (w.Value < 0 || w.Value > maxWorkers) {
		p.add("process.workers", "must be auto or 0..%d (got %d); 0 = heavy work on the partitions' goroutines", maxWorkers, w.Value)
	}
	before := len(p)
	c.Model.validate(&p, "model")
	if len(p) > before {
		// Overrides apply on top of the model section: check them once it is
		// valid, or its problems would be reported again under every entry.
		return errors.Join(p...)
	}
	if len(p) == 0 {
		// The sections are each valid; their combination must satisfy the
		// Learner too (e.g. tuning: iterated needs warmup ≥ 3·horizon), so
		// that a valid file never fails later when a series starts.
		if err := c.Model.Learner(c.Forecast, c.Robust).Validate(); err != nil {
			p.add("model", "with the forecast and robust sections: %v", err)
		}
	}
	for i, s := range c.Series {
		at := fmt.Sprintf("series[%d]", i)
		if s.Match == "" {
			p.add(at+".match", "must be a glob such as \"laser-*\" (got \"\")")
		} else if _, err := path.Match(s.Match, ""); err != nil {
			p.add(at+".match", "is not a valid glob (got %q)", s.Match)
		}
		m, err := c.seriesModel(i)
		if err != nil {
			p = append(p, err)
			continue
		}
		m.validate(&p, at+".model")
		if m.TimeUnit != c.Model.TimeUnit {
			p.add(at+".model.time_unit", "must be model.time_unit (%s): the daemon reads every record's t with one unit (got %q)",
				c.Model.TimeUnit, m.TimeUnit)
		}
		if len(p) == 0 {
			if err := m.Learner(c.Forecast, c.Robust).Validate(); err != nil {
				p.add(at+".model", "with the forecast and robust sections: %v", err)
			}
		}
	}
	return errors.Join(p...)
}

// seriesModel returns the model section with series entry i's overrides
// applied.
func (c *Config) seriesModel(i int) (ModelConfig, error) {
	m := c.Model.clone()
	node := &c.Series[i].Model
	if node.Kind == 0 {
		return m, nil
	}
	if err := node.Decode(&m); err != nil {
		return ModelConfig{}, fmt.Errorf("series[%d].model: %w", i, err)
	}
	return m, nil
}

func (m ModelConfig) clone() ModelConfig {
	m.Lags.List = slices.Clone(m.Lags.List)
	m.InputLags.List = slices.Clone(m.InputLags.List)
	m.PlannedInputs = slices.Clone(m.PlannedInputs)
	m.Calendar.Features = slices.Clone(m.Calendar.Features)
	m.Calendar.Holidays = slices.Clone(m.Calendar.Holidays)
	return m
}

func (k *KafkaConfig) validate(p *problems) {
	if len(k.Brokers) == 0 {
		p.add("kafka.brokers", "must list at least one host:port (got [])")
	}
	for i, b := range k.Brokers {
		_, port, err := net.SplitHostPort(b)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
			p.add(fmt.Sprintf("kafka.brokers[%d]", i), "must be host:port with a port in 1..65535 (got %q)", b)
		}
	}
	if k.Group == "" {
		p.add("kafka.group", "must not be empty")
	}
	if len(k.InputTopics) == 0 {
		p.add("kafka.input_topics", "must list at least one topic (got [])")
	}
	for i, t := range k.InputTopics {
		if t == "" {
			p.add(fmt.Sprintf("kafka.input_topics[%d]", i), "must not be empty")
		} else if !validTopic(t) {
			p.add(fmt.Sprintf("kafka.input_topics[%d]", i), "%s (got %q)", topicRule, t)
		} else if slices.Index(k.InputTopics, t) < i {
			// Each of its partitions would be owned twice: every record
			// forecast twice, and both owners checkpointing to one topic.
			p.add(fmt.Sprintf("kafka.input_topics[%d]", i), "lists %q a second time", t)
		}
	}
	for _, f := range []struct{ path, v string }{
		{"kafka.forecast_topic", k.ForecastTopic},
		{"kafka.dead_letter_topic", k.DeadLetterTopic}, {"kafka.fields.series", k.Fields.Series},
		{"kafka.fields.t", k.Fields.T}, {"kafka.fields.y", k.Fields.Y}, {"kafka.fields.u", k.Fields.U},
		{"kafka.fields.future", k.Fields.Future},
	} {
		if f.v == "" {
			p.add(f.path, "must not be empty")
		}
	}
	// One JSON key cannot hold two fields.
	fields := []struct{ key, v string }{{"series", k.Fields.Series}, {"t", k.Fields.T}, {"y", k.Fields.Y},
		{"u", k.Fields.U}, {"future", k.Fields.Future}}
	for i, f := range fields {
		for _, g := range fields[:i] {
			if f.v != "" && f.v == g.v {
				p.add("kafka.fields."+f.key, "must differ from kafka.fields.%s (got %q)", g.key, f.v)
			}
		}
	}
	if k.CheckpointRecords < 1 {
		p.add("kafka.checkpoint_records", "must be ≥ 1 (got %d)", k.CheckpointRecords)
	}
	if k.CheckpointInterval < 100*time.Millisecond {
		p.add("kafka.checkpoint_interval", "must be a duration of at least 100ms, such as 10s (got %v)", k.CheckpointInterval)
	}
	if slices.Contains(k.InputTopics, k.stateTopic()) || slices.Contains(k.InputTopics, k.ForecastTopic) {
		p.add("kafka.input_topics", "must not include the forecast or state topic (got %q)", k.InputTopics)
	}
	for _, f := range []struct{ path, v string }{{"kafka.forecast_topic", k.ForecastTopic}, {"kafka.dead_letter_topic", k.DeadLetterTopic}} {
		if f.v != "" && !validTopic(f.v) {
			p.add(f.path, "%s (got %q)", topicRule, f.v)
		}
	}
	if st := k.stateTopic(); st != "" && !validTopic(st) {
		p.add("kafka.state_topic", "%s (got %q; auto is kafka.group followed by -state)", topicRule, st)
	} else if st != "" && len(k.InputTopics) > 1 {
		// With several inputs each has its own, <state>.<input>.
		for _, in := range k.InputTopics {
			if validTopic(in) && !validTopic(st+"."+in) {
				p.add("kafka.state_topic", "%s: with several input topics each has its state topic <state>.<input>, and %q is too long", topicRule, st+"."+in)
			}
		}
	}
	// A rejected record written to an input topic would be read, rejected
	// and written again without end; to the forecast or state topic it
	// would mix raw input into their records.
	if k.DeadLetterTopic != "" && (slices.Contains(k.InputTopics, k.DeadLetterTopic) || k.DeadLetterTopic == k.ForecastTopic || k.DeadLetterTopic == k.stateTopic()) {
		p.add("kafka.dead_letter_topic", "must differ from the input, forecast and state topics (got %q)", k.DeadLetterTopic)
	}
	// Settings that would be ignored are refused: an operator who set a
	// CA, a client certificate or credentials expects them to be used.
	if t := k.TLS; !t.Enabled && (t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != "" || t.InsecureSkipVerify) {
		p.add("kafka.tls.enabled", "is false, but other kafka.tls settings are set and would be ignored: set enabled: true, or remove them")
	}
	switch k.SASL.Mechanism {
	case "":
		if k.SASL.Username != "" || k.SASL.Password != "" {
			p.add("kafka.sasl.mechanism", `is "" (none), but a username or password is set and would be ignored: name the mechanism (plain, scram-sha-256, scram-sha-512), or remove them`)
		}
	case "plain", "scram-sha-256", "scram-sha-512":
		if k.SASL.Username == "" {
			p.add("kafka.sasl.username", "must be set for mechanism %s", k.SASL.Mechanism)
		}
	default:
		p.add("kafka.sasl.mechanism", "must be plain, scram-sha-256 or scram-sha-512 (got %q)", k.SASL.Mechanism)
	}
	if (k.TLS.CertFile == "") != (k.TLS.KeyFile == "") {
		p.add("kafka.tls", "cert_file and key_file go together (got %q and %q)", k.TLS.CertFile, k.TLS.KeyFile)
	}
	if k.MaxSeriesPerPartition < 1 {
		p.add("kafka.max_series_per_partition", "must be ≥ 1 (got %d)", k.MaxSeriesPerPartition)
	}
	if k.MaxRecordBytes < 1 {
		p.add("kafka.max_record_bytes", "must be ≥ 1 (got %d)", k.MaxRecordBytes)
	}
	if !slices.Contains(sink.Partitioners, k.Partitioner) {
		p.add("kafka.partitioner", "must be one of %s (got %q)", strings.Join(sink.Partitioners, ", "), k.Partitioner)
	}
	if k.MaxSeriesBytes < 1 || k.MaxSeriesBytes > 65536 {
		p.add("kafka.max_series_bytes", "must be 1..65536 (got %d)", k.MaxSeriesBytes)
	}
	if k.DeadLetterMaxBytes < 4096 {
		p.add("kafka.dead_letter_max_bytes", "must be ≥ 4096 (got %d)", k.DeadLetterMaxBytes)
	}
}

// robustWeights are the weight functions of docs/design.md, "The model" (book §5).
var robustWeights = []string{"hampel", "huber", "logistic", "myriad"}

func (r *RobustConfig) validate(p *problems) {
	if _, err := robust.ParseScaleKind(r.Scale); err != nil {
		p.add("robust.scale", "must be iqr or mad (got %q)", r.Scale)
	}
	if !slices.Contains(robustWeights, r.Weight) {
		p.add("robust.weight", "must be one of %s (got %q)", strings.Join(robustWeights, ", "), r.Weight)
	}
	if !(r.C1 > 0) || math.IsInf(r.C1, 0) {
		p.add("robust.c1", "must be finite and > 0 (got %v)", r.C1)
	}
	if !(r.C2 > r.C1) || math.IsInf(r.C2, 0) {
		p.add("robust.c2", "must be finite and > robust.c1 = %v (got %v)", r.C1, r.C2)
	}
	if r.Window < 20 || r.Window > maxWindow {
		p.add("robust.window", "must be in [20, %d] (got %d)", maxWindow, r.Window)
	}
}

// calibrated is the horizon whose bands are calibrated: Horizon, or 0 when
// Calibrate is off.
func (f *ForecastConfig) calibrated() int {
	if f.Calibrate {
		return f.Horizon
	}
	return 0
}

func (f *ForecastConfig) validate(p *problems) {
	if f.Horizon < 0 || f.Horizon > maxLags {
		p.add("forecast.horizon", "must be in [0, %d] (got %d)", maxLags, f.Horizon)
	}
	if f.Every < 1 {
		p.add("forecast.every", "must be ≥ 1 (got %d)", f.Every)
	}
	if !(f.Level > 0 && f.Level <= narx.MaxIntervalLevel) {
		p.add("forecast.level", "must be in (0, %v] (got %v)", narx.MaxIntervalLevel, f.Level)
	}
}

func (m *ModelConfig) validate(p *problems, at string) {
	depthOK := true
	if m.Warmup > maxWarmup {
		p.add(at+".warmup", "must be at most %d (got %d): the values before it are kept for the re-choices", maxWarmup, m.Warmup)
		depthOK = false
	}
	if m.Lags.Count < 0 || m.Lags.Count > maxLags {
		p.add(at+".lags", "must be auto, a count in [0, %d] or a list (got %d)", maxLags, m.Lags.Count)
		depthOK = false
	} else if err := checkLagList(m.Lags.List, 1); err != "" {
		p.add(at+".lags", "%s (got %v)", err, m.Lags.List)
		depthOK = false
	}
	if m.InputLags.Auto {
		// chosen at each re-choice: nothing to check
	} else if m.InputLags.Count < 0 || m.InputLags.Count > maxLags {
		p.add(at+".input_lags", "must be a count in [0, %d] or a list (got %d)", maxLags, m.InputLags.Count)
		depthOK = false
	} else if err := checkLagList(m.InputLags.List, 0); err != "" {
		p.add(at+".input_lags", "%s (got %v)", err, m.InputLags.List)
		depthOK = false
	}
	if m.Inputs < 0 || m.Inputs > maxLags {
		p.add(at+".inputs", "must be in [0, %d] (got %d)", maxLags, m.Inputs)
		depthOK = false
	}
	if depthOK && m.Lags.Auto && len(m.lagCandidates()) == 0 {
		p.add(at+".warmup", "must be ≥ 4 with lags: auto, to compare lag orders (got %d)", m.Warmup)
		depthOK = false
	}
	if depthOK {
		ylags, ulags, auto := m.yLags(), m.InputLags.resolve(), m.InputLags.Auto
		switch {
		case m.Inputs > 0 && !auto && len(ulags) == 0:
			p.add(at+".input_lags", "must name at least one lag when %s.inputs is %d (got %s)", at, m.Inputs, m.InputLags)
		case m.Inputs == 0 && !auto && len(ulags) > 0:
			p.add(at+".input_lags", "is set but %s.inputs is 0 (got %s)", at, m.InputLags)
		case len(ylags) == 0 && len(m.embedding().InputLags) == 0:
			p.add(at+".lags", "no regressors: give lags, or inputs with input_lags (got %s)", m.Lags)
		}
	}
	if !m.WorkingSet.Auto && (m.WorkingSet.Value < 2 || m.WorkingSet.Value > maxWorkingSet) {
		p.add(at+".working_set", "must be auto or in [2, %d] (got %d)", maxWorkingSet, m.WorkingSet.Value)
	}
	if m.MaxWorkingSet < 2 || m.MaxWorkingSet > maxWorkingSet {
		p.add(at+".max_working_set", "must be in [2, %d] (got %d)", maxWorkingSet, m.MaxWorkingSet)
	}
	switch m.Kernel.Type {
	case "rbf", "auto":
		if !m.Kernel.Sigma2.Auto && (!(m.Kernel.Sigma2.Value > 0) || math.IsInf(m.Kernel.Sigma2.Value, 0)) {
			p.add(at+".kernel.sigma2", "must be auto or finite and > 0 (got %v)", m.Kernel.Sigma2.Value)
		}
	case "linear":
	case "poly":
		if m.Kernel.Degree < 1 || m.Kernel.Degree > maxDegree {
			p.add(at+".kernel.degree", "must be in [1, %d] (got %d)", maxDegree, m.Kernel.Degree)
		}
		if !(m.Kernel.Offset >= 0) || math.IsInf(m.Kernel.Offset, 0) {
			p.add(at+".kernel.offset", "must be finite and ≥ 0 (got %v)", m.Kernel.Offset)
		}
	default:
		p.add(at+".kernel.type", "must be auto, rbf, linear or poly (got %q)", m.Kernel.Type)
	}
	if !m.Gamma.Auto && (!(m.Gamma.Value > 0) || math.IsInf(m.Gamma.Value, 0)) {
		p.add(at+".gamma", "must be auto or finite and > 0 (got %v)", m.Gamma.Value)
	}
	if !(m.Forgetting > 0 && m.Forgetting <= 1) {
		p.add(at+".forgetting", "must be in (0, 1] (got %v)", m.Forgetting)
	}
	if depthOK {
		// The last re-choice is on the last warmup values: every configured
		// lag and input must fit them (a working set larger than the
		// regressors is cut to their number).
		if need := online.MinWarmup(m.embedding(), m.calendarDim()); m.Warmup < need {
			p.add(at+".warmup", "must be ≥ %d for every configured lag and input to join the model (lags to %d, %d regressors with the calendar's) (got %d)",
				need, m.depth(), m.embedding().Dim()+m.calendarDim(), m.Warmup)
		}
	}
	if m.Transform != "auto" && m.Transform != "none" && m.Transform != "log" {
		p.add(at+".transform", "must be auto, none or log (got %q)", m.Transform)
	}
	if m.Combine != "auto" && m.Combine != "theta" && m.Combine != "none" {
		p.add(at+".combine", "must be auto, theta or none (got %q)", m.Combine)
	}
	if m.LevelShift != "auto" && m.LevelShift != "off" {
		p.add(at+".level_shift", "must be auto or off (got %q)", m.LevelShift)
	}
	if !m.Difference.Auto && m.Difference.Value != 0 && m.Difference.Value != 1 {
		p.add(at+".difference", "must be auto, 0 or 1 (got %d)", m.Difference.Value)
	}
	if !m.Season.Auto && (m.Season.Value < 0 || m.Season.Value == 1 || m.Season.Value > maxLags) {
		p.add(at+".season", "must be auto, 0 or a period in [2, %d] (got %d)", maxLags, m.Season.Value)
	}
	if !(m.Cutoff >= 0 && m.Cutoff < 1) {
		p.add(at+".cutoff", "must be in [0, 1) (got %v)", m.Cutoff)
	}
	if !m.Window.Auto && (m.Window.Value < 1 || m.Window.Value > maxWindow) {
		p.add(at+".window", "must be auto or in [1, %d] (got %d)", maxWindow, m.Window.Value)
	}
	if m.SwapInterval < 0 {
		p.add(at+".swap_interval", "must be ≥ 0 (got %d)", m.SwapInterval)
	}
	if m.SwapRule != "entropy" && m.SwapRule != "gain" {
		p.add(at+".swap_rule", "must be entropy or gain (got %q)", m.SwapRule)
	}
	if !m.NoiseEvery.Auto && m.NoiseEvery.Value < 0 {
		p.add(at+".noise_every", "must be auto or ≥ 0 (got %d)", m.NoiseEvery.Value)
	}
	if !slices.Contains([]string{"evidence", "iterated", "robust-cv"}, m.Tuning) {
		p.add(at+".tuning", "must be evidence, iterated or robust-cv (got %q)", m.Tuning)
	}
	if !m.TuneWorkingSet.Auto && (m.TuneWorkingSet.Value < 1 || m.TuneWorkingSet.Value > maxWorkingSet) {
		p.add(at+".tune_working_set", "must be auto or in [1, %d] (got %d)", maxWorkingSet, m.TuneWorkingSet.Value)
	}
	if m.RetuneEvery < 0 || (m.RetuneEvery > 0 && (!m.Kernel.Sigma2.Auto || (m.Kernel.Type != "rbf" && m.Kernel.Type != "auto"))) {
		p.add(at+".retune_every", "must be ≥ 0, and 0 unless kernel.type is rbf or auto with sigma2: auto (got %d)", m.RetuneEvery)
	}
	if m.Scale != "robust" && m.Scale != "standard" && m.Scale != "none" {
		p.add(at+".scale", "must be robust, standard or none (got %q)", m.Scale)
	}
	if m.Selection != "greedy" && m.Selection != "entropy" {
		p.add(at+".selection", "must be greedy or entropy (got %q)", m.Selection)
	}
	if !m.SelectIter.Auto && m.SelectIter.Value < 0 {
		p.add(at+".select_iter", "must be auto or ≥ 0 (got %d)", m.SelectIter.Value)
	}
	if !m.SelectPatience.Auto && m.SelectPatience.Value < 0 {
		p.add(at+".select_patience", "must be auto or ≥ 0 (got %d)", m.SelectPatience.Value)
	}
	if _, err := calendar.ParseUnit(m.TimeUnit); err != nil {
		p.add(at+".time_unit", "must be sequence, ms or s (got %q)", m.TimeUnit)
	}
	m.validatePlanned(p, at)
	m.Calendar.validate(p, at+".calendar")
}

// validatePlanned checks planned_inputs: indices into u, strictly
// increasing.
func (m *ModelConfig) validatePlanned(p *problems, at string) {
	for i, v := range m.PlannedInputs {
		path := fmt.Sprintf("%s.planned_inputs[%d]", at, i)
		switch {
		case v < 0 || v >= m.Inputs:
			p.add(path, "must be the 0-based index of an input, in [0, %s.inputs = %d) (got %d)", at, m.Inputs, v)
		case i > 0 && v <= m.PlannedInputs[i-1]:
			p.add(path, "must be greater than the index before it: planned_inputs are strictly increasing (got %v)", m.PlannedInputs)
		}
	}
}

// validate checks model.calendar: known, distinct feature names; holidays
// as dates, needed by the holiday feature and only by it; a loadable zone.
// Whether t is a time shows only in the data: with time_unit sequence a
// calendar needs RFC 3339 or date strings, which the model checks per
// record.
func (c *CalendarConfig) validate(p *problems, at string) {
	holiday := false
	for i, name := range c.Features {
		path := fmt.Sprintf("%s.features[%d]", at, i)
		f, err := calendar.ParseFeature(name)
		switch {
		case err != nil:
			p.add(path, "must be one of %s (got %q)", strings.Join(calendar.FeatureNames(), ", "), name)
		case slices.Index(c.Features, name) < i:
			p.add(path, "must not repeat a feature (got %q twice)", name)
		}
		holiday = holiday || f == calendar.Holiday && err == nil
	}
	for i, h := range c.Holidays {
		if _, err := calendar.ParseDate(h); err != nil {
			p.add(fmt.Sprintf("%s.holidays[%d]", at, i), "must be a date YYYY-MM-DD (got %q)", h)
		}
	}
	switch {
	case holiday && len(c.Holidays) == 0:
		p.add(at+".holidays", "must list the dates of the holiday feature (got [])")
	case !holiday && len(c.Holidays) > 0:
		p.add(at+".features", "must include holiday for the %d holidays listed to count (got %v)", len(c.Holidays), c.Features)
	}
	if _, err := c.location(); err != nil {
		p.add(at+".time_zone", "must be an IANA time zone such as UTC or Europe/Paris (got %q)", c.TimeZone)
	}
}

// location loads time_zone. Local is refused: it would make the features
// depend on the host.
func (c *CalendarConfig) location() (*time.Location, error) {
	if c.TimeZone == "" || c.TimeZone == "Local" {
		return nil, fmt.Errorf("time zone %q", c.TimeZone)
	}
	return time.LoadLocation(c.TimeZone)
}

// timeUnit returns time_unit of a valid model section.
func (m *ModelConfig) timeUnit() calendar.Unit {
	u, _ := calendar.ParseUnit(m.TimeUnit)
	return u
}

// planned returns planned_inputs for online.Config.Planned: the indices
// into u of the inputs whose future values records (future) and what-if
// requests supply; nil when there are none.
func (m *ModelConfig) planned() []int {
	if len(m.PlannedInputs) == 0 {
		return nil
	}
	return slices.Clone(m.PlannedInputs)
}

// calendar returns model.calendar as a compiled calendar.Spec for
// online.Config.Calendar (the zero Spec, Dim 0, when features is []).
// Compiled, it is read-only: every Learner's copy shares its holidays and
// may run FeaturesTo on its own goroutine. The error is the Spec's, for a
// section Validate did not pass.
func (m *ModelConfig) calendar() (calendar.Spec, error) {
	c := m.Calendar
	if len(c.Features) == 0 {
		// No features, but a zone still says which clock a series'
		// days are on (online.spacingOf).
		loc, err := c.location()
		if err != nil || loc == time.UTC {
			return calendar.Spec{}, err
		}
		return calendar.Spec{Location: loc}, nil
	}
	var spec calendar.Spec
	for _, name := range c.Features {
		f, err := calendar.ParseFeature(name)
		if err != nil {
			return calendar.Spec{}, err
		}
		spec.Features = append(spec.Features, f)
	}
	spec.Holidays = slices.Clone(c.Holidays)
	loc, err := c.location()
	if err != nil {
		return calendar.Spec{}, err
	}
	spec.Location = loc
	if err := spec.Compile(); err != nil {
		return calendar.Spec{}, err
	}
	return spec, nil
}

// decoder returns the daemon's record decoder: the field names, the size
// limit and the time unit. The width of future rows is checked by the
// decoder when every series' model has as many planned inputs as the model
// section, else by each series' model (Planned −1).
func (c *Config) decoder() source.Decoder {
	f := c.Kafka.Fields
	planned := len(c.Model.PlannedInputs)
	for i := range c.Series {
		if m, err := c.seriesModel(i); err != nil || len(m.PlannedInputs) != planned {
			planned = -1
			break
		}
	}
	return source.Decoder{
		Fields:         source.Fields{Series: f.Series, T: f.T, Y: f.Y, U: f.U, Future: f.Future},
		MaxBytes:       c.Kafka.MaxRecordBytes,
		MaxSeriesBytes: c.Kafka.MaxSeriesBytes,
		Planned:        planned,
		Unit:           c.Model.timeUnit(),
	}
}

// checkLagList returns what is wrong with an explicit lag list, or "".
func checkLagList(lags []int, lowest int) string {
	for i, l := range lags {
		switch {
		case l < lowest || l > maxLags:
			return fmt.Sprintf("lags must be in [%d, %d]", lowest, maxLags)
		case i > 0 && l <= lags[i-1]:
			return "lags must be strictly increasing"
		}
	}
	return ""
}

// lagCandidates returns the orders of autoLagOrders that the last re-choice
// can compare: p < warmup/2 (online's bound). Each re-choice ranks those its
// samples can hold.
func (m *ModelConfig) lagCandidates() []int {
	var c []int
	for _, p := range autoLagOrders {
		if p+1 <= m.Warmup/2 {
			c = append(c, p)
		}
	}
	return c
}

// noiseEvery resolves noise_every: auto is online.AutoNoiseEvery(M).
func (m *ModelConfig) noiseEvery() int {
	if m.NoiseEvery.Auto {
		return online.AutoNoiseEvery(m.size())
	}
	return m.NoiseEvery.Value
}

// Working-set sizes of working_set: auto: a series starts at
// DefaultWorkingSet (at most max_working_set) and its re-choices may
// double it up to max_working_set, DefaultMaxWorkingSet by default, where
// the evidence pays for it (online.Growth).
const (
	DefaultWorkingSet    = 100
	DefaultMaxWorkingSet = 400
)

// size resolves working_set to the size a series starts with.
func (m *ModelConfig) size() int {
	if m.WorkingSet.Auto {
		return min(DefaultWorkingSet, m.MaxWorkingSet)
	}
	return m.WorkingSet.Value
}

// growth resolves working_set to the growth it allows: with auto up to
// max_working_set, the settings derived from the size (window,
// noise_every, select_patience auto) derived again from the grown one; a
// number is the size.
func (m *ModelConfig) growth() online.Growth {
	if !m.WorkingSet.Auto {
		return online.Growth{}
	}
	return online.Growth{Max: m.MaxWorkingSet, Window: m.Window.Auto, NoiseEvery: m.NoiseEvery.Auto, Patience: m.SelectPatience.Auto}
}

// yLags returns the lags of y of a valid model section; for auto, those of
// the largest candidate order, which bounds the embedding depth.
func (m *ModelConfig) yLags() []int {
	if m.Lags.Auto {
		c := m.lagCandidates()
		if len(c) == 0 {
			return nil
		}
		return narx.Lags(c[len(c)-1])
	}
	return m.Lags.resolve()
}

// embedding is the configured regressors of a valid model section: its
// lags of y (lag 1 with lags: auto) and its inputs' lags (each input's
// first with input_lags: auto): those every re-choice must be able to fit.
func (m *ModelConfig) embedding() narx.Embedding {
	e := narx.Embedding{YLags: m.yLags()}
	if m.Lags.Auto {
		e.YLags = []int{1}
	}
	if m.InputLags.Auto {
		e.InputLags = online.InputLagsUpTo(m.Inputs, m.PlannedInputs, 1)
	} else {
		e.InputLags = m.inputLags()
	}
	return e
}

// inputLags returns every input's lags in a valid model section: with
// input_lags: auto the deepest the re-choices rank
// (online.InputLagsUpTo), else the count's or the list's.
func (m *ModelConfig) inputLags() [][]int {
	if m.Inputs == 0 {
		return nil
	}
	if m.InputLags.Auto {
		return online.InputLagsUpTo(m.Inputs, m.PlannedInputs, autoInputLagOrders)
	}
	var out [][]int
	for range m.Inputs {
		out = append(out, m.InputLags.resolve())
	}
	return out
}

// calendarDim is the number of inputs the calendar features add (those
// that parse; the others are reported by the calendar's validation).
func (m *ModelConfig) calendarDim() int {
	n := 0
	for _, name := range m.Calendar.Features {
		if f, err := calendar.ParseFeature(name); err == nil {
			n += f.Dim()
		}
	}
	return n
}

// depth is the largest lag of a valid model section.
func (m *ModelConfig) depth() int {
	d := 0
	if l := m.yLags(); len(l) > 0 {
		d = l[len(l)-1]
	}
	for _, l := range m.inputLags() {
		if len(l) > 0 {
			d = max(d, l[len(l)-1])
		}
	}
	return d
}

// Learner maps a validated model section and the forecast section onto the
// tag-free online.Config, resolving every auto:
//
//   - input_lags: auto → online.Config.InputLagOrders: the Learner chooses
//     each input's first 1..autoInputLagOrders lags with y's at each
//     re-choice, from lag 0 for a planned input and 1 for another;
//   - lags: auto → online.Config.LagCandidates: the Learner chooses lags
//     1..p at the fit, p among autoLagOrders, by the level-3 evidence on the
//     warm-up window (lagCandidates says which orders the warm-up can hold);
//   - kernel.sigma2: auto → online.Config.AutoSigma2: the Learner sets σ²
//     at the fit from the warm-up regressors. Kernel.Sigma2 is then 2n (n the
//     regressor dimension: the mean squared distance of two independent
//     standardised regressors), a valid value until the fit replaces it;
//   - gamma: auto → narx.Config.AutoGamma: γ by level-2 inference (maximum
//     evidence) at the fit and every noise_every samples, starting from
//     DefaultAutoGamma; with tuning: iterated, the γ the winning structure
//     was validated with is held from the fit on (the Learner's tuning);
//   - working_set: auto → online.Config.Growth: M starts at
//     DefaultWorkingSet (at most max_working_set) and may double up to
//     max_working_set by the level-3 evidence (online.Learner.grow,
//     growSettled);
//   - window: auto → online.AutoWindow(M, forgetting);
//   - select_iter: auto → 20·warmup trials of the batch entropy search (each
//     O(M·n): at M = 400, n = 20 about 0.2 s for warmup = 1000);
//   - select_patience: auto → online.AutoPatience(M).
func (m *ModelConfig) Learner(f ForecastConfig, r RobustConfig) online.Config {
	ylags := m.yLags()
	var lagCandidates []int
	if m.Lags.Auto {
		lagCandidates = m.lagCandidates()
	}
	emb := narx.Embedding{YLags: ylags, InputLags: m.inputLags()}
	inputLagOrders := 0
	if m.InputLags.Auto && m.Inputs > 0 {
		inputLagOrders = autoInputLagOrders
	}
	kern := narx.Kernel{Sigma2: m.Kernel.Sigma2.Value, Degree: m.Kernel.Degree, Offset: m.Kernel.Offset}
	var kernels []narx.KernelType
	switch m.Kernel.Type {
	case "linear":
		kern.Type = narx.Linear
	case "poly":
		kern.Type = narx.Polynomial
	case "auto":
		kern.Type = narx.RBF
		kernels = []narx.KernelType{narx.Linear, narx.RBF}
	default:
		kern.Type = narx.RBF
	}
	autoSigma2 := kern.Type == narx.RBF && m.Kernel.Sigma2.Auto
	if autoSigma2 {
		kern.Sigma2 = 2 * float64(emb.Dim())
	}
	gamma := m.Gamma.Value
	if m.Gamma.Auto {
		gamma = DefaultAutoGamma
	}
	window := m.Window.Value
	if m.Window.Auto {
		window = online.AutoWindow(m.size(), m.Forgetting)
	}
	sel := narx.SelectOptions{Method: narx.SelectGreedy, MaxIter: m.SelectIter.Value, Patience: m.SelectPatience.Value}
	if m.Selection == "entropy" {
		sel.Method = narx.SelectEntropy
	}
	if m.SelectIter.Auto {
		sel.MaxIter = 20 * m.Warmup
	}
	if m.SelectPatience.Auto {
		sel.Patience = online.AutoPatience(m.size())
	}
	tuning := pick(m.Tuning, online.TuneEvidence, map[string]online.Tuning{"iterated": online.TuneIterated, "robust-cv": online.TuneRobustCV})
	tuneSize := min(m.size(), 200)
	if !m.TuneWorkingSet.Auto {
		tuneSize = m.TuneWorkingSet.Value
	}
	scale := pick(m.Scale, online.ScaleRobust, map[string]online.Scale{"standard": online.ScaleStandard, "none": online.ScaleNone})
	cal, _ := m.calendar() // a validated section: it compiles
	combine := pick(m.Combine, online.CombineNone, map[string]online.Combine{"auto": online.CombineAuto, "theta": online.CombineTheta})
	return online.Config{
		Model: narx.Config{
			Embedding:    emb,
			Kernel:       kern,
			Size:         m.size(),
			Gamma:        gamma,
			Forgetting:   m.Forgetting,
			Cutoff:       m.Cutoff,
			Window:       window,
			SwapInterval: m.SwapInterval,
			SwapRule:     swapRule(m.SwapRule),
			Select:       sel,
			NoiseEvery:   m.noiseEvery(),
			AutoGamma:    m.Gamma.Auto,
			Seed:         m.Seed,
		},
		Warmup:         m.Warmup,
		Forms:          m.forms(),
		Kernels:        kernels,
		Season:         m.season(),
		Calendar:       cal,
		Planned:        m.planned(),
		Horizon:        f.Horizon,
		Calibrate:      f.calibrated(),
		Every:          f.Every,
		Level:          f.Level,
		Scale:          scale,
		AutoSigma2:     autoSigma2,
		RetuneEvery:    m.RetuneEvery,
		LagCandidates:  lagCandidates,
		InputLagOrders: inputLagOrders,
		Tuning:         tuning,
		TuneSize:       tuneSize,
		TuneHorizon:    f.Horizon,
		Robust:         r.online(),
		Combine:        combine,
		Growth:         m.growth(),
		NoLevelShift:   m.LevelShift == "off",
	}
}

// pick maps a validated key's value onto its enum: values[v], def for a
// value values does not name.
func pick[T any](v string, def T, values map[string]T) T {
	if x, ok := values[v]; ok {
		return x
	}
	return def
}

// forms maps transform and difference onto the candidate forms.
func (m *ModelConfig) forms() []online.Form {
	logs := []bool{m.Transform == "log"}
	if m.Transform == "auto" {
		logs = []bool{false, true}
	}
	diffs := []bool{m.Difference.Value == 1}
	if m.Difference.Auto {
		diffs = []bool{false, true}
	}
	var f []online.Form
	for _, l := range logs {
		for _, d := range diffs {
			f = append(f, online.Form{Log: l, Diff: d})
		}
	}
	return f
}

// season maps season onto online.Config.Season (0 detects, < 0 none).
func (m *ModelConfig) season() int {
	switch {
	case m.Season.Auto:
		return 0
	case m.Season.Value == 0:
		return -1
	}
	return m.Season.Value
}

// online maps the robust section; it must be valid.
func (r *RobustConfig) online() online.Robust {
	w, _ := robust.ParseWeightFunc(r.Weight)
	k, _ := robust.ParseScaleKind(r.Scale)
	return online.Robust{Enabled: r.Enabled, Window: r.Window, Scale: k, Clean: r.Clean,
		Weights: robust.Weights{Func: w, C1: r.C1, C2: r.C2, Floor: robust.DefaultFloor}}
}

// Lags is a lag specification: auto, a count c (lags 1..c), or an explicit
// list (List != nil; `[]` is an empty list).
type Lags struct {
	Auto  bool
	Count int
	List  []int
}

// resolve returns the lags of a valid count or list (not auto).
func (l Lags) resolve() []int {
	if l.List != nil {
		return slices.Clone(l.List)
	}
	return narx.Lags(l.Count)
}

func (l Lags) String() string {
	switch {
	case l.Auto:
		return "auto"
	case l.List != nil:
		return fmt.Sprint(l.List)
	}
	return strconv.Itoa(l.Count)
}

// UnmarshalYAML accepts auto, an integer, or a sequence of integers.
func (l *Lags) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!str" && n.Value == "auto" {
			*l = Lags{Auto: true}
			return nil
		}
		var c int
		if n.Tag != "!!int" || n.Decode(&c) != nil {
			return typeError(n, "want auto, a lag count or a list of lags")
		}
		*l = Lags{Count: c}
		return nil
	case yaml.SequenceNode:
		list := make([]int, 0, len(n.Content))
		for _, e := range n.Content {
			var c int
			if e.Kind != yaml.ScalarNode || e.Tag != "!!int" || e.Decode(&c) != nil {
				return typeError(e, "want an integer lag")
			}
			list = append(list, c)
		}
		*l = Lags{List: list}
		return nil
	}
	return typeError(n, "want auto, a lag count or a list of lags")
}

// Auto is a value that may be given as `auto`.
type Auto[T int | float64] struct {
	Auto  bool
	Value T
}

// UnmarshalYAML accepts auto or a number.
func (a *Auto[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value == "auto" {
		*a = Auto[T]{Auto: true}
		return nil
	}
	var v T
	fraction := reflect.TypeFor[T]().Kind() == reflect.Int && n.Tag == "!!float"
	if n.Kind != yaml.ScalarNode || fraction || n.Decode(&v) != nil {
		if reflect.TypeFor[T]().Kind() == reflect.Int {
			return typeError(n, "want auto or an integer")
		}
		return typeError(n, "want auto or a number")
	}
	*a = Auto[T]{Value: v}
	return nil
}

func (a Auto[T]) String() string {
	if a.Auto {
		return "auto"
	}
	return fmt.Sprint(a.Value)
}

// typeError is a decoding error in yaml's own form, so that it is reported
// with the decoder's other errors and carries the line; a scalar is quoted
// as yaml quotes it, so that withPaths finds its key.
func typeError(n *yaml.Node, want string) error {
	v := "`" + n.Value + "`"
	if n.Kind != yaml.ScalarNode {
		v = map[yaml.Kind]string{yaml.SequenceNode: "a list", yaml.MappingNode: "a mapping"}[n.Kind]
	}
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s (got %s)", n.Line, want, v)}}
}

// checkNode checks what yaml's strict decoding lets through, with the YAML
// path in the message: every mapping key must name a field of t (by yaml
// tag), also below the yaml.Node of a series override, which holds a
// ModelConfig; and an integer field must not be given a fraction (yaml would
// truncate 2.5 to 2). Types that decode themselves check themselves.
func checkNode(n *yaml.Node, t reflect.Type, at string) error {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return checkNode(n.Content[0], t, at)
	}
	if n.Kind == 0 || n.Tag == "!!null" || reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
		return nil
	}
	if t == reflect.TypeFor[yaml.Node]() {
		t = reflect.TypeFor[ModelConfig]()
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nil // the decoder reports the type error
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if key == "<<" { // a merge key: its keys are checked where they are defined
				continue
			}
			path := key
			if at != "" {
				path = at + "." + key
			}
			f, ok := fieldByTag(t, key)
			if !ok {
				return fmt.Errorf("line %d: %s: unknown key %s", n.Content[i].Line, path, key)
			}
			if err := checkNode(n.Content[i+1], f.Type, path); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nil
		}
		for i, e := range n.Content {
			if err := checkNode(e, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!float" {
			if v, err := strconv.ParseFloat(n.Value, 64); err != nil || v != math.Trunc(v) {
				return fmt.Errorf("line %d: %s: want an integer (got %s)", n.Line, at, n.Value)
			}
		}
	}
	return nil
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// swapRule maps a validated model.swap_rule onto narx's.
func swapRule(s string) narx.SwapRule {
	if s == "gain" {
		return narx.SwapGain
	}
	return narx.SwapEntropy
}
