// Package daemon owns the running daemon's life cycle: it wires the consumer
// group (internal/source), one series registry per assigned partition
// (internal/online) and the forecast and dead-letter writers (internal/sink),
// and serves metrics, health, the series API and the web view (internal/webui)
// over HTTP.
package daemon

import (
	"cmp"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/reject"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// Config configures a Daemon. Tag-free: cmd/streamd maps YAML onto it.
type Config struct {
	Brokers         []string
	Group           string
	InputTopics     []string
	ForecastTopic   string
	DeadLetterTopic string
	// StateBytes budgets the series' state on this instance (the sum of
	// their Learner.SizeBytes, as streamd_series_state_bytes): a partition
	// that creates a series while the sum exceeds it evicts its least
	// recently used series until it does not (or one is left). 0 means no
	// budget; the count cap (Registry.MaxSeries) holds either way.
	StateBytes int64
	// Partitioner partitions the forecasts and dead letters by key
	// (sink.Partitioners; "" means murmur2, the Java client's), so that
	// they share partitions with input produced by the same.
	Partitioner string
	// DeadLetterMaxBytes is the dead-letter topic's max.message.bytes: a
	// dead letter is cut to fit it (sink.DeadLetterRecord). 0 means
	// sink.DefaultDeadLetterMaxBytes.
	DeadLetterMaxBytes int
	// Decoder decodes input records (field names, size limit). Its Inputs is
	// ignored: each series' model checks its own number of inputs.
	Decoder source.Decoder
	// Registry gives each series its Learner configuration and caps the live
	// series of each partition.
	Registry online.RegistryConfig
	// Listen is the HTTP address of /metrics, /healthz, /readyz, the series
	// API (/v1/) and the web view (/ui/); "" = none.
	Listen string
	// HTTP secures and bounds the HTTP server.
	HTTP HTTPConfig
	// FlushEvery bounds how long results wait before they are handed to
	// the partition's publisher when they did not go at once (a partition
	// hands them over as soon as it has caught up with its input and its
	// publisher is idle). 0 means 5 ms.
	FlushEvery time.Duration
	// CommitEvery spaces the input offset commits without a state topic
	// (with one, a commit follows each checkpoint): a commit is a
	// synchronous round trip, too costly to make at every flush; a commit always
	// follows the publication of what it covers, and a final one is made at
	// shutdown or rebalance. A longer interval only means more records are
	// re-read after a crash. 0 means 500 ms.
	CommitEvery time.Duration
	// StateTopic is the compacted topic of the series' checkpoints
	// (StateTopicFor names one per input topic when there are several);
	// "" keeps no state: every assignment starts the series afresh.
	StateTopic string
	// A partition checkpoints each series it changed within
	// CheckpointRecords records or CheckpointEvery, whichever comes first,
	// a twentieth of its series at a time (checkpointStep), and commits its
	// input offset up to what the checkpoints cover; everything when it is
	// revoked or the daemon stops. Shorter means fewer records re-read after
	// a crash; longer means fewer writes (a series written once per interval
	// however many of its records it covers). 0 means 50 000 records and
	// 10 s.
	CheckpointRecords int
	CheckpointEvery   time.Duration
	// SessionTimeout of the consumer-group membership (0 = 10 s).
	SessionTimeout time.Duration
	// Workers is the size of the pool that runs the series' heavy work —
	// the fits and re-choices of the structure, the level-3 retunes
	// (online.Learner.Heavy) and the what-if forecasts — off the partition
	// goroutines, so that one series' heavy work delays that series only
	// (pool.go). 0 means DefaultWorkers; a
	// negative value runs everything on the partition goroutines.
	Workers int
	// Build labels the streamd_build_info metric.
	Build BuildInfo
	// Transport and Dialer replace kafka-go's defaults (TLS, SASL, tests).
	Transport kafka.RoundTripper
	Dialer    *kafka.Dialer
	Logger    *slog.Logger

	// readyCheckEvery spaces watchOutputs' checks (0 means
	// readyCheckEvery; tests shorten it).
	readyCheckEvery time.Duration
	// stallAfter is how long a partition's publisher may fail before
	// /readyz reports it (0 means stallAfterDefault; tests shorten it).
	stallAfter time.Duration
	// refuseCommits makes every offset commit fail (tests: a crash between
	// a checkpoint and its commit).
	refuseCommits bool
	// onPublished sees each batch of forecasts when the broker has
	// acknowledged it (benchmarks: exact latencies).
	onPublished func(forecasts []*sink.Message, at time.Time)
	// beforeHeavy runs on the worker before each heavy Observe, with the
	// series' id (tests: a fit that takes as long as they say).
	beforeHeavy func(series string)
	// beforeWhatIf runs on a what-if's goroutine once it holds its copy of
	// the series' model, before the forecast waits for the lane (tests).
	beforeWhatIf func(series string)
}

// HTTPConfig secures and bounds the HTTP server. Zero values take the
// defaults Open states.
type HTTPConfig struct {
	// Server timeouts (net/http.Server's). 0 means DefaultHTTP's. The
	// event streams clear their write deadline: they are meant to last.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// TLS, when set, serves HTTPS with it. With ClientCAs set, a client
	// certificate they verify authenticates a request (give ClientAuth
	// tls.VerifyClientCertIfGiven, so that /healthz needs none).
	TLS *tls.Config
	// Token, when set, authenticates a request carrying it as
	// "Authorization: Bearer <Token>".
	Token string
	// PublicMetrics exempts /metrics from authentication (/healthz always
	// is).
	PublicMetrics bool
	// WhatIfMaxConcurrent bounds the what-if forecasts computed at once
	// (each runs on a worker, or without a pool on its series' partition
	// goroutine, and holds its series' records up); more are answered 429.
	// 0 means DefaultHTTP's.
	WhatIfMaxConcurrent int
	// WhatIfMaxHorizon bounds a what-if forecast's horizon. 0 means
	// DefaultHTTP's.
	WhatIfMaxHorizon int
}

// DefaultHTTP returns the HTTP settings Open gives the zero fields of
// Config.HTTP.
func DefaultHTTP() HTTPConfig {
	return HTTPConfig{ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 60 * time.Second, IdleTimeout: 120 * time.Second,
		WhatIfMaxConcurrent: 4, WhatIfMaxHorizon: 10000}
}

// flushBatch publishes results as soon as this many are pending.
const flushBatch = 512

var errRefusedCommit = errors.New("commit refused (test)")

// Daemon runs until Close. Open starts it; Close stops fetching, publishes
// what was processed, commits its offsets and returns the first error.
type Daemon struct {
	cfg Config
	// stateBytes is the series' state summed over the partitions (the
	// value of streamd_series_state_bytes), for the budget Config.StateBytes;
	// each partition goroutine adds its own changes.
	stateBytes atomic.Int64
	consumer   *source.Consumer
	forecasts  *sink.KafkaWriter
	dead       *sink.KafkaWriter
	metrics    *metrics
	dir        *directory
	http       *http.Server
	addr       net.Addr
	// quit is closed when the HTTP server shuts down: it ends the web
	// view's event streams, which would otherwise hold Shutdown up.
	quit chan struct{}

	cancel    context.CancelFunc
	done      chan struct{}
	runErr    error
	closeOnce sync.Once
	closeErr  error

	stores  map[string]*checkpoint.Store // by input topic; nil without a state topic
	parking *parking
	// pool runs the series' heavy work (pool.go); nil runs it on the
	// partition goroutines (Config.Workers < 0). busySeries counts the
	// series of running partitions whose Learner a worker holds.
	pool       *workerPool
	busySeries atomic.Int64

	// outputs is what is wrong with the brokers or the output topics, ""
	// when nothing (watchOutputs; for /readyz).
	outputs atomic.Pointer[string]
	// pubs holds the running partitions' publishers (for /readyz).
	pubs sync.Map // *publisher → struct{}

	// whatIfSlots holds a token per what-if forecast under way; closing is
	// set when Close starts (what-if requests are then answered 503).
	whatIfSlots chan struct{}
	closing     atomic.Bool
	// whatIfs computes the admitted what-if forecasts, one at a time.
	whatIfs *whatIfLane

	assigned  atomic.Int64 // partitions currently owned
	restoring atomic.Int64 // partitions of the current generation not yet restored
	joined    atomic.Bool  // a generation was joined
}

// finalTimeout bounds a partition's final flush at revocation or shutdown:
// 80 % of the session timeout, so the member rejoins (or leaves) before the
// group's rebalance gives up on it.
func (d *Daemon) finalTimeout() time.Duration {
	st := d.cfg.SessionTimeout
	if st <= 0 {
		st = source.DefaultSessionTimeout
	}
	return st * 4 / 5
}

// generation is called with each new generation's assignment, before its
// partitions start.
func (d *Daemon) generation(assigned []source.TopicPartition) {
	d.metrics.rebalances.Inc()
	d.restoring.Store(int64(len(assigned)))
	d.joined.Store(true)
	d.parking.keep(assigned)
}

// The checkpoint defaults: a change is saved within this many records or
// this long, whichever comes first (Config.CheckpointRecords,
// CheckpointEvery; kafka.checkpoint_records and checkpoint_interval).
const (
	DefaultCheckpointRecords = 50000
	DefaultCheckpointEvery   = 10 * time.Second
)

// DefaultWorkers is the size of the heavy-work pool when Config.Workers is
// 0: one worker per CPU the Go scheduler uses but one, since the work is
// CPU-bound and the partition goroutines need a CPU for the live records
// (onboarding 100 series under load on 2 CPUs, docs/benchmarks.md); at
// least one.
func DefaultWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// Open validates cfg, starts the HTTP server and joins the consumer group in
// the background.
func Open(cfg Config) (*Daemon, error) {
	if err := cfg.Registry.Validate(); err != nil {
		return nil, fmt.Errorf("daemon: registry: %w", err)
	}
	if cfg.ForecastTopic == "" || cfg.DeadLetterTopic == "" {
		return nil, errors.New("daemon: forecast and dead-letter topics are required")
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = 5 * time.Millisecond
	}
	if cfg.CommitEvery <= 0 {
		cfg.CommitEvery = 500 * time.Millisecond
	}
	if cfg.CheckpointRecords <= 0 {
		cfg.CheckpointRecords = DefaultCheckpointRecords
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = DefaultCheckpointEvery
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h, def := &cfg.HTTP, DefaultHTTP()
	h.ReadHeaderTimeout = cmp.Or(h.ReadHeaderTimeout, def.ReadHeaderTimeout)
	h.ReadTimeout = cmp.Or(h.ReadTimeout, def.ReadTimeout)
	h.WriteTimeout = cmp.Or(h.WriteTimeout, def.WriteTimeout)
	h.IdleTimeout = cmp.Or(h.IdleTimeout, def.IdleTimeout)
	h.WhatIfMaxConcurrent = cmp.Or(h.WhatIfMaxConcurrent, def.WhatIfMaxConcurrent)
	h.WhatIfMaxHorizon = cmp.Or(h.WhatIfMaxHorizon, def.WhatIfMaxHorizon)
	if cfg.DeadLetterMaxBytes <= 0 {
		cfg.DeadLetterMaxBytes = sink.DefaultDeadLetterMaxBytes
	}
	if cfg.stallAfter <= 0 {
		cfg.stallAfter = stallAfterDefault
	}
	cfg.Decoder.Inputs = -1
	d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory(), parking: &parking{m: map[partitionKey]*parked{}},
		done: make(chan struct{}), quit: make(chan struct{}), whatIfSlots: make(chan struct{}, cfg.HTTP.WhatIfMaxConcurrent),
		whatIfs: newWhatIfLane()}
	// Listen before anything starts, so that a taken port leaves nothing
	// behind.
	var ln net.Listener
	if cfg.Listen != "" {
		var err error
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("daemon: listen %s: %w", cfg.Listen, err)
		}
		d.addr = ln.Addr()
	}
	fail := func(err error) (*Daemon, error) {
		if ln != nil {
			ln.Close()
		}
		return nil, err
	}
	consumer, err := source.NewConsumer(source.ConsumerConfig{Brokers: cfg.Brokers, Group: cfg.Group,
		Topics: cfg.InputTopics, SessionTimeout: cfg.SessionTimeout, MaxBytes: 4 << 20, Dialer: cfg.Dialer,
		Logger: cfg.Logger, OnGeneration: d.generation})
	if err != nil {
		return fail(err)
	}
	notYet := "brokers not reached yet"
	d.outputs.Store(&notYet)
	fw, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: cfg.Brokers, Topic: cfg.ForecastTopic, Transport: cfg.Transport,
		Partitioner: cfg.Partitioner})
	if err != nil {
		return fail(err)
	}
	// A dead-letter request holds no more than the topic accepts in one
	// batch, so that one large dead letter is refused alone.
	dw, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: cfg.Brokers, Topic: cfg.DeadLetterTopic, Transport: cfg.Transport,
		BatchBytes: cfg.DeadLetterMaxBytes - 64, Partitioner: cfg.Partitioner})
	if err != nil {
		fw.Close()
		return fail(err)
	}
	d.consumer, d.forecasts, d.dead = consumer, fw, dw
	if cfg.Workers > 0 {
		d.pool = newWorkerPool(cfg.Workers)
		d.whatIfs.pool = d.pool
	}
	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_whatif_forecasts_waiting", Help: "What-if forecasts admitted and waiting for the lane that computes them one at a time."},
		func() float64 { return float64(d.whatIfs.waiting.Load()) }))
	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_heavy_jobs_waiting", Help: "Heavy Observes waiting for a worker of the pool (process.workers)."},
		func() float64 { return float64(d.pool.waiting()) }))
	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_series_busy", Help: "Series whose heavy work a worker holds, or whose records queued behind it are being worked down; their later records wait, in order."},
		func() float64 { return float64(d.busySeries.Load()) }))

	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_build_info", Help: "Build information; always 1.",
		ConstLabels: prometheus.Labels{"version": cfg.Build.Version, "goversion": cfg.Build.GoVersion}},
		func() float64 { return 1 }))
	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_partitions_owned", Help: "Input partitions assigned to this instance."},
		func() float64 { return float64(d.assigned.Load()) }))
	d.metrics.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "streamd_publish_stalled_partitions",
		Help: "Partitions whose publisher has failed every write for longer than 30 s (/readyz answers 503 meanwhile)."},
		func() float64 { return float64(len(d.stalled())) }))
	if ln != nil {
		d.serve(ln)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go d.watchOutputs(ctx)
	go func() {
		defer close(d.done)
		if err := d.connect(ctx); err != nil {
			if !errors.Is(err, context.Canceled) {
				d.runErr = err
			}
			return
		}
		if err := d.consumer.Run(ctx, d.partition); err != nil && !errors.Is(err, context.Canceled) {
			d.runErr = err
		}
	}()
	return d, nil
}

