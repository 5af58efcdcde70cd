package daemon

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streamd/streamd/internal/checkpoint"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/source"
)

// Durable state (docs/design.md, "Durability and scale-out"). Each partition goroutine checkpoints the series
// it changed to the same partition of the state topic, a few at a time
// (checkpointStep), then commits the input offset they cover: a committed
// offset is always covered by acknowledged checkpoints. Each checkpoint carries the input offset of the last record of
// its series, so after a crash the records read again (those after the last
// commit) that a series' state already holds are skipped, and none is applied
// twice. Checkpoints of one partition are written by its goroutine only, in
// order; the newest record of a key is the series' state.

// partitionKey names an input partition.
type partitionKey = source.TopicPartition

// parked is the state of a partition this instance gave up cleanly (every
// change checkpointed): if the partition comes back and its state partition
// still ends at stateEnd, nobody wrote since and the registry is reused as is
// instead of being read back.
type parked struct {
	reg       *online.Registry
	applied   map[string]int64
	stateEnd  int64
	watermark int64
	// scores and latest are the series' running scores and latest
	// forecasts, which the API reports; timeKind their kinds of t.
	scores   map[string]*oneStep
	latest   map[string]*sink.Message
	timeKind map[string]bool
}

// parking holds the parked partitions. Safe for concurrent use.
type parking struct {
	mu sync.Mutex
	m  map[partitionKey]*parked
}

func (pk *parking) put(k partitionKey, p *parked) {
	pk.mu.Lock()
	pk.m[k] = p
	pk.mu.Unlock()
}

func (pk *parking) take(k partitionKey) *parked {
	pk.mu.Lock()
	defer pk.mu.Unlock()
	p := pk.m[k]
	delete(pk.m, k)
	return p
}

// keep drops the parked partitions not in assigned: another member owns them
// now, and their memory is better released.
func (pk *parking) keep(assigned []partitionKey) {
	pk.mu.Lock()
	for k := range pk.m {
		if !slices.Contains(assigned, k) {
			delete(pk.m, k)
		}
	}
	pk.mu.Unlock()
}

// StateTopicFor returns the state topic of input topic: stateTopic itself
// when it is the only input topic, else stateTopic + "." + input, so that
// series ids of different input topics never share a compacted key.
func StateTopicFor(stateTopic string, inputs []string, input string) string {
	if len(inputs) == 1 {
		return stateTopic
	}
	return stateTopic + "." + input
}

// openStores creates or checks the state topic of every input topic.
func (d *Daemon) openStores(ctx context.Context) error {
	if d.cfg.StateTopic == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d.stores = map[string]*checkpoint.Store{}
	for _, in := range d.cfg.InputTopics {
		s, err := checkpoint.New(checkpoint.Config{Brokers: d.cfg.Brokers, Topic: StateTopicFor(d.cfg.StateTopic, d.cfg.InputTopics, in),
			Transport: d.cfg.Transport, Group: d.cfg.Group})
		if err != nil {
			return err
		}
		if _, err := s.Ensure(ctx, in); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		// A topic created by someone else may keep Kafka's 1 MB default,
		// which a series checkpoint passes near M = 200.
		if n, err := s.MaxRecordBytes(ctx); err == nil && n > 0 && n < checkpoint.MaxRecordBytes/8 {
			d.cfg.Logger.Warn("state topic: max.message.bytes is small for the checkpoints of large models; "+
				"a larger checkpoint stops its partition's commits until it is raised", "topic", s.Topic(), "max_message_bytes", n)
		}
		d.stores[in] = s
	}
	return nil
}

// restore gives r the state of its partition before any input is consumed:
// the parked registry if nothing was checkpointed since this instance parked
// it, else the state partition read to its end. It retries until it succeeds
// or ctx ends (false: the partition must not be consumed).
func (r *partitionRun) restore(ctx context.Context) bool {
	d := r.d
	key := partitionKey{Topic: r.p.Topic, ID: r.p.ID}
	p := d.parking.take(key)
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(time.Second):
			}
		}
		start := time.Now()
		end, err := r.store.End(ctx, r.p.ID)
		if err != nil {
			d.cfg.Logger.Warn("restore: state offsets", "partition", r.p.ID, "err", err)
			continue
		}
		if p != nil && p.stateEnd == end {
			r.reg, r.applied, r.stateEnd, r.watermark = p.reg, p.applied, end, p.watermark
			r.reg.SetOnEvict(r.onEvict)
			r.scores, r.timeKind = p.scores, p.timeKind
			for id, m := range p.latest {
				r.touched[id] = m
			}
			d.metrics.restores.WithLabelValues("memory").Inc()
		} else if err := r.readState(ctx); err != nil {
			d.cfg.Logger.Warn("restore: read state", "partition", r.p.ID, "err", err)
			continue
		} else {
			d.metrics.restores.WithLabelValues("state_topic").Inc()
		}
		for _, id := range r.reg.IDs() {
			if _, ok := r.touched[id]; !ok { // the restored latest forecast, else none yet
				r.touched[id] = nil
			}
		}
		r.evicted = r.reg.Evicted() // counted when they happened
		d.metrics.restoreSeconds.Observe(time.Since(start).Seconds())
		d.cfg.Logger.Info("partition restored", "topic", r.p.Topic, "partition", r.p.ID, "series", r.reg.Len(),
			"seconds", time.Since(start).Seconds())
		return true
	}
}

