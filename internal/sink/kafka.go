package sink

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	produceapi "github.com/segmentio/kafka-go/protocol/produce"
)

// KafkaConfig configures a KafkaWriter.
type KafkaConfig struct {
	Brokers []string
	Topic   string
	// BatchBytes bounds the records (keys, values, headers) of one produce
	// request: a write's records for one partition go out in as few
	// requests as fit. 0 means 1 MiB, the brokers' default
	// max.message.bytes.
	BatchBytes int
	// Transport, when set, replaces kafka-go's shared default transport (TLS,
	// SASL, or a fresh connection pool in tests).
	Transport kafka.RoundTripper
	// Partitioner picks a keyed record's partition (Partitioners); ""
	// means "murmur2".
	Partitioner string
}

// Partitioners are the partitioners a KafkaWriter can hash keys with, as
// producers do, so that its records share partitions with another topic's
// records of the same keys (forecasts with their input):
//
//	murmur2  the Java client's default: toPositive(murmur2(key)) mod n
//	         (Kafka Streams, kafka-python, librdkafka's murmur2_random)
//	crc32    librdkafka's default (consistent_random): crc32(key) mod n
//	fnv1a    Sarama's and kafka-go's Hash: fnv-1a 32 of the key mod n
var Partitioners = []string{"murmur2", "crc32", "fnv1a"}

// balancerFor returns the kafka-go balancer of a partitioner (see
// Partitioners), or an error naming the choices.
func balancerFor(name string) (kafka.Balancer, error) {
	switch name {
	case "", "murmur2":
		return kafka.Murmur2Balancer{}, nil
	case "crc32":
		return kafka.CRC32Balancer{}, nil
	case "fnv1a":
		return &kafka.Hash{}, nil
	}
	return nil, fmt.Errorf("sink: partitioner must be one of %v (got %q)", Partitioners, name)
}

// PartitionOf is the partition of n that partitioner sends a record keyed
// key to (a non-empty key: a keyless record's is random).
func PartitionOf(partitioner string, key []byte, n int) (int, error) {
	b, err := balancerFor(partitioner)
	if err != nil {
		return 0, err
	}
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return b.Balance(kafka.Message{Key: key}, ids...), nil
}

const (
	defaultBatchBytes = 1 << 20
	// recordOverhead is what a record adds to its key, value and headers in
	// a v2 record batch, at most (length, attributes, deltas, counts).
	recordOverhead = 24
	// partitionsTTL is how long a topic's partition count is reused; the
	// transport answers from its own cache, so a refresh is cheap.
	partitionsTTL = time.Second
	// writeAttempts bounds the tries of a partition's request that fails
	// with a retriable error (a leader moving, a dropped connection), with
	// backoff from writeBackoff doubling up to maxWriteBackoff: about 6.5 s
	// in all, as kafka-go's Writer, to span the transport's next metadata
	// refresh (its MetadataTTL, 6 s by default), which is when a moved
	// leader is found.
	writeAttempts   = 10
	writeBackoff    = 100 * time.Millisecond
	maxWriteBackoff = time.Second
	writeTimeout    = 10 * time.Second
)

// KafkaWriter publishes messages to one topic, keyed by series id, so that
// every message of a series lands in the same partition, in order: the
// partition its partitioner picks (KafkaConfig.Partitioner; the Java
// client's murmur2 by default), another for a record without a key. It
// waits for all in-sync replicas to acknowledge.
//
// A write's records go out in one produce request per partition leader,
// the leaders' requests concurrently, and writes that arrive while one is
// under way are gathered into the next requests (group commit). kafka-go's
// Writer batches behind a timer instead, which only delays a daemon that
// hands each write a batch of its own (docs/benchmarks.md, "Output path").
//
// A KafkaWriter is safe for concurrent use; each partition goroutine of the
// daemon may share one. Records of one write keep their order within a
// partition; concurrent writes to one partition are not ordered against
// each other. WriteRecords states what a failed write may have written.
type KafkaWriter struct {
	addr       net.Addr
	transport  kafka.RoundTripper
	topic      string
	batchBytes int
	balancer   kafka.Balancer

	mu      sync.Mutex // guards lay and fetched
	lay     *layout
	fetched time.Time

	buffers sync.Pool // of *encoded, WriteForecasts' buffers
	groups  sync.Pool // of *grouping, WriteRecords' workspace

	// sending is set while a write or a gathered round is under way;
	// waiting holds the writes that arrived meanwhile, for the next round.
	gather  sync.Mutex // guards sending, waiting and every waiting write's round
	sending bool
	waiting []*waitingWrite
}

