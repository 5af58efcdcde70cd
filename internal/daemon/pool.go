package daemon

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/source"
)

// Heavy work off the partition goroutines.
//
// A partition goroutine handles its records in offset order, and nearly all
// of a record's work is its series' O(M²) online update, which it does
// inline. A few Observes are heavy (online.Learner.Heavy): the fits and
// re-choices of the structure while a series warms up, and the periodic
// level-3 retunes, 0.1–6 s each. Run inline, each would hold up every
// other series of the partition, so these heavy Observes run on the
// daemon's worker pool (Config.Workers goroutines shared by every
// partition), one at a time per series. (A what-if forecast holds its
// series only for an O(M²) copy of the model, online.Learner.ForecastCopy,
// and runs in the whatIfLane on the HTTP handler's goroutine.)
//
// Ownership. A series' Learner belongs to its partition goroutine, except
// while the series is busy (a key of partitionRun.busy): from the moment
// the goroutine submits a job on it until it takes the job's completion
// from partitionRun.done, the worker running the job owns the Learner, and
// the partition goroutine neither reads nor changes it — it does not
// observe with it (later records wait in the series' queue), checkpoint it
// (checkpointStep leaves it dirty), publish its summary to the directory
// (publishSummaries keeps it for a later flush), evict it (protectBusy puts
// busy series first in the registry's recency order before anything may
// evict, which is the registry's order, not the Learner's state), or park
// it. The submission (the pool's mutex) and the completion (the queue's
// mutex) order each side's writes before the other's reads. A worker never
// waits for a partition goroutine: completions queue without bound (at
// most one per busy series), so a partition slow to take them delays only
// its own series.
//
// Order. A busy series' later records and what-if requests wait in its
// queue in arrival order. At the completion the goroutine finishes the
// job's record as handle does (scores, history, forecast message,
// touched), then works down the queue: light records and what-if requests
// (their copies) inline, the next heavy record back to the pool. Each series so sees its records
// in input order, and its results are those of an unpooled run bit for bit
// (registry evictions aside: a busy series is never the one evicted); only
// other series' records overtake it, and the forecast topic orders
// forecasts per series only.
//
// Offsets. A record waiting in a queue or a job is not processed: the
// committed offset, and with a state topic the checkpoint watermark, stays
// at or below the oldest such record (pendingFloor), so that after a crash
// or a revocation it is read again.
//
// End. At revocation or shutdown, flushFinal lets the busy series' work
// finish (their queues included) within half of the final timeout, then
// abandons the rest: it closes quit, after which the workers drop the
// partition's jobs they have not started and discard the completions of
// those they finish; the abandoned series stay busy — never checkpointed,
// summarised or parked — and their pending records uncommitted.

// workerPool runs heavy jobs on a fixed number of goroutines, first in
// first out. submit never blocks: a partition goroutine hands work over and
// goes on; how much can wait is bounded by the partitions' queues
// (maxQueued) and one job per busy series.
//
// The live records come first: while a partition has fallen behind its
// input, a worker keeps to a fraction of a CPU (pacer), pausing within a
// job as well as between jobs, so that heavy work takes mostly the CPU the
// live records leave.
type workerPool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []*heavyJob
	closed  bool
	wg      sync.WaitGroup
	workers int

	inMu   sync.Mutex
	inputs map[<-chan kafka.Message]*atomic.Bool // the partitions' inputs, with their stalled flags
}

// watch and unwatch add and remove a partition's input for behind. The
// partition sets the flag watch returns while it has stopped reading its
// input to wait for its busy series' work (maxQueued).
func (p *workerPool) watch(in <-chan kafka.Message) *atomic.Bool {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inputs == nil {
		p.inputs = map[<-chan kafka.Message]*atomic.Bool{}
	}
	stalled := new(atomic.Bool)
	p.inputs[in] = stalled
	return stalled
}

func (p *workerPool) unwatch(in <-chan kafka.Message) {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	delete(p.inputs, in)
}

