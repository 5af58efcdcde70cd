package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"golang.org/x/term"

	"github.com/streamd/streamd/internal/daemon"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
	"github.com/streamd/streamd/internal/synth"
)

//go:embed demodata/laser.dat
var laserData []byte

// demoCommand is `streamd demo`: the whole daemon path with no external
// services — an in-process Kafka-protocol broker, three replayed series, the
// daemon, and a live view.
type demoCommand struct{}

const demoUsage = `Usage: streamd demo [flags]

Starts an in-process Kafka-protocol broker on 127.0.0.1, creates the topics,
and replays three series through the full daemon path (broker → consumer
group → learners → forecast topic): the Santa Fe laser, a Mackey–Glass series
and a plant driven by an exogenous input. Shows, per series, the samples
seen, the one-step error and 95 % coverage so far, and the latest forecast
with its band; the web view (the address printed as "view") draws them live.
Ctrl-C stops it.

Flags:
`

func (demoCommand) Run(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rate := fs.Float64("rate", 200, "records per second per series")
	listen := fs.String("http", "127.0.0.1:9464", "HTTP `address` of /metrics, the series API and the web view (/ui/)")
	duration := fs.Duration("duration", 0, "stop after this long (0: run until Ctrl-C)")
	fs.Usage = func() {
		fmt.Fprint(stderr, demoUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !(*rate > 0) {
		return usageErrorf("demo: --rate must be > 0")
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "series", "forecasts", "series-dlq"))
	if err != nil {
		return fmt.Errorf("demo: broker: %w", err)
	}
	defer cluster.Close()
	addrs := cluster.ListenAddrs()
	d, err := daemon.Open(daemon.Config{
		Build:   buildInfo(),
		Brokers: addrs, Group: "streamd-demo", InputTopics: []string{"series"},
		ForecastTopic: "forecasts", DeadLetterTopic: "series-dlq",
		Decoder:  demoDecoder(),
		Registry: demoRegistry(),
		Listen:   *listen, Transport: &kafka.Transport{},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "broker   %s\nview     http://%s/ui/\nmetrics  http://%s/metrics\nseries   http://%s/v1/series\nwatch    kcat -C -b %s -t forecasts -f '%%k %%s\\n'\n\n",
		addrs[0], d.Addr(), d.Addr(), d.Addr(), addrs[0])
	series, err := demoSeries()
	if err != nil {
		d.Close()
		return err
	}
	replayDone := make(chan error, 1)
	go func() { replayDone <- replay(ctx, addrs, series, *rate) }()
	tty := isTerminal(stdout)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case <-tick.C:
			showSeries(stdout, d, tty)
		}
	}
	if err := <-replayDone; err != nil && ctx.Err() == nil {
		d.Close()
		return err
	}
	showSeries(stdout, d, false)
	fmt.Fprintln(stdout, "stopping: publishing processed records and committing")
	return d.Close()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// demoSeries returns the replayed series: values (and inputs) per id.
func demoSeries() (map[string][][2]float64, error) {
	out := map[string][][2]float64{}
	sc := bufio.NewScanner(bytes.NewReader(laserData))
	for sc.Scan() {
		v, err := strconv.ParseFloat(strings.TrimSpace(sc.Text()), 64)
		if err != nil {
			return nil, fmt.Errorf("demo: laser data: %w", err)
		}
		out["laser"] = append(out["laser"], [2]float64{v, 0})
	}
	for _, v := range synth.AddNoise(synth.MackeyGlass(20000, 17, 500), 0.0023, 1) {
		out["mackey-glass"] = append(out["mackey-glass"], [2]float64{v, 0})
	}
	// A plant with an exogenous input: y_k = 0.7·y_{k−1} + tanh(u_k) + noise,
	// u a slow square wave with jitter (a setpoint a controller would move).
	rng := rand.New(rand.NewPCG(7, 7))
	y := 0.0
	for k := 0; k < 20000; k++ {
		u := 1.5 * math.Copysign(1, math.Sin(float64(k)/40)) * (1 + 0.2*rng.Float64())
		y = 0.7*y + math.Tanh(u) + 0.05*rng.NormFloat64()
		out["plant"] = append(out["plant"], [2]float64{y, u})
	}
	return out, nil
}

// replay writes every series at rate records per second each, in time order,
// until the data or ctx ends.
func replay(ctx context.Context, addrs []string, series map[string][][2]float64, rate float64) error {
	w, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	if err != nil {
		return err
	}
	defer w.Close()
	const tick = 50 * time.Millisecond
	perTick := max(1, int(math.Round(rate*tick.Seconds())))
	t := time.NewTicker(tick)
	defer t.Stop()
	ids := []string{"laser", "mackey-glass", "plant"}
	for k := 0; ; {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var recs []sink.Record
		for i := 0; i < perTick; i, k = i+1, k+1 {
			for _, id := range ids {
				s := series[id]
				if k >= len(s) {
					continue
				}
				v := fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, s[k][0])
				if id == "plant" {
					v = fmt.Sprintf(`{"t":%d,"y":%.17g,"u":[%.17g]}`, k+1, s[k][0], s[k][1])
				}
				recs = append(recs, sink.Record{Key: []byte(id), Value: []byte(v)})
			}
		}
		if len(recs) == 0 {
			<-ctx.Done()
			return nil
		}
		if err := w.WriteRecords(ctx, recs...); err != nil && ctx.Err() == nil {
			return err
		}
	}
}