// waitingWrite is a write gathered for the next round: its records, and
// once the round is over, its error and done closed.
type waitingWrite struct {
	recs  []Record
	err   error
	done  chan struct{}
	round *round // set when its round starts
}

// round is the writes gathered into one send. Its context ends when every
// one of them gave up.
type round struct {
	ctx     context.Context
	cancel  context.CancelFunc
	waiting int // writes not given up; guarded by KafkaWriter.gather
}

// NewKafkaWriter returns a writer for cfg. It does not connect until the
// first write.
func NewKafkaWriter(cfg KafkaConfig) (*KafkaWriter, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("sink: kafka writer needs brokers and a topic")
	}
	bb := cfg.BatchBytes
	if bb <= 0 {
		bb = defaultBatchBytes
	}
	t := cfg.Transport
	if t == nil {
		t = kafka.DefaultTransport
	}
	b, err := balancerFor(cfg.Partitioner)
	if err != nil {
		return nil, err
	}
	return &KafkaWriter{addr: kafka.TCP(cfg.Brokers...), transport: t, topic: cfg.Topic, batchBytes: bb, balancer: b}, nil
}

// Record is one raw message: the key is the series id.
type Record struct {
	Key, Value []byte
	Headers    []Header // in order
}

// Header is a message header.
type Header struct{ Key, Value string }

func (r *Record) size() int {
	n := len(r.Key) + len(r.Value) + recordOverhead
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value) + recordOverhead
	}
	return n
}

// grouping is WriteRecords' workspace: records sorted by partition.
type grouping struct {
	order []int32 // record indexes, partition by partition, each in write order
	start []int   // partition p's records are order[start[p]:start[p+1]]
	part  []int32 // each record's partition
	sets  []recordSet
	round []*recordSet
}

// WriteRecords publishes recs and returns once the brokers acknowledged them
// all, or with the errors of the partitions that failed: at once when no
// other write is under way, else with the writes gathered behind it.
//
// A partition whose batch fails with a retriable error is sent again,
// alone (writeAttempts in all); the others are not. So nil means every
// record was written once; an error means any of the partitions' records
// may have been written, and writing them again may duplicate those
// (at-least-once). A write that gives up (ctx ended) while waiting for
// others returns at once: its records are not sent if their request had
// not started, and may still be written if it had.
func (k *KafkaWriter) WriteRecords(ctx context.Context, recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	k.gather.Lock()
	if !k.sending {
		k.sending = true
		k.gather.Unlock()
		err := k.send(ctx, recs, nil)
		k.handOver()
		return err
	}
	w := &waitingWrite{recs: recs, done: make(chan struct{})}
	k.waiting = append(k.waiting, w)
	k.gather.Unlock()
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		select {
		case <-w.done: // sent after all: no need to send it again
			return w.err
		default:
		}
		k.giveUp(w)
		return ctx.Err()
	}
}

// handOver ends a send: the writes that arrived meanwhile go in rounds sent
// by a goroutine of their own, so that the writer whose send ended returns.
func (k *KafkaWriter) handOver() {
	k.gather.Lock()
	defer k.gather.Unlock()
	if len(k.waiting) == 0 {
		k.sending = false
		return
	}
	go k.sendRounds(k.startRound())
}

// startRound takes the waiting writes into a new round. k.gather is held.
func (k *KafkaWriter) startRound() []*waitingWrite {
	ws := k.waiting
	k.waiting = nil
	ctx, cancel := context.WithCancel(context.Background())
	r := &round{ctx: ctx, cancel: cancel, waiting: len(ws)}
	for _, w := range ws {
		w.round = r
	}
	return ws
}

