package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// pooledRun is a partition run without a broker on d, with d's pool, a
// publisher queue the test reads and, with state, a checkpoint store that
// is never written (checkpointStep only encodes).
func pooledRun(t *testing.T, d *Daemon, withState bool) *partitionRun {
	t.Helper()
	r := newPartitionRun(d, source.Partition{})
	if withState {
		r.store = &checkpoint.Store{}
	}
	reg, err := online.NewRegistry(r.registryConfig())
	if err != nil {
		t.Fatal(err)
	}
	r.reg = reg
	r.pub = &publisher{r: r, queue: make(chan pubBatch, 1<<16)}
	t.Cleanup(func() {
		close(r.quit)
		d.pool.stop()
	})
	return r
}

// A record is committed, and with a state topic covered by the checkpoint
// watermark, only once its processing is done: while series "slow"'s first
// fit is held on its worker, the commit stops at that record, later records
// of the series wait in its queue, the series is never in a checkpoint,
// and every other series goes on (and is checkpointed). Once the fit is
// let go, the queue drains and the commit and checkpoints pass it.
func TestCommitAndCheckpointWaitForHeavyWork(t *testing.T) {
	for _, withState := range []bool{false, true} {
		t.Run(fmt.Sprintf("state=%v", withState), func(t *testing.T) {
			const nSeries, perSeries, slowRecords = 5, 120, 40
			cfg := stateConfig(nil, 20)
			cfg.CheckpointEvery, cfg.CommitEvery = time.Hour, time.Nanosecond
			release, blocked := make(chan struct{}), make(chan struct{}, 1)
			cfg.beforeHeavy = func(id string) {
				if id == "slow" {
					select {
					case blocked <- struct{}{}:
					default:
					}
					<-release
				}
			}
			d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory(), pool: newWorkerPool(2)}
			d.cfg.Decoder.Inputs = -1
			r := pooledRun(t, d, withState)
			ctx := context.Background()
			slowFit := int64(-1) // the offset of slow's 16th record
			check := func() {
				t.Helper()
				r.flush(ctx, false)
				for len(r.pub.queue) > 0 {
					b := <-r.pub.queue
					if slowFit >= 0 && b.commit > slowFit {
						t.Fatalf("commit %d passes slow's record at %d, whose fit is held", b.commit, slowFit)
					}
					for _, e := range b.checkpoint {
						if e.Key == "slow" && r.isBusy("slow") {
							t.Fatal("slow checkpointed while its worker holds its Learner")
						}
					}
				}
			}
			off := int64(0)
			for k := 0; k < perSeries; k++ {
				for s := 0; s <= nSeries; s++ {
					id, v := fmt.Sprintf("s%d", s), series(s, perSeries)[k]
					if s == nSeries {
						if k >= slowRecords {
							continue
						}
						id = "slow"
						if k == online.FirstFit-1 {
							slowFit = off
						}
					}
					r.handle(kafka.Message{Offset: off, Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, v))})
					off++
					r.completeReady()
					check()
				}
			}
			<-blocked
			for len(r.busy) > 1 || len(r.busy) == 1 && !r.isBusy("slow") { // the others' fits end
				r.heavyStep()
			}
			check()
			if want := slowRecords - online.FirstFit; r.queued != want {
				t.Errorf("%d records wait for slow, want %d", r.queued, want)
			}
			if !withState && r.committed != slowFit {
				t.Errorf("committed %d, want %d: every record before slow's fit is done", r.committed, slowFit)
			}
			if withState && r.committed > slowFit {
				t.Errorf("watermark %d passes slow's fit at %d", r.committed, slowFit)
			}
			close(release)
			// Its fit's completion takes catchUpBatch of its queued records
			// and leaves the rest for later turns of the partition's loop,
			// between its live records.
			r.complete(r.done.wait())
			if want := slowRecords - online.FirstFit - catchUpBatch; r.queued != want || !slices.Equal(r.resume, []string{"slow"}) {
				t.Errorf("after slow's fit: %d records wait, want %d; resume %v", r.queued, want, r.resume)
			}
			commit, saved := int64(0), false
			take := func(floor int64) {
				for len(r.pub.queue) > 0 {
					b := <-r.pub.queue
					if b.commit > floor {
						t.Fatalf("commit %d passes slow's oldest queued record at %d", b.commit, floor)
					}
					commit = max(commit, b.commit)
					for _, e := range b.checkpoint {
						if e.Key == "slow" && r.isBusy("slow") {
							t.Fatal("slow checkpointed while it catches up")
						}
						saved = saved || e.Key == "slow"
					}
				}
			}
			for len(r.busy) > 0 {
				r.heavyStep()
				// While slow catches up, the commit stops at its oldest
				// record not done (in flight, else the first queued) and
				// slow is not checkpointed.
				floor := int64(math.MaxInt64)
				if w := r.busy["slow"]; w != nil && w.job != nil {
					floor = w.job.item.m.Offset
				} else if w != nil && len(w.queue) > 0 {
					floor = w.queue[0].m.Offset
				}
				r.flush(ctx, false)
				take(floor)
			}
			if r.queued != 0 {
				t.Errorf("%d records still queued", r.queued)
			}
			r.flush(ctx, true)
			take(math.MaxInt64)
			if commit != off || (withState && !saved) {
				t.Errorf("final commit %d (want %d), slow checkpointed: %v", commit, off, saved)
			}
		})
	}
}