// showSeries prints one line per series: samples, one-step RMSE and
// coverage so far, and the forecast h = 1 and h = H with their bands. On a
// terminal the table is redrawn in place.
func showSeries(w io.Writer, d *daemon.Daemon, tty bool) {
	items, _ := d.Series(0, 20)
	var b strings.Builder
	if tty {
		b.WriteString("\x1b[H\x1b[2J")
	}
	fmt.Fprintf(&b, "%-13s %7s %10s %7s  %-28s %-28s\n", "series", "t", "1-step rmse", "cov95", "forecast h=1 [95%]", "forecast h=H [95%]")
	for _, s := range items {
		line := fmt.Sprintf("%-13s %7d %10s %7s", s.ID, s.LastT, "warm-up", "")
		if s.Predicted > 0 {
			line = fmt.Sprintf("%-13s %7d %10.4g %6.1f%%", s.ID, s.LastT, s.OneStepRMS, 100*s.Coverage95)
		}
		if s.Latest != nil && len(s.Latest.Steps) > 0 {
			f, l := s.Latest.Steps[0], s.Latest.Steps[len(s.Latest.Steps)-1]
			line += fmt.Sprintf("  %-28s %-28s", fmt.Sprintf("%.4g [%.4g, %.4g]", f.Mean, f.Lo, f.Hi),
				fmt.Sprintf("h=%d %.4g [%.4g, %.4g]", l.H, l.Mean, l.Lo, l.Hi))
		}
		b.WriteString(line + "\n")
	}
	io.WriteString(w, b.String())
}

func demoDecoder() source.Decoder {
	return source.Decoder{Fields: source.DefaultFields, MaxBytes: 1 << 20}
}

// demoRegistry: a default model for the univariate series and an override
// for the plant, which has one exogenous input (lags 0 and 1).
func demoRegistry() online.RegistryConfig {
	cfg := DefaultConfig()
	cfg.Model.Lags = Lags{Count: 12}
	cfg.Model.WorkingSet, cfg.Model.Warmup = Auto[int]{Value: 60}, 400
	base := cfg.Model.Learner(cfg.Forecast, cfg.Robust)
	plant := base
	plant.Model.Embedding = narx.Embedding{YLags: narx.Lags(2), InputLags: [][]int{{0, 1}}}
	return online.RegistryConfig{Default: base, Overrides: []online.Override{{Match: "plant", Config: plant}},
		MaxSeries: 1000}
}
