package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/calendar"
	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/reject"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// partitionRun is the state of one assigned partition. It is owned by the
// partition's goroutine: the registry's Learners are touched by nothing
// else, but for the Learner of a busy series, which the worker running its
// heavy work owns meanwhile (pool.go).
type partitionRun struct {
	d        *Daemon
	p        source.Partition
	reg      *online.Registry
	pending  []*sink.Message
	stamps   []time.Time // pending[i]'s record timestamp
	dead     []sink.Record
	next     int64 // offset after the last handled record; -1 before any
	lastLive int
	evicted  int64
	bytes    map[string]int // last published SizeBytes per series
	// committed is the last offset handed to the publisher to commit,
	// lastCommit when.
	committed  int64
	lastCommit time.Time
	// Rejects, evictions and failed fits are logged at most once a second
	// each (they can arrive in floods), with the count not logged since.
	rejectLog, evictLog, fitLog, unitLog logLimit
	// timeKind says, per series, whether its t are times (else sequence
	// numbers), from its first record taken; kept in its checkpoint's meta
	// (summaryMeta) and with a parked partition, so that a restart or a
	// rebalance does not let one record of the other kind in.
	timeKind map[string]bool

	// touched holds the latest message of each series changed since the last
	// flush (nil for a series still in warm-up); its summary is published to
	// the directory at the flush.
	touched map[string]*sink.Message
	scores  map[string]*oneStep
	// hist holds each series' recent observations for the web view.
	hist map[string]*history
	// pub publishes the flushed batches; unsent is a batch that could not be
	// queued before the context ended (the next flush sends it first).
	pub    *publisher
	unsent *pubBatch
	// watermark is the input offset the last restored checkpoint covers:
	// every record below it is in the restored state (or was rejected, or
	// belongs to a series evicted since), so it is skipped unread.
	watermark int64
	checkpointing
	// reqs carries the HTTP API's work on a series' Learner (what-if
	// forecasts), which this goroutine runs or hands to a worker; gone is
	// closed when the partition run ends.
	reqs chan *ownerReq
	gone chan struct{}
	heavyWork
}

// checkpointing is a partition's checkpoint state (state.go), with a state
// topic: store writes the partition's checkpoints; applied holds each
// series' last input offset, dirty the series changed (or evicted) since
// their last checkpoint, by checkpoint slot, stateEnd the state
// partition's end offset when restored; steps counts the checkpoint
// steps, the last at lastStep with the partition's next offset at
// stepNext; dueIDs is a step's buffer.
type checkpointing struct {
	store    *checkpoint.Store
	applied  map[string]int64
	dirty    dirtySeries
	stateEnd int64
	steps    int
	lastStep time.Time
	stepNext int64
	dueIDs   []string
}

// heavyWork is a partition's side of the worker pool (pool.go): busy holds
// the series whose Learner a worker owns, with the records and requests
// waiting for it; queued counts the records waiting; done brings the
// workers' completions back; quit is closed when the partition stops
// taking them.
type heavyWork struct {
	busy   map[string]*seriesWork
	queued int
	// resume lists the busy series with no job in flight and records left
	// to catch up on (catchUp), in the order they get their next batch.
	resume []string
	done   *completions
	quit   chan struct{}
	// stalled tells the pool this partition is not reading its input
	// (workerPool.behind); nil without a pool.
	stalled *atomic.Bool
}

// newPartitionRun returns the run of partition p of d, before its restore.
func newPartitionRun(d *Daemon, p source.Partition) *partitionRun {
	r := &partitionRun{d: d, p: p, next: -1, committed: -1, watermark: -1, touched: map[string]*sink.Message{}, scores: map[string]*oneStep{},
		hist: map[string]*history{}, bytes: map[string]int{}, reqs: make(chan *ownerReq), gone: make(chan struct{}),
		checkpointing: checkpointing{store: d.stores[p.Topic], applied: map[string]int64{}, lastStep: time.Now()},
		heavyWork:     heavyWork{quit: make(chan struct{}), done: newCompletions()}}
	r.dirty = newDirtySeries(r.stepsPerInterval())
	return r
}