// sendRounds sends ws, one round, and then the writes that arrived
// meanwhile, until none is left.
func (k *KafkaWriter) sendRounds(ws []*waitingWrite) {
	var recs []Record
	var owner []int32 // owner[i] is the index in ws of recs[i]'s write
	for {
		recs, owner = recs[:0], owner[:0]
		for i, w := range ws {
			recs = append(recs, w.recs...)
			for range w.recs {
				owner = append(owner, int32(i))
			}
		}
		r := ws[0].round
		err := k.send(r.ctx, recs, func(set []int32, err error) {
			if Classify(err) == Fatal && slices.ContainsFunc(set, func(rec int32) bool { return owner[rec] != owner[set[0]] }) {
				// The brokers refuse a batch as a whole: which write's
				// records made it fail is not known, and a write refused
				// for good is dropped (its records skipped). Each is told
				// to send again; alone, a refused write gets its own error.
				err = &sharedRefusal{err}
			}
			for _, rec := range set {
				if w := ws[owner[rec]]; w.err == nil {
					w.err = err
				}
			}
		})
		r.cancel()
		for _, w := range ws {
			close(w.done)
		}
		if err != nil {
			// Not reused: a request abandoned with its context may still be
			// reading them.
			recs, owner = nil, nil
		}
		clear(recs) // they hold the writes' bytes
		k.gather.Lock()
		if len(k.waiting) == 0 {
			k.sending = false
			k.gather.Unlock()
			return
		}
		ws = k.startRound()
		k.gather.Unlock()
	}
}

// giveUp withdraws w, whose writer's context ended: still waiting, it leaves
// the queue unsent; in a round, the round's context ends once every write in
// it gave up.
func (k *KafkaWriter) giveUp(w *waitingWrite) {
	k.gather.Lock()
	defer k.gather.Unlock()
	if w.round == nil {
		k.waiting = slices.DeleteFunc(k.waiting, func(o *waitingWrite) bool { return o == w })
		return
	}
	if w.round.waiting--; w.round.waiting == 0 {
		w.round.cancel()
	}
}

// send publishes recs; failed, if not nil, is called with the indices of
// the records of each batch that failed (a partition's run of records sent
// in one request), and that batch's error.
func (k *KafkaWriter) send(ctx context.Context, recs []Record, failed func(set []int32, err error)) error {
	lay, err := k.layout(ctx)
	if err != nil {
		err = fmt.Errorf("sink: partitions of %s: %w", k.topic, err)
		if failed != nil {
			all := make([]int32, len(recs))
			for i := range all {
				all[i] = int32(i)
			}
			failed(all, err)
		}
		return err
	}
	g, _ := k.groups.Get().(*grouping)
	if g == nil {
		g = new(grouping)
	}
	g.sort(recs, len(lay.ids), func(r *Record) int { return k.balancer.Balance(kafka.Message{Key: r.Key}, lay.ids...) })

	// Each partition's records in runs of at most batchBytes, run i of every
	// partition in round i.
	g.sets = g.sets[:0]
	for p := range lay.ids {
		idx := g.order[g.start[p]:g.start[p+1]]
		for round := 0; len(idx) > 0; round++ {
			n, size := 1, recs[idx[0]].size()
			for n < len(idx) && size+recs[idx[n]].size() <= k.batchBytes {
				size += recs[idx[n]].size()
				n++
			}
			g.sets = append(g.sets, recordSet{recs: recs, idx: idx[:n], partition: p, leader: lay.leaders[p], round: round})
			idx = idx[n:]
		}
	}
	if err := k.produceRounds(ctx, g); err != nil {
		if failed != nil {
			for _, s := range g.sets {
				if s.err != nil {
					failed(s.idx, s.err)
				}
			}
		}
		// Not reused: a request abandoned with its context may still be
		// reading its records.
		return err
	}
	clear(g.sets) // they hold recs
	k.groups.Put(g)
	return nil
}

