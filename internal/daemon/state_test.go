package daemon

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// forecastKey identifies a forecast message: series and t (= record index + 1).
type forecastKey struct {
	series string
	t      int64
}

// referenceForecasts runs each series through a Learner directly, as an
// uninterrupted daemon would: the forecast message of every record.
func referenceForecasts(t *testing.T, nSeries, n int) map[forecastKey]sink.Message {
	t.Helper()
	ref := map[forecastKey]sink.Message{}
	for s := 0; s < nSeries; s++ {
		l, _ := online.NewLearner(learnerConfig())
		id := fmt.Sprintf("s%d", s)
		for i, v := range series(s, n) {
			res, err := l.Observe(online.Observation{T: int64(i + 1), Y: v})
			if err != nil {
				t.Fatal(err)
			}
			if res.Fitted || res.Forecast != nil {
				var m sink.Message
				SetResult(&m, id, int64(i+1), v, res)
				ref[forecastKey{id, int64(i + 1)}] = m
			}
		}
	}
	return ref
}

// produceRange writes records [from, to) of every series, keyed by series.
func produceRange(ctx context.Context, t *testing.T, addrs []string, nSeries, n, from, to int) {
	t.Helper()
	if err := writeRange(ctx, addrs, nSeries, n, from, to); err != nil {
		t.Fatal(err)
	}
}

func writeRange(ctx context.Context, addrs []string, nSeries, n, from, to int) error {
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	defer w.Close()
	var recs []sink.Record
	for i := from; i < to; i++ {
		for s := 0; s < nSeries; s++ {
			id := fmt.Sprintf("s%d", s)
			recs = append(recs, sink.Record{Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, i+1, series(s, n)[i]))})
		}
	}
	return w.WriteRecords(ctx, recs...)
}

// forecastCollector reads every partition of the forecast topic in the
// background and checks each message against the reference as it arrives: a
// forecast published twice (after a restart) must be the same numbers.
type forecastCollector struct {
	mu     sync.Mutex
	seen   map[forecastKey]int
	errs   []string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func collectForecasts(ctx context.Context, addrs []string, partitions int, ref map[forecastKey]sink.Message) *forecastCollector {
	ctx, cancel := context.WithCancel(ctx)
	fc := &forecastCollector{seen: map[forecastKey]int{}, cancel: cancel}
	for p := 0; p < partitions; p++ {
		fc.wg.Add(1)
		go func() {
			defer fc.wg.Done()
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: addrs, Topic: "forecasts", Partition: p, MaxWait: 250 * time.Millisecond})
			defer r.Close()
			for {
				km, err := r.ReadMessage(ctx)
				if err != nil {
					return
				}
				var m sink.Message
				err = json.Unmarshal(km.Value, &m)
				k := forecastKey{m.Series, m.T}
				fc.mu.Lock()
				fc.seen[k]++
				if msg := sameForecast(m, ref[k]); err != nil || msg != "" {
					fc.errs = append(fc.errs, fmt.Sprintf("%s t=%d: %v %s", m.Series, m.T, err, msg))
				}
				fc.mu.Unlock()
			}
		}()
	}
	return fc
}

// sameForecast compares a published forecast with the reference's, bit for
// bit; "" when equal.
func sameForecast(m, r sink.Message) string {
	if len(m.Steps) != len(r.Steps) || (m.Observed == nil) != (r.Observed == nil) {
		return fmt.Sprintf("shape: %d steps (observed %v), reference %d (%v)", len(m.Steps), m.Observed != nil, len(r.Steps), r.Observed != nil)
	}
	if m.Observed != nil && *m.Observed != *r.Observed {
		return fmt.Sprintf("observed %+v, reference %+v", *m.Observed, *r.Observed)
	}
	for h := range m.Steps {
		if m.Steps[h] != r.Steps[h] {
			return fmt.Sprintf("step %d: %+v, reference %+v", h+1, m.Steps[h], r.Steps[h])
		}
	}
	return ""
}