// behind reports whether a partition has liveBehind records or more
// waiting in its input while it is reading it: one that has stopped to
// wait for its busy series' work waits for the pool, and pacing the pool
// would only slow both (through a backlog, every partition would).
func (p *workerPool) behind() bool {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	for in, stalled := range p.inputs {
		if len(in) >= liveBehind && !stalled.Load() {
			return true
		}
	}
	return false
}

// pacer keeps a worker's share of the CPU at or below 1/(1+yieldRatio)
// while a partition is behind its input: at each pause point it sleeps
// yieldRatio times the work done since the last (at most yieldMax), and
// goes at full speed otherwise. The pause points are the end of each job
// and, within one, each fit of a heavy Observe
// (online.Learner.ObserveYielding): a re-choice at a few hundred values
// takes seconds of CPU in fits of milliseconds each, and pauses only
// between jobs would leave the live records one CPU for those seconds.
// Heavy work so waits for the live records, yet never stops: through a
// backlog, when every partition is behind, the pool still gets its share.
// since is the start of the work not yet paced for.
type pacer struct {
	pool  *workerPool
	since time.Time
}

func (c *pacer) pace() {
	now := time.Now()
	if !c.since.IsZero() && c.pool.behind() {
		time.Sleep(min(yieldRatio*now.Sub(c.since), yieldMax))
	}
	c.since = time.Now()
}

// waitLive waits while a partition is behind its input, at most
// whatIfYield or until ctx ends: a what-if forecast starts when the live
// records leave room for it (at a long horizon it costs milliseconds of
// the CPU they need).
func (p *workerPool) waitLive(ctx context.Context) {
	deadline := time.Now().Add(whatIfYield)
	for p.behind() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// whatIfLane computes the what-if forecasts (on their requests'
// goroutines, from copies of the models) one at a time, and while a
// partition is behind its input, or other forecasts wait for the lane,
// each waits first for yieldRatio times the previous one's duration (at
// most yieldMax): the forecasts take a quarter of a CPU while the live
// records need the rest or the requests queue, and a lone client's run at
// once. At a horizon of 1 000 a forecast costs milliseconds; eight clients
// sending them back to back would otherwise keep a CPU busy, and the live
// records would wait until a partition fell behind: with the lane paced
// while they queue, the established series' median latency halved in the
// onboarding benchmark with eight what-if clients (docs/benchmarks.md,
// "Onboarding under load").
type whatIfLane struct {
	slot    chan struct{} // capacity 1: the forecast running
	pool    *workerPool   // for behind; nil without a pool: no pauses
	last    time.Duration // the previous forecast's duration, under slot
	waiting atomic.Int64  // forecasts waiting for the slot
}

func newWhatIfLane() *whatIfLane { return &whatIfLane{slot: make(chan struct{}, 1)} }

// run runs f in the lane, unless ctx ends first (its error is returned).
func (w *whatIfLane) run(ctx context.Context, f func()) error {
	w.waiting.Add(1)
	select {
	case w.slot <- struct{}{}:
		w.waiting.Add(-1)
	case <-ctx.Done():
		w.waiting.Add(-1)
		return ctx.Err()
	}
	defer func() { <-w.slot }()
	if err := ctx.Err(); err != nil { // select took the slot over a done ctx
		return err
	}
	if w.pool != nil && w.last > 0 && (w.waiting.Load() > 0 || w.pool.behind()) {
		t := time.NewTimer(min(yieldRatio*w.last, yieldMax))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	start := time.Now()
	f()
	w.last = time.Since(start)
	return nil
}

// whatIfYield bounds how long a what-if waits for the live records.
const whatIfYield = time.Second

// liveBehind, yieldRatio and yieldMax: a partition with 8 records waiting
// is a few milliseconds behind at the rates a partition sustains; a worker
// then keeps to a quarter of a CPU, pausing at most 100 ms at a time
// (after a long fit) before it looks again.
const (
	liveBehind = 8
	yieldRatio = 3
	yieldMax   = 100 * time.Millisecond
)

func newWorkerPool(workers int) *workerPool {
	p := &workerPool{workers: workers}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *workerPool) submit(j *heavyJob) {
	p.mu.Lock()
	if p.closed { // no partition runs after stop; should one, its job still runs
		p.mu.Unlock()
		go j.run(nil)
		return
	}
	p.jobs = append(p.jobs, j)
	p.mu.Unlock()
	p.cond.Signal()
}

// waiting returns the number of jobs not yet started; 0 without a pool.
func (p *workerPool) waiting() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.jobs)
}

