package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// BenchmarkEndToEnd measures the daemon path through a Kafka-protocol broker
// over TCP (issue 5's setup): 8 partitions, 400 series, M = 50, lags 1..10, a
// 10-step forecast issued after every record. The records are produced
// first; the clock runs from Open until every forecast has been published.
// Reports records/s over all records (warm-up included) and forecasts/s;
// with state=on the partitions also checkpoint to a state topic (the
// default: every 50 000 records or 10 s, and at the end, before the final
// commit). Run with -benchtime=1x.
//
// learners-only is the reference of "the math alone": the same records run
// through the same Learners directly, one goroutine, in the daemon's
// arrival order, with each forecast encoded as its message — what
// `streamd backtest --protocol prequential` does per series.
func BenchmarkEndToEnd(b *testing.B) {
	for _, state := range []string{"off", "on"} {
		b.Run("state="+state, func(b *testing.B) { benchmarkEndToEnd(b, state == "on") })
	}
	b.Run("learners-only", benchmarkLearnersOnly)
}

// endToEndModel is the model of the end-to-end benchmarks.
// settle waits until d has worked through a backlog of records records:
// every one read, no series waiting for heavy work, and the forecasts
// count unchanged for settleQuiet (the last ones published). It returns
// the time of the last forecast. A live phase starts only after it, or its
// first records would wait behind the backlog's last.
func settle(ctx context.Context, d *Daemon, records int) time.Time {
	last, n := time.Now(), d.metricsForecasts()
	for ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		if m := d.metricsForecasts(); m != n {
			last, n = time.Now(), m
			continue
		}
		if int(testutil.ToFloat64(d.metrics.records)) >= records && d.busySeries.Load() == 0 && time.Since(last) >= settleQuiet {
			return last
		}
	}
	return last
}

// settleQuiet: once every record is handled, the last forecasts go out
// within a flush interval or two.
const settleQuiet = 200 * time.Millisecond

func endToEndModel(warmup int) online.Config {
	return online.Config{
		Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(10)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 20},
			Size: 50, Gamma: 100, AutoGamma: true, Forgetting: 1, Cutoff: 1e-10, Window: 200, SwapInterval: 10, NoiseEvery: 500,
			Select: narx.SelectOptions{MaxIter: 3000, Patience: 200}, Seed: 1},
		Warmup: warmup, Horizon: 10, Calibrate: 10, Every: 1, Level: 0.95,
	}
}

func benchmarkLearnersOnly(b *testing.B) {
	const nSeries, perSeries, warmup = 400, 500, 150
	values := make([][]float64, nSeries) // every series distinct: identical ones would swap in lockstep
	for s := range values {
		values[s] = series(s, perSeries)
	}
	for i := 0; i < b.N; i++ {
		reg, err := online.NewRegistry(online.RegistryConfig{Default: endToEndModel(warmup)})
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, nSeries)
		for s := range ids {
			ids[s] = fmt.Sprintf("s%d", s)
		}
		start := time.Now()
		for k := 0; k < perSeries; k++ {
			for s, id := range ids {
				l, _, _ := reg.Get(id)
				res, err := l.Observe(online.Observation{T: int64(k + 1), Y: values[s][k]})
				if err != nil {
					b.Fatal(err)
				}
				if res.Fitted || res.Forecast != nil {
					msg := sink.Message{IssuedAt: time.Now().UTC()}
					SetResult(&msg, id, int64(k+1), values[s][k], res)
					msg.Model = ModelInfoOf(l)
					if _, err := json.Marshal(&msg); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		b.ReportMetric(float64(nSeries*perSeries)/time.Since(start).Seconds(), "records/s")
	}
}

func benchmarkEndToEnd(b *testing.B, withState bool) {
	const nSeries, perSeries, warmup = 400, 500, 150
	for i := 0; i < b.N; i++ {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, "series", "forecasts", "dlq"), benchSegments)
		if err != nil {
			b.Fatal(err)
		}
		addrs := c.ListenAddrs()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
		var recs []sink.Record
		values := make([][]float64, nSeries) // every series distinct: identical ones would swap in lockstep
		for s := range values {
			values[s] = series(s, perSeries)
		}
		for k := 0; k < perSeries; k++ {
			for s := 0; s < nSeries; s++ {
				recs = append(recs, sink.Record{Key: []byte(fmt.Sprintf("s%d", s)),
					Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, values[s][k]))})
			}
			if len(recs) >= 20000 || k == perSeries-1 {
				if err := w.WriteRecords(ctx, recs...); err != nil {
					b.Fatal(err)
				}
				recs = recs[:0]
			}
		}
		w.Close()
		cfg := endToEndModel(warmup)
		dc := Config{Brokers: addrs, Group: "bench", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
			DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
			Registry: online.RegistryConfig{Default: cfg}, SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}}
		if withState {
			dc.StateTopic = "state"
		}
		b.ResetTimer()
		start := time.Now()
		d, err := Open(dc)
		if err != nil {
			b.Fatal(err)
		}
		elapsed := settle(ctx, d, nSeries*perSeries).Sub(start)
		b.StopTimer()
		closing := time.Now()
		d.Close() // with state: the final checkpoint of every series, then the commit
		b.ReportMetric(time.Since(closing).Seconds(), "close-s")
		if withState {
			b.ReportMetric(testutil.ToFloat64(d.metrics.checkpointBytes)/float64(nSeries), "checkpoint-bytes/series")
		}
		c.Close()
		cancel()
		b.ReportMetric(float64(nSeries*perSeries)/elapsed.Seconds(), "records/s")
		b.ReportMetric(float64(d.metricsForecasts())/elapsed.Seconds(), "forecasts/s")
	}
}

