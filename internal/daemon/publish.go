package daemon

import (
	"context"
	"errors"
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
// shutdown budget (finalTimeout) runs out; nothing is skipped, and nothing
// after an abandoned batch is committed.
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
}

func startPublisher(r *partitionRun, stateEnd int64) *publisher {
	ctx, cancel := context.WithCancel(context.Background())
	p := &publisher{r: r, queue: make(chan pubBatch, pubQueue), done: make(chan struct{}), ctx: ctx, cancel: cancel,
		stateEnd: stateEnd, committed: -1}
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
// when the publisher was abandoned first.
func (p *publisher) publish(b pubBatch) bool {
	d, r := p.r.d, p.r
	if len(b.forecasts) > 0 {
		if !p.retry("forecasts", func() error { return d.forecasts.WriteForecasts(p.ctx, b.forecasts...) }) {
			return false
		}
		d.metrics.forecasts.Add(float64(len(b.forecasts)))
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
	if len(b.dead) > 0 && !p.retry("dead letters", func() error { return d.dead.WriteRecords(p.ctx, b.dead...) }) {
		return false
	}
	if b.withCkpt {
		if len(b.checkpoint) > 0 {
			var end int64
			if !p.retry("checkpoint", func() (err error) {
				end, err = r.store.Write(p.ctx, r.p.ID, b.checkpoint)
				if err != nil {
					d.metrics.checkpointFailures.Inc()
				}
				return err
			}) {
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

// retry runs write until it succeeds (true) or the publisher is abandoned.
func (p *publisher) retry(what string, write func() error) bool {
	backoff := 50 * time.Millisecond
	for {
		err := write()
		if err == nil {
			return true
		}
		if p.ctx.Err() != nil {
			return false
		}
		if errors.Is(err, kafka.MessageSizeTooLarge) {
			// Retrying cannot help; say what will.
			p.r.d.cfg.Logger.Error("publish: a record exceeds the topic's max.message.bytes; raise it (the state topic "+
				"needs the size of the largest series checkpoint); retrying", "what", what, "partition", p.r.p.ID, "err", err)
		} else {
			p.r.d.cfg.Logger.Warn("publish: retrying", "what", what, "partition", p.r.p.ID, "err", err, "in", backoff)
		}
		select {
		case <-p.ctx.Done():
			return false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}