// With heavy work on workers that finish in a random order, each series'
// forecast messages (numbers and model) are those of a Learner fed its
// records directly, in order; what-if forecasts queued behind a series'
// work see the state of every record before them.
func TestPooledSeriesMatchTheirLearners(t *testing.T) {
	const nSeries, perSeries = 6, 260
	lc := learnerConfig()
	lc.AutoSigma2, lc.RetuneEvery, lc.Model.AutoGamma = true, 40, true
	cfg := stateConfig(nil, 100)
	cfg.Registry.Default = lc
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 7))
	var heavies atomic.Int64
	cfg.beforeHeavy = func(string) { // a random delay: completions come back in another order
		heavies.Add(1)
		mu.Lock()
		d := time.Duration(rng.IntN(3000)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
	}
	d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory(), pool: newWorkerPool(2)}
	d.cfg.Decoder.Inputs = -1
	r := pooledRun(t, d, true)
	type whatIf struct {
		id    string
		after int // records of the series before it
		q     *ownerReq
		steps []online.ForecastStep
	}
	var whatIfs []*whatIf
	off := int64(0)
	var got []*sink.Message
	interleaved := 0 // catch-up batches taken between live records
	for k := 0; k < perSeries; k++ {
		for s := 0; s < nSeries; s++ {
			id := fmt.Sprintf("s%d", s)
			r.handle(kafka.Message{Offset: off, Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(s, perSeries)[k]))})
			off++
			if k%50 == 20 && s == 2 {
				w := &whatIf{id: id, after: k + 1, steps: make([]online.ForecastStep, 7)}
				w.q = &ownerReq{ctx: context.Background(), id: id, done: make(chan error, 1),
					fn: func(l *online.Learner) { _ = l.Forecast(w.steps, nil) }}
				r.request(w.q)
				whatIfs = append(whatIfs, w)
			}
			r.completeReady()
			if k%2 == 0 { // a catch-up batch between live records, as the loop's select takes them
				select {
				case <-r.catchUpReady():
					r.resumeOne()
					interleaved++
				default:
				}
			}
		}
		got = append(got, r.pending...)
		r.pending = r.pending[:0]
	}
	for len(r.busy) > 0 {
		r.heavyStep()
	}
	got = append(got, r.pending...)
	// How many batches fall between live records depends on how fast the
	// workers finish (8–11 in runs on 2 cores): logged, not asserted;
	// TestCommitAndCheckpointWaitForHeavyWork holds a queue long enough.
	t.Logf("%d heavy Observes on the workers, %d catch-up batches between live records", heavies.Load(), interleaved)
	if heavies.Load() < nSeries*10 {
		t.Fatalf("only %d heavy Observes: the test does not exercise the pool", heavies.Load())
	}
	bySeries := map[string][]*sink.Message{}
	for _, m := range got {
		bySeries[m.Series] = append(bySeries[m.Series], m)
	}
	for s := 0; s < nSeries; s++ {
		id := fmt.Sprintf("s%d", s)
		l, _ := online.NewLearner(lc)
		var want []sink.Message
		var models []sink.ModelInfo
		for k, v := range series(s, perSeries) {
			res, err := l.Observe(online.Observation{T: int64(k + 1), Y: v})
			if err != nil {
				t.Fatal(err)
			}
			if res.Fitted || res.Forecast != nil {
				var m sink.Message
				SetResult(&m, id, int64(k+1), v, res)
				want, models = append(want, m), append(models, ModelInfoOf(l))
			}
			for _, w := range whatIfs {
				if w.id == id && w.after == k+1 {
					if err := <-w.q.done; err != nil {
						t.Fatal(err)
					}
					ref := make([]online.ForecastStep, 7)
					if err := l.Forecast(ref, nil); err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(ref, w.steps) {
						t.Errorf("%s: the what-if after %d records differs from the Learner's forecast then", id, w.after)
					}
				}
			}
		}
		if len(bySeries[id]) != len(want) {
			t.Fatalf("%s: %d messages, want %d", id, len(bySeries[id]), len(want))
		}
		for i, m := range bySeries[id] {
			if m.T != want[i].T {
				t.Fatalf("%s: message %d has t %d, want %d (out of order)", id, i, m.T, want[i].T)
			}
			if msg := sameForecast(*m, want[i]); msg != "" {
				t.Fatalf("%s t=%d: %s", id, m.T, msg)
			}
			if !reflect.DeepEqual(m.Model, models[i]) {
				t.Fatalf("%s t=%d: model %+v, want %+v", id, m.T, m.Model, models[i])
			}
		}
	}
}