// BenchmarkRestore10kSeries measures issue 6's restore: a state topic of 8
// partitions holding the checkpoints of 10 000 fitted series (M = 32, lags
// 1..10, as in the memory benchmark) is read back by a daemon joining the
// group. The clock runs from Open until every partition is restored (what
// /readyz waits for): joining the group, reading ≈ 10 000 checkpoints and
// decoding them. Run with -benchtime=1x.
func BenchmarkRestore10kSeries(b *testing.B) {
	const nSeries, partitions = 10000, 8
	cfg := online.Config{
		Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(10)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 20},
			Size: 32, Gamma: 100, AutoGamma: true, Forgetting: 1, Cutoff: 1e-10, Window: 128, SwapInterval: 10, NoiseEvery: 320,
			Select: narx.SelectOptions{MaxIter: 3000, Patience: 200}, Seed: 1},
		Warmup: 200, Horizon: 10, Calibrate: 10, Every: 1, Level: 0.95,
	}
	// One fitted series' checkpoint per key (decoding cost does not depend
	// on the values), each series in the partition its key hashes to.
	l, _ := online.NewLearner(cfg)
	y := series(1, 400)
	for k := range y {
		l.Observe(online.Observation{T: int64(k + 1), Y: y[k]})
	}
	snap, err := online.MarshalCheckpoint(l, 399)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "series", "forecasts", "dlq"))
		if err != nil {
			b.Fatal(err)
		}
		addrs := c.ListenAddrs()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		store, _ := checkpoint.New(checkpoint.Config{Brokers: addrs, Topic: "state", Transport: &kafka.Transport{}})
		if _, err := store.Ensure(ctx, "series"); err != nil {
			b.Fatal(err)
		}
		byPartition := make([][]checkpoint.Entry, partitions)
		ps := []int{0, 1, 2, 3, 4, 5, 6, 7}
		for s := 0; s < nSeries; s++ {
			id := fmt.Sprintf("s%d", s)
			p, _ := sink.PartitionOf("", []byte(id), len(ps)) // as the input writer partitions
			byPartition[p] = append(byPartition[p], checkpoint.Entry{Key: id, Value: snap})
		}
		for p, entries := range byPartition {
			if _, err := store.Write(ctx, p, entries); err != nil {
				b.Fatal(err)
			}
		}
		dc := stateConfig(addrs, 50000)
		dc.Registry = online.RegistryConfig{Default: cfg}
		b.ResetTimer()
		start := time.Now()
		d, err := Open(dc)
		if err != nil {
			b.Fatal(err)
		}
		var joined time.Duration
		for !(d.joined.Load() && d.restoring.Load() == 0 && d.assigned.Load() == partitions) && ctx.Err() == nil {
			if joined == 0 && d.joined.Load() {
				joined = time.Since(start)
			}
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		restored := testutil.ToFloat64(d.metrics.restored)
		d.Close()
		c.Close()
		cancel()
		if restored != nSeries {
			b.Fatalf("%v series restored, want %d", restored, nSeries)
		}
		b.ReportMetric(elapsed.Seconds(), "restore-s")
		b.ReportMetric(joined.Seconds(), "join-s")
		b.ReportMetric(float64(len(snap)), "checkpoint-bytes")
	}
}