// foreignLogs bounds the log lines of one partition's restore that name a
// checkpoint of another group; the rest are counted in a summary line.
const foreignLogs = 10

// readState reads the state partition to its end into a fresh registry.
// Series go in the order of their checkpointed offsets, which is the order
// in which they were last used: the registry's eviction order is the one an
// uninterrupted run has. Records another consumer group wrote (a second
// deployment given the same state topic) are refused: their state belongs
// with that group's committed offsets, and adopting it would skip or lose
// this group's input. Records without a group (written before the header
// was) are this group's.
func (r *partitionRun) readState(ctx context.Context) error {
	d := r.d
	latest := map[string][]byte{}
	metas := map[string][]byte{}
	watermark := int64(-1)
	foreign := 0
	end, err := r.store.Read(ctx, r.p.ID, func(rec checkpoint.Record) {
		key, value := rec.Key, rec.Value
		if rec.Group != "" && rec.Group != d.cfg.Group {
			if foreign++; foreign <= foreignLogs {
				d.cfg.Logger.Error("restore: checkpoint of another consumer group refused; give each deployment its own kafka.state_topic",
					"series", key, "topic", r.store.Topic(), "partition", r.p.ID, "group", d.cfg.Group, "checkpoint_group", rec.Group)
			}
			d.metrics.foreignCheckpoints.Inc()
			return
		}
		if key == watermarkKey {
			if len(value) == 8 {
				watermark = int64(binary.BigEndian.Uint64(value))
			}
			return
		}
		if value == nil {
			delete(latest, key)
			delete(metas, key)
			return
		}
		latest[key] = value
		metas[key] = rec.Meta
	})
	if err != nil {
		return err
	}
	if foreign > foreignLogs {
		d.cfg.Logger.Error("restore: checkpoints of another consumer group refused", "topic", r.store.Topic(), "partition", r.p.ID,
			"group", d.cfg.Group, "refused", foreign, "not_logged", foreign-foreignLogs)
	}
	reg, err := online.NewRegistry(r.registryConfig())
	if err != nil {
		return err
	}
	type restored struct {
		id  string
		l   *online.Learner
		pos int64
	}
	series := make([]restored, 0, len(latest))
	changed, firstChanged, firstKeys := 0, "", ""
	for id, b := range latest {
		l, pos, err := online.RestoreCheckpoint(reg.ConfigFor(id), b)
		if err != nil {
			// A checkpoint of another configuration (the operator changed
			// the model) or a corrupt one: the series starts afresh.
			d.metrics.restoreFailures.Inc()
			d.cfg.Logger.Warn("restore: series starts afresh", "series", id, "partition", r.p.ID, "err", err)
			continue
		}
		if ch := l.ConfigChanged(); len(ch) > 0 {
			// Kept, with what it learned; one line per partition names the
			// first such series (a changed configuration touches them all).
			d.metrics.restoreConfigChanged.Inc()
			if changed++; changed == 1 {
				firstChanged, firstKeys = id, strings.Join(ch, ",")
			}
		}
		series = append(series, restored{id, l, pos})
	}
	if changed > 0 {
		d.cfg.Logger.Warn("restore: series learned under another configuration keep their state; structure keys take effect at their next re-choice",
			"partition", r.p.ID, "series", changed, "first", firstChanged, "changed", firstKeys)
	}
	slices.SortFunc(series, func(a, b restored) int { return cmp.Or(cmp.Compare(a.pos, b.pos), cmp.Compare(a.id, b.id)) })
	applied := make(map[string]int64, len(series))
	r.watermark = watermark // for the tombstones of series beyond the cap (onEvict)
	for _, s := range series {
		reg.Put(s.id, s.l)
		applied[s.id] = s.pos
	}
	for id := range applied { // beyond the live-series cap
		if _, ok := reg.Lookup(id); !ok {
			delete(applied, id)
		}
	}
	d.metrics.restored.Add(float64(reg.Len()))
	r.reg, r.applied, r.stateEnd, r.watermark = reg, applied, end, watermark
	for id := range applied {
		r.restoreSummary(id, metas[id])
	}
	return nil
}

