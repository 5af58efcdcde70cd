package sink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// hashPartition is the partition of n that a writer's default partitioner
// (murmur2) picks for key.
func hashPartition(key string, n int) int {
	p, err := PartitionOf("", []byte(key), n)
	if err != nil {
		panic(err)
	}
	return p
}

// produceSpy counts the produce requests a cluster receives for each
// partition, records their record batches' sizes, and answers the first
// fail[p] of partition p's with errorCode instead of appending them.
type produceSpy struct {
	mu       sync.Mutex
	requests map[int32]int
	sizes    map[int32][]int
}

func spyOnProduce(c *kfake.Cluster, fail map[int32]int, errorCode int16) *produceSpy {
	s := &produceSpy{requests: map[int32]int{}, sizes: map[int32][]int{}}
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.ProduceRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		failing := false
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				s.requests[p.Partition]++
				s.sizes[p.Partition] = append(s.sizes[p.Partition], len(p.Records))
				failing = failing || s.requests[p.Partition] <= fail[p.Partition]
			}
		}
		if !failing {
			return nil, nil, false // the cluster appends it
		}
		c.KeepControl()
		return produceResponse(req, func(int32) int16 { return errorCode }), nil, true
	})
	return s
}

func (s *produceSpy) count(p int32) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[p]
}

// clusterAndWriter starts a kfake cluster of brokers brokers holding topic
// "t" of partitions partitions, and a writer of cfg to it (Brokers and Topic
// set here); ctx ends after 30 s. All end with the test. The writer does not
// connect before its first write, so controls installed on the cluster
// afterwards see every request.
func clusterAndWriter(t *testing.T, brokers, partitions int, cfg KafkaConfig) (*kfake.Cluster, *KafkaWriter, context.Context) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers), kfake.SeedTopics(int32(partitions), "t"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cfg.Brokers, cfg.Topic = c.ListenAddrs(), "t"
	w, err := NewKafkaWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, w, ctx
}

// keyedRecords returns n records keyed k0, k1, ..., each value size bytes
// that start with its index.
func keyedRecords(n, size int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		v := []byte(fmt.Sprintf("%08d", i))
		recs[i] = Record{Key: []byte(fmt.Sprintf("key-%d", i)), Value: append(v, make([]byte, size-len(v))...)}
	}
	return recs
}