// partition handles one assigned partition until its generation ends. With
// a state topic, the partition's series are first restored (state.go), and
// records their checkpoints already cover are skipped. Every other record is
// decoded, learned and, when it yields one, its forecast queued; queued
// results are published (forecasts, then dead letters) every FlushEvery or
// flushBatch records, and the input offset committed after them — with a
// state topic, only after checkpoints covering them were acknowledged. So a
// committed offset never covers an unpublished result or an unsaved state:
// after a crash the uncommitted records are read again.
func (d *Daemon) partition(ctx context.Context, p source.Partition) {
	d.assigned.Add(1)
	defer d.assigned.Add(-1)
	r := newPartitionRun(d, p)
	if d.pool != nil {
		r.stalled = d.pool.watch(p.Messages)
		r.stalled.Store(true) // not reading its input until restored
		defer d.pool.unwatch(p.Messages)
	}
	if r.store != nil {
		if !r.restore(ctx) {
			d.restoring.Add(-1)
			return
		}
	} else {
		reg, err := online.NewRegistry(r.registryConfig())
		if err != nil { // validated in Open
			d.cfg.Logger.Error("partition: registry", "err", err)
			d.restoring.Add(-1)
			return
		}
		r.reg = reg
	}
	d.restoring.Add(-1)
	r.pub = startPublisher(r, r.stateEnd)
	defer func() { // after flushFinal: the publisher is done
		close(r.gone)
		d.busySeries.Add(-int64(len(r.busy))) // abandoned by settle
		// A busy series (its work abandoned by settle) is dirty: such a
		// partition is not parked.
		park := r.store != nil && r.dirty.len() == 0 && len(r.busy) == 0 && r.unsent == nil && !r.pub.behind && r.next <= r.pub.committed
		var latest map[string]*sink.Message
		if park {
			latest = map[string]*sink.Message{}
			for _, id := range r.reg.IDs() {
				if _, s, ok := d.dir.lookup(id); ok && s.Latest != nil {
					latest[id] = s.Latest
				}
			}
		}
		d.dir.drop(r, r.reg.IDs()...)
		d.metrics.series.Sub(float64(r.lastLive))
		for _, b := range r.bytes {
			d.metrics.bytes.Sub(float64(b))
			d.stateBytes.Add(-int64(b))
		}
		if park {
			d.parking.put(partitionKey{Topic: p.Topic, ID: p.ID}, &parked{reg: r.reg, applied: r.applied,
				stateEnd: r.pub.stateEnd, watermark: r.watermark, scores: r.scores, latest: latest, timeKind: r.timeKind})
		}
	}()
	tick := time.NewTicker(d.cfg.FlushEvery)
	defer tick.Stop()
	// Results go out when the batch is full or the partition has caught up
	// (no record waiting) while the publisher is idle: a live record's
	// forecast does not wait for the tick, and behind a write under way the
	// results gather into one batch.
	flushIfDue := func() {
		if n := len(r.pending) + len(r.dead); n >= flushBatch || n > 0 && len(p.Messages) == 0 && len(r.pub.queue) == 0 {
			r.flush(ctx, false)
		}
	}
	for {
		in := p.Messages
		if r.queued >= maxQueued { // busy series hold enough records: wait for their work
			in = nil
		}
		if r.stalled != nil && r.stalled.Load() != (in == nil) {
			r.stalled.Store(in == nil)
		}
		select {
		case <-r.catchUpReady():
			r.resumeOne()
			flushIfDue()
		case m, ok := <-in:
			if !ok {
				r.flushFinal()
				return
			}
			r.handle(m)
			flushIfDue()
		case <-r.done.ready:
			r.completeReady()
			flushIfDue()
		case <-tick.C:
			r.flush(ctx, false)
		case q := <-r.reqs:
			r.request(q)
		case <-ctx.Done():
			r.flushFinal()
			return
		}
	}
}

// catchUpReady returns a channel that is ready while a busy series has
// records to catch up on (r.resume), else nil. A select case on it competes
// with the live records, the completions and the tick, and Go picks
// uniformly among the ready cases, so catch-up batches and live records
// take turns.
func (r *partitionRun) catchUpReady() <-chan struct{} {
	if len(r.resume) == 0 {
		return nil
	}
	return closedChan
}