// summaryMeta is what the daemon keeps of series id that its Learner's
// checkpoint does not hold — the running one-step scores and the latest
// forecast, which the API reports, and the kind of its t — written beside
// the checkpoint (checkpoint.Entry.Meta), so that a restart does not reset
// them. JSON: {"n", "in", "sse", "latest", "time"}.
func (r *partitionRun) summaryMeta(id string) []byte {
	var m summaryMeta
	if sc := r.scores[id]; sc != nil {
		m.N, m.In, m.SSE = sc.n, sc.in, optFloat(sc.sse)
	}
	if isTime, ok := r.timeKind[id]; ok {
		m.Time = &isTime
	}
	if _, s, ok := r.d.dir.lookup(id); ok {
		m.Latest = s.Latest
	}
	if msg := r.touched[id]; msg != nil {
		m.Latest = msg
	}
	b, err := json.Marshal(&m)
	if err != nil { // optFloat and Message encode every value
		panic(fmt.Sprintf("daemon: summary of %s: %v", id, err))
	}
	return b
}

// summaryMeta is the JSON of partitionRun.summaryMeta.
type summaryMeta struct {
	N      int64         `json:"n"`
	In     int64         `json:"in"`
	SSE    optFloat      `json:"sse"`
	Latest *sink.Message `json:"latest,omitempty"`
	// Time is whether the series' t are times (else sequence numbers);
	// absent before the series' first record was taken, and in the metas
	// of builds before it, whose restored series learn it from their next
	// record (partitionRun.timeKind).
	Time *bool `json:"time,omitempty"`
}

// restoreSummary restores series id's scores and latest forecast from its
// checkpoint's meta; a checkpoint without one (or an unreadable one) leaves
// them empty, as for a new series.
func (r *partitionRun) restoreSummary(id string, meta []byte) {
	if meta == nil {
		return
	}
	var m summaryMeta
	if err := json.Unmarshal(meta, &m); err != nil {
		r.d.cfg.Logger.Warn("restore: series summary unreadable; its scores start afresh", "series", id, "err", err)
		return
	}
	if m.N > 0 {
		r.scores[id] = &oneStep{n: m.N, in: m.In, sse: float64(m.SSE)}
	}
	if m.Latest != nil {
		r.touched[id] = m.Latest // published with the summary, not to the brokers
	}
	if m.Time != nil {
		if r.timeKind == nil {
			r.timeKind = map[string]bool{}
		}
		r.timeKind[id] = *m.Time
	}
}

// watermarkKey is the state topic key of a partition's watermark: the input
// offset the checkpoint it ends covers (big-endian int64). No series has
// the empty id: the decoder rejects a record without one.
const watermarkKey = ""

// checkpointSteps is the number of steps a checkpoint interval is taken in.
// A partition does not checkpoint every series it changed at once: a step
// is due every twentieth of CheckpointEvery or of CheckpointRecords
// records, and each series has its turn at one step in twenty (its slot, a
// hash of its id), when it is written if it changed since its last
// checkpoint. So a change is saved within an interval, as when every series
// was written at its end, and the partition writes about a twentieth of its
// changed series at each step: its goroutine encodes a few series rather
// than all of them (10–18 ms every 10 s at M = 50, which every record
// behind it waited for), and the writes to the state topic are as even.
// Slots by id, not by the time of a series' first change: series that
// started together, or were written together, would stay together. With
// CheckpointRecords below twenty, there are as many steps as records, so
// that a change is still saved within them.
const checkpointSteps = 20

// stepsPerInterval is the number of steps of r's checkpoint interval.
func (r *partitionRun) stepsPerInterval() int {
	return min(checkpointSteps, max(1, r.d.cfg.CheckpointRecords))
}

// checkpointSlot is the step, in [0, steps), at which series id is
// checkpointed.
func checkpointSlot(id string, steps int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(steps))
}

