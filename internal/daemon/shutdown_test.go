package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// Graceful shutdown mid-stream loses nothing: after Close, the committed
// input offset is exactly the offset after the last record whose forecast
// was published (one series, one partition: the record at offset k has
// t = k+1). A commit ahead of the forecasts would lose results on a restart;
// one behind would apply records twice.
func TestGracefulShutdownCommitsWhatWasPublished(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A producer that keeps writing while the daemon shuts down.
	prodCtx, stopProducer := context.WithCancel(ctx)
	produced := make(chan int, 1)
	go func() {
		w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
		defer w.Close()
		vals := series(0, 20000)
		k := 0
		for prodCtx.Err() == nil && k < len(vals) {
			var recs []sink.Record
			for j := 0; j < 50 && k < len(vals); j, k = j+1, k+1 {
				recs = append(recs, sink.Record{Key: []byte("a"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, vals[k]))})
			}
			if w.WriteRecords(prodCtx, recs...) != nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		produced <- k
	}()

	cfg := testConfig(addrs)
	d := mustOpen(t, cfg)
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "forecasts", Partition: 0, MaxWait: 250 * time.Millisecond})
	defer r.Close()
	for seen := 0; seen < 300; seen++ { // mid-stream: some hundreds of forecasts in
		if _, err := r.ReadMessage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	stopProducer()
	total := <-produced

	// The last forecast published.
	var lastT int64
	for {
		rctx, rcancel := context.WithTimeout(ctx, 700*time.Millisecond)
		m, err := r.ReadMessage(rctx)
		rcancel()
		if err != nil {
			break
		}
		var fm sink.Message
		if err := json.Unmarshal(m.Value, &fm); err != nil {
			t.Fatal(err)
		}
		lastT = fm.T
	}
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: &kafka.Transport{}}
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"series": {0}}})
	if err != nil {
		t.Fatal(err)
	}
	committed := resp.Topics["series"][0].CommittedOffset
	t.Logf("produced %d records; last forecast t = %d; committed offset %d", total, lastT, committed)
	if committed != lastT {
		t.Errorf("committed offset %d, but the last published forecast is for t = %d (offset %d)", committed, lastT, lastT-1)
	}
	if int(committed) >= total {
		t.Errorf("the shutdown was not mid-stream (committed %d of %d): the test proves less than it claims", committed, total)
	}
}

// Open on a port already taken fails with the address in the message and
// starts nothing: no goroutine outlives the failed Open (workers, writers
// and the consumer are made only after the listener).
func TestOpenOnATakenPortLeavesNothingRunning(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := runtime.NumGoroutine()
	d, err := Open(Config{Brokers: []string{"127.0.0.1:1"}, Group: "g", InputTopics: []string{"series"},
		ForecastTopic: "forecasts", DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry: online.RegistryConfig{Default: learnerConfig()}, Workers: 2, Listen: ln.Addr().String()})
	if err == nil {
		d.Close()
		t.Fatal("Open on a taken port succeeded")
	}
	if !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("error %q does not name the address", err)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before Open, %d after it failed", before, after)
	}
}
