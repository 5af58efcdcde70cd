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
	stderr := runUntilForecasts(ctx, t, cfgPath, addrs, 2, "a", 100, 100-60+1, &kafka.Transport{}, &kafka.Dialer{Timeout: 5 * time.Second})
	if !strings.Contains(stderr, "streamd stopping") {
		t.Errorf("no shutdown log line:\n%s", stderr)
	}
}

// runUntilForecasts produces n sine records for key to topic "in", runs
// `streamd run --config cfgPath`, reads want forecasts for key from "out",
// then cancels the run (as SIGTERM would) and checks that it stopped cleanly.
// It returns the run's stderr.
func runUntilForecasts(ctx context.Context, t *testing.T, cfgPath string, addrs []string, partitions int, key string, n, want int,
	transport *kafka.Transport, dialer *kafka.Dialer) string {
	t.Helper()
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "in", Transport: transport})
	var recs []sink.Record
	for i := 0; i < n; i++ {
		recs = append(recs, sink.Record{Key: []byte(key), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%g}`, i+1, math.Sin(0.3*float64(i))))})
	}
	if err := w.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	runCtx, stop := context.WithCancel(ctx)
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(runCtx, []string{"run", "--config", cfgPath}, nil, &bytes.Buffer{}, &stderr) }()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "out", Partition: partitionOf(key, partitions),
		MaxWait: 250 * time.Millisecond, Dialer: dialer})
	for got := 0; got < want; got++ {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after %d forecasts: %v\n%s", got, err, stderr.String())
		}
		if string(m.Key) != key {
			t.Fatalf("key %q", m.Key)
		}
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
	return stderr.String()
}

// partitionOf returns the partition the default partitioner (murmur2, as
// the Java client's) gives key in a topic of n partitions.
func partitionOf(key string, n int) int {
	p, _ := sink.PartitionOf("", []byte(key), n)
	return p
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

// A state topic only an operator can fix (another partition count) stops
// `run` with the message, without waiting for a signal.
func TestRunStopsOnMisconfiguredState(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "in", "out", "dead"), kfake.SeedTopics(1, "state1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfgPath := writeFile(t, "run.yaml", fmt.Sprintf(`
kafka: {brokers: [%s], group: g, input_topics: [in], forecast_topic: out, dead_letter_topic: dead, state_topic: state1}
http: {listen: "127.0.0.1:0"}
`, c.ListenAddrs()[0]))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	err = run(ctx, []string{"run", "--config", cfgPath}, nil, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "must match") || ctx.Err() != nil {
		t.Fatalf("run: %v (context %v)\n%s", err, ctx.Err(), stderr.String())
	}
}