// BenchmarkLatency measures issue 5's latency: the daemon of BenchmarkEndToEnd
// (8 partitions, 400 series, M = 50, lags 1..10, a 10-step forecast after
// every record) at a steady input rate, and the maximum rate it is half of.
//
// Each series is first fitted and run on to record 500 from a backlog (its
// first 500 records, as BenchmarkEndToEnd), so that the models are measured
// as a running daemon has them, not while their working sets settle just
// after the fit (when they swap 2–3 times as often). Then the next 287
// records of each series (115 000 in all) arrive:
//   - rate=max: written at once, as a backlog; records/s is the rate at
//     which the daemon turns them into published forecasts;
//   - rate=half: first the maximum is measured b.N times (each run a daemon
//     and broker of their own) and max-records/s is their median; then b.N
//     runs produce the records at half of it, in 10 ms ticks. A record's
//     latency runs from just before its producer writes it (its timestamp)
//     to the broker's acknowledgement of its forecast (p50-ms, p99-ms,
//     max-ms): broker in, consumer group, learning, forecasting, publication
//     with acks=all.
//
// The maximum is one number for all the live runs, a median, because a
// single backlog run's rate is noisy: the machine's speed drifts by up to
// 20 % within a minute, and the same code drained the backlog at 18 400 to
// 29 100 records/s in consecutive runs. Half of each run's own maximum (the
// earlier protocol) ran a run whose maximum came out high at up to 65 % of
// the typical maximum, and measured the maximum's noise as much as the
// latency.
//
// With -benchtime=Nx, the N live runs' records are pooled: p50-ms, p99-ms
// and max-ms are over all of them (N·115 000 records, N·12 s of live input),
// the rates and CPU their means; run-p99-median-ms, run-p99-max-ms and
// runs-p99-within-50ms say how each run's own p99 fared, max-min-records/s and
// max-max-records/s how the N maxima spread.
//
// STREAMD_LATENCY_RECORDS=FILE appends each live run's records to FILE, a
// line "series t latency-ms" each: where the tail falls in the series'
// sample counts shows work that series started together do in lockstep
// (docs/benchmarks.md, "Latency").
//
// cpu-µs/record is the benchmark process's CPU time (daemon and producer),
// broker-cpu-µs/record the broker's, per measured record. The producer's
// records are built before the clock starts, so that it takes little of the
// daemon's CPU. With consumers=8, as many consumers read the forecast topic
// in the benchmark's process and recv-p50-ms, recv-p99-ms run on to when one
// has the forecast; they take CPU from the daemon, as consumers on other
// machines would not. state=on adds the default checkpoints (every 10 s per
// partition, writing every series it changed). The broker runs in a process
// of its own; the producer shares the daemon's process. All share the
// machine's 2 cores. Once the backlog is forecast, the broker drops its
// records (trimBroker), as retention would: kfake keeps every record in its
// heap, and its collections over the backlog were about a quarter of its
// CPU, taken from the same 2 cores.
func BenchmarkLatency(b *testing.B) {
	for _, c := range []struct {
		half      bool // false: the maximum, from a backlog
		state     string
		consumers int
	}{{false, "off", 0}, {false, "on", 0}, {true, "off", 0}, {true, "on", 0}, {true, "off", 8}} {
		rate := "max"
		if c.half {
			rate = "half"
		}
		b.Run(fmt.Sprintf("rate=%s/state=%s/consumers=%d", rate, c.state, c.consumers), func(b *testing.B) {
			var tops, halves []latencyRun
			for i := 0; i < b.N; i++ {
				tops = append(tops, runLatency(b, 0, c.state == "on", 0))
			}
			if !c.half {
				pool(tops).report(b)
				return
			}
			var maxima []float64
			for _, t := range tops {
				maxima = append(maxima, t.rate)
			}
			slices.Sort(maxima)
			top := median(maxima)
			for i := 0; i < b.N; i++ {
				halves = append(halves, runLatency(b, int(top/2), c.state == "on", c.consumers))
			}
			pool(halves).report(b)
			b.ReportMetric(top, "max-records/s")
			if b.N > 1 {
				b.ReportMetric(maxima[0], "max-min-records/s")
				b.ReportMetric(maxima[len(maxima)-1], "max-max-records/s")
				var runs [][]time.Duration
				for _, h := range halves {
					runs = append(runs, h.published)
				}
				reportRunP99s(b, runs)
			}
		})
	}
}

// reportRunP99s reports each run's own p99 of its latencies: the median
// and worst (run-p99-median-ms, run-p99-max-ms) and how many met the 50 ms
// target (runs-p99-within-50ms).
func reportRunP99s(b *testing.B, runs [][]time.Duration) {
	var p99s []float64
	within := 0
	for _, lat := range runs {
		p := quantileMs(lat, 0.99)
		p99s = append(p99s, p)
		if p <= 50 {
			within++
		}
	}
	slices.Sort(p99s)
	b.ReportMetric(median(p99s), "run-p99-median-ms")
	b.ReportMetric(p99s[len(p99s)-1], "run-p99-max-ms")
	b.ReportMetric(float64(within), "runs-p99-within-50ms")
}

// median is the median of sorted x.
func median(x []float64) float64 {
	n := len(x)
	return (x[(n-1)/2] + x[n/2]) / 2
}

// latencyRun is what one run of BenchmarkLatency measured.
type latencyRun struct {
	live           bool
	rate           float64 // records/s
	cpu, brokerCPU float64 // µs/record
	// allocB is the process's bytes allocated per record, gcPause the
	// longest stop-the-world pause of its collections, gcs their number,
	// all while the measured records were produced and published.
	allocB, gcs     float64
	gcPause         time.Duration
	published, recv []time.Duration
	// record is the measured index (see runLatency) of each published
	// latency, until pool or a quantile sorts them.
	record []int
}