// One series' heavy work delays no other series, over a broker: with one
// partition, while series s1's re-choice at its 32nd record is held on its
// worker, every forecast of the established series s0 — those of records
// after s1's too — is published, s0's what-if forecast answers, and s1's
// waits behind the re-choice; the commit stops at s1's record. Let go, s1
// catches up, and every forecast of both is bit-identical to a Learner run
// directly.
func TestHeavyWorkIsolatesItsSeries(t *testing.T) {
	c := testCluster(t, 1, "series", "forecasts", "dlq")
	addrs := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const n0, n1, before = 300, 40, 150 // s0's records, s1's; s0's records before s1's
	var recs []sink.Record
	add := func(s, from, to int) {
		for k := from; k < to; k++ {
			recs = append(recs, sink.Record{Key: []byte(fmt.Sprintf("s%d", s)),
				Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(s, n0)[k]))})
		}
	}
	// First s0's records up to before and s1's up to its 31st: s1 is fitted
	// and listed; the rest once it is.
	add(0, 0, before)
	add(1, 0, 2*online.FirstFit-1)
	heldAt := int64(len(recs)) // the offset of s1's 32nd record
	w, _ := sink.NewKafkaWriter(sink.KafkaConfig{Brokers: addrs, Topic: "series", Transport: &kafka.Transport{}})
	defer w.Close()
	if err := w.WriteRecords(ctx, recs...); err != nil {
		t.Fatal(err)
	}

	release, held := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	var s1Heavies atomic.Int64
	var mu sync.Mutex
	published := map[string][]sink.Message{}
	changed := make(chan struct{}, 1)
	cfg := Config{Brokers: addrs, Group: "g", InputTopics: []string{"series"}, ForecastTopic: "forecasts",
		DeadLetterTopic: "dlq", Decoder: source.Decoder{Fields: source.DefaultFields, MaxBytes: 4096},
		Registry: online.RegistryConfig{Default: learnerConfig()}, Listen: "127.0.0.1:0",
		SessionTimeout: 6 * time.Second, Transport: &kafka.Transport{}, Workers: 2,
		beforeHeavy: func(id string) {
			if id == "s1" && s1Heavies.Add(1) == 2 { // the fit at 16 runs; the re-choice at 32 is held
				close(held)
				<-release
			}
		},
		onPublished: func(fs []*sink.Message, _ time.Time) {
			mu.Lock()
			for _, f := range fs {
				published[f.Series] = append(published[f.Series], *f)
			}
			mu.Unlock()
			select {
			case changed <- struct{}{}:
			default:
			}
		}}
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	defer letGo() // before Close, which waits for the workers
	waitFor(ctx, t, "s1 listed", func() bool { _, _, ok := d.dir.lookup("s1"); return ok })
	n := len(recs)
	add(1, 2*online.FirstFit-1, n1)
	add(0, before, n0)
	if err := w.WriteRecords(ctx, recs[n:]...); err != nil {
		t.Fatal(err)
	}
	count := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(published[id])
	}
	// waitPublished waits until series id has want forecasts published.
	waitPublished := func(id string, want int) {
		t.Helper()
		for count(id) < want {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("%s: %d forecasts published, want %d", id, count(id), want)
			}
		}
	}
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("s1's re-choice never ran")
	}
	waitPublished("s0", n0-online.FirstFit+1) // all of s0's, while s1's re-choice is held
	if got, want := count("s1"), online.FirstFit; got != want {
		t.Errorf("s1 has %d forecasts while its re-choice is held, want %d (records %d..%d)", got, want, online.FirstFit, 2*online.FirstFit-1)
	}
	base := "http://" + d.Addr().String()
	s1WhatIf := make(chan string, 1)
	go func() {
		body, code := httpPost(t, base+"/v1/series/s1/forecast", `{"horizon": 7}`)
		s1WhatIf <- fmt.Sprint(code, " ", body)
	}()
	if body, code := httpPost(t, base+"/v1/series/s0/forecast", `{"horizon": 1000}`); code != http.StatusOK {
		t.Errorf("s0's what-if while s1 is held: %d %s", code, body)
	}
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: &kafka.Transport{}}
	committed := func() int64 {
		resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"series": {0}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Topics["series"][0].CommittedOffset
	}
	waitFor(ctx, t, "the commit up to s1's held record", func() bool { return committed() == heldAt })
	select {
	case got := <-s1WhatIf:
		t.Fatalf("s1's what-if answered (%s) while its re-choice is held", got)
	default:
	}
	letGo()
	waitPublished("s1", n1-online.FirstFit+1)
	got := <-s1WhatIf
	if !strings.HasPrefix(got, "200 ") {
		t.Fatalf("s1's what-if after the re-choice: %s", got)
	}
	waitFor(ctx, t, "the commit of every record", func() bool { return committed() == int64(len(recs)) })

	ref := referenceForecasts(t, 2, n0)
	mu.Lock()
	defer mu.Unlock()
	for s, n := range []int{n0, n1} {
		id := fmt.Sprintf("s%d", s)
		if len(published[id]) != n-online.FirstFit+1 {
			t.Fatalf("%s: %d forecasts, want %d", id, len(published[id]), n-online.FirstFit+1)
		}
		for i, m := range published[id] {
			if want := int64(online.FirstFit + i); m.T != want {
				t.Fatalf("%s: forecast %d has t %d, want %d", id, i, m.T, want)
			}
			if msg := sameForecast(m, ref[forecastKey{id, m.T}]); msg != "" {
				t.Fatalf("%s t=%d: %s", id, m.T, msg)
			}
		}
	}
	// s1's what-if ran after its 40 records, behind the held re-choice.
	direct, _ := online.NewLearner(learnerConfig())
	for k, v := range series(1, n1) {
		direct.Observe(online.Observation{T: int64(k + 1), Y: v})
	}
	steps := make([]online.ForecastStep, 7)
	if err := direct.Forecast(steps, nil); err != nil {
		t.Fatal(err)
	}
	var wi, want sink.Message
	SetSteps(&want, steps)
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got, "200 ")), &wi); err != nil || !reflect.DeepEqual(wi.Steps, want.Steps) {
		t.Errorf("s1's what-if %s (%v), want the steps of a Learner after its %d records", got, err, n1)
	}
}