// waitFor waits until every reference forecast with t ≤ upTo was seen.
func (fc *forecastCollector) waitFor(ctx context.Context, t *testing.T, ref map[forecastKey]sink.Message, upTo int64) {
	t.Helper()
	for {
		fc.mu.Lock()
		missing := 0
		for k := range ref {
			if k.t <= upTo && fc.seen[k] == 0 {
				missing++
			}
		}
		fc.mu.Unlock()
		if missing == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d forecasts up to t = %d never arrived", missing, upTo)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// publishedOnce checks that no forecast seen was published more than once.
func (fc *forecastCollector) publishedOnce(t *testing.T) {
	t.Helper()
	fc.mu.Lock()
	defer fc.mu.Unlock()
	for k, c := range fc.seen {
		if c != 1 {
			t.Errorf("%v published %d times", k, c)
		}
	}
}

func (fc *forecastCollector) stop(t *testing.T) {
	t.Helper()
	fc.cancel()
	fc.wg.Wait()
	for i, e := range fc.errs {
		if i == 10 {
			t.Errorf("... and %d more", len(fc.errs)-10)
			break
		}
		t.Error(e)
	}
}

// stateFixture starts a broker with the topics "series", "forecasts" and
// "dlq" of the given partition count, a context of the given timeout, the
// reference forecasts of nSeries series of n records and a collector
// checking every published forecast against them; all end with the test.
func stateFixture(t *testing.T, partitions, nSeries, n int, timeout time.Duration) (addrs []string, ctx context.Context,
	ref map[forecastKey]sink.Message, fc *forecastCollector) {
	t.Helper()
	c := testCluster(t, int32(partitions), "series", "forecasts", "dlq")
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	ref = referenceForecasts(t, nSeries, n)
	fc = collectForecasts(ctx, c.ListenAddrs(), partitions, ref)
	t.Cleanup(func() { fc.stop(t) })
	return c.ListenAddrs(), ctx, ref, fc
}

// A restart continues every series from its checkpoint: the forecasts after
// it are bit-identical to an uninterrupted run (a series that started afresh
// would be in warm-up and publish nothing), and nothing is read twice.
func TestRestartRestoresFromStateTopic(t *testing.T) {
	const nSeries, n, cut = 6, 260, 170
	addrs, ctx, ref, fc := stateFixture(t, 4, nSeries, n, 90*time.Second)

	produceRange(ctx, t, addrs, nSeries, n, 0, cut)
	a := stateDaemon(t, addrs, 100)
	fc.waitFor(ctx, t, ref, cut)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(a.metrics.checkpointSeries); got < nSeries {
		t.Errorf("%v series checkpoints written, want ≥ %d", got, nSeries)
	}

	produceRange(ctx, t, addrs, nSeries, n, cut, n)
	b := stateDaemon(t, addrs, 100)
	fc.waitFor(ctx, t, ref, n)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(b.metrics.restored); got != nSeries {
		t.Errorf("%v series restored, want %d", got, nSeries)
	}
	if got := testutil.ToFloat64(b.metrics.skipped); got != 0 {
		t.Errorf("%v records skipped after a clean stop, want 0 (the commit covers them)", got)
	}
	fc.publishedOnce(t)
}

// Two instances share 8 partitions; one stops; the other takes over every
// partition — reading back the ones it did not own, keeping in memory the
// ones it did (nothing newer in the state topic) — and continues: every
// record has its forecast, bit-identical to an uninterrupted run.
func TestRebalanceHandsStateOver(t *testing.T) {
	const nSeries, n, cut = 16, 240, 160
	addrs, ctx, ref, fc := stateFixture(t, 8, nSeries, n, 120*time.Second)

	a := stateDaemon(t, addrs, 1000)
	defer a.Close()
	b := stateDaemon(t, addrs, 1000)
	// Both members own partitions before any record arrives.
	waitFor(ctx, t, "the two members to share the partitions", func() bool {
		return a.assigned.Load() > 0 && b.assigned.Load() > 0 && a.assigned.Load()+b.assigned.Load() == 8
	})
	produceRange(ctx, t, addrs, nSeries, n, 0, cut)
	fc.waitFor(ctx, t, ref, cut)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	produceRange(ctx, t, addrs, nSeries, n, cut, n)
	fc.waitFor(ctx, t, ref, n)
	waitFor(ctx, t, "a to own every partition", func() bool { return a.assigned.Load() == 8 })
	fromTopic := testutil.ToFloat64(a.metrics.restores.WithLabelValues("state_topic"))
	fromMemory := testutil.ToFloat64(a.metrics.restores.WithLabelValues("memory"))
	if fromMemory == 0 || fromTopic == 0 {
		t.Errorf("restores: %v from the state topic, %v from memory; want both (b's partitions read back, a's kept)",
			fromTopic, fromMemory)
	}
	if ready := httpGet(t, "http://"+a.Addr().String()+"/readyz"); strings.TrimSpace(ready) != "ok" {
		t.Errorf("readyz after the takeover: %q", ready)
	}
}

// A checkpoint acknowledged but its offset commit lost (a crash between the
// two): the next owner reads those records again and skips every one the
// checkpoint holds, so none is applied twice or published again — and
// rejected records of no series are not dead-lettered twice (the watermark).
func TestRecordsCoveredByACheckpointAreSkipped(t *testing.T) {
	const nSeries, n, cut = 5, 240, 150
	addrs, ctx, ref, fc := stateFixture(t, 4, nSeries, n, 90*time.Second)

	produceRange(ctx, t, addrs, nSeries, n, 0, cut)
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	for i := 0; i < 4; i++ { // records of no series: only the watermark covers them
		if err := w.WriteRecords(ctx, sink.Record{Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(`{"t":`)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	cfg := stateConfig(addrs, 50)
	cfg.refuseCommits = true
	a, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fc.waitFor(ctx, t, ref, cut)
	a.Close() // its final checkpoint is written, its final commit refused

	produceRange(ctx, t, addrs, nSeries, n, cut, n)
	b := stateDaemon(t, addrs, 50)
	fc.waitFor(ctx, t, ref, n)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(b.metrics.skipped); got != nSeries*cut+4 {
		t.Errorf("%v records skipped, want all %d the checkpoints hold", got, nSeries*cut+4)
	}
	if dead := topicRecords(ctx, t, addrs, "dlq", 4); dead != 4 {
		t.Errorf("%d dead letters for 4 bad records: the second owner sent them again", dead)
	}
	fc.publishedOnce(t)
}

// When the forecast topic cannot be written, the publisher retries, its
// queue fills and the partition goroutine blocks on it; Close must still
// return within the shutdown budget (80 % of the session timeout), without
// committing a record whose forecast was never published.
func TestCloseIsBoundedWhenPublishingFails(t *testing.T) {
	c := testCluster(t, 1, "series", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	produceRange(ctx, t, addrs, 2, 1500, 0, 1500)
	cfg := stateConfig(addrs, 50)
	cfg.ForecastTopic = "no-such-topic"
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the first record", func() bool { return testutil.ToFloat64(d.metrics.records) > 0 })
	time.Sleep(2 * time.Second) // the queue fills; the partition goroutine blocks on it
	if got := testutil.ToFloat64(d.metrics.records); got >= 3000 {
		t.Logf("all %v records handled before Close: the queue did not fill", got)
	}
	start := time.Now()
	d.Close()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Close took %v with the forecast topic unwritable", took)
	}
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: &kafka.Transport{}}
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"series": {0}}})
	if err != nil {
		t.Fatal(err)
	}
	// Warm-up records publish nothing and may be committed; the first
	// forecast is that of s0's 100th record, at offset 2·99.
	if off := resp.Topics["series"][0].CommittedOffset; off > 198 {
		t.Errorf("committed offset %d although no forecast was published", off)
	}
}

// topicRecords returns the number of records in topic (its partitions' end
// offsets summed).
func topicRecords(ctx context.Context, t *testing.T, addrs []string, topic string, partitions int) int64 {
	t.Helper()
	var n int64
	for p := 0; p < partitions; p++ {
		n += endOffset(ctx, t, addrs, topic, p)
	}
	return n
}

// endOffset returns the offset the next record of topic's partition gets.
func endOffset(ctx context.Context, t *testing.T, addrs []string, topic string, partition int) int64 {
	t.Helper()
	conn, err := kafka.DialLeader(ctx, "tcp", addrs[0], topic, partition)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	end, err := conn.ReadLastOffset()
	if err != nil {
		t.Fatal(err)
	}
	return end
}

// A partition checkpoints in steps: each step writes the changed series of
// one slot in checkpointSteps, not every series it changed, and the
// watermark it commits never passes a record whose series' checkpoint does
// not hold it. Driven record by record, without a broker, so that the steps
// fall where the record counts put them.
//
// With CheckpointRecords (every) below checkpointSteps there are as many
// steps as records, so that a change is still saved within every records.
func TestCheckpointStepsCoverTheWatermark(t *testing.T) {
	for _, every := range []int{200, 7} {
		t.Run(fmt.Sprintf("every=%d", every), func(t *testing.T) { checkpointStepsCoverTheWatermark(t, every) })
	}
}

func checkpointStepsCoverTheWatermark(t *testing.T, every int) {
	const nSeries, perSeries = 40, 150
	steps := min(checkpointSteps, every)
	stepRecords := int64(every / steps)
	cfg := stateConfig(nil, every)
	cfg.CheckpointEvery = time.Hour // only the record count decides
	d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory()}
	d.cfg.Decoder.Inputs = -1
	r := newPartitionRun(d, source.Partition{})
	r.dirty, r.store = newDirtySeries(steps), &checkpoint.Store{}
	reg, err := online.NewRegistry(r.registryConfig())
	if err != nil {
		t.Fatal(err)
	}
	r.reg = reg

	offsets := map[string][]int64{} // each series' input offsets, ascending
	saved := map[string]int64{}     // each series' checkpointed offset, as the state topic has it
	lastStep := map[string]int{}    // the step that last wrote each series
	written := map[string]int{}     // checkpoints of each series
	check := func(b pubBatch, watermark int64, step int, final bool) {
		t.Helper()
		slot := -1
		for _, e := range b.checkpoint[:len(b.checkpoint)-1] {
			saved[e.Key] = int64(binary.BigEndian.Uint64(e.Value[6:14])) // MarshalCheckpoint's position
			written[e.Key]++
			if s, ok := lastStep[e.Key]; ok && step-s < steps && !final {
				t.Fatalf("%s written at steps %d and %d", e.Key, s, step)
			}
			lastStep[e.Key] = step
			if slot >= 0 && checkpointSlot(e.Key, steps) != slot && !final {
				t.Fatalf("step %d writes slots %d and %d", step, slot, checkpointSlot(e.Key, steps))
			}
			slot = checkpointSlot(e.Key, steps)
		}
		if w := b.checkpoint[len(b.checkpoint)-1]; w.Key != watermarkKey || int64(binary.BigEndian.Uint64(w.Value)) != watermark {
			t.Fatalf("the step ends with %q, not the watermark %d", w.Key, watermark)
		}
		for id, offs := range offsets {
			i, _ := slices.BinarySearch(offs, watermark) // offs[:i] are below the watermark
			if i > 0 && saved[id] < offs[i-1] {
				t.Fatalf("watermark %d passes %s's record at %d, its checkpoint holds up to %d", watermark, id, offs[i-1], saved[id])
			}
		}
		// A change waits at most a cycle of steps for its slot.
		if lag := r.next - watermark; lag > int64(every)+stepRecords {
			t.Fatalf("at offset %d the watermark %d lags by %d > %d records", r.next, watermark, lag, int64(every)+stepRecords)
		}
	}
	step := 0
	for k := 0; k < perSeries; k++ {
		for s := 0; s < nSeries; s++ {
			id := fmt.Sprintf("s%d", s)
			off := int64(k*nSeries + s)
			r.handle(kafka.Message{Offset: off, Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(s, perSeries)[k]))})
			offsets[id] = append(offsets[id], off)
			b := pubBatch{commit: -1}
			if watermark, ok := r.checkpointStep(&b, false); ok {
				check(b, watermark, r.steps-1, false)
				r.committed = watermark
			}
			if r.steps > step+1 {
				t.Fatalf("%d steps at offset %d", r.steps, off)
			}
			step = r.steps
		}
	}
	if want := nSeries * perSeries / int(stepRecords); r.steps != want {
		t.Errorf("%d steps, want one every %d records (%d)", r.steps, stepRecords, want)
	}
	b := pubBatch{commit: -1}
	watermark, ok := r.checkpointStep(&b, true)
	if !ok || watermark != r.next || r.dirty.len() != 0 {
		t.Fatalf("final step: watermark %d (ok %v), want %d with nothing left unsaved (%d series)", watermark, ok, r.next, r.dirty.len())
	}
	check(b, watermark, r.steps-1, true)
	// Each series is written once a cycle of steps (every records) once its
	// first change is in, or at each change when it changes less often, and
	// by the final step.
	want := min(perSeries, (nSeries*perSeries-every)/every+1)
	for s := 0; s < nSeries; s++ {
		if id := fmt.Sprintf("s%d", s); written[id] < want {
			t.Errorf("%s checkpointed %d times, want ≥ %d", id, written[id], want)
		}
	}
}