func (r latencyRun) report(b *testing.B) {
	b.ReportMetric(r.cpu, "cpu-µs/record")
	b.ReportMetric(r.brokerCPU, "broker-cpu-µs/record")
	b.ReportMetric(r.rate, "records/s")
	b.ReportMetric(r.allocB, "alloc-B/record")
	b.ReportMetric(r.gcs, "gcs")
	b.ReportMetric(r.gcPause.Seconds()*1000, "gc-pause-max-ms")
	if !r.live {
		return // a backlog's latencies measure its length
	}
	b.ReportMetric(quantileMs(r.published, 0.5), "p50-ms")
	b.ReportMetric(quantileMs(r.published, 0.99), "p99-ms")
	b.ReportMetric(quantileMs(r.published, 1), "max-ms")
	if len(r.recv) > 0 {
		b.ReportMetric(quantileMs(r.recv, 0.5), "recv-p50-ms")
		b.ReportMetric(quantileMs(r.recv, 0.99), "recv-p99-ms")
	}
}

// pool is the runs as one: every record's latency, the mean rates and CPU.
func pool(runs []latencyRun) latencyRun {
	all := latencyRun{live: runs[0].live}
	for _, r := range runs {
		all.rate += r.rate / float64(len(runs))
		all.cpu += r.cpu / float64(len(runs))
		all.brokerCPU += r.brokerCPU / float64(len(runs))
		all.allocB += r.allocB / float64(len(runs))
		all.gcs += r.gcs / float64(len(runs))
		all.gcPause = max(all.gcPause, r.gcPause)
		all.published = append(all.published, r.published...)
		all.recv = append(all.recv, r.recv...)
	}
	return all
}

// quantileMs is the p-quantile of d in milliseconds; it sorts d.
func quantileMs(d []time.Duration, p float64) float64 {
	slices.Sort(d)
	return d[int(p*float64(len(d)-1))].Seconds() * 1000
}

// runLatency runs BenchmarkLatency's setup once and measures the records
// after the settled ones, produced at rate records/s (0: as a backlog).
func runLatency(b *testing.B, rate int, withState bool, consumers int) latencyRun {
	const nSeries, warmup, settled, measured = 400, 150, 500, 287
	perSeries := settled + measured
	cfg := endToEndModel(warmup)
	values := make([][]float64, nSeries) // every series distinct: identical ones would swap in lockstep
	for s := range values {
		values[s] = series(s, perSeries)
	}
	record := func(s, k int) sink.Record {
		return sink.Record{Key: []byte(fmt.Sprintf("s%d", s)),
			Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, values[s][k]))}
	}
	broker := startBrokerProcess(b, "series", "forecasts", "dlq")
	defer broker.Stop()
	addrs := broker.Addrs
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	defer w.Close()
	recs := writeBacklog(ctx, b, w, nSeries, settled, record)
	// The measured records, in production order: i is series i%nSeries's
	// record settled+i/nSeries, sentAt[i] when its write started.
	total := measured * nSeries
	recs = recs[:0]
	for i := 0; i < total; i++ {
		recs = append(recs, record(i%nSeries, settled+i/nSeries))
	}
	sentAt := make([]time.Time, total)
	index := func(series string, t int64) (int, bool) {
		s, err := strconv.Atoi(strings.TrimPrefix(series, "s"))
		i := (int(t)-1-settled)*nSeries + s
		return i, err == nil && s >= 0 && s < nSeries && i >= 0 && i < total
	}

	dc := Config{Brokers: addrs, Group: "bench", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
		DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry: online.RegistryConfig{Default: cfg}, SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}}
	if withState {
		dc.StateTopic = "state"
	}
	var mu sync.Mutex
	res := latencyRun{live: rate > 0}
	dc.onPublished = func(fs []*sink.Message, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range fs {
			if i, ok := index(f.Series, f.T); ok {
				res.published = append(res.published, at.Sub(sentAt[i]))
				res.record = append(res.record, i)
			}
		}
	}
	d, err := Open(dc)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	settle(ctx, d, nSeries*settled)
	trimBroker(ctx, b, addrs, "series", "forecasts") // the backlog is consumed

	// Forecast arrivals at the consumers.
	rctx, stopReaders := context.WithCancel(ctx)
	var readers sync.WaitGroup
	defer readers.Wait()
	defer stopReaders()
	for p := 0; p < consumers; p++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "forecasts", Partition: p,
				MaxWait: 250 * time.Millisecond, StartOffset: kafka.LastOffset})
			defer r.Close()
			for {
				m, err := r.ReadMessage(rctx)
				if err != nil {
					return
				}
				at := time.Now()
				var fm struct {
					Series string `json:"series"`
					T      int64  `json:"t"`
				}
				if json.Unmarshal(m.Value, &fm) != nil {
					continue
				}
				mu.Lock()
				if i, ok := index(fm.Series, fm.T); ok {
					res.recv = append(res.recv, at.Sub(sentAt[i]))
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second) // the readers are at the end of the topic

	var ru0, ru1 syscall.Rusage
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	broker0 := broker.CPU()
	// produce writes measured records [from, to), stamped at.
	produce := func(from, to int, at time.Time) {
		mu.Lock()
		for i := from; i < to; i++ {
			sentAt[i] = at
		}
		mu.Unlock()
		if from < to {
			if err := w.WriteRecords(ctx, recs[from:to]...); err != nil {
				b.Fatal(err)
			}
		}
	}
	start := time.Now()
	if rate == 0 {
		produce(0, total, start)
	} else {
		tick := time.NewTicker(10 * time.Millisecond)
		for next := 0; next < total; {
			<-tick.C
			due := min(total, int(time.Since(start).Seconds()*float64(rate)))
			produce(next, due, time.Now())
			next = due
		}
		tick.Stop()
	}
	for ctx.Err() == nil {
		mu.Lock()
		n := len(res.published)
		if consumers > 0 {
			n = min(n, len(res.recv))
		}
		mu.Unlock()
		if n >= total {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&ms1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	res.cpu = float64(cpu.Microseconds()) / float64(total)
	res.allocB = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(total)
	res.gcs = float64(ms1.NumGC - ms0.NumGC)
	for n := ms0.NumGC + 1; n <= ms1.NumGC && n+256 > ms1.NumGC; n++ {
		res.gcPause = max(res.gcPause, time.Duration(ms1.PauseNs[(n+255)%256]))
	}
	res.brokerCPU = float64((broker.CPU() - broker0).Microseconds()) / float64(total)
	res.rate = float64(total) / elapsed.Seconds()
	if ctx.Err() != nil {
		b.Fatalf("%d of %d forecasts published in time", len(res.published), total)
	}
	if path := os.Getenv("STREAMD_LATENCY_RECORDS"); path != "" && res.live {
		writeLatencyRecords(b, path, res.record, res.published, nSeries, settled)
	}
	return res
}

// writeLatencyRecords appends to path a line "series t latency-ms" for each
// published forecast k of record i = record[k] (series i mod nSeries, its
// value settled + i/nSeries + 1), latency lat[k].
func writeLatencyRecords(b *testing.B, path string, record []int, lat []time.Duration, nSeries, settled int) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for k, i := range record {
		fmt.Fprintf(w, "s%d %d %.3f\n", i%nSeries, settled+i/nSeries+1, lat[k].Seconds()*1000)
	}
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		b.Fatal(err)
	}
}

