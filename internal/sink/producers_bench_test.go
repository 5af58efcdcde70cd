package sink

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producer is one client's way of writing a batch of records and waiting
// until the brokers acknowledged all of them (acks = all, keys hashed by
// murmur2), as the daemon's partition publishers do.
type producer struct {
	name string
	open func(addrs []string) (write func(context.Context, []Record) error, close func(), err error)
}

// producers are KafkaWriter and the two clients it could be replaced by:
// kafka-go's Writer (the Kafka client the daemon uses) with its batch timer
// at 1 ms rather than its default 1 s, which would hold every write for a
// second, and franz-go's kgo client with no linger, its idempotent
// producer on (its default).
var producers = []producer{
	{"KafkaWriter", func(addrs []string) (func(context.Context, []Record) error, func(), error) {
		w, err := NewKafkaWriter(KafkaConfig{Brokers: addrs, Topic: "t", Transport: &kafka.Transport{}})
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, recs []Record) error { return w.WriteRecords(ctx, recs...) }, func() { w.Close() }, nil
	}},
	{"kafka-go.Writer", func(addrs []string) (func(context.Context, []Record) error, func(), error) {
		w := &kafka.Writer{Addr: kafka.TCP(addrs...), Topic: "t", Balancer: &kafka.Murmur2Balancer{},
			RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond, Transport: &kafka.Transport{}}
		return func(ctx context.Context, recs []Record) error {
			msgs := make([]kafka.Message, len(recs))
			for i, r := range recs {
				msgs[i] = kafka.Message{Key: r.Key, Value: r.Value}
			}
			return w.WriteMessages(ctx, msgs...)
		}, func() { w.Close() }, nil
	}},
	{"kgo.Client", func(addrs []string) (func(context.Context, []Record) error, func(), error) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("t"),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, recs []Record) error {
			krs := make([]*kgo.Record, len(recs))
			for i, r := range recs {
				krs[i] = &kgo.Record{Key: r.Key, Value: r.Value}
			}
			return cl.ProduceSync(ctx, krs...).FirstErr()
		}, cl.Close, nil
	}},
}

// BenchmarkProducers writes the daemon's output pattern to a kfake broker
// over TCP (8 partitions): P publishers, each writing batches of 16 keyed
// records of 512 bytes (a forecast message's size) and waiting for each.
// One op is one record; it reports records/s and the p50 and p99 of a
// write's latency. Quoted in docs/benchmarks.md ("Output path"):
//
//	go test -run XXX -bench Producers -benchtime 20000x -count 3 ./internal/sink/
func BenchmarkProducers(b *testing.B) {
	const batch, partitions = 16, 8
	for _, p := range producers {
		for _, publishers := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/publishers=%d", p.name, publishers), func(b *testing.B) {
				c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, "t"))
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				write, closeFn, err := p.open(c.ListenAddrs())
				if err != nil {
					b.Fatal(err)
				}
				defer closeFn()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				defer cancel()
				recs := keyedRecords(batch*publishers, 512)
				if err := write(ctx, recs[:batch]); err != nil { // connect and learn the leaders
					b.Fatal(err)
				}
				writes := (b.N + batch - 1) / batch
				lat := make([]time.Duration, writes)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var firstErr error
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				for g := range publishers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						own := recs[g*batch : (g+1)*batch]
						for k := g; k < writes; k += publishers {
							t0 := time.Now()
							if err := write(ctx, own); err != nil {
								mu.Lock()
								firstErr = cmp.Or(firstErr, err)
								mu.Unlock()
								return
							}
							lat[k] = time.Since(t0)
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				if firstErr != nil {
					b.Fatal(firstErr)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(writes*batch)/elapsed.Seconds(), "records/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs/write")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs/write")
			})
		}
	}
}