// closedChan is always ready.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// registryConfig is the daemon's registry configuration with r's eviction
// callback.
func (r *partitionRun) registryConfig() online.RegistryConfig {
	rc := r.d.cfg.Registry
	rc.OnEvict = r.onEvict
	return rc
}

// onEvict forgets an evicted series; with a state topic its checkpoint is
// deleted at the next checkpoint (a tombstone), so a restore cannot revive a
// state the uninterrupted run no longer has.
func (r *partitionRun) onEvict(id string) {
	// An eviction loses a series' model: say which, at most once a second
	// (a flood of new ids evicts at the rate records arrive).
	if skipped, ok := r.evictLog.allow(); ok {
		r.d.cfg.Logger.Warn("series evicted at the live-series cap or the state budget", "series", id, "topic", r.p.Topic, "partition", r.p.ID,
			"max_series", r.d.cfg.Registry.MaxSeries, "state_bytes", r.d.stateBytes.Load(), "state_budget_bytes", r.d.cfg.StateBytes,
			"evicted_since_last_log", skipped)
	}
	r.d.dir.drop(r, id)
	delete(r.touched, id)
	delete(r.scores, id)
	delete(r.hist, id)
	delete(r.timeKind, id)
	r.d.metrics.bytes.Sub(float64(r.bytes[id]))
	r.d.stateBytes.Add(-int64(r.bytes[id]))
	delete(r.bytes, id)
	delete(r.applied, id)
	if r.store != nil {
		// Its tombstone must be written before the commit passes the
		// record that evicted it (r.next−1), or, restoring more series
		// than the cap, the restored watermark.
		r.dirty.mark(id, max(r.next-1, r.watermark))
	}
}

func (r *partitionRun) handle(m kafka.Message) {
	d := r.d
	d.metrics.records.Inc()
	r.next = m.Offset + 1
	if m.Offset < r.watermark {
		d.metrics.skipped.Inc() // read again after a lost commit: the restored state holds it
		return
	}
	rec, err := d.cfg.Decoder.Decode(m.Key, m.Value, m.Time)
	if err != nil {
		var re *reject.Error
		if errors.As(err, &re) {
			r.reject(m, re.Reason, re.Detail)
		}
		return
	}
	if pos, ok := r.applied[rec.Series]; ok && m.Offset <= pos {
		d.metrics.skipped.Inc() // replayed after a restart: the series' state holds it
		return
	}
	w := r.busy[rec.Series]
	if w == nil && len(r.busy) > 0 {
		r.makeRoom(rec.Series)
	}
	// For a busy series Get only marks it the most recently used, as the
	// record makes it; its Learner is the worker's.
	l, created, err := r.reg.Get(rec.Series)
	if err != nil {
		d.cfg.Logger.Error("series: learner", "err", err)
		return
	}
	if created {
		r.evictForBudget()
	}
	if r.store != nil {
		// Whatever Observe does with the record (learn, buffer, reject), the
		// series has now seen it, or will before it is checkpointed: a busy
		// series is not.
		r.applied[rec.Series] = m.Offset
		r.dirty.mark(rec.Series, m.Offset)
	}
	if w != nil {
		w.queue = append(w.queue, workItem{m: m, rec: rec})
		r.queued++
		return
	}
	r.observe(l, m, rec)
}

// observe has series rec.Series' Learner l, owned by the partition
// goroutine, take record m: inline when its Observe is light (or there is
// no pool), else on a worker (dispatch), and then it reports true: the
// series is busy and the record finished at its completion.
func (r *partitionRun) observe(l *online.Learner, m kafka.Message, rec source.Record) (dispatched bool) {
	// A series' t keeps to one kind (source.Record): a time after
	// sequence numbers, or the reverse, would be compared as numbers of
	// another scale. Known from the series' first record taken, across
	// restarts and rebalances.
	if isTime, ok := r.timeKind[rec.Series]; ok && isTime != rec.IsTime {
		r.reject(m, reject.BadTime, fmt.Sprintf("series %s has %s; this record has %s",
			rec.Series, timeKindName(isTime), timeKindName(rec.IsTime)))
		return false
	}
	if r.d.pool != nil && l.Heavy(observation(rec)) {
		r.dispatch(rec.Series, l, workItem{m: m, rec: rec})
		return true
	}
	res, err := l.Observe(observation(rec))
	r.finish(l, m, rec, res, err)
	return false
}

