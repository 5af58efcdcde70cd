// Package checkpoint owns the state topic: a compacted Kafka topic with the
// partition count of its input topic, in which partition p holds the latest
// checkpoint of every series of input partition p, keyed by series id. It
// creates and checks the topic, writes a partition's checkpoints and reads a
// partition back to its end. What a checkpoint contains is the caller's
// business (internal/online encodes them); a nil value is a tombstone that
// deletes the series.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
)

// Config configures a Store.
type Config struct {
	Brokers []string
	// Topic is the state topic.
	Topic string
	// Transport, when set, replaces kafka-go's default (TLS, SASL, tests).
	Transport kafka.RoundTripper
	// Timeout bounds each request (0 = 30 s).
	Timeout time.Duration
	// Group is the consumer group that owns the state: Write puts it in
	// the GroupHeader of every record, and Read reports each record's.
	Group string
}

// GroupHeader is the record header that names the consumer group that wrote
// a record of the state topic: the state belongs to one group (its offsets
// and its checkpoints go together), and a reader refuses another group's.
const GroupHeader = "streamd-group"

// MaxRecordBytes is the largest checkpoint record the topic accepts when
// Ensure creates it (the topic's max.message.bytes): a snapshot grows as
// O(M² + W·n) and passes Kafka's 1 MB default near M = 200.
const MaxRecordBytes = 64 << 20

// requestBytes bounds the records of one produce request, so that a
// checkpoint of many series is sent as several moderate requests. A record
// larger than this goes alone.
const requestBytes = 4 << 20

// fetchBytes bounds one fetch while reading a partition back.
const fetchBytes = 8 << 20

// Store reads and writes one state topic.
//
// A Store is safe for concurrent use by the partition goroutines (kafka-go's
// Client is); writes to one partition must come from one goroutine at a time,
// or the order of its checkpoints is undefined.
type Store struct {
	client *kafka.Client
	topic  string
	group  string
}

// Entry is one record of the state topic. Value nil deletes the key; the
// empty key is a key like any other. Meta, when set, is written beside the
// value in the MetaHeader: the caller's own data about the key, which the
// value's format does not hold.
type Entry struct {
	Key   string
	Value []byte
	Meta  []byte
}

// MetaHeader is the record header that carries an Entry's Meta.
const MetaHeader = "streamd-meta"

// ErrMisconfigured is wrapped by Ensure's errors that only an operator can
// fix (a missing input topic, a state topic of another partition count or
// not compacted): starting again does not help, unlike a broker that cannot
// be reached.
var ErrMisconfigured = errors.New("misconfigured")

// Record is a record read back: its entry, offset, and the group that wrote
// it ("" for a record without a GroupHeader).
type Record struct {
	Entry
	Offset int64
	Group  string
}

// New returns a Store for cfg. It does not connect until used.
func New(cfg Config) (*Store, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("checkpoint: a store needs brokers and a topic")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	return &Store{client: &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Transport: cfg.Transport, Timeout: cfg.Timeout},
		topic: cfg.Topic, group: cfg.Group}, nil
}

// Topic returns the state topic's name.
func (s *Store) Topic() string { return s.topic }

// Ensure makes sure the state topic fits input, the input topic it keeps the
// state of: it creates it compacted with input's partition count (the
// cluster's default replication) if it is missing; an existing one must have
// the same partition count and cleanup.policy compact, else Ensure returns an
// error that says what to change. input must exist. It returns the partition
// count.
func (s *Store) Ensure(ctx context.Context, input string) (int, error) {
	want, err := s.partitions(ctx, input)
	if err != nil {
		return 0, err
	}
	if want == 0 {
		return 0, fmt.Errorf("checkpoint: %w: input topic %q does not exist; create it before starting streamd, the state topic %q gets its partition count",
			ErrMisconfigured, input, s.topic)
	}
	have, err := s.partitions(ctx, s.topic)
	if err != nil {
		return 0, err
	}
	if have == 0 {
		res, err := s.client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
			Topic: s.topic, NumPartitions: want, ReplicationFactor: -1,
			ConfigEntries: []kafka.ConfigEntry{
				{ConfigName: "cleanup.policy", ConfigValue: "compact"},
				{ConfigName: "max.message.bytes", ConfigValue: strconv.Itoa(MaxRecordBytes)},
			}}}})
		if err != nil {
			return 0, fmt.Errorf("checkpoint: create state topic %q: %w", s.topic, err)
		}
		if err := res.Errors[s.topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
			return 0, fmt.Errorf("checkpoint: create state topic %q: %w", s.topic, err)
		}
		if have, err = s.waitPartitions(ctx, s.topic); err != nil {
			return 0, err
		}
	}
	if have != want {
		return 0, fmt.Errorf("checkpoint: %w: state topic %q has %d partitions, input topic %q has %d; they must match "+
			"(partition p of the state holds the series of input partition p): recreate the state topic or name another one",
			ErrMisconfigured, s.topic, have, input, want)
	}
	policy, err := s.cleanupPolicy(ctx)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(strings.Split(policy, ","), "compact") {
		return 0, fmt.Errorf("checkpoint: %w: state topic %q has cleanup.policy=%s; it must include compact, "+
			"or old checkpoints are deleted by retention and the state grows without bound", ErrMisconfigured, s.topic, policy)
	}
	return have, nil
}