// serve starts the HTTP server on ln. Serve returns http.ErrServerClosed
// after Close's Shutdown; any other error (the listener failed) is logged,
// and /healthz then no longer answers, which is what a supervisor watches.
func (d *Daemon) serve(ln net.Listener) {
	cfg := d.cfg
	if cfg.HTTP.TLS != nil {
		ln = tls.NewListener(ln, cfg.HTTP.TLS)
	}
	d.http = &http.Server{Handler: d.authenticate(d.routes()), ReadHeaderTimeout: cfg.HTTP.ReadHeaderTimeout,
		ReadTimeout: cfg.HTTP.ReadTimeout, WriteTimeout: cfg.HTTP.WriteTimeout, IdleTimeout: cfg.HTTP.IdleTimeout,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	d.http.RegisterOnShutdown(func() { close(d.quit) })
	go func() {
		if err := d.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			cfg.Logger.Error("http: serve stopped", "addr", d.addr.String(), "error", err)
		}
	}()
}

// Done is closed when the daemon stopped on its own (an error Err returns:
// a state topic that only an operator can fix) or was closed.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err is the error the daemon stopped with, once Done is closed.
func (d *Daemon) Err() error {
	select {
	case <-d.done:
		return d.runErr
	default:
		return nil
	}
}

// Startup backoff: the first retry after connectBackoff, doubling up to
// maxConnectBackoff.
const (
	connectBackoff    = time.Second
	maxConnectBackoff = 30 * time.Second
)