// sort fills g.order and g.start with recs grouped by partitionOf, in
// [0, n): a counting sort, so that each partition's records keep their
// order.
func (g *grouping) sort(recs []Record, n int, partitionOf func(*Record) int) {
	g.part = resize(g.part, len(recs))
	g.order = resize(g.order, len(recs))
	g.start = resize(g.start, n+1)
	clear(g.start)
	for i := range recs {
		p := partitionOf(&recs[i])
		g.part[i] = int32(p)
		g.start[p+1]++
	}
	for p := 1; p <= n; p++ {
		g.start[p] += g.start[p-1]
	}
	next := g.start[:n] // advanced as records are placed, then restored
	for i, p := range g.part {
		g.order[next[p]] = int32(i)
		next[p]++
	}
	copy(g.start[1:], g.start[:n])
	g.start[0] = 0
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// produceRounds sends g.sets round by round, so that a partition's runs go
// in order, and a partition whose run failed sends no more.
func (k *KafkaWriter) produceRounds(ctx context.Context, g *grouping) error {
	var errs []error
	for round := 0; ; round++ {
		g.round = g.round[:0]
		for i := range g.sets {
			s := &g.sets[i]
			if s.round == round && (round == 0 || g.sets[i-1].err == nil) {
				g.round = append(g.round, s)
			} else if s.round == round {
				s.err = notSentAfter(g.sets[i-1].err) // retriable: these records were not the cause
			}
		}
		if len(g.round) == 0 {
			return errors.Join(errs...)
		}
		k.produceByLeader(ctx, g.round)
		for _, s := range g.round {
			if s.err != nil {
				errs = append(errs, s.err)
			}
		}
	}
}

// produceByLeader sends sets, at most one per partition, in one request per
// leader, the leaders' concurrently; each set's err says how it went.
func (k *KafkaWriter) produceByLeader(ctx context.Context, sets []*recordSet) {
	slices.SortStableFunc(sets, func(a, b *recordSet) int { return cmp.Compare(a.leader, b.leader) })
	if sets[0].leader == sets[len(sets)-1].leader { // one leader: no goroutine
		k.produce(ctx, sets)
		return
	}
	var wg sync.WaitGroup
	for from, to := 0, 0; from < len(sets); from = to {
		for to = from + 1; to < len(sets) && sets[to].leader == sets[from].leader; to++ {
		}
		group := sets[from:to]
		wg.Go(func() { k.produce(ctx, group) })
	}
	wg.Wait()
}

// produce sends sets, partitions of one leader, in one request, then sends
// those that failed with a retriable error again, one partition per request
// (leaders may have moved); each set's err says how it went.
func (k *KafkaWriter) produce(ctx context.Context, sets []*recordSet) {
	k.request(ctx, sets)
	backoff := writeBackoff
	for attempt := 2; attempt <= writeAttempts; attempt++ {
		again := false
		for _, s := range sets {
			again = again || s.err != nil && retriable(s.err)
		}
		if !again || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxWriteBackoff)
		for _, s := range sets {
			if s.err != nil && retriable(s.err) && ctx.Err() == nil {
				k.request(ctx, []*recordSet{s})
			}
		}
	}
	for _, s := range sets {
		if s.err != nil {
			s.err = fmt.Errorf("sink: write %d records to %s/%d: %w", len(s.idx), k.topic, s.partition, s.err)
		}
	}
}

// request sends sets, partitions of one leader, in one produce request and
// sets each one's err.
func (k *KafkaWriter) request(ctx context.Context, sets []*recordSet) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, writeTimeout)
		defer cancel()
	}
	parts := make([]produceapi.RequestPartition, len(sets))
	for i, s := range sets {
		s.next, s.err = 0, nil
		parts[i] = produceapi.RequestPartition{Partition: int32(s.partition), RecordSet: protocol.RecordSet{Records: s}}
	}
	m, err := k.transport.RoundTrip(ctx, k.addr, &produceapi.Request{Acks: int16(kafka.RequireAll),
		Timeout: int32(writeTimeout / time.Millisecond), Topics: []produceapi.RequestTopic{{Topic: k.topic, Partitions: parts}}})
	res, _ := m.(*produceapi.Response)
	for _, s := range sets {
		s.err = err
		if err == nil {
			s.err = partitionError(res, k.topic, s.partition)
		}
	}
}

// partitionError is what res says of topic's partition.
func partitionError(res *produceapi.Response, topic string, partition int) error {
	for _, t := range res.Topics {
		for _, p := range t.Partitions {
			if t.Topic != topic || int(p.Partition) != partition {
				continue
			}
			var err error
			if p.ErrorCode != 0 {
				err = kafka.Error(p.ErrorCode)
			}
			for _, re := range p.RecordErrors {
				err = errors.Join(err, fmt.Errorf("record %d: %s", re.BatchIndex, re.BatchIndexErrorMessage))
			}
			return err
		}
	}
	return errors.New("no response for the partition")
}