// partitions returns topic's partition count, 0 if it does not exist.
func (s *Store) partitions(ctx context.Context, topic string) (int, error) {
	md, err := s.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("checkpoint: metadata of %q: %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			if errors.Is(t.Error, kafka.UnknownTopicOrPartition) {
				return 0, nil
			}
			return 0, fmt.Errorf("checkpoint: metadata of %q: %w", topic, t.Error)
		}
		return len(t.Partitions), nil
	}
	return 0, nil
}

// waitPartitions waits for a created topic to show in the metadata.
func (s *Store) waitPartitions(ctx context.Context, topic string) (int, error) {
	for i := 0; ; i++ {
		n, err := s.partitions(ctx, topic)
		if err != nil || n > 0 || i == 50 {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Store) cleanupPolicy(ctx context.Context) (string, error) {
	v, ok, err := s.topicConfig(ctx, "cleanup.policy")
	if err != nil || !ok {
		return "delete", err // Kafka's default when the broker does not say
	}
	return v, nil
}

// MaxRecordBytes returns the state topic's max.message.bytes, 0 when the
// broker does not say. A checkpoint larger than it cannot be written, and
// the partition cannot commit until it is raised.
func (s *Store) MaxRecordBytes(ctx context.Context) (int, error) {
	v, ok, err := s.topicConfig(ctx, "max.message.bytes")
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %q: max.message.bytes %q: %w", s.topic, v, err)
	}
	return n, nil
}

// topicConfig returns the state topic's configuration value name, and
// whether the broker reported it.
func (s *Store) topicConfig(ctx context.Context, name string) (string, bool, error) {
	res, err := s.client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: s.topic, ConfigNames: []string{name}}}})
	if err != nil {
		return "", false, fmt.Errorf("checkpoint: describe %q: %w", s.topic, err)
	}
	for _, r := range res.Resources {
		if r.Error != nil {
			return "", false, fmt.Errorf("checkpoint: describe %q: %w", s.topic, r.Error)
		}
		for _, e := range r.ConfigEntries {
			if e.ConfigName == name {
				return e.ConfigValue, true, nil
			}
		}
	}
	return "", false, nil
}

// Write appends entries, in order, to partition and returns once the brokers
// acknowledged them all (acks=all), with the partition's end offset after
// them, each with the store's group in its GroupHeader. On error some
// leading entries may have been written; writing them again is harmless
// (the newest record of a key wins).
//
// Entries go in requests of up to requestBytes. The brokers apply the
// topic's max.message.bytes to a request's whole batch, not to each
// record: a batch of checkpoints that each fit but together do not is
// refused as too large, and its entries are then sent one per request, so
// that only a checkpoint too large by itself fails the write.
func (s *Store) Write(ctx context.Context, partition int, entries []Entry) (end int64, err error) {
	end = -1
	for start := 0; start < len(entries); {
		stop, size := start, 0
		for stop < len(entries) && (stop == start || size+entries[stop].size() <= requestBytes) {
			size += entries[stop].size()
			stop++
		}
		e, err := s.produce(ctx, partition, entries[start:stop])
		if tooLarge(err) && stop-start > 1 {
			for i := start; i < stop && (i == start || err == nil); i++ {
				e, err = s.produce(ctx, partition, entries[i:i+1])
			}
		}
		if err != nil {
			return -1, err
		}
		end, start = e, stop
	}
	return end, nil
}

// size is what e adds to a request, but for the record's framing.
func (e Entry) size() int { return len(e.Key) + len(e.Value) + len(e.Meta) }

// tooLarge reports whether err is the brokers' refusal of a batch as too
// large for the topic.
func tooLarge(err error) bool {
	return errors.Is(err, kafka.MessageSizeTooLarge) || errors.Is(err, kafka.RecordListTooLarge)
}

