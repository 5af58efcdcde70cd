package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// ConsumerConfig configures a Consumer.
type ConsumerConfig struct {
	Brokers []string
	Group   string
	Topics  []string
	// SessionTimeout of the group membership; kfake and Kafka reject values
	// below the broker's minimum (6 s by default). 0 means 10 s.
	SessionTimeout time.Duration
	// MaxBytes bounds a fetch (kafka-go's default of 1 MB is kept if 0).
	MaxBytes int
	// Dialer, when set, replaces kafka-go's default dialer (TLS, SASL).
	Dialer *kafka.Dialer
	Logger *slog.Logger
	// OnGeneration, if set, is called with every new generation's
	// assignment of this member (possibly empty) before its partitions
	// start. It runs on Run's goroutine.
	OnGeneration func(assigned []TopicPartition)
}

// TopicPartition names one partition of a topic.
type TopicPartition struct {
	Topic string
	ID    int
}

// Partition is what a PartitionFunc gets: the topic and partition, the
// messages in offset order, and Commit to mark offsets consumed.
type Partition struct {
	Topic    string
	ID       int
	Messages <-chan kafka.Message
	// Commit records that every message before offset next was handled. It
	// may be called from any goroutine (one at a time) until the
	// PartitionFunc returns.
	Commit func(next int64) error
}

// PartitionFunc handles one assigned partition until its context ends (the
// generation ended: rebalance or shutdown). It runs in its own goroutine.
type PartitionFunc func(ctx context.Context, p Partition)

// Consumer runs a consumer group over its topics with kafka-go's explicit
// generation API: one goroutine and one partition-bound reader per assigned
// partition, offsets committed explicitly. (kafka-go's Reader with a GroupID
// is avoided: it serves stale messages after a rebalance, kafka-go #1398.)
type Consumer struct {
	cfg ConsumerConfig
}

// DefaultSessionTimeout is the consumer group's session timeout when none
// is configured: the broker declares a member dead after it.
const DefaultSessionTimeout = 10 * time.Second

// NewConsumer validates cfg.
func NewConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if len(cfg.Brokers) == 0 || cfg.Group == "" || len(cfg.Topics) == 0 {
		return nil, errors.New("source: consumer needs brokers, a group and topics")
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Consumer{cfg: cfg}, nil
}

// Run joins the group and calls fn for every partition assigned, until ctx
// ends; then it leaves the group. It returns ctx's error, or a setup error.
func (c *Consumer) Run(ctx context.Context, fn PartitionFunc) error {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: c.cfg.Group, Brokers: c.cfg.Brokers, Topics: c.cfg.Topics, Dialer: c.cfg.Dialer,
		HeartbeatInterval: c.cfg.SessionTimeout / 10, SessionTimeout: c.cfg.SessionTimeout,
		RebalanceTimeout: c.cfg.SessionTimeout, JoinGroupBackoff: 500 * time.Millisecond,
		StartOffset: kafka.FirstOffset,
	})
	if err != nil {
		return fmt.Errorf("source: consumer group: %w", err)
	}
	defer cg.Close() // leaves the group, so a peer takes over at once
	var failures int
	var logged time.Time
	for ctx.Err() == nil {
		gen, err := cg.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				break
			}
			// Rebalance in progress (once at every rebalance) and other
			// transient join errors (kafka-go backs off between joins):
			// retry, saying so from the second failure on, at most every 10 s.
			if failures++; failures > 1 && time.Since(logged) >= 10*time.Second {
				c.cfg.Logger.Warn("consumer group: join failed; retrying", "group", c.cfg.Group, "consecutive_failures", failures, "err", err)
				logged = time.Now()
			}
			continue
		}
		if failures > 1 {
			c.cfg.Logger.Info("consumer group: joined", "group", c.cfg.Group, "after_failures", failures)
		}
		failures = 0
		if c.cfg.OnGeneration != nil {
			var assigned []TopicPartition
			for _, topic := range c.cfg.Topics {
				for _, a := range gen.Assignments[topic] {
					assigned = append(assigned, TopicPartition{topic, a.ID})
				}
			}
			c.cfg.OnGeneration(assigned)
		}
		for _, topic := range c.cfg.Topics { // in configuration order: deterministic
			for _, a := range gen.Assignments[topic] {
				c.startPartition(gen, topic, a, fn)
			}
		}
	}
	return ctx.Err()
}

// startPartition runs fn for assignment a within generation gen. kafka-go's
// Next waits for every Start function to return before rejoining, so the
// final commit below still belongs to a valid generation.
func (c *Consumer) startPartition(gen *kafka.Generation, topic string, a kafka.PartitionAssignment, fn PartitionFunc) {
	gen.Start(func(gctx context.Context) {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: c.cfg.Brokers, Topic: topic, Partition: a.ID,
			MaxBytes: c.cfg.MaxBytes, MaxWait: 500 * time.Millisecond, Dialer: c.cfg.Dialer})
		defer r.Close()
		if err := r.SetOffset(a.Offset); err != nil {
			c.cfg.Logger.Error("partition: set offset", "partition", a.ID, "err", err)
			return
		}
		msgs := make(chan kafka.Message, 256)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // fetch loop: hands messages over in offset order
			defer wg.Done()
			defer close(msgs)
			for {
				m, err := r.FetchMessage(gctx)
				if err != nil {
					return // the generation ended (or the reader failed: the next generation retries)
				}
				select {
				case msgs <- m:
				case <-gctx.Done():
					return
				}
			}
		}()
		commit := func(next int64) error {
			return gen.CommitOffsets(map[string]map[int]int64{topic: {a.ID: next}})
		}
		fn(gctx, Partition{Topic: topic, ID: a.ID, Messages: msgs, Commit: commit})
		wg.Wait()
	})
}
