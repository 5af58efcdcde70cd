package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

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
func endToEndModel(warmup int) online.Config {
	return online.Config{
		Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(10)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 20},
			Size: 50, Gamma: 100, AutoGamma: true, Forgetting: 1, Cutoff: 1e-10, Window: 200, SwapInterval: 10, NoiseEvery: 500,
			Select: narx.SelectOptions{MaxIter: 3000, Patience: 200}, Seed: 1},
		Warmup: warmup, Horizon: 10, Every: 1, Level: 0.95,
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
					msg.SetResult(id, int64(k+1), values[s][k], res)
					msg.Model = sink.ModelInfoOf(l)
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
		want := nSeries * (perSeries - warmup + 1)
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
		for d.metricsForecasts() < want && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
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
		b.ReportMetric(float64(want)/elapsed.Seconds(), "forecasts/s")
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
		Warmup: 200, Horizon: 10, Every: 1, Level: 0.95,
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
			p := (&kafka.Hash{}).Balance(kafka.Message{Key: []byte(id)}, ps...)
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
//   - rate=N: produced at N records/s, in 10 ms ticks. A record's latency
//     runs from just before its producer writes it (its timestamp) to the
//     broker's acknowledgement of its forecast (p50-ms, p99-ms, max-ms):
//     broker in, consumer group, learning, forecasting, publication with
//     acks=all;
//   - rate=max: written at once, as a backlog; records/s is the rate at
//     which the daemon turns them into published forecasts.
//
// cpu-µs/record is the benchmark process's CPU time (daemon and producer),
// broker-cpu-µs/record the broker's, per measured record.
// With consumers=8, as many consumers read the forecast topic in the
// benchmark's process and recv-p50-ms, recv-p99-ms run on to when one has
// the forecast; they take CPU from the daemon, as consumers on other
// machines would not. state=on adds the default checkpoints (every 10 s per
// partition, writing every series it changed).
// The broker runs in a process of its own; the producer shares the daemon's
// process. All share the machine's 2 cores.
// Run with -benchtime=1x.
func BenchmarkLatency(b *testing.B) {
	for _, c := range []struct {
		rate      int // 0: the maximum, from a backlog
		state     string
		consumers int
	}{{0, "off", 0}, {0, "on", 0}, {11500, "off", 0}, {11500, "on", 0}, {11500, "off", 8}, {9000, "off", 0}, {9000, "on", 0}} {
		rate := "max"
		if c.rate > 0 {
			rate = strconv.Itoa(c.rate)
		}
		b.Run(fmt.Sprintf("rate=%s/state=%s/consumers=%d", rate, c.state, c.consumers), func(b *testing.B) {
			benchmarkLatency(b, c.rate, c.state == "on", c.consumers)
		})
	}
}

func benchmarkLatency(b *testing.B, rate int, withState bool, consumers int) {
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
	for i := 0; i < b.N; i++ {
		broker := startBrokerProcess(b, "series", "forecasts", "dlq")
		addrs := broker.Addrs
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
		var recs []sink.Record
		for k := 0; k < settled; k++ {
			for s := 0; s < nSeries; s++ {
				recs = append(recs, record(s, k))
			}
		}
		if err := w.WriteRecords(ctx, recs...); err != nil {
			b.Fatal(err)
		}
		dc := Config{Brokers: addrs, Group: "bench", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
			DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
			Registry: online.RegistryConfig{Default: cfg}, SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}}
		if withState {
			dc.StateTopic = "state"
		}
		var mu sync.Mutex
		sent := map[forecastKey]time.Time{}
		var lat, recv []time.Duration
		dc.onPublished = func(fs []*sink.Message, at time.Time) {
			mu.Lock()
			defer mu.Unlock()
			for _, f := range fs {
				if t0, ok := sent[forecastKey{f.Series, f.T}]; ok {
					lat = append(lat, at.Sub(t0))
				}
			}
		}
		d, err := Open(dc)
		if err != nil {
			b.Fatal(err)
		}
		for d.metricsForecasts() < nSeries*(settled-warmup+1) && ctx.Err() == nil { // the backlog is forecast
			time.Sleep(20 * time.Millisecond)
		}

		// Forecast arrivals, by series and t.
		rctx, stopReaders := context.WithCancel(ctx)
		var readers sync.WaitGroup
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
					if t0, ok := sent[forecastKey{fm.Series, fm.T}]; ok {
						recv = append(recv, at.Sub(t0))
					}
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Second) // the readers are at the end of the topic

		b.ResetTimer()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		broker0 := broker.CPU()
		total := measured * nSeries
		// produce writes measured records [from, to), stamped at.
		produce := func(from, to int, at time.Time) {
			batch := recs[:0]
			mu.Lock()
			for i := from; i < to; i++ {
				s, k := i%nSeries, settled+i/nSeries
				batch = append(batch, record(s, k))
				sent[forecastKey{fmt.Sprintf("s%d", s), int64(k + 1)}] = at
			}
			mu.Unlock()
			if len(batch) > 0 {
				if err := w.WriteRecords(ctx, batch...); err != nil {
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
			n := len(lat)
			if consumers > 0 {
				n = min(n, len(recv))
			}
			mu.Unlock()
			if n >= total {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		b.ReportMetric(float64(cpu.Microseconds())/float64(total), "cpu-µs/record")
		b.ReportMetric(float64((broker.CPU()-broker0).Microseconds())/float64(total), "broker-cpu-µs/record")
		b.ReportMetric(float64(total)/elapsed.Seconds(), "records/s")
		stopReaders()
		readers.Wait()
		w.Close()
		d.Close()
		broker.Stop()
		cancel()
		if rate == 0 {
			continue // a backlog's latencies measure its length
		}
		slices.Sort(lat)
		slices.Sort(recv)
		q := func(d []time.Duration, p float64) float64 { return d[int(p*float64(len(d)-1))].Seconds() * 1000 }
		b.ReportMetric(q(lat, 0.5), "p50-ms")
		b.ReportMetric(q(lat, 0.99), "p99-ms")
		b.ReportMetric(q(lat, 1), "max-ms")
		if consumers > 0 {
			b.ReportMetric(q(recv, 0.5), "recv-p50-ms")
			b.ReportMetric(q(recv, 0.99), "recv-p99-ms")
		}
	}
}