// trimBroker deletes every record of topics (8 partitions each) up to their
// ends, as a retention policy would. The benchmarks' broker keeps every
// record in its Go heap, so that its collections, which take CPU from the
// daemon on the same 2 cores, grow with all it ever stored; a real broker
// keeps them in files. Before a live phase, the backlog, all consumed, is
// only the broker's garbage.
func trimBroker(ctx context.Context, tb testing.TB, addrs []string, topics ...string) {
	tb.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.TimeoutMillis = 10_000
	for _, t := range topics {
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = t
		for p := int32(0); p < 8; p++ {
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Partition, rp.Offset = p, -1 // the high watermark
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	res, err := req.RequestWith(ctx, cl)
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				tb.Fatalf("delete records of %s/%d: %v", t.Topic, p.Partition, err)
			}
		}
	}
}

// BenchmarkPartitionRecord is the partition goroutine's work per record of
// an established series, without a broker: decoding, the series' Learner
// (the end-to-end benchmark's model: M = 50, lags 1..10, a 10-step
// forecast after every record), its forecast message, history and scores,
// and the summaries published every flushBatch records. 400 series are
// past their warm-up before the clock starts, so every timed record is one
// a partition handles inline (nothing heavy): the hot path.
func BenchmarkPartitionRecord(b *testing.B) {
	const nSeries, warm, perSeries = 400, 200, 2000
	cfg := endToEndModel(150)
	d := &Daemon{cfg: Config{Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry: online.RegistryConfig{Default: cfg}, CheckpointRecords: DefaultCheckpointRecords}, metrics: newMetrics(), dir: newDirectory()}
	d.cfg.Decoder.Inputs = -1
	r := loosePartition(b, d)
	values := make([][]float64, nSeries)
	for s := range values {
		values[s] = series(s, perSeries)
	}
	off := int64(0)
	record := func(s, k int) kafka.Message {
		m := kafka.Message{Offset: off, Key: []byte(fmt.Sprintf("s%d", s)),
			Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, values[s][k%perSeries]))}
		off++
		return m
	}
	flush := func() {
		r.pending, r.stamps = r.pending[:0], r.stamps[:0]
		r.publishSummaries()
	}
	for k := 0; k < warm; k++ {
		for s := 0; s < nSeries; s++ {
			r.handle(record(s, k))
		}
		flush()
	}
	msgs := make([]kafka.Message, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		b.StopTimer()
		msgs = msgs[:0]
		for j := 0; j < cap(msgs) && i+j < b.N; j++ {
			n := i + j
			msgs = append(msgs, record(n%nSeries, warm+n/nSeries))
		}
		b.StartTimer()
		for j, m := range msgs {
			r.handle(m)
			if (i+j)%flushBatch == flushBatch-1 {
				flush()
			}
		}
		i += len(msgs)
	}
}

