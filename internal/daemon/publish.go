package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/sink"
)

// A partition's results leave through its publisher, a goroutine of its own,
// so that the models never wait for the brokers: the partition goroutine
// hands over a batch at each flush and goes on learning. Batches are
// published strictly in order, each step only after the previous was
// acknowledged — forecasts, then dead letters, then the checkpoint, then the
// offset commit — so a committed offset still never covers an unpublished
// result or an unsaved state. A failed write is retried (with backoff) until
// it succeeds or the publisher is abandoned, which flushFinal does when the
// shutdown budget (finalTimeout) runs out, and nothing after an abandoned
// batch is committed. The one exception is a forecast or dead letter the
// brokers refuse for good (sink.Classify: too large, not authorized): it is
// skipped, counted and logged, since retrying it would stall its partition
// for ever.
// The queue holds pubQueue batches: when the brokers fall behind, the
// partition goroutine blocks on it rather than buffering without bound.

const pubQueue = 4

// pubBatch is what one flush hands to the publisher.
type pubBatch struct {
	forecasts []*sink.Message
	stamps    []time.Time // forecasts[i]'s input record timestamp
	dead      []sink.Record
	// checkpoint: the encoded series (tombstones included) when the batch
	// carries a checkpoint; encodeStart is when their encoding started.
	checkpoint  []checkpoint.Entry
	withCkpt    bool
	ckptBytes   int
	encodeStart time.Time
	// commit is the input offset to commit after the rest; -1 = none.
	commit int64
}

// append adds n, a later batch, to b: each stream keeps its order, and the
// later commit covers both.
func (b *pubBatch) append(n pubBatch) {
	b.forecasts = append(b.forecasts, n.forecasts...)
	b.stamps = append(b.stamps, n.stamps...)
	b.dead = append(b.dead, n.dead...)
	if n.withCkpt {
		if !b.withCkpt {
			b.encodeStart = n.encodeStart
		}
		b.withCkpt = true
		b.checkpoint = append(b.checkpoint, n.checkpoint...)
		b.ckptBytes += n.ckptBytes
	}
	if n.commit >= 0 {
		b.commit = n.commit
	}
}

func (b *pubBatch) empty() bool {
	return len(b.forecasts) == 0 && len(b.dead) == 0 && !b.withCkpt && b.commit < 0
}

// publisher publishes one partition's batches. Its fields after the queue
// are written by its goroutine only and read after done is closed.
type publisher struct {
	r      *partitionRun
	queue  chan pubBatch
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc

	// stateEnd is the state partition's end after the last checkpoint;
	// committed the last offset committed; behind reports a batch that was
	// abandoned unpublished.
	stateEnd  int64
	committed int64
	behind    bool
	// failingSince is when the write under way first failed (Unix ns; 0
	// while writes succeed), read by /readyz.
	failingSince atomic.Int64
}

func startPublisher(r *partitionRun, stateEnd int64) *publisher {
	ctx, cancel := context.WithCancel(context.Background())
	p := &publisher{r: r, queue: make(chan pubBatch, pubQueue), done: make(chan struct{}), ctx: ctx, cancel: cancel,
		stateEnd: stateEnd, committed: -1}
	r.d.pubs.Store(p, struct{}{})
	go p.run()
	return p
}

// finish publishes what is queued and stops, abandoning the rest when ctx
// ends first (it is not committed, so it is read again later).
func (p *publisher) finish(ctx context.Context) {
	close(p.queue)
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		<-p.done
	}
	p.cancel()
}

// abandon stops publishing: the write under way fails, nothing queued is
// published or committed any more.
func (p *publisher) abandon() { p.cancel() }

func (p *publisher) run() {
	defer close(p.done)
	defer p.r.d.pubs.Delete(p)
	for b := range p.queue {
		b = p.coalesce(b)
		if !p.publish(b) {
			p.behind = true
			for range p.queue { // abandoned: drain so finish returns
			}
			return
		}
	}
}

// coalesce merges into b the batches queued behind it, so that a publisher
// that fell behind catches up with one write per topic instead of one per
// batch. The order of every stream is kept: forecasts, dead letters and
// checkpoint entries each in flush order, and the last commit, which the
// merged writes all cover.
func (p *publisher) coalesce(b pubBatch) pubBatch {
	for {
		select {
		case n, ok := <-p.queue:
			if !ok {
				return b
			}
			b.append(n)
		default:
			return b
		}
	}
}