// checkOnce fails unless got holds each of recs exactly once, in the
// partition the default partitioner picks for its key, in write order
// within the partition.
func checkOnce(t *testing.T, got map[int][]kafka.Message, recs []Record, partitions int) {
	t.Helper()
	seen := map[string]bool{}
	for p, ms := range got {
		last := -1
		for _, m := range ms {
			var i int
			fmt.Sscanf(string(m.Value[:8]), "%d", &i)
			if seen[string(m.Key)] {
				t.Fatalf("record %s written twice", m.Key)
			}
			seen[string(m.Key)] = true
			if string(m.Key) != string(recs[i].Key) || len(m.Value) != len(recs[i].Value) {
				t.Fatalf("partition %d: record %s carries record %d's value", p, m.Key, i)
			}
			if want := hashPartition(string(m.Key), partitions); p != want {
				t.Fatalf("record %s in partition %d, want %d", m.Key, p, want)
			}
			if i < last {
				t.Fatalf("partition %d: record %d after %d", p, i, last)
			}
			last = i
		}
	}
	if len(seen) != len(recs) {
		t.Fatalf("%d of %d records arrived", len(seen), len(recs))
	}
}

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
// the JSON of docs/messages.md, each message its own; a dead letter carries the original record and its
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
			if want := hashPartition(fm.Series, 8); p != want {
				t.Fatalf("series %s in partition %d, the partitioner says %d", fm.Series, p, want)
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

// A write's records for one partition go out in requests of at most
// BatchBytes (a record batch adds its 61-byte header to its records), as few
// as the bound allows, each partition's in order.
func TestKafkaWriterSplitsAtBatchBytes(t *testing.T) {
	const partitions, n, size, limit = 4, 400, 200, 4096
	c, w, ctx := clusterAndWriter(t, 1, partitions, KafkaConfig{BatchBytes: limit, Transport: &kafka.Transport{}})
	spy := spyOnProduce(c, nil, 0)
	recs := keyedRecords(n, size)
	if err := w.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	perPartition := map[int32]int{}
	for _, r := range recs {
		perPartition[int32(hashPartition(string(r.Key), partitions))] += len(r.Key) + len(r.Value)
	}
	for p, bytes := range perPartition {
		// The records' own bytes need at least this many requests; the
		// framing the writer budgets for (recordOverhead each) at most
		// doubles them here.
		if got, least := spy.count(p), (bytes+limit-1)/limit; got < least || got > 2*least {
			t.Errorf("partition %d: %d bytes of records in %d requests, want %d to %d", p, bytes, got, least, 2*least)
		}
		for _, b := range spy.sizes[p] {
			if b > limit+61 {
				t.Errorf("partition %d: a record batch of %d bytes, limit %d", p, b, limit)
			}
		}
	}
	checkOnce(t, readAll(ctx, t, c.ListenAddrs(), "t", partitions, n), recs, partitions)
}

// A write sends one request per partition leader. One that fails with a
// retriable error (its leader moved) is sent again, one partition at a
// time; partitions whose request succeeded are not written again.
func TestKafkaWriterRetriesOnlyTheFailedPartitions(t *testing.T) {
	const partitions, n = 8, 64
	c, w, ctx := clusterAndWriter(t, 2, partitions, KafkaConfig{Transport: &kafka.Transport{}})
	const failing = 2 // every request carrying partition 2 fails twice
	// kfake places leaders at random: put partition 0 on the broker that
	// does not lead partition 2, so that two leaders are written to.
	if lead := c.LeaderFor("t", failing); c.LeaderFor("t", 0) == lead {
		for _, id := range []int32{0, 1} {
			if id != lead {
				if err := c.MoveTopicPartition("t", 0, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	spy := spyOnProduce(c, map[int32]int{failing: 2}, int16(kafka.NotLeaderForPartition))
	recs := keyedRecords(n, 16)
	if err := w.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}
	withFailing := c.LeaderFor("t", failing)
	others := 0
	for p := int32(0); p < partitions; p++ {
		want := 1 // in its leader's request, which succeeded
		switch {
		case p == failing:
			want = 3 // its leader's request, then twice alone
		case c.LeaderFor("t", p) == withFailing:
			want = 2 // failed with partition 2's, then alone
		default:
			others++
		}
		if got := spy.count(p); got != want {
			t.Errorf("partition %d (leader %d): %d produce requests, want %d", p, c.LeaderFor("t", p), got, want)
		}
	}
	if others == 0 {
		t.Fatalf("every partition led by broker %d: the test needs two leaders", withFailing)
	}
	checkOnce(t, readAll(ctx, t, c.ListenAddrs(), "t", partitions, n), recs, partitions)
}

// A write after the partitions' leaders moved reaches the new leaders once
// the transport refreshed its metadata (here every 500 ms).
func TestKafkaWriterFollowsAMovedLeader(t *testing.T) {
	const partitions, n = 4, 32
	c, w, ctx := clusterAndWriter(t, 2, partitions, KafkaConfig{Transport: &kafka.Transport{MetadataTTL: 500 * time.Millisecond}})
	recs := keyedRecords(n, 16)
	if err := w.WriteRecords(ctx, recs[:n/2]...); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < partitions; p++ {
		if err := c.MoveTopicPartition("t", p, 1-c.LeaderFor("t", p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteRecords(ctx, recs[n/2:]...); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, readAll(ctx, t, c.ListenAddrs(), "t", partitions, n), recs, partitions)
}

// An error that sending again cannot cure comes back at once, as the
// kafka.Error the publisher tells apart.
func TestKafkaWriterReturnsANonRetriableError(t *testing.T) {
	c, w, ctx := clusterAndWriter(t, 1, 1, KafkaConfig{Transport: &kafka.Transport{}})
	spy := spyOnProduce(c, map[int32]int{0: 1}, int16(kafka.MessageSizeTooLarge))
	err := w.WriteRecords(ctx, keyedRecords(3, 16)...)
	if !errors.Is(err, kafka.MessageSizeTooLarge) {
		t.Fatalf("got %v, want %v", err, kafka.MessageSizeTooLarge)
	}
	if got := spy.count(0); got != 1 {
		t.Fatalf("%d produce requests, want 1", got)
	}
}

// holdFirstProduce makes the cluster hold its first produce request until
// release is called; with failing ≥ 0, it answers partition failing of
// every later one with errorCode and acknowledges its other partitions
// without appending them. requests counts the produce requests.
func holdFirstProduce(c *kfake.Cluster, failing int32, errorCode int16) (release func(), requests func() int) {
	held := make(chan struct{})
	var mu sync.Mutex
	n := 0
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			<-held
		}
		req := kreq.(*kmsg.ProduceRequest)
		if first || failing < 0 {
			return nil, nil, false // the cluster appends it
		}
		// Partition failing gets errorCode; the others are acknowledged
		// without being appended (the tests using it look at the errors).
		return produceResponse(req, func(p int32) int16 {
			if p == failing {
				return errorCode
			}
			return 0
		}), nil, true
	})
	return func() { close(held) }, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// produceResponse answers every partition of req with errorOf(partition),
// without the cluster appending any of them.
func produceResponse(req *kmsg.ProduceRequest, errorOf func(partition int32) int16) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, errorOf(p.Partition)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// waitGathered waits until n writes wait behind the one under way.
func waitGathered(t *testing.T, w *KafkaWriter, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		w.gather.Lock()
		got := len(w.waiting)
		w.gather.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes waiting, want %d", got, n)
		}
	}
}

// keysIn returns n records whose keys, prefixed, all go to partition p of
// partitions; each value is its index.
func keysIn(prefix string, p, partitions, n int) []Record {
	var recs []Record
	for i := 0; len(recs) < n; i++ {
		if key := fmt.Sprintf("%s-%d", prefix, i); hashPartition(key, partitions) == p {
			recs = append(recs, Record{Key: []byte(key), Value: []byte(fmt.Sprint(len(recs)))})
		}
	}
	return recs
}

// Writes that arrive while one is under way go together in the next
// request, each write's records once and in its order within a partition.
func TestKafkaWriterGathersConcurrentWrites(t *testing.T) {
	const partitions, writers, per = 4, 7, 12
	c, w, ctx := clusterAndWriter(t, 1, partitions, KafkaConfig{Transport: &kafka.Transport{}})
	release, requests := holdFirstProduce(c, -1, 0)
	writes := make([][]Record, writers+1)
	for j := range writes {
		for p := 0; p < partitions; p++ {
			writes[j] = append(writes[j], keysIn(fmt.Sprintf("w%d-p%d", j, p), p, partitions, per/partitions)...)
		}
	}
	errs := make(chan error, writers+1)
	go func() { errs <- w.WriteRecords(ctx, writes[0]...) }()
	for requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	for j := 1; j <= writers; j++ {
		go func() { errs <- w.WriteRecords(ctx, writes[j]...) }()
	}
	waitGathered(t, w, writers)
	release()
	for range writes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := requests(); got != 2 {
		t.Errorf("%d produce requests, want 2: the first write's, then the %d gathered behind it", got, writers)
	}
	got := readAll(ctx, t, c.ListenAddrs(), "t", partitions, (writers+1)*per)
	next := map[string]int{} // per write and partition: the index expected next
	n := 0
	for p, ms := range got {
		for _, m := range ms {
			var j, q, i int
			fmt.Sscanf(string(m.Key), "w%d-p%d-", &j, &q)
			fmt.Sscan(string(m.Value), &i)
			if q != p {
				t.Fatalf("record %s in partition %d", m.Key, p)
			}
			if k := fmt.Sprintf("w%d-p%d", j, q); i != next[k] {
				t.Fatalf("write %d, partition %d: record %d where %d was due", j, p, i, next[k])
			} else {
				next[k]++
			}
			n++
		}
	}
	if n != (writers+1)*per {
		t.Fatalf("%d records arrived, want %d", n, (writers+1)*per)
	}
}

// In a gathered request, a partition's error is the error of the writes
// with records in it, and of no other.
func TestKafkaWriterGatheredWritesFailAlone(t *testing.T) {
	const partitions, failing = 4, 1
	c, w, ctx := clusterAndWriter(t, 1, partitions, KafkaConfig{Transport: &kafka.Transport{}})
	release, requests := holdFirstProduce(c, failing, int16(kafka.MessageSizeTooLarge))
	first := make(chan error, 1)
	go func() { first <- w.WriteRecords(ctx, keysIn("first", 0, partitions, 2)...) }()
	for requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	writes := [][]Record{
		keysIn("a", 0, partitions, 3), // fine
		append(keysIn("b", 2, partitions, 2), keysIn("b", failing, partitions, 2)...), // fails with partition 1
		keysIn("c", 3, partitions, 3), // fine
	}
	errs := make([]chan error, len(writes))
	for j, recs := range writes {
		errs[j] = make(chan error, 1)
		go func() { errs[j] <- w.WriteRecords(ctx, recs...) }()
		waitGathered(t, w, j+1) // in this order
	}
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for j, want := range []error{nil, kafka.MessageSizeTooLarge, nil} {
		if err := <-errs[j]; !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("write %d: %v, want %v", j, err, want)
		}
	}
	if got := requests(); got != 2 {
		t.Errorf("%d produce requests, want 2", got)
	}
}

// A write that gives up while it waits returns at once, and its records are
// not sent.
func TestKafkaWriterGivesUpAWaitingWrite(t *testing.T) {
	c, w, ctx := clusterAndWriter(t, 1, 1, KafkaConfig{Transport: &kafka.Transport{}})
	release, requests := holdFirstProduce(c, -1, 0)
	first := make(chan error, 1)
	go func() { first <- w.WriteRecords(ctx, keysIn("first", 0, 1, 2)...) }()
	for requests() == 0 {
		time.Sleep(time.Millisecond)
	}
	wctx, giveUp := context.WithCancel(ctx)
	waiting := make(chan error, 1)
	go func() { waiting <- w.WriteRecords(wctx, keysIn("late", 0, 1, 2)...) }()
	waitGathered(t, w, 1)
	giveUp()
	select {
	case err := <-waiting:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the write that gave up returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write that gave up still waits behind the held request")
	}
	waitGathered(t, w, 0)
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := readAll(ctx, t, c.ListenAddrs(), "t", 1, 4); len(got[0]) != 2 || requests() != 1 {
		t.Fatalf("%d records in %d requests, want only the first write's 2 in 1", len(got[0]), requests())
	}
}

// A dead letter that would not fit the dead-letter topic is cut from the
// end of its value, then its key, to fit exactly within the limit, keeping
// its reason and origin whole and saying what was kept; one that fits is
// unchanged.
func TestDeadLetterRecordFits(t *testing.T) {
	key, value := []byte("pump-7"), bytes.Repeat([]byte("v"), 100000)
	rec, cut := DeadLetterRecord(key, value, "oversize", strings.Repeat("d", 5000), "series/3/18220", 20000)
	if !cut || batchOverhead+rec.size() > 20000 || len(rec.Value) < 15000 || !bytes.Equal(rec.Key, key) {
		t.Fatalf("cut %v: %d bytes in all, value %d, key %q", cut, batchOverhead+rec.size(), len(rec.Value), rec.Key)
	}
	h := map[string]string{}
	for _, x := range rec.Headers {
		h[x.Key] = x.Value
	}
	if h["streamd-reason"] != "oversize" || h["streamd-origin"] != "series/3/18220" || len(h["streamd-detail"]) != maxDetailBytes ||
		h["streamd-truncated"] != fmt.Sprintf("key 6/6 bytes, value %d/100000 bytes", len(rec.Value)) {
		t.Errorf("headers %v", h)
	}
	// A key larger than the limit is cut too.
	rec, cut = DeadLetterRecord(bytes.Repeat([]byte("k"), 30000), []byte("{}"), "bad_series", "", "s/0/1", 20000)
	if !cut || batchOverhead+rec.size() > 20000 || len(rec.Value) != 0 || len(rec.Key) == 0 {
		t.Errorf("long key: cut %v, %d bytes, key %d, value %d", cut, batchOverhead+rec.size(), len(rec.Key), len(rec.Value))
	}
	rec, cut = DeadLetterRecord(key, []byte(`{"y":1}`), "missing_t", "no t", "s/0/2", 20000)
	if cut || string(rec.Value) != `{"y":1}` || len(rec.Headers) != 3 {
		t.Errorf("small dead letter changed: %v %+v", cut, rec)
	}
}

// Classify: the errors that fail the same way every time are fatal, wrapped
// or joined with others; the rest, retriable.
func TestClassify(t *testing.T) {
	for err, want := range map[error]ErrorClass{
		kafka.MessageSizeTooLarge:                                           Fatal,
		fmt.Errorf("partition 3: %w", kafka.TopicAuthorizationFailed):       Fatal,
		errors.Join(kafka.NotLeaderForPartition, kafka.MessageSizeTooLarge): Fatal,
		kafka.NotLeaderForPartition:                                         Retriable,
		kafka.UnknownTopicOrPartition:                                       Retriable,
		context.DeadlineExceeded:                                            Retriable,
		io.ErrUnexpectedEOF:                                                 Retriable,
	} {
		if got := Classify(err); got != want {
			t.Errorf("%v: %v, want %v", err, got, want)
		}
	}
}

// The partitioners agree with the clients they are named after, on the
// clients' own test vectors. murmur2: Kafka's UtilsTest.testMurmur2 (Java
// murmur2 of the key bytes; the Java partition is toPositive(h) mod n) and
// kafka-python's test_murmur2_java_compatibility (partitions of 1000,
// "compared with output from Kafka's Java partitioner"); crc32:
// librdkafka's crc32 (zlib's CRC-32 of "123456789" is 0xcbf43926); fnv1a:
// Sarama's, |int32(fnv1a32(key)) mod n|, FNV-1a 32 of "a" being 0xe40c292c.
func TestPartitioners(t *testing.T) {
	java := map[string]int32{"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107, "kafka": -798503068 /* 0xd067cf64, librdkafka rdmurmur2.c */}
	for key, h := range java {
		for _, n := range []int{1, 7, 12, 1000} {
			want := int(uint32(h)&0x7fffffff) % n
			if got, err := PartitionOf("murmur2", []byte(key), n); err != nil || got != want {
				t.Errorf("murmur2 %q of %d: %d, %v; Java %d", key, n, got, err, want)
			}
		}
	}
	for key, want := range map[string]int{"": 681, "a": 524, "ab": 434, "abc": 107, "123456789": 566, "\x00 ": 742} {
		if got, _ := PartitionOf("", []byte(key), 1000); got != want {
			t.Errorf("default (murmur2) %q of 1000: %d, kafka-python says %d", key, got, want)
		}
	}
	if got, _ := PartitionOf("crc32", []byte("123456789"), 1000); got != int(uint32(0xcbf43926)%1000) {
		t.Errorf("crc32: %d", got)
	}
	if got, _ := PartitionOf("fnv1a", []byte("a"), 1000); got != 76 { // int32(0xe40c292c) = -468965076
		t.Errorf("fnv1a: %d", got)
	}
	if _, err := PartitionOf("java", []byte("a"), 3); err == nil {
		t.Error("an unknown partitioner was accepted")
	}
}

// TestSharedRefusalIsNotFatal: writes gathered into one request whose batch
// the brokers refuse for a record of one of them (larger than the topic's
// max.message.bytes) are each told to send again (Retriable), not refused
// for good: a publisher drops the records of a write refused for good, and
// the good records beside the oversize one would be lost. Alone, the
// oversize write is refused for good. One partition, so every write's
// records share its batches; a produce round trip of 3 ms, so that writes
// arriving meanwhile are gathered, and three writers, so that a round
// holds more than the one write that arrived during the last.
func TestSharedRefusalIsNotFatal(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateTopic("dlq", 1, map[string]string{"max.message.bytes": "20000"}); err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		time.Sleep(3 * time.Millisecond)
		return nil, nil, false
	})
	w, err := NewKafkaWriter(KafkaConfig{Brokers: c.ListenAddrs(), Topic: "dlq", Transport: &kafka.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := context.Background()
	big := Record{Key: []byte("big"), Value: make([]byte, 50_000)}
	if err := w.WriteRecords(ctx, big); Classify(err) != Fatal {
		t.Fatalf("the oversize record alone: %v, want a fatal refusal", err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			w.WriteRecords(ctx, big)
		}
	}()
	var mu sync.Mutex
	var retry, fatal, ok int
	good := func(name string) {
		for i := 0; i < 300; i++ {
			err := w.WriteRecords(ctx, Record{Key: []byte(name), Value: []byte(strconv.Itoa(i))})
			mu.Lock()
			switch {
			case err == nil:
				ok++
			case Classify(err) == Fatal:
				fatal++
			default:
				retry++
			}
			mu.Unlock()
		}
	}
	wg.Add(1)
	go func() { defer wg.Done(); good("other") }()
	good("good")
	stop.Store(true)
	wg.Wait()
	if fatal > 0 {
		t.Errorf("%d of 600 good writes refused for good beside the oversize one (%d told to retry, %d written)", fatal, retry, ok)
	}
	if retry == 0 || ok == 0 {
		t.Errorf("the writes were never gathered with the oversize one, or never written: %d told to retry, %d written", retry, ok)
	}
}