// defaultModel is the Learner configuration of `streamd run`'s defaults
// (cmd/streamd DefaultConfig: lags, kernel, form and width chosen by the
// series, M = 100, warm-up 500, a 20-step forecast after every record, the
// gain rule's swaps, the theta combination and its young forecasts): the
// structure choices whose cost the onboarding benchmark is about. Keep it
// in step with DefaultConfig (this package cannot import it).
func defaultModel() online.Config {
	lags := []int{1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 25, 30}
	return online.Config{
		Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(30)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 60, Degree: 2, Offset: 1},
			Size: 100, Gamma: 100, AutoGamma: true, Forgetting: 1, Cutoff: 1e-10, Window: 600, SwapInterval: 10, SwapRule: narx.SwapGain,
			NoiseEvery: 1000, Select: narx.SelectOptions{MaxIter: 10000, Patience: 400}, Seed: 1},
		Warmup: 500, Forms: []online.Form{{}, {Diff: true}, {Log: true}, {Log: true, Diff: true}},
		Kernels: []narx.KernelType{narx.Linear, narx.RBF}, Horizon: 20, Calibrate: 20, Every: 1, Level: 0.95, Scale: online.ScaleRobust,
		AutoSigma2: true, LagCandidates: lags, Tuning: online.TuneEvidence, TuneSize: 100, TuneHorizon: 20,
		Combine: online.CombineAuto, Growth: online.Growth{Max: 400, Window: true, NoiseEvery: true, Patience: true},
	}
}

// BenchmarkOnboarding measures "onboarding under load": the daemon of
// BenchmarkLatency (8 partitions, 400 established series, M = 50, lags
// 1..10, settled on 500 records each from a backlog) streams 287 more
// records per series at half its maximum rate, and 1 s into it 100 new
// series start at once, with streamd's default model (defaultModel: their
// structure is chosen at 16, 32, …, 128, 256 and 500 values, each choice
// 0.1–6 s of CPU), at the same rate per series. Reported: the latency of
// the established series' forecasts — from just before the record's write
// to the broker's acknowledgement of its forecast — p50-ms, p99-ms,
// max-ms, mean-ms; new-first-max-s, the longest a new series waited from
// its first record's write for its first forecast (every new series must
// get one, else the benchmark fails); whatif=8 adds 8 clients each posting
// what-if forecasts at horizon 1000 on established series one after the
// other throughout (http.what_if.max_concurrent 8), whatif-p50-ms and
// whatif-max-ms their answer times.
//
// workers=0 runs everything on the partition goroutines (process.workers:
// 0), workers=auto the heavy work on the pool (GOMAXPROCS workers). The
// maximum rate is one backlog run's (as BenchmarkLatency's rate=max),
// measured at the start unless STREAMD_ONBOARDING_RATE gives the live
// rate in records/s of the established series (to hold it equal across
// runs). With -benchtime=Nx the N runs (each with a broker and daemon of
// its own, at the same rate) are pooled, as BenchmarkLatency's are
// (reportOnboarding). STREAMD_LATENCY_RECORDS=FILE appends the
// established series' records to FILE as BenchmarkLatency does: their t
// tells when in the run the tail falls (1 s in is t ≈ 500 + rate/400).
func BenchmarkOnboarding(b *testing.B) {
	rate := 0
	if v := os.Getenv("STREAMD_ONBOARDING_RATE"); v != "" {
		var err error
		if rate, err = strconv.Atoi(v); err != nil || rate <= 0 {
			b.Fatalf("STREAMD_ONBOARDING_RATE=%q: want records/s", v)
		}
	}
	for _, whatIfs := range []int{0, 8} {
		for _, workers := range []int{-1, 0} {
			name := "auto"
			if workers < 0 {
				name = "0"
			}
			b.Run(fmt.Sprintf("whatif=%d/workers=%s", whatIfs, name), func(b *testing.B) {
				if rate == 0 {
					top := runLatency(b, 0, false, 0)
					rate = int(top.rate / 2)
				}
				var runs []onboardingRun
				for i := 0; i < b.N; i++ {
					runs = append(runs, runOnboarding(b, rate, workers, whatIfs))
				}
				reportOnboarding(b, rate, whatIfs, runs)
			})
		}
	}
}

// onboardingRun is what one run of BenchmarkOnboarding measured: the
// established series' forecast latencies, each new series' time to its
// first forecast, and the what-if requests' latencies and failures.
type onboardingRun struct {
	lat, firsts, whatIfLat []time.Duration
	whatIfErrs             int
}