func TestDirtySeriesKeepsTheFirstChangeInOrder(t *testing.T) {
	const slots = 3
	// ids[k] are series of slot k.
	var ids [slots][]string
	for i := 0; len(ids[0]) < 2 || len(ids[1]) < 2 || len(ids[2]) < 2; i++ {
		id := fmt.Sprintf("s%d", i)
		k := checkpointSlot(id, slots)
		ids[k] = append(ids[k], id)
	}
	a, b, c, e := ids[0][0], ids[1][0], ids[1][1], ids[2][0]
	d := newDirtySeries(slots)
	d.mark(a, 1)
	d.mark(b, 2)
	d.mark(a, 3) // already unsaved since 1
	d.mark(c, 4)
	d.mark(e, 5)
	if got := d.take(1, nil, nil); !slices.Equal(got, []string{b, c}) {
		t.Fatalf("slot 1 took %v, want %s, %s", got, b, c)
	}
	if first, ok := d.oldest(); !ok || first != 1 || d.len() != 2 {
		t.Fatalf("oldest %d %v of %d, want %s's 1 of 2", first, ok, d.len(), a)
	}
	if got := d.take(0, nil, nil); !slices.Equal(got, []string{a}) {
		t.Fatalf("slot 0 took %v, want %s", got, a)
	}
	if first, ok := d.oldest(); !ok || first != 5 {
		t.Fatalf("oldest %d %v, want %s's 5 (%s and %s taken before)", first, ok, e, b, c)
	}
	d.mark(a, 6) // changed again: marked anew
	d.mark(b, 7)
	if first, ok := d.oldest(); !ok || first != 5 {
		t.Fatalf("oldest %d %v, want %s's 5 still", first, ok, e)
	}
	got := d.take(-1, nil, nil)
	slices.Sort(got)
	want := []string{a, b, e}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("every slot took %v, want %v", got, want)
	}
	if _, ok := d.oldest(); ok || d.len() != 0 {
		t.Fatalf("not empty after taking everything: %d live", d.len())
	}
}