// finish does what a record's Observe result calls for: its reject or
// failure, the series' time kind, history and scores, and its forecast
// message. l is owned by the partition goroutine again.
func (r *partitionRun) finish(l *online.Learner, m kafka.Message, rec source.Record, res online.Result, err error) {
	d := r.d
	var re *reject.Error
	switch {
	case errors.As(err, &re):
		r.reject(m, re.Reason, re.Detail)
		return
	case err != nil:
		d.metrics.fitFailed.Inc()
		r.logFitFailure(rec.Series, err)
		return
	}
	if r.timeKind == nil {
		r.timeKind = map[string]bool{}
	}
	if _, known := r.timeKind[rec.Series]; !known {
		// Once known the kind stays (observe refuses a change).
		r.timeKind[rec.Series] = rec.IsTime
		if rec.UnixInteger || !rec.IsTime { // an integer t: a Unix time, or a sequence number
			r.checkUnit(rec)
		}
	}
	if res.Filled > 0 {
		d.metrics.gapFilled.Add(float64(res.Filled))
	}
	if res.Outlier {
		d.metrics.outliers.Inc()
	}
	if res.ShiftStarted {
		d.metrics.levelShifts.Inc()
	}
	if res.Restarted {
		d.metrics.restarts.Inc()
	}
	// A young series' forecast is all fallback by design: the counter is
	// of models that leave the plausible.
	if l.Fitted() && (res.Fallback || slices.ContainsFunc(res.Forecast, func(s online.ForecastStep) bool { return s.Fallback })) {
		d.metrics.fallbacks.Inc()
	}
	h := r.hist[rec.Series]
	if h == nil {
		if r.hist == nil {
			r.hist = map[string]*history{}
		}
		h = &history{}
		r.hist[rec.Series] = h
	}
	h.add(HistoryPoint{T: rec.T, Y: rec.Y, Fitted: res.Fitted, Prediction: res.Prediction, Std: res.Std, Outlier: res.Outlier})
	if !res.Fitted && res.Forecast == nil {
		if _, ok := r.touched[rec.Series]; !ok {
			r.touched[rec.Series] = nil // in warm-up: listed, no forecast yet
		}
		return
	}
	if res.Fitted {
		sc := r.scores[rec.Series]
		if sc == nil {
			sc = &oneStep{}
			r.scores[rec.Series] = sc
		}
		sc.add(res.Residual, res.Std)
	}
	msg := &sink.Message{IssuedAt: time.Now().UTC()}
	SetResult(msg, rec.Series, rec.T, rec.Y, res)
	msg.Model = ModelInfoOf(l)
	r.pending = append(r.pending, msg)
	r.stamps = append(r.stamps, m.Time)
	r.touched[rec.Series] = msg
}

// timeKindName names a kind of t for a reject's detail.
func timeKindName(isTime bool) string {
	if isTime {
		return "times"
	}
	return "sequence numbers"
}

// logFitFailure logs a failed warm-up fit with its series, at most once a
// second per partition (a series that cannot fit retries at every record),
// with the count of those not logged since.
func (r *partitionRun) logFitFailure(id string, err error) {
	if skipped, ok := r.fitLog.allow(); ok {
		r.d.cfg.Logger.Warn("series: fit failed; the series keeps buffering and retries", "series", id,
			"partition", r.p.ID, "err", err, "failed_since_last_log", skipped)
	}
}

// checkUnit logs (at a bounded rate) a new series whose first t, an
// integer Unix time, looks like the other time unit's: epoch seconds read
// as milliseconds fall in 1970, milliseconds read as seconds after the
// year 5138, and the series' steps and calendar features with them.
func (r *partitionRun) checkUnit(rec source.Record) {
	hint := calendar.UnitHint(rec.T, rec.T, r.d.cfg.Decoder.Unit)
	if hint == "" {
		return
	}
	r.d.metrics.unitSuspect.Inc()
	if skipped, ok := r.unitLog.allow(); ok {
		r.d.cfg.Logger.Warn("series time unit looks wrong", "series", strconv.Quote(rec.Series[:min(len(rec.Series), 64)]),
			"t_ms", rec.T, "hint", hint, "suspect_since_last_log", skipped)
	}
}

