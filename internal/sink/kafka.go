package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// KafkaConfig configures a KafkaWriter.
type KafkaConfig struct {
	Brokers []string
	Topic   string
	// BatchTimeout bounds how long a message waits for its batch to fill.
	// The daemon hands each write a batch it assembled itself and waits for
	// it, so waiting for more only adds latency: kafka-go's default of 1 s
	// would dominate it. 0 means 1 ms.
	BatchTimeout time.Duration
	// Transport, when set, replaces kafka-go's shared default transport (TLS,
	// SASL, or a fresh connection pool in tests).
	Transport kafka.RoundTripper
}

// KafkaWriter publishes messages to one topic, keyed by series id, so that
// every message of a series lands in the same partition, in order. It waits
// for all in-sync replicas to acknowledge.
//
// A KafkaWriter is safe for concurrent use (kafka-go's Writer is); each
// partition goroutine of the daemon may share one.
type KafkaWriter struct {
	w       *kafka.Writer
	buffers sync.Pool // of *[]byte, WriteForecasts' encoding buffers
}

// NewKafkaWriter returns a writer for cfg. It does not connect until the
// first write.
func NewKafkaWriter(cfg KafkaConfig) (*KafkaWriter, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("sink: kafka writer needs brokers and a topic")
	}
	bt := cfg.BatchTimeout
	if bt <= 0 {
		bt = time.Millisecond
	}
	w := &kafka.Writer{
		Addr:         kafka.TCP(cfg.Brokers...),
		Topic:        cfg.Topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: bt,
		// kafka-go allocates a batch's full capacity (152 bytes a message)
		// for every batch, however few messages it ends up with: at 1000,
		// the daemon's small live flushes made 150 KB of garbage each. A
		// full flush (512 results) spread over two or more partitions still
		// fits one batch per partition; with one, it goes in two.
		BatchSize: 256,
		Transport: cfg.Transport,
	}
	return &KafkaWriter{w: w}, nil
}

// Record is one raw message: the key is the series id.
type Record struct {
	Key, Value []byte
	Headers    []Header // in order
}

// Header is a message header.
type Header struct{ Key, Value string }

// WriteRecords publishes records and returns once the brokers acknowledged
// them all (or the first error).
func (k *KafkaWriter) WriteRecords(ctx context.Context, recs ...Record) error {
	msgs := make([]kafka.Message, len(recs))
	for i, r := range recs {
		msgs[i] = kafka.Message{Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			msgs[i].Headers = append(msgs[i].Headers, kafka.Header{Key: h.Key, Value: []byte(h.Value)})
		}
	}
	if err := k.w.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("sink: write to %s: %w", k.w.Topic, err)
	}
	return nil
}

// WriteForecasts publishes forecast messages as JSON, keyed by series.
func (k *KafkaWriter) WriteForecasts(ctx context.Context, msgs ...*Message) error {
	recs := make([]Record, len(msgs))
	// One buffer for the batch: each value is a slice of it, taken once it
	// stopped growing. Buffers are reused, but only after a write that
	// succeeded: kafka-go no longer holds the values then, while after a
	// failure (a cancelled context) a batch may still be on its way.
	bp, _ := k.buffers.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	buf := (*bp)[:0]
	ends := make([]int, len(msgs))
	for i, m := range msgs {
		var err error
		if buf, err = m.AppendJSON(buf); err != nil {
			return fmt.Errorf("sink: encode forecast of %s: %w", m.Series, err)
		}
		ends[i] = len(buf)
	}
	start := 0
	for i, m := range msgs {
		recs[i] = Record{Key: []byte(m.Series), Value: buf[start:ends[i]:ends[i]]}
		start = ends[i]
	}
	if err := k.WriteRecords(ctx, recs...); err != nil {
		return err
	}
	*bp = buf
	k.buffers.Put(bp)
	return nil
}

// DeadLetter publishes a rejected input record unchanged, keyed as it came,
// with the reject reason and its detail in the headers "streamd-reason" and
// "streamd-detail", and the origin in "streamd-origin" (topic/partition/offset).
func (k *KafkaWriter) DeadLetter(ctx context.Context, key, value []byte, reason, detail, origin string) error {
	return k.WriteRecords(ctx, DeadLetterRecord(key, value, reason, detail, origin))
}

// DeadLetterRecord is the dead letter DeadLetter writes, for batching them
// with WriteRecords.
func DeadLetterRecord(key, value []byte, reason, detail, origin string) Record {
	return Record{Key: key, Value: value, Headers: []Header{
		{"streamd-reason", reason}, {"streamd-detail", detail}, {"streamd-origin", origin}}}
}

// Close flushes pending messages and closes the writer.
func (k *KafkaWriter) Close() error { return k.w.Close() }