func (p *workerPool) work() {
	defer p.wg.Done()
	pc := &pacer{pool: p}
	for {
		p.mu.Lock()
		for len(p.jobs) == 0 && !p.closed {
			p.cond.Wait()
		}
		if len(p.jobs) == 0 {
			p.mu.Unlock()
			return
		}
		j := p.jobs[0]
		p.jobs[0] = nil
		p.jobs = p.jobs[1:]
		p.mu.Unlock()
		pc.since = time.Now() // the wait for the job was no work
		j.run(pc.pace)
		pc.pace()
	}
}

// stop runs the jobs still queued (those of ended partitions are dropped
// at once) and waits for the workers to end.
func (p *workerPool) stop() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
	p.wg.Wait()
}

// workItem is what waits for a busy series: a record (m and its decoded
// rec) or a what-if request (req).
type workItem struct {
	m   kafka.Message
	rec source.Record
	req *ownerReq
}

// heavyJob is one item of a series run on a worker, with its outcome.
type heavyJob struct {
	r    *partitionRun
	id   string
	l    *online.Learner
	item workItem
	res  online.Result
	err  error
}

// run runs the job on a worker, calling pause (when not nil) at each of
// its pause points, and hands it back to its partition goroutine, unless
// the partition stopped taking completions (quit): then a job not started
// is dropped and a finished one discarded.
func (j *heavyJob) run(pause func()) {
	select {
	case <-j.r.quit:
		return
	default:
	}
	if hook := j.r.d.cfg.beforeHeavy; hook != nil {
		hook(j.id)
	}
	start := time.Now()
	j.res, j.err = j.l.ObserveYielding(observation(j.item.rec), pause)
	m := j.r.d.metrics
	m.heavyJobs.Inc()
	m.heavySeconds.Observe(time.Since(start).Seconds())
	j.r.done.put(j)
}

// completions is a partition's queue of finished jobs. put never blocks;
// ready has a signal whenever the queue may be non-empty.
type completions struct {
	mu    sync.Mutex
	jobs  []*heavyJob
	ready chan struct{} // capacity 1
}

func newCompletions() *completions { return &completions{ready: make(chan struct{}, 1)} }

func (c *completions) put(j *heavyJob) {
	c.mu.Lock()
	c.jobs = append(c.jobs, j)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default: // a signal is pending already
	}
}

// take returns the oldest completion, or nil when there is none.
func (c *completions) take() *heavyJob {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.jobs) == 0 {
		return nil
	}
	j := c.jobs[0]
	c.jobs[0] = nil
	c.jobs = c.jobs[1:]
	return j
}

// wait returns the oldest completion, waiting for one.
func (c *completions) wait() *heavyJob {
	for {
		if j := c.take(); j != nil {
			return j
		}
		<-c.ready
	}
}

// completeReady handles every completion queued (after a ready signal).
func (r *partitionRun) completeReady() {
	for j := r.done.take(); j != nil; j = r.done.take() {
		r.complete(j)
	}
}

// seriesWork is a busy series: job is the item a worker has (nil while the
// completion is being handled, and while the series catches up on its
// queue, r.resume), queue what waits behind it.
type seriesWork struct {
	l     *online.Learner
	job   *heavyJob
	queue []workItem
}

// oldest returns the input offset of the series' oldest record not yet
// processed; false when only what-if requests wait.
func (w *seriesWork) oldest() (int64, bool) {
	if w.job != nil { // jobs are records
		return w.job.item.m.Offset, true
	}
	for _, it := range w.queue {
		if it.req == nil {
			return it.m.Offset, true
		}
	}
	return 0, false
}