// connect opens the state topics (openStores) before the group is joined.
// Brokers that cannot be reached (not started yet, a network partition) are
// waited for with capped backoff, each attempt logged (so at most one line
// per backoff), as a daemon under a supervisor should rather than exit; a
// misconfiguration (checkpoint.ErrMisconfigured) ends the daemon with its
// message.
func (d *Daemon) connect(ctx context.Context) error {
	backoff := connectBackoff
	for attempt := 1; ; attempt++ {
		err := d.openStores(ctx)
		switch {
		case err == nil:
			if attempt > 1 {
				d.cfg.Logger.Info("brokers reached", "attempts", attempt)
			}
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, checkpoint.ErrMisconfigured):
			d.cfg.Logger.Error("state topic misconfigured; stopping", "err", err)
			return err
		}
		d.cfg.Logger.Warn("brokers unreachable at start; retrying", "brokers", d.cfg.Brokers, "attempt", attempt,
			"backoff_seconds", backoff.Seconds(), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxConnectBackoff)
	}
}

// readyCheckEvery spaces the checks of the brokers and the output topics
// that /readyz reports.
const readyCheckEvery = 5 * time.Second

// watchOutputs asks the brokers for the forecast and dead-letter topics'
// metadata every readyCheckEvery until ctx ends, and keeps what is wrong
// ("" when nothing) for /readyz: an unreachable broker, or an output topic
// that does not exist (the publishers retry meanwhile, and the partitions
// stall behind them).
func (d *Daemon) watchOutputs(ctx context.Context) {
	every := d.cfg.readyCheckEvery
	if every <= 0 {
		every = readyCheckEvery
	}
	client := &kafka.Client{Addr: kafka.TCP(d.cfg.Brokers...), Transport: d.cfg.Transport, Timeout: every}
	for {
		reason := ""
		rctx, cancel := context.WithTimeout(ctx, every)
		md, err := client.Metadata(rctx, &kafka.MetadataRequest{Topics: []string{d.cfg.ForecastTopic, d.cfg.DeadLetterTopic}})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			reason = "brokers unreachable: " + err.Error()
		} else {
			for _, want := range []struct{ what, name string }{{"forecast", d.cfg.ForecastTopic}, {"dead-letter", d.cfg.DeadLetterTopic}} {
				found := false
				for _, t := range md.Topics {
					if t.Name == want.name && t.Error == nil && len(t.Partitions) > 0 {
						found = true
					}
				}
				if !found {
					reason = fmt.Sprintf("%s topic %q does not exist", want.what, want.name)
					break
				}
			}
		}
		d.outputs.Store(&reason)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

// Addr returns the HTTP listener's address (nil without one).
func (d *Daemon) Addr() net.Addr { return d.addr }

// Close stops fetching, lets every partition publish and commit what it
// processed, leaves the group and closes the writers. It may be called more
// than once; every call returns the first error.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		d.closing.Store(true)
		d.cancel()
		<-d.done // every partition has ended: nothing more is submitted
		if d.pool != nil {
			d.pool.stop()
		}
		errs := []error{d.runErr, d.forecasts.Close(), d.dead.Close()}
		if d.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, d.http.Shutdown(ctx))
			cancel()
		}
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// authenticate requires, when a token or client CAs are configured, every
// request but /healthz (and /metrics with PublicMetrics) to carry the bearer
// token or a verified client certificate; else 401.
func (d *Daemon) authenticate(next http.Handler) http.Handler {
	h := d.cfg.HTTP
	mtls := h.TLS != nil && h.TLS.ClientCAs != nil
	if h.Token == "" && !mtls {
		return next
	}
	want := []byte("Bearer " + h.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.URL.Path == "/healthz", req.URL.Path == "/metrics" && h.PublicMetrics:
		case h.Token != "" && subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), want) == 1:
		case mtls && req.TLS != nil && len(req.TLS.VerifiedChains) > 0:
		default:
			if h.Token != "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="streamd"`)
			}
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "authentication required: a bearer token or a client certificate"})
			return
		}
		next.ServeHTTP(w, req)
	})
}