// logLimit lets a kind of log line through at most once a second.
type logLimit struct {
	last    time.Time
	skipped int
}

// allow reports whether a line may be logged now, and how many were held
// back since the last one; when it may not, it counts this one.
func (l *logLimit) allow() (skipped int, ok bool) {
	if now := time.Now(); now.Sub(l.last) >= time.Second {
		skipped, l.last, l.skipped = l.skipped, now, 0
		return skipped, true
	}
	l.skipped++
	return 0, false
}

// oneStep accumulates a series' one-step scores.
type oneStep struct {
	n, in int64
	sse   float64
}

func (s *oneStep) add(residual, std float64) {
	s.n++
	s.sse += residual * residual
	if math.Abs(residual) <= 1.959963984540054*std {
		s.in++
	}
}

// histLen is the number of recent observations of a series the web view
// shows.
const histLen = 200

// history is a series' recent observations, kept by the partition goroutine
// and published with its summary. buf is append-only: when it is full, the
// last histLen−1 points move to a new buffer, and the old one is never
// written again, so a published view (a slice of it up to its length, which
// the writer only appends beyond) is read without a lock. Memory: buf holds
// at most 2·histLen points (2 · 200 · 40 B = 16 kB a series), plus, until
// the next flush publishes a newer summary, the buffer it replaced.
type history struct {
	buf []HistoryPoint
}

// add appends p. It allocates only when buf is full: once per histLen points
// at the full size, fewer while the buffer grows from 16 points.
func (h *history) add(p HistoryPoint) {
	if len(h.buf) == cap(h.buf) {
		keep := h.buf[max(0, len(h.buf)-histLen+1):]
		nb := make([]HistoryPoint, len(keep), max(16, min(2*cap(h.buf), 2*histLen)))
		copy(nb, keep)
		h.buf = nb
	}
	h.buf = append(h.buf, p)
}

// view returns the last histLen points (at most), for readers on other
// goroutines: its capacity ends at its length, so nobody appends to it.
func (h *history) view() []HistoryPoint {
	n := len(h.buf)
	return h.buf[max(0, n-histLen):n:n]
}

// sizeBytes is the memory of buf.
func (h *history) sizeBytes() int { return cap(h.buf) * int(unsafe.Sizeof(HistoryPoint{})) }

// publishSummaries puts the touched series' summaries in the directory and
// wakes the web view's event streams when there were any.
func (r *partitionRun) publishSummaries() {
	if len(r.touched) == 0 {
		return
	}
	now := time.Now().UTC()
	defer r.d.dir.notify()
	for id, msg := range r.touched {
		if r.isBusy(id) {
			continue // a worker owns its Learner: published at a flush after its work
		}
		l, ok := r.reg.Lookup(id)
		if !ok {
			continue
		}
		h := r.hist[id]
		size := l.SizeBytes()
		if h != nil {
			size += h.sizeBytes()
		}
		r.d.metrics.bytes.Add(float64(size - r.bytes[id]))
		r.d.stateBytes.Add(int64(size - r.bytes[id]))
		r.bytes[id] = size
		s := SeriesSummary{ID: id, Partition: r.p.ID, Topic: r.p.Topic, LastT: l.LastT(), Fitted: l.Fitted(),
			Outliers: l.Outliers(), Bytes: size, Latest: msg, Updated: now, Level: optFloat(l.Config().Level)}
		if h != nil {
			s.History = h.view()
		}
		if isTime, ok := r.timeKind[id]; ok {
			s.Time = &isTime
		}
		s.Model = ModelInfoOf(l)
		s.OneStepRMS, s.Coverage95 = optFloat(math.NaN()), optFloat(math.NaN()) // null: nothing predicted yet
		if sc := r.scores[id]; sc != nil && sc.n > 0 {
			s.Predicted, s.OneStepRMS = sc.n, optFloat(math.Sqrt(sc.sse/float64(sc.n)))
			s.Coverage95 = optFloat(float64(sc.in) / float64(sc.n))
		}
		if msg == nil { // nothing new to show: keep the last published forecast
			if _, old, ok := r.d.dir.lookup(id); ok {
				s.Latest = old.Latest
			}
		}
		r.d.dir.publish(r, s)
		delete(r.touched, id)
	}
	// The budget holds as series grow, not only when one is created (handle).
	r.evictForBudget()
}