// maxQueued bounds the records a partition holds in its busy series'
// queues: beyond it, it stops reading its input until work completes.
const maxQueued = 16384

// observation is rec as its Learner takes it.
func observation(rec source.Record) online.Observation {
	return online.Observation{T: rec.T, Time: rec.IsTime, Y: rec.Y, U: rec.U, Future: rec.Future}
}

// dispatch makes series id busy, if it is not yet, and submits item on l to
// the pool. From here to the completion the worker owns l.
func (r *partitionRun) dispatch(id string, l *online.Learner, item workItem) {
	w := r.busy[id]
	if w == nil {
		if r.busy == nil {
			r.busy = map[string]*seriesWork{}
		}
		w = &seriesWork{l: l}
		r.busy[id] = w
		r.d.busySeries.Add(1)
	}
	j := &heavyJob{r: r, id: id, l: l, item: item}
	w.job = j
	r.d.pool.submit(j)
}

// complete takes a job's completion on the partition goroutine, which owns
// the series' Learner again: it finishes the job's record as handle would,
// then works down the series' queue (catchUp).
func (r *partitionRun) complete(j *heavyJob) {
	w := r.busy[j.id]
	w.job = nil
	r.finish(j.l, j.item.m, j.item.rec, j.res, j.err)
	r.catchUp(j.id, w)
}

// catchUp works down busy series id's queue on the partition goroutine, at
// most catchUpBatch records at a time: with records left it joins r.resume,
// and the partition's loop takes the next batch between live records
// (resumeOne). A series whose fit took seconds holds hundreds of records,
// each an update and a forecast: worked down at once they held the
// partition's other series for tens of milliseconds. The series stays busy
// (its records in order behind the queue, not checkpointed) until the
// queue is empty, or goes back to the pool at a heavy record.
func (r *partitionRun) catchUp(id string, w *seriesWork) {
	for n := 0; len(w.queue) > 0; {
		if n == catchUpBatch {
			r.resume = append(r.resume, id)
			return
		}
		it := w.queue[0]
		w.queue[0] = workItem{}
		w.queue = w.queue[1:]
		if it.req != nil {
			it.req.serve(w.l)
			continue
		}
		r.queued--
		n++
		if r.observe(w.l, it.m, it.rec) {
			return // heavy: back to the pool
		}
	}
	delete(r.busy, id)
	r.d.busySeries.Add(-1)
}

// heavyStep takes the next step of the busy series' work: a catch-up batch
// when one is due, else the next completion, waiting for it. It needs a
// busy series.
func (r *partitionRun) heavyStep() {
	if len(r.resume) > 0 {
		r.resumeOne()
		return
	}
	r.complete(r.done.wait())
}

// resumeOne takes the next batch of the first series in r.resume (round
// robin: one with records left joins the end again).
func (r *partitionRun) resumeOne() {
	if len(r.resume) == 0 {
		return
	}
	id := r.resume[0]
	r.resume = r.resume[1:]
	if w := r.busy[id]; w != nil && w.job == nil {
		r.catchUp(id, w)
	}
}

// catchUpBatch is the most queued records a busy series' catch-up takes
// before the partition's live records get their turn: a few milliseconds
// of a default model's updates and forecasts.
const catchUpBatch = 4

// request serves a what-if request on the series' Learner: inline when the
// series is idle, else behind its work in flight (complete serves it).
func (r *partitionRun) request(q *ownerReq) {
	if w := r.busy[q.id]; w != nil {
		w.queue = append(w.queue, workItem{req: q})
		return
	}
	l, ok := r.reg.Lookup(q.id)
	if !ok {
		q.reply(errNotOwned)
		return
	}
	q.serve(l)
}

// pendingFloor returns the input offset of the oldest record still waiting
// or in flight; false when there is none. Neither the commit nor the
// checkpoint watermark may pass it.
func (r *partitionRun) pendingFloor() (floor int64, ok bool) {
	for _, w := range r.busy {
		if off, has := w.oldest(); has && (!ok || off < floor) {
			floor, ok = off, true
		}
	}
	return floor, ok
}