// reportOnboarding reports the runs pooled: p50-ms, p99-ms, max-ms and
// mean-ms over every run's established records, new-first-max-s over
// every new series; with more than one run, each run's own p99 as
// run-p99-median-ms, run-p99-max-ms and runs-p99-within-50ms. It runs
// after the runs: their b.ResetTimer drops the metrics reported before it.
func reportOnboarding(b *testing.B, rate, whatIfs int, runs []onboardingRun) {
	var all onboardingRun
	var lats [][]time.Duration
	for _, r := range runs {
		all.lat = append(all.lat, r.lat...)
		all.firsts = append(all.firsts, r.firsts...)
		all.whatIfLat = append(all.whatIfLat, r.whatIfLat...)
		all.whatIfErrs += r.whatIfErrs
		lats = append(lats, r.lat)
	}
	var sum time.Duration
	for _, l := range all.lat {
		sum += l
	}
	b.ReportMetric(float64(rate), "rate-records/s")
	b.ReportMetric(quantileMs(all.lat, 0.5), "p50-ms")
	b.ReportMetric(quantileMs(all.lat, 0.99), "p99-ms")
	b.ReportMetric(quantileMs(all.lat, 1), "max-ms")
	b.ReportMetric(sum.Seconds()*1000/float64(len(all.lat)), "mean-ms")
	b.ReportMetric(quantileMs(all.firsts, 1)/1000, "new-first-max-s")
	if len(runs) > 1 {
		reportRunP99s(b, lats)
	}
	if whatIfs > 0 {
		b.ReportMetric(float64(len(all.whatIfLat)), "whatifs")
		b.ReportMetric(float64(all.whatIfErrs), "whatif-errors")
		if len(all.whatIfLat) > 0 {
			b.ReportMetric(quantileMs(all.whatIfLat, 0.5), "whatif-p50-ms")
			b.ReportMetric(quantileMs(all.whatIfLat, 1), "whatif-max-ms")
		}
	}
}

