package daemon

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

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