// TestStateBudgetEvicts: with a state budget of about three fitted series,
// ten series streaming in turn keep the state within the budget plus what
// one round of records can add before the summaries count it, evict the
// least recently used ones, and log the evictions naming the series; the
// series whose record is being handled is never the one evicted.
func TestStateBudgetEvicts(t *testing.T) {
	const nSeries, perSeries = 10, 60
	var logs logBuffer
	cfg := stateConfig(nil, 1000)
	cfg.Logger = logs.logger()
	d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory()}
	d.cfg.Decoder.Inputs = -1
	r := loosePartition(t, d)
	// One fitted series' size sets the budget.
	probe, _ := online.NewLearner(d.cfg.Registry.Default)
	for k, y := range series(0, perSeries) {
		probe.Observe(online.Observation{T: int64(k + 1), Y: y})
	}
	one := int64(probe.SizeBytes())
	d.cfg.StateBytes = 3 * one
	off := int64(0)
	maxSeen := int64(0)
	for k := range perSeries {
		for s := range nSeries {
			id := fmt.Sprintf("s%d", s)
			r.handle(kafka.Message{Offset: off, Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(s, perSeries)[k]))})
			off++
			if _, ok := r.reg.Lookup(id); !ok {
				t.Fatalf("record %d: series %s, just handled, was evicted", off, id)
			}
		}
		r.publishSummaries()
		maxSeen = max(maxSeen, d.stateBytes.Load())
	}
	t.Logf("one fitted series %d bytes; state peaked at %d; %d live", one, maxSeen, r.reg.Len())
	if ev := r.reg.Evicted(); ev == 0 {
		t.Error("no evictions")
	}
	// Between two evictions a round of nSeries records may grow the state
	// by at most nSeries fitted series.
	if limit := d.cfg.StateBytes + nSeries*one; maxSeen > limit {
		t.Errorf("state reached %d bytes, budget %d (+ one round %d)", maxSeen, d.cfg.StateBytes, nSeries*one)
	}
	if got := int64(testutil.ToFloat64(d.metrics.bytes)); got != d.stateBytes.Load() {
		t.Errorf("the gauge says %d bytes, the budget's count %d", got, d.stateBytes.Load())
	}
	if l := logs.String(); !strings.Contains(l, `"msg":"series evicted at the live-series cap or the state budget","series":"s`) {
		t.Errorf("no log line names an evicted series:\n%s", l)
	}
}