func runOnboarding(b *testing.B, rate, workers, whatIfs int) onboardingRun {
	const nSeries, nNew, warmup, settled, measured = 400, 100, 150, 500, 287
	perSeries := settled + measured
	values := make([][]float64, nSeries+nNew)
	for s := range values {
		values[s] = series(s, perSeries)
	}
	id := func(s int) string {
		if s >= nSeries {
			return fmt.Sprintf("new-%d", s-nSeries)
		}
		return fmt.Sprintf("s%d", s)
	}
	record := func(s, k int) sink.Record {
		return sink.Record{Key: []byte(id(s)), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, values[s][k]))}
	}
	broker := startBrokerProcess(b, "series", "forecasts", "dlq")
	defer broker.Stop()
	addrs := broker.Addrs
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	defer w.Close()
	recs := writeBacklog(ctx, b, w, nSeries, settled, record)
	// The live records in production order: per tick of the established
	// series' records, the new series' at the same rate per series, from
	// the second second on.
	total := measured * nSeries
	startNew := rate // records of the established series before the new ones start
	recs = recs[:0]
	var newRecs []sink.Record
	for i := 0; i < total; i++ {
		recs = append(recs, record(i%nSeries, settled+i/nSeries))
	}
	for i := 0; i < measured*nNew; i++ {
		newRecs = append(newRecs, record(nSeries+i%nNew, i/nNew))
	}
	sentAt := make([]time.Time, total)
	var newStart time.Time
	var mu sync.Mutex
	var lat []time.Duration
	var latRec []int // lat[k]'s record: i of recs
	newFirst := map[string]time.Duration{}
	dc := Config{Brokers: addrs, Group: "bench", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
		DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry:       online.RegistryConfig{Default: endToEndModel(warmup), Overrides: []online.Override{{Match: "new-*", Config: defaultModel()}}},
		SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}, Workers: workers, Listen: "127.0.0.1:0",
		HTTP: HTTPConfig{WhatIfMaxConcurrent: whatIfs}}
	dc.onPublished = func(fs []*sink.Message, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range fs {
			if strings.HasPrefix(f.Series, "new-") {
				if _, ok := newFirst[f.Series]; !ok && !newStart.IsZero() {
					newFirst[f.Series] = at.Sub(newStart)
				}
				continue
			}
			s, err := strconv.Atoi(strings.TrimPrefix(f.Series, "s"))
			i := (int(f.T)-1-settled)*nSeries + s
			if err == nil && i >= 0 && i < total && !sentAt[i].IsZero() {
				lat = append(lat, at.Sub(sentAt[i]))
				latRec = append(latRec, i)
			}
		}
	}
	d, err := Open(dc)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	settle(ctx, d, nSeries*settled)
	trimBroker(ctx, b, addrs, "series", "forecasts")

	// What-if clients: horizon 1000 on established series, one after the
	// other each, until the live phase ends.
	wctx, stopWhatIfs := context.WithCancel(ctx)
	var clients sync.WaitGroup
	var whatIfLat []time.Duration
	whatIfErrs := 0
	for c := 0; c < whatIfs; c++ {
		clients.Add(1)
		go func() {
			defer clients.Done()
			hc := &http.Client{Timeout: 30 * time.Second}
			for j := 0; wctx.Err() == nil; j++ {
				url := fmt.Sprintf("http://%s/v1/series/s%d/forecast", d.Addr(), (c*50+j*7)%nSeries)
				start := time.Now()
				resp, err := hc.Post(url, "application/json", strings.NewReader(`{"horizon": 1000}`))
				if err != nil {
					continue
				}
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode == http.StatusOK {
					whatIfLat = append(whatIfLat, time.Since(start))
				} else {
					whatIfErrs++
				}
				mu.Unlock()
			}
		}()
	}
	b.ResetTimer()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	nextNew := 0
	for next := 0; next < total; {
		<-tick.C
		now := time.Now()
		due := min(total, int(now.Sub(start).Seconds()*float64(rate)))
		mu.Lock()
		for i := next; i < due; i++ {
			sentAt[i] = now
		}
		mu.Unlock()
		batch := recs[next:due]
		if due >= startNew {
			if newStart.IsZero() {
				mu.Lock()
				newStart = now
				mu.Unlock()
			}
			dueNew := min(len(newRecs), (due-startNew)*nNew/nSeries+nNew) // every new series' first record at once
			batch = append(slices.Clone(batch), newRecs[nextNew:dueNew]...)
			nextNew = dueNew
		}
		if len(batch) > 0 {
			if err := w.WriteRecords(ctx, batch...); err != nil {
				b.Fatal(err)
			}
		}
		next = due
	}
	tick.Stop()
	if err := w.WriteRecords(ctx, newRecs[nextNew:]...); err != nil {
		b.Fatal(err)
	}
	for ctx.Err() == nil {
		mu.Lock()
		n, firsts := len(lat), len(newFirst)
		mu.Unlock()
		if n >= total && firsts >= nNew {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.StopTimer()
	stopWhatIfs()
	clients.Wait()
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil {
		b.Fatalf("%d of %d forecasts of the established series published, %d of %d new series forecast", len(lat), total, len(newFirst), nNew)
	}
	if path := os.Getenv("STREAMD_LATENCY_RECORDS"); path != "" {
		writeLatencyRecords(b, path, latRec, lat, nSeries, settled)
	}
	run := onboardingRun{lat: lat, whatIfLat: whatIfLat, whatIfErrs: whatIfErrs}
	for _, f := range newFirst {
		run.firsts = append(run.firsts, f)
	}
	return run
}

// writeBacklog writes the first settled records of series 0..nSeries−1 in
// one write, every series' record k before any record k+1, and returns
// the slice it wrote (for reuse).
func writeBacklog(ctx context.Context, b *testing.B, w *sink.KafkaWriter, nSeries, settled int, record func(s, k int) sink.Record) []sink.Record {
	b.Helper()
	recs := make([]sink.Record, 0, nSeries*settled)
	for k := 0; k < settled; k++ {
		for s := 0; s < nSeries; s++ {
			recs = append(recs, record(s, k))
		}
	}
	if err := w.WriteRecords(ctx, recs...); err != nil {
		b.Fatal(err)
	}
	return recs
}

// BenchmarkWhatIfParts times the parts of a what-if answer at horizon 1 000
// on a series of the latency benchmarks' model (M = 50, lags 1..10, 800
// values learned): the copy taken on the partition goroutine, the
// forecast with its bands, the message's steps, and the JSON with the
// message's own encoder (AppendJSON, what the lane writes) and with
// json.Marshal (which runs that encoder and then scans its output again).
// Reports µs per answer for each.
func BenchmarkWhatIfParts(b *testing.B) {
	l, err := online.NewLearner(endToEndModel(150))
	if err != nil {
		b.Fatal(err)
	}
	for k, y := range series(3, 800) {
		if _, err := l.Observe(online.Observation{T: int64(k + 1), Y: y}); err != nil {
			b.Fatal(err)
		}
	}
	steps := make([]online.ForecastStep, 1000)
	var copyT, forecastT, stepsT, appendT, marshalT time.Duration
	for range b.N {
		t0 := time.Now()
		c := l.ForecastCopy()
		t1 := time.Now()
		if err := c.Forecast(steps, nil); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		msg := sink.Message{Series: "s", T: c.LastT(), IssuedAt: t2.UTC(), Model: ModelInfoOf(c)}
		SetSteps(&msg, steps)
		t3 := time.Now()
		own, err := msg.AppendJSON(nil)
		t4 := time.Now()
		std, err2 := json.Marshal(&msg)
		t5 := time.Now()
		if err != nil || err2 != nil || len(own) != len(std) {
			b.Fatalf("encodings: %d and %d bytes, %v, %v", len(own), len(std), err, err2)
		}
		copyT, forecastT, stepsT = copyT+t1.Sub(t0), forecastT+t2.Sub(t1), stepsT+t3.Sub(t2)
		appendT, marshalT = appendT+t4.Sub(t3), marshalT+t5.Sub(t4)
	}
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(us(copyT), "copy-µs")
	b.ReportMetric(us(forecastT), "forecast-µs")
	b.ReportMetric(us(stepsT), "steps-µs")
	b.ReportMetric(us(appendT), "appendjson-µs")
	b.ReportMetric(us(marshalT), "marshal-µs")
}