// retriable reports whether a request that failed with err may succeed
// when sent again: kafka-go's Writer's rule.
func retriable(err error) bool {
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// layout is a topic's partitions and their leaders.
type layout struct {
	ids     []int // 0..n-1, as kafka-go's balancers take them
	leaders []int // broker id of partition p's leader
}

// layout returns the topic's layout, fetched at most every partitionsTTL.
// The returned value is never changed.
func (k *KafkaWriter) layout(ctx context.Context) (*layout, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lay != nil && time.Since(k.fetched) < partitionsTTL {
		return k.lay, nil
	}
	md, err := (&kafka.Client{Addr: k.addr, Transport: k.transport, Timeout: writeTimeout}).Metadata(ctx,
		&kafka.MetadataRequest{Topics: []string{k.topic}})
	if err != nil {
		return nil, err
	}
	for _, t := range md.Topics {
		if t.Name != k.topic {
			continue
		}
		if t.Error != nil {
			return nil, t.Error
		}
		if len(t.Partitions) == 0 {
			break
		}
		lay := &layout{ids: make([]int, len(t.Partitions)), leaders: make([]int, len(t.Partitions))}
		for p := range lay.ids {
			lay.ids[p] = p
		}
		for _, p := range t.Partitions {
			if p.ID < 0 || p.ID >= len(lay.ids) {
				return nil, fmt.Errorf("partition %d of %d", p.ID, len(lay.ids))
			}
			lay.leaders[p.ID] = p.Leader.ID
		}
		k.lay, k.fetched = lay, time.Now()
		return lay, nil
	}
	return nil, kafka.UnknownTopicOrPartition
}

// recordSet is the kafka.RecordReader of one produce request: recs[idx[i]]
// in order. It hands out one Record value over and over, as kafka-go's
// Writer does, so that reading allocates nothing but the headers.
type recordSet struct {
	recs       []Record
	idx        []int32
	partition  int
	leader     int   // broker id
	round      int   // the partition's round-th run
	err        error // of the last request
	next       int
	rec        kafka.Record
	key, value bytesReadCloser
}

func (s *recordSet) ReadRecord() (*kafka.Record, error) {
	if s.next >= len(s.idx) {
		return nil, io.EOF
	}
	r := &s.recs[s.idx[s.next]]
	s.next++
	s.rec = kafka.Record{}
	if r.Key != nil { // a nil key is null, an empty one a key
		s.key.Reset(r.Key)
		s.rec.Key = &s.key
	}
	if r.Value != nil {
		s.value.Reset(r.Value)
		s.rec.Value = &s.value
	}
	for _, h := range r.Headers {
		s.rec.Headers = append(s.rec.Headers, kafka.Header{Key: h.Key, Value: []byte(h.Value)})
	}
	return &s.rec, nil
}

type bytesReadCloser struct{ bytes.Reader }

func (*bytesReadCloser) Close() error { return nil }

// encoded is WriteForecasts' buffers: the keys and values of a batch back
// to back in bytes, the records that slice them, and where each ends.
type encoded struct {
	bytes []byte
	recs  []Record
	ends  []int // record i's key ends at ends[2i], its value at ends[2i+1]
}

// WriteForecasts publishes forecast messages as JSON, keyed by series.
func (k *KafkaWriter) WriteForecasts(ctx context.Context, msgs ...*Message) error {
	// The buffers are reused, but only after a write that succeeded: the
	// requests no longer hold the values then, while after a failure (a
	// cancelled context) one may still be on its way.
	e, _ := k.buffers.Get().(*encoded)
	if e == nil {
		e = new(encoded)
	}
	buf := e.bytes[:0]
	e.ends = resize(e.ends, 2*len(msgs))
	for i, m := range msgs {
		buf = append(buf, m.Series...)
		e.ends[2*i] = len(buf)
		var err error
		if buf, err = m.AppendJSON(buf); err != nil {
			return fmt.Errorf("sink: encode forecast of %s: %w", m.Series, err)
		}
		e.ends[2*i+1] = len(buf)
	}
	e.bytes = buf
	e.recs = resize(e.recs, len(msgs))
	start := 0
	for i := range msgs { // slices taken once buf stopped moving
		key, value := e.ends[2*i], e.ends[2*i+1]
		e.recs[i] = Record{Key: buf[start:key:key], Value: buf[key:value:value]}
		start = value
	}
	if err := k.WriteRecords(ctx, e.recs...); err != nil {
		return err
	}
	k.buffers.Put(e)
	return nil
}

// DeadLetter publishes a rejected input record, keyed as it came, with the
// reject reason and its detail in the headers "streamd-reason" and
// "streamd-detail", and the origin in "streamd-origin" (topic/partition/offset),
// cut to fit DefaultDeadLetterMaxBytes (DeadLetterRecord).
func (k *KafkaWriter) DeadLetter(ctx context.Context, key, value []byte, reason, detail, origin string) error {
	rec, _ := DeadLetterRecord(key, value, reason, detail, origin, DefaultDeadLetterMaxBytes)
	return k.WriteRecords(ctx, rec)
}

const (
	// DefaultDeadLetterMaxBytes is the brokers' default max.message.bytes:
	// the largest record batch a topic accepts.
	DefaultDeadLetterMaxBytes = 1048588
	// batchOverhead is the v2 record batch header, which max.message.bytes
	// counts with the records.
	batchOverhead = 61
	// maxDetailBytes bounds a dead letter's detail header, which may quote
	// the input.
	maxDetailBytes = 1024
)

// DeadLetterRecord is the dead letter of a rejected input record, for
// batching them with WriteRecords: the record's key and value, and the
// headers streamd-reason, streamd-detail (at most maxDetailBytes) and
// streamd-origin. A dead letter whose record batch would exceed maxBytes
// (the dead-letter topic's max.message.bytes; an input topic may allow
// larger records) is cut to fit: the value from its end, then the key, and
// the header streamd-truncated says what was kept of each, "key K/K0
// bytes, value V/V0 bytes"; truncated reports it. The reason and origin
// headers are always kept whole: they are what an operator looks the
// record up by.
func DeadLetterRecord(key, value []byte, reason, detail, origin string, maxBytes int) (rec Record, truncated bool) {
	if len(detail) > maxDetailBytes {
		detail = detail[:maxDetailBytes]
	}
	rec = Record{Key: key, Value: value, Headers: []Header{
		{"streamd-reason", reason}, {"streamd-detail", detail}, {"streamd-origin", origin}}}
	over := batchOverhead + rec.size() - maxBytes
	if over <= 0 {
		return rec, false
	}
	const note = "streamd-truncated"
	over += len(note) + len("key 0000000000/0000000000 bytes, value 0000000000/0000000000 bytes") + recordOverhead
	cutValue := min(over, len(value))
	cutKey := min(over-cutValue, len(key))
	rec.Value, rec.Key = value[:len(value)-cutValue], key[:len(key)-cutKey]
	if value == nil {
		rec.Value = nil
	}
	if key == nil {
		rec.Key = nil
	}
	rec.Headers = append(rec.Headers, Header{note, fmt.Sprintf("key %d/%d bytes, value %d/%d bytes",
		len(rec.Key), len(key), len(rec.Value), len(value))})
	return rec, true
}

// ErrorClass says whether a failed write may succeed if it is sent again.
type ErrorClass int

const (
	// Retriable: the write may succeed later (a broker down, a leader
	// moving, a topic not created yet, a cancelled context).
	Retriable ErrorClass = iota
	// Fatal: the brokers refused the records themselves (too large,
	// invalid) or this client's right to write them; the same write fails
	// the same way however often it is sent, until an operator changes the
	// topic or the ACLs.
	Fatal
)

func (c ErrorClass) String() string {
	if c == Fatal {
		return "fatal"
	}
	return "retriable"
}

// fatalErrors are the produce errors that do not depend on time.
var fatalErrors = []kafka.Error{kafka.MessageSizeTooLarge, kafka.RecordListTooLarge, kafka.InvalidRecord,
	kafka.InvalidTopic, kafka.InvalidRequiredAcks, kafka.UnsupportedForMessageFormat, kafka.PolicyViolation,
	kafka.TopicAuthorizationFailed, kafka.ClusterAuthorizationFailed, kafka.TransactionalIDAuthorizationFailed,
	kafka.SASLAuthenticationFailed}

// Classify is the one place that says which write errors are worth
// retrying: an error of a write holding any of fatalErrors (a write's error
// joins those of its partitions) is Fatal; any other is Retriable.
func Classify(err error) ErrorClass {
	for _, f := range fatalErrors {
		if errors.Is(err, f) {
			return Fatal
		}
	}
	return Retriable
}

// Close releases the writer. Writes are synchronous, so nothing is pending;
// the transport, shared or the caller's, stays open.
func (k *KafkaWriter) Close() error { return nil }

// sharedRefusal is a fatal refusal of a batch that held records of several
// writes: each of them may send again (Classify calls it Retriable; it
// does not unwrap to the brokers' error), and alone gets its own verdict.
type sharedRefusal struct{ err error }

func (e *sharedRefusal) Error() string {
	return "sink: the brokers refused a batch shared with other writes (send again alone): " + e.err.Error()
}

// notSent is the error of a partition's later run of records, not sent
// because an earlier run failed: Retriable whatever that run's error.
type notSent struct{ err error }

// notSentAfter is the notSent error of a run after one that failed with
// err (itself not sent, or sent and refused).
func notSentAfter(err error) error {
	if ns, ok := err.(*notSent); ok {
		return ns
	}
	return &notSent{err}
}

func (e *notSent) Error() string {
	return "sink: not sent: an earlier batch of the partition failed: " + e.err.Error()
}