// A shutdown while a series' fit is held on its worker abandons that work
// safely: Close returns once the fit ends, the committed offset (behind the
// state topic's watermark) stops before the held record, and the series
// is not parked or checkpointed past it; a daemon started afterwards reads
// the uncommitted records again and publishes every forecast, bit-identical
// to a Learner run directly.
func TestShutdownAbandonsHeavyWork(t *testing.T) {
	const nSeries, n = 2, 120
	addrs, ctx, ref, fc := stateFixture(t, 1, nSeries, n, 120*time.Second)
	produceRange(ctx, t, addrs, nSeries, n, 0, n)
	release, held := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo() // on a failure: Close waits for the workers
	var s1Heavies atomic.Int64
	cfg := stateConfig(addrs, 50)
	cfg.SessionTimeout = 6 * time.Second
	cfg.beforeHeavy = func(id string) {
		if id == "s1" && s1Heavies.Add(1) == 3 { // s1's re-choice at its 48th record
			close(held)
			<-release
		}
	}
	d, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("s1's re-choice never ran")
	}
	heldAt := int64(nSeries*(3*online.FirstFit-1) + 1) // s1's 48th record: records alternate s0, s1
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	waitFor(ctx, t, "the partition to end", func() bool { return d.assigned.Load() == 0 })
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a worker still runs", err)
	default:
	}
	letGo()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	client := &kafka.Client{Addr: kafka.TCP(addrs...), Transport: &kafka.Transport{}}
	resp, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: "g", Topics: map[string][]int{"series": {0}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.Topics["series"][0].CommittedOffset; c > heldAt {
		t.Fatalf("committed %d, past s1's held record at %d", c, heldAt)
	} else {
		t.Logf("committed %d; s1's held record at %d", c, heldAt)
	}
	d2 := stateDaemon(t, addrs, 50)
	fc.waitFor(ctx, t, ref, n)
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
}