// reject counts m under reason, logs it (at a bounded rate) and queues its
// dead letter, which names its origin as topic/partition/offset.
func (r *partitionRun) reject(m kafka.Message, reason reject.Reason, detail string) {
	origin := fmt.Sprintf("%s/%d/%d", m.Topic, m.Partition, m.Offset)
	r.d.metrics.rejected.WithLabelValues(string(reason)).Inc()
	// Bad input can arrive in floods: log at most one line a second, with
	// the count of those not logged since. The key (the series, unless the
	// record names another) is quoted and cut: it may be anything.
	if skipped, ok := r.rejectLog.allow(); ok {
		key := m.Key[:min(len(m.Key), 64)]
		r.d.cfg.Logger.Warn("record rejected", "reason", reason, "detail", detail, "key", strconv.Quote(string(key)),
			"origin", origin, "rejected_since_last_log", skipped)
	}
	rec, truncated := sink.DeadLetterRecord(m.Key, m.Value, string(reason), detail, origin, r.d.cfg.DeadLetterMaxBytes)
	if truncated {
		r.d.metrics.deadTruncated.Inc()
	}
	r.dead = append(r.dead, rec)
}

// flush hands the queued results to the publisher (publish.go), with, when
// one is due, a commit of the input offset they cover: with a state topic,
// a checkpoint step first (the series due, state.go) and the commit of the
// offset the checkpoints then cover; without one, every CommitEvery; and
// everything when final. It blocks only when the publisher's queue is full.
func (r *partitionRun) flush(ctx context.Context, final bool) bool {
	d := r.d
	b := pubBatch{commit: -1}
	// The batch takes the queued slices to the publisher; the next are sized
	// like this one (a flush of a live trickle stays small, a backlog's full).
	if len(r.pending) > 0 {
		b.forecasts, b.stamps = r.pending, r.stamps
		r.pending, r.stamps = make([]*sink.Message, 0, len(b.forecasts)), make([]time.Time, 0, len(b.forecasts))
	}
	if len(r.dead) > 0 {
		b.dead, r.dead = r.dead, nil
	}
	r.publishSummaries()
	if live := r.reg.Len(); live != r.lastLive {
		d.metrics.series.Add(float64(live - r.lastLive))
		r.lastLive = live
	}
	if ev := r.reg.Evicted(); ev != r.evicted {
		d.metrics.evicted.Add(float64(ev - r.evicted))
		r.evicted = ev
	}
	switch {
	case r.store != nil:
		if watermark, ok := r.checkpointStep(&b, final); ok {
			b.commit = watermark
		}
	default:
		// Not past a record still waiting for its series' work.
		next := r.next
		if floor, ok := r.pendingFloor(); ok && floor < next {
			next = floor
		}
		if next > r.committed && (final || time.Since(r.lastCommit) >= d.cfg.CommitEvery) {
			b.commit = next
		}
	}
	if b.commit >= 0 {
		r.committed, r.lastCommit = b.commit, time.Now()
	}
	if r.unsent != nil { // a batch that could not be queued goes first
		u := *r.unsent
		u.append(b)
		b, r.unsent = u, nil
	}
	if b.empty() {
		return true
	}
	select {
	case r.pub.queue <- b:
		return true
	case <-ctx.Done():
		r.unsent = &b
		return false
	}
}

// flushFinal flushes when the generation's context has ended and waits for
// the publisher to publish everything, within finalTimeout: what is not
// published by then is not committed either (it is read again later), and
// the member still leaves the group before the rebalance times out.
//
// Heavy work of the partition's series runs on first, within half of that
// time (settle); what is not done by then is abandoned, and its records
// are not committed.
func (r *partitionRun) flushFinal() {
	if r.stalled != nil {
		r.stalled.Store(true) // it reads no more input: the pool owes it its work
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.d.finalTimeout())
	defer cancel()
	r.settle(ctx)
	if !r.flush(ctx, true) {
		r.pub.abandon()
	}
	r.pub.finish(ctx)
}
