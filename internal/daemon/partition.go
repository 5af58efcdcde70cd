package daemon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// partitionRun is the state of one assigned partition. It is owned by the
// partition's goroutine: the registry's Learners are touched by nothing else.
type partitionRun struct {
	d        *Daemon
	p        source.Partition
	reg      *online.Registry
	pending  []*sink.Message
	dead     []sink.Record
	next     int64 // offset after the last handled record; -1 before any
	lastLive int
	evicted  int64
	bytes    map[string]int // last published SizeBytes per series
	lastLog  time.Time      // of a reject log line: at most one per second
	// committed is the last offset committed, lastCommit when.
	committed  int64
	lastCommit time.Time
	unlogged   int // rejects since the last log line

	// touched holds the latest message of each series changed since the last
	// flush (nil for a series still in warm-up); its summary is published to
	// the directory once the flush succeeded.
	touched map[string]*sink.Message
	scores  map[string]*oneStep
	// reqs carries work that must run on this goroutine (what-if forecasts);
	// gone is closed when the partition run ends.
	reqs chan func()
	gone chan struct{}
}

// partition handles one assigned partition until its generation ends. Every
// record is decoded, learned and, when it yields one, its forecast queued;
// queued results are published (forecasts, then dead letters) and the input
// offset committed after them, every FlushEvery or flushBatch records. So a
// committed offset never covers an unpublished result: after a crash the
// uncommitted records are read again. The learners start fresh on every
// assignment (checkpointed state is issue 6).
func (d *Daemon) partition(ctx context.Context, p source.Partition) {
	d.assigned.Add(1)
	defer d.assigned.Add(-1)
	d.ready.Store(true)
	r := &partitionRun{d: d, p: p, next: -1, committed: -1, touched: map[string]*sink.Message{}, scores: map[string]*oneStep{},
		bytes: map[string]int{},
		reqs:  make(chan func()), gone: make(chan struct{})}
	rc := d.cfg.Registry
	rc.OnEvict = func(id string) {
		d.dir.drop(r, id)
		delete(r.touched, id)
		delete(r.scores, id)
		d.metrics.bytes.Sub(float64(r.bytes[id]))
		delete(r.bytes, id)
	}
	reg, err := online.NewRegistry(rc)
	if err != nil { // validated in Open
		d.cfg.Logger.Error("partition: registry", "err", err)
		return
	}
	r.reg = reg
	defer func() {
		close(r.gone)
		d.dir.drop(r, reg.IDs()...)
		d.metrics.series.Sub(float64(r.lastLive))
		for _, b := range r.bytes {
			d.metrics.bytes.Sub(float64(b))
		}
	}()
	tick := time.NewTicker(d.cfg.FlushEvery)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-p.Messages:
			if !ok {
				r.flushFinal()
				return
			}
			r.handle(m)
			if len(r.pending)+len(r.dead) >= flushBatch {
				r.flush(ctx, false)
			}
		case <-tick.C:
			r.flush(ctx, false)
		case fn := <-r.reqs:
			fn()
		case <-ctx.Done():
			r.flushFinal()
			return
		}
	}
}

func (r *partitionRun) handle(m kafka.Message) {
	d := r.d
	d.metrics.records.Inc()
	r.next = m.Offset + 1
	origin := fmt.Sprintf("%s/%d/%d", m.Topic, m.Partition, m.Offset)
	rec, err := d.cfg.Decoder.Decode(m.Key, m.Value, m.Time)
	if err != nil {
		var re *source.RejectError
		if errors.As(err, &re) {
			r.reject(m, string(re.Reason), re.Detail, origin)
		}
		return
	}
	l, _, err := r.reg.Get(rec.Series)
	if err != nil {
		d.cfg.Logger.Error("series: learner", "err", err)
		return
	}
	res, err := l.Observe(online.Observation{T: rec.T, Y: rec.Y, U: rec.U})
	var re *online.RejectError
	switch {
	case errors.As(err, &re):
		r.reject(m, re.Reason, re.Detail, origin)
		return
	case err != nil:
		d.metrics.fitFailed.Inc()
		d.cfg.Logger.Warn("series: fit failed", "err", err)
		return
	}
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
	msg.SetResult(rec.Series, rec.T, rec.Y, res)
	msg.Model = sink.ModelInfoOf(l)
	r.pending = append(r.pending, msg)
	r.touched[rec.Series] = msg
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

// publishSummaries puts the touched series' summaries in the directory.
func (r *partitionRun) publishSummaries() {
	for id, msg := range r.touched {
		l, ok := r.reg.Lookup(id)
		if !ok {
			continue
		}
		size := l.SizeBytes()
		r.d.metrics.bytes.Add(float64(size - r.bytes[id]))
		r.bytes[id] = size
		s := SeriesSummary{ID: id, Partition: r.p.ID, Topic: r.p.Topic, LastT: l.LastT(), Fitted: l.Fitted(),
			Outliers: l.Outliers(), Bytes: size, Latest: msg}
		if l.Fitted() {
			s.Model = sink.ModelInfoOf(l)
		}
		if sc := r.scores[id]; sc != nil && sc.n > 0 {
			s.Predicted, s.OneStepRMS = sc.n, math.Sqrt(sc.sse/float64(sc.n))
			s.Coverage95 = float64(sc.in) / float64(sc.n)
		}
		if msg == nil { // nothing new to show: keep the last published forecast
			if _, old, ok := r.d.dir.lookup(id); ok {
				s.Latest = old.Latest
			}
		}
		r.d.dir.publish(r, s)
		delete(r.touched, id)
	}
}

func (r *partitionRun) reject(m kafka.Message, reason, detail, origin string) {
	r.d.metrics.rejected.WithLabelValues(reason).Inc()
	// Bad input can arrive in floods: log at most one line a second, with
	// the count of those not logged since.
	if now := time.Now(); now.Sub(r.lastLog) >= time.Second {
		r.d.cfg.Logger.Warn("record rejected", "reason", reason, "detail", detail, "origin", origin,
			"rejected_since_last_log", r.unlogged)
		r.lastLog, r.unlogged = now, 0
	} else {
		r.unlogged++
	}
	r.dead = append(r.dead, sink.DeadLetterRecord(m.Key, m.Value, reason, detail, origin))
}

// flush publishes the queued results and, every CommitEvery or when final,
// commits the input offset after them. On a sink error nothing is committed
// and the results stay queued for the next flush, so nothing is lost; the
// records are re-read after a restart.
func (r *partitionRun) flush(ctx context.Context, final bool) {
	d := r.d
	if len(r.pending) > 0 {
		if err := d.forecasts.WriteForecasts(ctx, r.pending...); err != nil {
			d.cfg.Logger.Warn("flush: forecasts", "err", err)
			return
		}
		d.metrics.forecasts.Add(float64(len(r.pending)))
		r.pending = r.pending[:0]
	}
	if len(r.dead) > 0 {
		if err := d.dead.WriteRecords(ctx, r.dead...); err != nil {
			d.cfg.Logger.Warn("flush: dead letters", "err", err)
			return
		}
		r.dead = r.dead[:0]
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
	if r.next > r.committed && (final || time.Since(r.lastCommit) >= d.cfg.CommitEvery) {
		if err := r.p.Commit(r.next); err != nil {
			d.cfg.Logger.Warn("flush: commit", "err", err)
			return
		}
		r.committed, r.lastCommit = r.next, time.Now()
	}
}

// flushFinal flushes when the generation's context has ended: the writes use
// a fresh, bounded context so shutdown publishes what was processed.
func (r *partitionRun) flushFinal() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.flush(ctx, true)
}
