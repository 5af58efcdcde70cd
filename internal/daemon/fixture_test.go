package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// The daemon tests' fixture: a Kafka-protocol cluster over TCP, the
// configuration most tests start from, an opened daemon closed with the
// test, and condition waits.

// testCluster starts a one-broker Kafka-protocol cluster for the test, with
// the topics of the given partition count, closed when the test ends.
func testCluster(t testing.TB, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// writeInput writes recs to the topic "series" of the brokers addrs, in
// order, failing the test if it cannot.
func writeInput(ctx context.Context, t testing.TB, addrs []string, recs ...sink.Record) {
	t.Helper()
	in, err := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := in.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
}

// testConfig is a daemon over the topics "series", "forecasts" and "dlq" of
// the brokers addrs: group "g", records of up to 4 KiB, learnerConfig for
// every series, the HTTP API on a free port, a transport of its own. Tests
// change what they exercise.
func testConfig(addrs []string) Config {
	return Config{Brokers: addrs, Group: "g", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
		DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry: online.RegistryConfig{Default: learnerConfig()}, SessionTimeout: 6 * time.Second,
		Transport: &kafka.Transport{}, Listen: "127.0.0.1:0"}
}

// mustOpen opens a daemon of cfg, failing the test if it cannot, and closes
// it when the test ends (Close is idempotent: a test may close it first).
func mustOpen(t testing.TB, cfg Config) *Daemon {
	t.Helper()
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// stateConfig is a daemon with a state topic over "series".
func stateConfig(addrs []string, checkpointRecords int) Config {
	cfg := testConfig(addrs)
	cfg.StateTopic, cfg.CheckpointRecords = "state", checkpointRecords
	return cfg
}

func stateDaemon(t *testing.T, addrs []string, checkpointRecords int) *Daemon {
	t.Helper()
	d, err := Open(stateConfig(addrs, checkpointRecords))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// waitFor polls cond every 20 ms until it holds or ctx ends (a test failure
// naming what).
func waitFor(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}

// loosePartition returns a partition run of d with no consumer or
// publisher behind it, its registry from d's configuration: records go
// in by handle, messages wait in pending.
func loosePartition(t testing.TB, d *Daemon) *partitionRun {
	t.Helper()
	r := newPartitionRun(d, source.Partition{})
	r.dirty = newDirtySeries(1)
	reg, err := online.NewRegistry(r.registryConfig())
	if err != nil {
		t.Fatal(err)
	}
	r.reg = reg
	return r
}
