package daemon

import (
	"context"
	"fmt"
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
// Reports records/s over all records (warm-up included) and forecasts/s.
// Run with -benchtime=1x.
func BenchmarkEndToEnd(b *testing.B) {
	const nSeries, perSeries, warmup = 400, 500, 150
	for i := 0; i < b.N; i++ {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, "series", "forecasts", "dlq"))
		if err != nil {
			b.Fatal(err)
		}
		addrs := c.ListenAddrs()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
		var recs []sink.Record
		for k := 0; k < perSeries; k++ {
			for s := 0; s < nSeries; s++ {
				recs = append(recs, sink.Record{Key: []byte(fmt.Sprintf("s%d", s)),
					Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(s%7, perSeries)[k]))})
			}
			if len(recs) >= 20000 || k == perSeries-1 {
				if err := w.WriteRecords(ctx, recs...); err != nil {
					b.Fatal(err)
				}
				recs = recs[:0]
			}
		}
		w.Close()
		cfg := online.Config{
			Model: narx.Config{Embedding: narx.Embedding{YLags: narx.Lags(10)}, Kernel: narx.Kernel{Type: narx.RBF, Sigma2: 20},
				Size: 50, Gamma: 100, AutoGamma: true, Forgetting: 1, Cutoff: 1e-10, Window: 200, SwapInterval: 10, NoiseEvery: 500,
				Select: narx.SelectOptions{MaxIter: 3000, Patience: 200}, Seed: 1},
			Warmup: warmup, Horizon: 10, Every: 1, Level: 0.95,
		}
		want := nSeries * (perSeries - warmup + 1)
		b.ResetTimer()
		start := time.Now()
		d, err := Open(Config{Brokers: addrs, Group: "bench", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
			DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
			Registry: online.RegistryConfig{Default: cfg}, SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}})
		if err != nil {
			b.Fatal(err)
		}
		for d.metricsForecasts() < want && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		d.Close()
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