// checkpointStep puts in b, when a step is due, the changed series of the
// step's slot — of every slot when final — each one's checkpoint, or a
// tombstone for an evicted one, and last the watermark. It returns the
// watermark — the input offset the checkpoints then cover, which the offset
// commit may not pass: the first change of the oldest series still unsaved,
// or r.next when none is — and whether there is anything to write. Records
// below a restored watermark are skipped whole (decoder rejects and the
// records of series evicted since included, which no series offset covers);
// above it, each series' own offset says which records its state holds.
func (r *partitionRun) checkpointStep(b *pubBatch, final bool) (watermark int64, ok bool) {
	cfg := r.d.cfg
	now := time.Now()
	n := r.stepsPerInterval()
	if !final && now.Sub(r.lastStep) < cfg.CheckpointEvery/time.Duration(n) &&
		r.next-r.stepNext < int64(cfg.CheckpointRecords/n) {
		return 0, false
	}
	slot := r.steps % n
	if final {
		slot = -1 // every slot
	}
	r.lastStep, r.stepNext, r.steps = now, r.next, r.steps+1
	// A busy series' Learner is a worker's (pool.go): it stays dirty, and
	// the watermark below its first change, until a step after its work.
	var busy func(string) bool
	if len(r.busy) > 0 {
		busy = r.isBusy
	}
	due := r.dirty.take(slot, r.dueIDs[:0], busy)
	r.dueIDs = due[:0]
	watermark = r.next
	if first, ok := r.dirty.oldest(); ok {
		watermark = first
	}
	// Every record waiting for its series' work marked it dirty before
	// that series' first change that is still unsaved, so the watermark is
	// below them already; the floor says so where it matters.
	if floor, ok := r.pendingFloor(); ok && floor < watermark {
		watermark = floor
	}
	if len(due) == 0 && watermark <= r.committed {
		return 0, false
	}
	b.withCkpt, b.encodeStart = true, now
	b.checkpoint = make([]checkpoint.Entry, 0, len(due)+1)
	for _, id := range due {
		e := checkpoint.Entry{Key: id}
		if l, ok := r.reg.Lookup(id); ok {
			v, err := online.MarshalCheckpoint(l, r.applied[id])
			if err != nil { // a live learner always encodes
				panic(fmt.Sprintf("daemon: checkpoint of %s: %v", id, err))
			}
			e.Value = v
			e.Meta = r.summaryMeta(id)
			b.ckptBytes += len(v) + len(e.Meta)
		}
		b.checkpoint = append(b.checkpoint, e)
	}
	b.checkpoint = append(b.checkpoint, checkpoint.Entry{Key: watermarkKey, Value: binary.BigEndian.AppendUint64(nil, uint64(watermark))})
	return watermark, true
}

// dirtySeries is the set of series changed since their last checkpoint, by
// checkpoint slot, each slot's in the order of their first change (whose
// input offset grows along it). A step takes one slot whole, and the oldest
// change is at the head of one of them: O(1) per mark, O(taken + slots) per
// step, however many series a partition holds.
type dirtySeries struct {
	live  map[string]struct{}
	slots [][]dirtyEntry
}

// dirtyEntry is a series' first change since its last checkpoint, at input
// offset first.
type dirtyEntry struct {
	id    string
	first int64
}

// newDirtySeries returns an empty set of the given number of slots.
func newDirtySeries(slots int) dirtySeries {
	return dirtySeries{live: map[string]struct{}{}, slots: make([][]dirtyEntry, slots)}
}

func (d *dirtySeries) len() int { return len(d.live) }

// mark notes a change of series id at input offset first; a series already
// marked keeps its older first change.
func (d *dirtySeries) mark(id string, first int64) {
	if _, ok := d.live[id]; ok {
		return
	}
	d.live[id] = struct{}{}
	s := checkpointSlot(id, len(d.slots))
	d.slots[s] = append(d.slots[s], dirtyEntry{id: id, first: first})
}

// take removes the series of slot (every slot if slot < 0) and appends them
// to dst, except those keep reports (keep may be nil), which stay in their
// place.
func (d *dirtySeries) take(slot int, dst []string, keep func(id string) bool) []string {
	for s := range d.slots {
		if slot >= 0 && s != slot {
			continue
		}
		kept := d.slots[s][:0]
		for _, e := range d.slots[s] {
			if keep != nil && keep(e.id) {
				kept = append(kept, e)
				continue
			}
			delete(d.live, e.id)
			dst = append(dst, e.id)
		}
		clear(d.slots[s][len(kept):]) // the ids are garbage now
		d.slots[s] = kept
	}
	return dst
}

// oldest returns the first change of the oldest series; false if none.
func (d *dirtySeries) oldest() (first int64, ok bool) {
	for _, es := range d.slots {
		if len(es) > 0 && (!ok || es[0].first < first) {
			first, ok = es[0].first, true
		}
	}
	return first, ok
}