// publish publishes one batch, retrying each step until it succeeds; false
// when the publisher was abandoned first. Forecasts and dead letters the
// brokers refuse for good (sink.Classify) are skipped one by one (writeEach)
// so that the partition keeps publishing; checkpoints are never skipped —
// the commit after them would lose the state — and a checkpoint that cannot
// be written stalls the partition, which /readyz and
// streamd_publish_stalled_partitions report.
func (p *publisher) publish(b pubBatch) bool {
	d, r := p.r.d, p.r
	if len(b.forecasts) > 0 {
		dropped, ok := p.writeEach("forecasts", len(b.forecasts),
			func() error { return d.forecasts.WriteForecasts(p.ctx, b.forecasts...) },
			func(i int) (string, error) {
				return b.forecasts[i].Series, d.forecasts.WriteForecasts(p.ctx, b.forecasts[i])
			})
		if !ok {
			return false
		}
		d.metrics.forecasts.Add(float64(len(b.forecasts) - dropped))
		at := time.Now()
		for _, t := range b.stamps {
			if !t.IsZero() { // a record without a timestamp (pre-0.10 format)
				d.metrics.latency.Observe(at.Sub(t).Seconds())
			}
		}
		if d.cfg.onPublished != nil {
			d.cfg.onPublished(b.forecasts, at)
		}
	}
	if len(b.dead) > 0 {
		if _, ok := p.writeEach("dead_letters", len(b.dead),
			func() error { return d.dead.WriteRecords(p.ctx, b.dead...) },
			func(i int) (string, error) { return string(b.dead[i].Key), d.dead.WriteRecords(p.ctx, b.dead[i]) }); !ok {
			return false
		}
	}
	if b.withCkpt {
		if len(b.checkpoint) > 0 {
			var end int64
			if p.retry("checkpoint", false, func() (err error) {
				end, err = r.store.Write(p.ctx, r.p.ID, b.checkpoint)
				if err != nil {
					d.metrics.checkpointFailures.Inc()
				}
				return err
			}) != nil {
				return false
			}
			p.stateEnd = end
		}
		d.metrics.checkpointBytes.Add(float64(b.ckptBytes))
		d.metrics.checkpointSeries.Add(float64(len(b.checkpoint)))
		d.metrics.checkpointSeconds.Observe(time.Since(b.encodeStart).Seconds())
	}
	if b.commit >= 0 {
		if p.ctx.Err() != nil { // abandoned: a later batch may be missing
			return false
		}
		commit := r.p.Commit
		if d.cfg.refuseCommits {
			commit = func(int64) error { return errRefusedCommit }
		}
		// A refused commit is not retried: the generation may be over, and
		// the next commit covers this one.
		if err := commit(b.commit); err != nil {
			d.cfg.Logger.Warn("publish: commit", "partition", r.p.ID, "err", err)
		} else {
			p.committed = b.commit
		}
	}
	return true
}

// writeEach writes a stream's n records with all, retrying; when the brokers
// refuse them for good (one refused record fails its whole partition's
// request, and a gathered request may hold other partitions' records), it
// writes them one at a time with one(i), which returns the record's key,
// and skips, counts and logs each one refused for good. It returns the
// number skipped; ok is false when the publisher was abandoned first.
func (p *publisher) writeEach(stream string, n int, all func() error, one func(i int) (string, error)) (dropped int, ok bool) {
	err := p.retry(stream, true, all)
	if err == nil {
		return 0, true
	}
	if p.ctx.Err() != nil {
		return 0, false
	}
	for i := range n {
		var key string
		err := p.retry(stream, true, func() (err error) {
			key, err = one(i)
			return err
		})
		switch {
		case err == nil:
		case p.ctx.Err() != nil:
			return dropped, false
		default:
			dropped++
			p.r.d.metrics.dropped.WithLabelValues(stream).Inc()
			p.r.d.cfg.Logger.Error("publish: the brokers refuse the record for good; skipped", "what", stream,
				"series", key, "partition", p.r.p.ID, "err", err)
		}
	}
	return dropped, true
}

// stallAfterDefault is how long a partition's publisher fails before
// /readyz reports it: longer than a broker restart or a leader election
// takes.
const stallAfterDefault = 30 * time.Second

// Failed writes are logged at most once per retryLogEvery per publisher, with
// the count of consecutive failures; the first success after failures logs
// a "recovered" line.
const retryLogEvery = 10 * time.Second

// retry runs write until it succeeds (nil) or the publisher is abandoned
// (the context's error); with skippable, a fatal error (sink.Classify) is
// returned at once instead of retried. Between tries it backs off, from 50
// ms doubling up to 2 s.
func (p *publisher) retry(what string, skippable bool, write func() error) error {
	backoff := 50 * time.Millisecond
	failures := 0
	var first, logged time.Time
	defer func() {
		if failures > 0 {
			p.failingSince.Store(0)
		}
	}()
	for {
		err := write()
		if err == nil {
			if failures > 0 {
				p.r.d.cfg.Logger.Info("publish: recovered", "what", what, "partition", p.r.p.ID,
					"consecutive_failures", failures, "failing_seconds", time.Since(first).Seconds())
			}
			return nil
		}
		if p.ctx.Err() != nil {
			return p.ctx.Err()
		}
		class := sink.Classify(err)
		if skippable && class == sink.Fatal {
			return err
		}
		failures++
		if failures == 1 {
			first = time.Now()
			p.failingSince.Store(first.UnixNano())
		}
		if now := time.Now(); now.Sub(logged) >= retryLogEvery {
			logged = now
			msg, level := "publish: retrying", slog.LevelWarn
			if class == sink.Fatal {
				level = slog.LevelError
			}
			if errors.Is(err, kafka.MessageSizeTooLarge) {
				// Retrying cannot help; say what will.
				msg = "publish: a record exceeds the topic's max.message.bytes; raise it (the state topic " +
					"needs the size of the largest series checkpoint); retrying"
			}
			p.r.d.cfg.Logger.Log(context.Background(), level, msg, "what", what, "partition", p.r.p.ID, "err", err,
				"class", class.String(), "consecutive_failures", failures, "backoff_seconds", backoff.Seconds())
		}
		select {
		case <-p.ctx.Done():
			return p.ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// stalled describes the partitions whose publisher has been failing for
// longer than stallAfter.
func (d *Daemon) stalled() []string {
	var out []string
	now := time.Now()
	d.pubs.Range(func(k, _ any) bool {
		p := k.(*publisher)
		if since := p.failingSince.Load(); since != 0 && now.Sub(time.Unix(0, since)) > d.cfg.stallAfter {
			out = append(out, fmt.Sprintf("partition %s/%d failing for %.0f s", p.r.p.Topic, p.r.p.ID, now.Sub(time.Unix(0, since)).Seconds()))
		}
		return true
	})
	slices.Sort(out)
	return out
}