func (d *Daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(d.metrics.registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if reason := *d.outputs.Load(); reason != "" {
			http.Error(w, "not ready: "+reason, http.StatusServiceUnavailable)
			return
		}
		if !d.joined.Load() {
			http.Error(w, "not ready: not in the consumer group yet", http.StatusServiceUnavailable)
			return
		}
		if n := d.restoring.Load(); n > 0 {
			http.Error(w, fmt.Sprintf("not ready: restoring %d partitions", n), http.StatusServiceUnavailable)
			return
		}
		if st := d.stalled(); len(st) > 0 {
			http.Error(w, "not ready: publishing stalled: "+strings.Join(st, "; "), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	d.apiRoutes(mux)
	d.webRoutes(mux)
	return mux
}

// metrics are the daemon's own Prometheus collectors, on a private registry
// (with the Go and process collectors). No label carries a series id.
type metrics struct {
	registry  *prometheus.Registry
	records   prometheus.Counter
	rejected  *prometheus.CounterVec
	forecasts prometheus.Counter
	fitFailed prometheus.Counter
	series    prometheus.Gauge
	evicted   prometheus.Counter
	bytes     prometheus.Gauge
	skipped   prometheus.Counter
	gapFilled prometheus.Counter
	// unitSuspect counts new series whose first t, an integer Unix time,
	// looks like the other time unit's (partitionRun.checkUnit).
	unitSuspect prometheus.Counter

	rebalances           prometheus.Counter
	latency              prometheus.Histogram
	checkpointSeconds    prometheus.Histogram
	checkpointBytes      prometheus.Counter
	checkpointSeries     prometheus.Counter
	checkpointFailures   prometheus.Counter
	deadTruncated        prometheus.Counter
	dropped              *prometheus.CounterVec
	restores             *prometheus.CounterVec
	restoreSeconds       prometheus.Histogram
	restored             prometheus.Counter
	restoreFailures      prometheus.Counter
	restoreConfigChanged prometheus.Counter
	foreignCheckpoints   prometheus.Counter
	heavyJobs            prometheus.Counter
	heavySeconds         prometheus.Histogram
	fallbacks            prometheus.Counter
	outliers             prometheus.Counter
	levelShifts          prometheus.Counter
	restarts             prometheus.Counter
}

// BuildInfo labels streamd_build_info.
type BuildInfo struct{ Version, GoVersion string }

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		records: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_input_records_total",
			Help: "Input records consumed."}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamd_input_rejected_total",
			Help: "Input records rejected, by reason; each is sent to the dead-letter topic."}, []string{"reason"}),
		forecasts: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_forecasts_published_total",
			Help: "Forecast messages published."}),
		fitFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_fit_failures_total",
			Help: "Warm-up fits that failed; the series keeps buffering and retries."}),
		series: prometheus.NewGauge(prometheus.GaugeOpts{Name: "streamd_series",
			Help: "Live series on this instance."}),
		evicted: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_series_evicted_total",
			Help: "Series evicted by the live-series cap or the state budget."}),
		bytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "streamd_series_state_bytes",
			Help: "Bytes of numeric state held by the live series (Learner.SizeBytes and the web view's recent observations, summed)."}),
	}
	m.skipped = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_input_skipped_total",
		Help: "Input records read again after a restart and skipped: their series' restored checkpoint holds them."})
	m.fallbacks = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_forecast_fallbacks_total",
		Help: "Forecasts with steps from the fallback: the model's forecast left the plausible (a band wider than ten ranges of the series' values, a point that far beyond them, or half a range beyond a bound the values have kept since their count was half or less)."})
	m.outliers = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_outliers_total",
		Help: "Values flagged as outliers (observed.outlier in their forecast messages: the robust weighting's outliers and the gross errors)."})
	m.levelShifts = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_level_shifts_total",
		Help: "Level-shift corrections started: a series' one-step errors showed a shift of its level that its model has not learned, and its forecasts carry a correction until it has (model.level_shift)."})
	m.restarts = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_series_restarts_total",
		Help: "Series started afresh, as a new series forecast from its next values: their values had never varied when their structure was last chosen, and one did (docs/design.md, \"Values that never varied\")."})
	m.gapFilled = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_gap_samples_filled_total",
		Help: "Missing samples (gaps in t of more than one step) filled with their one-step predictions to keep the lags aligned."})
	m.unitSuspect = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_series_time_unit_suspect_total",
		Help: "New series whose first t, an integer Unix time, looks like the other time unit's (model.time_unit): before 1973-03-03 as milliseconds (Unix seconds?), after the year 5138 as seconds (Unix milliseconds?). A warning names the series."})
	m.rebalances = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_rebalances_total",
		Help: "Consumer-group generations joined (each follows a rebalance)."})
	// Kafka Streams' record-e2e-latency measures the same way: wall clock
	// minus the record's timestamp. It so includes the producer's and the
	// broker's part, and reads high when producers set the timestamp to
	// event time, when the clocks disagree, and while a backlog is read.
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamd_forecast_latency_seconds",
		Help:    "Time from an input record's timestamp to the broker's acknowledgement of its forecast.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}})
	m.checkpointSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamd_checkpoint_duration_seconds",
		Help: "Time to encode and write one checkpoint step of a partition (the series due, then its watermark) until acknowledged.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)})
	m.checkpointBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_checkpoint_bytes_total",
		Help: "Bytes of series state written to the state topic."})
	m.checkpointSeries = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_checkpoint_series_total",
		Help: "Series checkpoints (and tombstones of evicted series) written to the state topic."})
	m.checkpointFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_checkpoint_failures_total",
		Help: "Checkpoint writes that failed and were retried; the input offset stays uncommitted until one succeeds."})
	m.deadTruncated = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_dead_letters_truncated_total",
		Help: "Dead letters whose key or value was cut to fit the dead-letter topic (header streamd-truncated)."})
	m.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamd_publish_dropped_total",
		Help: "Forecasts and dead letters the brokers refused for good (too large, not authorized) and that were skipped, by stream."},
		[]string{"stream"})
	for _, s := range []string{"forecasts", "dead_letters"} {
		m.dropped.WithLabelValues(s)
	}
	m.restores = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "streamd_partition_restores_total",
		Help: "Partitions restored on assignment, by source: state_topic (read back) or memory (kept from before a rebalance, nothing newer in the state topic)."},
		[]string{"from"})
	m.restoreSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamd_restore_duration_seconds",
		Help: "Time to restore one assigned partition's series before consuming it.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)})
	m.restored = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_series_restored_total",
		Help: "Series restored from the state topic."})
	m.restoreFailures = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_restore_failures_total",
		Help: "Checkpoints that could not be restored (another format version, a state that does not fit the configuration's inputs, or corrupt); the series starts afresh."})
	m.restoreConfigChanged = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_restore_config_changed_total",
		Help: "Series restored from checkpoints learned under another model configuration; they keep their state, and the changed structure keys take effect at their next re-choice."})
	m.foreignCheckpoints = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_restore_foreign_checkpoints_total",
		Help: "State topic records written by another consumer group and refused at restore (each deployment needs its own state topic)."})
	m.heavyJobs = prometheus.NewCounter(prometheus.CounterOpts{Name: "streamd_heavy_jobs_total",
		Help: "Heavy Observes (fits and re-choices of the structure, retunes, tests of a larger working set) run on the worker pool."})
	m.heavySeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamd_heavy_job_duration_seconds",
		Help: "Time a worker spent on one heavy Observe.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)})
	m.registry.MustRegister(m.heavyJobs, m.heavySeconds, m.fallbacks, m.outliers, m.levelShifts, m.restarts)
	m.registry.MustRegister(m.foreignCheckpoints, m.skipped, m.gapFilled, m.unitSuspect, m.rebalances, m.latency, m.checkpointSeconds, m.checkpointBytes, m.checkpointSeries,
		m.checkpointFailures, m.deadTruncated, m.dropped, m.restores, m.restoreSeconds, m.restored, m.restoreFailures, m.restoreConfigChanged)
	for _, from := range []string{"state_topic", "memory"} {
		m.restores.WithLabelValues(from)
	}
	m.registry.MustRegister(m.records, m.rejected, m.forecasts, m.fitFailed, m.series, m.evicted, m.bytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range reject.Reasons {
		m.rejected.WithLabelValues(string(r))
	}
	return m
}

// metricsForecasts reads streamd_forecasts_published_total (tests, benchmarks).
func (d *Daemon) metricsForecasts() int {
	m := &dto.Metric{}
	if err := d.metrics.forecasts.Write(m); err != nil {
		return 0
	}
	return int(m.GetCounter().GetValue())
}
