package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
)

// readAll reads every partition of topic until want messages arrived or the
// context ends; it returns them per partition, in offset order.
func readAll(ctx context.Context, t *testing.T, addrs []string, topic string, partitions, want int) map[int][]kafka.Message {
	t.Helper()
	got := map[int][]kafka.Message{}
	n := 0
	for p := 0; p < partitions && n < want; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: topic, Partition: p,
			MaxWait: 250 * time.Millisecond, Dialer: &kafka.Dialer{Timeout: 5 * time.Second}})
		for {
			rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			m, err := r.ReadMessage(rctx)
			cancel()
			if err != nil {
				break // partition drained (or the test's deadline)
			}
			got[p] = append(got[p], m)
			n++
		}
		r.Close()
	}
	return got
}

// Forecasts written to a real Kafka-protocol broker (kfake over TCP) arrive
// keyed by series, every series in one partition, in the order written, as
// the JSON of DESIGN §4, each message its own; a dead letter carries the original record and its
// reason in ordered headers.
func TestKafkaWriterAgainstBroker(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(8, "forecasts", "dlq"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := NewKafkaWriter(KafkaConfig{Brokers: addrs, Topic: "forecasts", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	const series, per = 20, 25
	// One write per t: the writer reuses its encoding buffer from one write
	// to the next, which must not reach a message already written.
	for k := 0; k < per; k++ {
		var msgs []*Message
		for s := 0; s < series; s++ {
			msgs = append(msgs, &Message{Series: fmt.Sprintf("s%02d", s), T: int64(k),
				Steps: []Step{{H: 1, T: int64(k + 1), Mean: float64(100*k + s), Std: 1, Lo: -1, Hi: 1}}})
		}
		if err := w.WriteForecasts(ctx, msgs...); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := readAll(ctx, t, addrs, "forecasts", 8, series*per)
	partOf := map[string]int{}
	lastT := map[string]int64{}
	total := 0
	for p, ms := range got {
		for _, m := range ms {
			var fm Message
			if err := json.Unmarshal(m.Value, &fm); err != nil {
				t.Fatalf("partition %d offset %d: %v", p, m.Offset, err)
			}
			if string(m.Key) != fm.Series {
				t.Fatalf("key %q for series %q", m.Key, fm.Series)
			}
			if q, ok := partOf[fm.Series]; ok && q != p {
				t.Fatalf("series %s in partitions %d and %d", fm.Series, q, p)
			}
			partOf[fm.Series] = p
			if prev, ok := lastT[fm.Series]; ok && fm.T != prev+1 {
				t.Fatalf("series %s: t %d after %d", fm.Series, fm.T, prev)
			}
			lastT[fm.Series] = fm.T
			if want := fmt.Sprintf("s%02d", int(fm.Steps[0].Mean)%100); fm.Series != want || int64(fm.Steps[0].Mean)/100 != fm.T {
				t.Fatalf("series %s, t %d: mean %v belongs to another message", fm.Series, fm.T, fm.Steps[0].Mean)
			}
			total++
		}
	}
	if total != series*per || len(partOf) != series {
		t.Fatalf("read %d messages of %d series, want %d of %d", total, len(partOf), series*per, series)
	}

	dlq, err := NewKafkaWriter(KafkaConfig{Brokers: addrs, Topic: "dlq", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"series":"s1","y":"NaN"}`)
	if err := dlq.DeadLetter(ctx, []byte("s1"), orig, "non_finite_y", "y: NaN is not a number", "series/3/1037"); err != nil {
		t.Fatal(err)
	}
	dlq.Close()
	dl := readAll(ctx, t, addrs, "dlq", 8, 1)
	var found []kafka.Message
	for _, ms := range dl {
		found = append(found, ms...)
	}
	if len(found) != 1 || string(found[0].Value) != string(orig) || len(found[0].Headers) != 3 ||
		found[0].Headers[0].Key != "streamd-reason" || string(found[0].Headers[0].Value) != "non_finite_y" ||
		string(found[0].Headers[2].Value) != "series/3/1037" {
		t.Fatalf("dead letters %+v", found)
	}
}
