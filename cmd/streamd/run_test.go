package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamd/streamd/internal/sink"
)

// `streamd run` against a Kafka-protocol broker over TCP: records in,
// forecasts out; cancelling the context (what SIGINT/SIGTERM do) stops it
// cleanly, after publishing.
func TestRunCommand(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "in", "out", "dead"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	cfgPath := writeFile(t, "run.yaml", fmt.Sprintf(`
kafka: {brokers: [%s], group: g, input_topics: [in], forecast_topic: out, dead_letter_topic: dead}
http: {listen: "127.0.0.1:0"}
model: {lags: 3, working_set: 15, warmup: 60, kernel: {sigma2: 4}, gamma: 100}
forecast: {horizon: 3}
`, addrs[0]))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "in", Transport: &kafka.Transport{}})
	var recs []sink.Record
	for i := 0; i < 100; i++ {
		recs = append(recs, sink.Record{Key: []byte("a"), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%g}`, i+1, math.Sin(0.3*float64(i))))})
	}
	if err := w.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	w.Close()

	runCtx, stop := context.WithCancel(ctx)
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(runCtx, []string{"run", "--config", cfgPath}, nil, &bytes.Buffer{}, &stderr) }()
	want := 100 - 60 + 1
	n := 0
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "out", Partition: partitionOf("a"), MaxWait: 250 * time.Millisecond})
	for n < want {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after %d forecasts: %v\n%s", n, err, stderr.String())
		}
		if string(m.Key) != "a" {
			t.Fatalf("key %q", m.Key)
		}
		n++
	}
	r.Close()
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	case <-ctx.Done():
		t.Fatal("run did not stop")
	}
	if !strings.Contains(stderr.String(), "streamd stopping") {
		t.Errorf("no shutdown log line:\n%s", stderr.String())
	}
}

// partitionOf returns the partition kafka-go's Hash balancer gives key among
// the topic's 2 partitions (partition indices 0 and 1).
func partitionOf(key string) int {
	return (&kafka.Hash{}).Balance(kafka.Message{Key: []byte(key)}, 0, 1)
}

// Every example configuration maps onto a daemon configuration.
func TestConfigFilesMapToDaemon(t *testing.T) {
	files, _ := filepath.Glob("../../config/*.yaml")
	if len(files) == 0 {
		t.Fatal("no config files")
	}
	for _, f := range files {
		c, err := LoadConfig(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := c.daemon(); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