// isBusy reports whether series id is busy: a worker owns its Learner, or
// it is working down the records queued behind its work (r.resume).
func (r *partitionRun) isBusy(id string) bool {
	_, ok := r.busy[id]
	return ok
}

// protectBusy puts the busy series first in the registry's recency order,
// so that an eviction (the cap at Get, the state budget) takes an idle
// series: the registry's order is its own, not the Learners' state, so the
// goroutine may change it while workers hold the Learners. Busy series go
// in id order, so that the order is deterministic.
func (r *partitionRun) protectBusy() {
	ids := make([]string, 0, len(r.busy))
	for id := range r.busy {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r.reg.Get(id) // known: it only moves to the front
	}
}

// makeRoom prepares the creation of series id when the registry is at its
// cap and series are busy: Get will evict the least recently used series,
// which must be idle. When every live series is busy it works the busy
// series down first: their catch-up batches (a series catching up has no
// completion to wait for), else the next completion.
func (r *partitionRun) makeRoom(id string) {
	limit := r.d.cfg.Registry.MaxSeries
	if limit <= 0 || r.reg.Len() < limit {
		return
	}
	if _, ok := r.reg.Lookup(id); ok {
		return
	}
	for len(r.busy) >= limit {
		r.heavyStep()
	}
	r.protectBusy()
}

// evictForBudget evicts least recently used idle series while the
// instance's series state exceeds Config.StateBytes, keeping the most
// recently used series (the one just created, when called for it).
func (r *partitionRun) evictForBudget() {
	b := r.d.cfg.StateBytes
	if b <= 0 || r.d.stateBytes.Load() <= b {
		return
	}
	if len(r.busy) > 0 {
		r.protectBusy()
	}
	for r.d.stateBytes.Load() > b && r.reg.Len() > len(r.busy)+1 && r.reg.EvictOldest() {
	}
}

// settle lets the busy series' work run on, taking completions, until
// none is left or half of ctx's time is spent, then stops taking them
// (quit) and answers the what-if requests still queued: the series left
// busy are abandoned (see the top of this file).
func (r *partitionRun) settle(ctx context.Context) {
	if len(r.busy) > 0 {
		budget := r.d.finalTimeout() / 2
		if deadline, ok := ctx.Deadline(); ok {
			budget = time.Until(deadline) / 2
		}
		t := time.NewTimer(budget)
		defer t.Stop()
	wait:
		for len(r.busy) > 0 {
			if j := r.done.take(); j != nil {
				r.complete(j)
				continue
			}
			if len(r.resume) > 0 {
				r.resumeOne()
				continue
			}
			select {
			case <-r.done.ready:
			case <-t.C:
				break wait
			case <-ctx.Done():
				break wait
			}
		}
	}
	close(r.quit)
	for _, w := range r.busy {
		for _, it := range w.queue {
			if it.req != nil {
				it.req.reply(errNotOwned)
			}
		}
	}
	if n := len(r.busy); n > 0 {
		r.d.cfg.Logger.Warn("partition ends with heavy work unfinished; its records are read again", "topic", r.p.Topic,
			"partition", r.p.ID, "series", n, "records", r.queued)
	}
}

// ownerReq is work for series id's Learner on behalf of the HTTP API (a
// what-if forecast): fn runs with the Learner owned, then done gets nil, or
// why fn did not run.
type ownerReq struct {
	ctx  context.Context
	id   string
	fn   func(l *online.Learner)
	done chan error // buffered: a reply never blocks
}

// serve runs fn on l, unless the requester gave up meanwhile.
func (q *ownerReq) serve(l *online.Learner) {
	if err := q.ctx.Err(); err != nil {
		q.reply(err)
		return
	}
	q.fn(l)
	q.reply(nil)
}

func (q *ownerReq) reply(err error) { q.done <- err }