// The pacer holds a worker to a quarter of a CPU only while a partition is
// behind its input: after 20 ms of work it pauses 3 × 20 ms when an input
// holds liveBehind records, and not at all when the inputs are short or
// their partition has stopped reading to wait for the pool.
// time.Sleep sleeps at least as long as asked, so the first bound is
// exact; the second only needs the pause to be absent.
func TestPacerYieldsOnlyWhilePartitionsAreBehind(t *testing.T) {
	p := &workerPool{}
	in := make(chan kafka.Message, 2*liveBehind)
	stalled := p.watch(in)
	defer p.unwatch(in)
	pc := &pacer{pool: p}
	work := 20 * time.Millisecond
	for range liveBehind - 1 {
		in <- kafka.Message{}
	}
	pc.since = time.Now().Add(-work)
	start := time.Now()
	pc.pace()
	if d := time.Since(start); d >= work {
		t.Errorf("%d records waiting (fewer than %d): paused %v", len(in), liveBehind, d)
	}
	in <- kafka.Message{}
	pc.since = time.Now().Add(-work)
	start = time.Now()
	pc.pace()
	if d := time.Since(start); d < yieldRatio*work {
		t.Errorf("%d records waiting: paused %v, want at least %v", len(in), d, yieldRatio*work)
	}
	// A partition that stopped reading waits for the pool: no pause.
	stalled.Store(true)
	pc.since = time.Now().Add(-work)
	start = time.Now()
	pc.pace()
	if d := time.Since(start); d >= work {
		t.Errorf("%d records waiting at a stalled partition: paused %v", len(in), d)
	}
	stalled.Store(false)
	p.unwatch(in)
	pc.since = time.Now().Add(-work)
	start = time.Now()
	pc.pace()
	if d := time.Since(start); d >= work {
		t.Errorf("no input watched: paused %v", d)
	}
}

// The what-if lane runs one forecast at a time; while a partition is
// behind its input it pauses yieldRatio times the previous forecast's
// duration first, and a context that ends during the pause gets its error
// back without the forecast running, leaving the lane free.
func TestWhatIfLanePausesWhileBehind(t *testing.T) {
	lane, in := watchedLane(t)
	ctx := context.Background()
	run := func(ctx context.Context, d time.Duration) (time.Duration, bool, error) {
		ran := false
		start := time.Now()
		err := lane.run(ctx, func() { ran = true; time.Sleep(d) })
		return time.Since(start), ran, err
	}
	const work = 20 * time.Millisecond
	if _, ran, err := run(ctx, work); !ran || err != nil { // no partition behind: at once
		t.Fatalf("first forecast: ran %v, %v", ran, err)
	}
	for range liveBehind {
		in <- kafka.Message{}
	}
	if d, ran, err := run(ctx, 0); !ran || err != nil || d < yieldRatio*work {
		t.Errorf("behind: took %v (ran %v, %v), want a pause of at least %v", d, ran, err, yieldRatio*work)
	}
	if _, _, err := run(ctx, work); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, work)
	defer cancel()
	if d, ran, err := run(short, 0); ran || err == nil {
		t.Errorf("a context ending in the pause: ran %v, %v after %v", ran, err, d)
	}
	if len(lane.slot) != 0 || lane.waiting.Load() != 0 {
		t.Errorf("lane left with %d slot, %d waiting", len(lane.slot), lane.waiting.Load())
	}
}

// With no partition behind, a forecast runs at once while no other waits
// for the lane, and pauses yieldRatio times the previous one's duration
// while one does: clients sending them back to back get a quarter of a
// CPU, a lone client all of it.
func TestWhatIfLanePausesWhileRequestsQueue(t *testing.T) {
	lane, _ := watchedLane(t)
	ctx := context.Background()
	const work = 20 * time.Millisecond
	if err := lane.run(ctx, func() { time.Sleep(work) }); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := lane.run(ctx, func() {}); err != nil || time.Since(start) > work {
		t.Fatalf("alone: %v after %v, want at once", err, time.Since(start))
	}
	if err := lane.run(ctx, func() { time.Sleep(work) }); err != nil {
		t.Fatal(err)
	}
	lane.waiting.Add(1) // as a request waiting for the slot counts itself
	start = time.Now()
	err := lane.run(ctx, func() {})
	lane.waiting.Add(-1)
	if d := time.Since(start); err != nil || d < yieldRatio*work {
		t.Errorf("another waiting: %v after %v, want a pause of at least %v", err, d, yieldRatio*work)
	}
}