// produce writes entries in one request and returns the partition's end
// offset after them.
func (s *Store) produce(ctx context.Context, partition int, entries []Entry) (end int64, err error) {
	recs := make([]kafka.Record, len(entries))
	for i, e := range entries {
		// append to a non-nil slice: an empty key is a key, not null
		recs[i] = kafka.Record{Key: protocol.NewBytes(append([]byte{}, e.Key...)), Value: protocol.NewBytes(e.Value)}
		if s.group != "" {
			recs[i].Headers = append(recs[i].Headers, kafka.Header{Key: GroupHeader, Value: []byte(s.group)})
		}
		if e.Meta != nil {
			recs[i].Headers = append(recs[i].Headers, kafka.Header{Key: MetaHeader, Value: e.Meta})
		}
	}
	res, err := s.client.Produce(ctx, &kafka.ProduceRequest{Topic: s.topic, Partition: partition,
		RequiredAcks: kafka.RequireAll, Records: kafka.NewRecordReader(recs...)})
	if err == nil {
		err = res.Error
	}
	if err != nil {
		return -1, fmt.Errorf("checkpoint: write %s/%d: %w", s.topic, partition, err)
	}
	return res.BaseOffset + int64(len(recs)), nil
}

// End returns partition's end offset (the offset the next record gets).
func (s *Store) End(ctx context.Context, partition int) (int64, error) {
	_, end, err := s.bounds(ctx, partition)
	return end, err
}

func (s *Store) bounds(ctx context.Context, partition int) (first, end int64, err error) {
	res, err := s.client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		s.topic: {kafka.FirstOffsetOf(partition), kafka.LastOffsetOf(partition)}}})
	if err != nil {
		return 0, 0, fmt.Errorf("checkpoint: offsets of %s/%d: %w", s.topic, partition, err)
	}
	for _, p := range res.Topics[s.topic] {
		if p.Partition == partition {
			if p.Error != nil {
				return 0, 0, fmt.Errorf("checkpoint: offsets of %s/%d: %w", s.topic, partition, p.Error)
			}
			return p.FirstOffset, p.LastOffset, nil
		}
	}
	return 0, 0, fmt.Errorf("checkpoint: offsets of %s/%d: partition not in the answer", s.topic, partition)
}

// Read calls fn for every record of partition from its start to its end
// offset as of the call, in offset order (so for a key, the last call holds
// its newest value; nil is a tombstone). The record's value is fn's to keep.
// Read returns that end offset.
func (s *Store) Read(ctx context.Context, partition int, fn func(Record)) (end int64, err error) {
	offset, end, err := s.bounds(ctx, partition)
	if err != nil {
		return 0, err
	}
	maxBytes, raised := int64(fetchBytes), false
reading:
	for empty := 0; offset < end; {
		res, err := s.client.Fetch(ctx, &kafka.FetchRequest{Topic: s.topic, Partition: partition, Offset: offset,
			MinBytes: 1, MaxBytes: maxBytes, MaxWait: 200 * time.Millisecond})
		if err == nil {
			err = res.Error
		}
		if err != nil {
			return 0, fmt.Errorf("checkpoint: read %s/%d at %d: %w", s.topic, partition, offset, err)
		}
		progressed := false
		for res.Records != nil {
			rec, err := res.Records.ReadRecord()
			if err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return 0, fmt.Errorf("checkpoint: read %s/%d at %d: %w", s.topic, partition, offset, err)
			}
			// A batch may start before the offset asked for (compaction,
			// batching): skip what was seen.
			if rec.Offset < offset || rec.Offset >= end {
				continue
			}
			key, err := protocol.ReadAll(rec.Key)
			if err != nil {
				return 0, err
			}
			value, err := protocol.ReadAll(rec.Value)
			if err != nil {
				return 0, err
			}
			r := Record{Entry: Entry{Key: string(key), Value: value}, Offset: rec.Offset}
			for _, h := range rec.Headers {
				switch h.Key {
				case GroupHeader:
					r.Group = string(h.Value)
				case MetaHeader:
					r.Meta = slices.Clone(h.Value)
				}
			}
			fn(r)
			offset, progressed = rec.Offset+1, true
		}
		switch {
		case progressed:
			empty = 0
		case !raised:
			// A broker answers with the batch that holds offset, whole, then
			// whole batches while they fit in MaxBytes, and the start of the
			// next, which the client drops. Compaction can leave the batch
			// that holds offset with records below it only; if the batch
			// after it does not fit in the rest, the answer brings nothing
			// new however often it is asked. Every batch was written within
			// the topic's max.message.bytes, so twice that fits both, as
			// long as the broker's own cap on an answer (fetch.max.bytes,
			// 55 MiB by default) does too: with checkpoints of more than
			// about 27 MiB it may not, and the read ends there as before.
			raised = true
			if n, err := s.MaxRecordBytes(ctx); err == nil && 2*int64(n) > maxBytes {
				maxBytes = 2 * int64(n)
				continue
			}
			fallthrough
		default:
			if empty++; empty == 3 {
				// None at or after offset, below end, three times: there are
				// none (the newest records were tombstones, and compaction
				// removed them).
				break reading
			}
		}
	}
	return end, nil
}