// A heavy job hands its worker's pause on to the Learner: a first fit with
// a width search pauses before each of its fits (about 20), so that the
// pacer can hold a re-choice of seconds while a partition is behind its
// input, not only between jobs; a light job never pauses within.
func TestHeavyJobPausesWithinItsObserve(t *testing.T) {
	lc := learnerConfig()
	lc.AutoSigma2 = true
	l, err := online.NewLearner(lc)
	if err != nil {
		t.Fatal(err)
	}
	d := &Daemon{metrics: newMetrics()}
	r := &partitionRun{d: d, heavyWork: heavyWork{quit: make(chan struct{}), done: newCompletions()}}
	ys := series(1, lc.Warmup+1)
	for k, y := range ys {
		rec := source.Record{Series: "s", T: int64(k + 1), Y: y}
		heavy := l.Heavy(observation(rec))
		pauses := 0
		j := &heavyJob{r: r, id: "s", l: l, item: workItem{rec: rec}}
		j.run(func() { pauses++ })
		if j.err != nil {
			t.Fatalf("value %d: %v", k+1, j.err)
		}
		if heavy && pauses < 10 || !heavy && pauses > 0 {
			t.Fatalf("value %d: Heavy %v, %d pauses within the job", k+1, heavy, pauses)
		}
	}
	if !l.Fitted() || len(r.done.jobs) != len(ys) {
		t.Fatalf("fitted %v, %d completions of %d jobs", l.Fitted(), len(r.done.jobs), len(ys))
	}
}

// watchedLane returns a what-if lane of a pool watching one partition's
// input, in, empty: no partition behind.
func watchedLane(t *testing.T) (*whatIfLane, chan kafka.Message) {
	p := &workerPool{}
	in := make(chan kafka.Message, 2*liveBehind)
	p.watch(in)
	t.Cleanup(func() { p.unwatch(in) })
	lane := newWhatIfLane()
	lane.pool = p
	return lane, in
}

// At the registry's cap with every live series catching up on its queue
// (busy, no job in flight), a record of a new series works their catch-up
// down to make room instead of waiting for a completion that never comes:
// the record is taken, an idle series evicted for it, and every record
// processed.
func TestMakeRoomAtTheCapWhileSeriesCatchUp(t *testing.T) {
	cfg := stateConfig(nil, 20)
	cfg.Registry.MaxSeries = 2
	cfg.Logger = slog.New(slog.DiscardHandler) // the eviction is logged
	release := make(chan struct{})
	cfg.beforeHeavy = func(string) { <-release }
	d := &Daemon{cfg: cfg, metrics: newMetrics(), dir: newDirectory(), pool: newWorkerPool(2)}
	d.cfg.Decoder.Inputs = -1
	r := pooledRun(t, d, false)
	off := int64(0)
	feed := func(id string, k int) {
		r.handle(kafka.Message{Offset: off, Key: []byte(id), Value: []byte(fmt.Sprintf(`{"t":%d,"y":%.17g}`, k+1, series(int(id[0]), 64)[k]))})
		off++
	}
	const n = online.FirstFit + 10 // each series' fit at FirstFit, then 10 records queued behind it
	for k := range n {
		feed("a", k)
		feed("b", k)
	}
	close(release)
	for len(r.busy) > 0 && len(r.resume) < 2 { // both fits complete; both series catch up
		r.complete(r.done.wait())
	}
	if len(r.resume) != 2 || r.queued == 0 {
		t.Fatalf("resume %v with %d records queued: the test does not reach the cap with series catching up", r.resume, r.queued)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		feed("c", 0)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a new series' record waits for a completion at the cap")
	}
	for len(r.busy) > 0 {
		r.heavyStep()
	}
	if r.queued != 0 || r.reg.Len() != 2 {
		t.Errorf("%d records queued, %d series live, want 0 and 2", r.queued, r.reg.Len())
	}
}
