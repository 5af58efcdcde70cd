package online

import (
	"container/list"
	"fmt"
	"path"
	"slices"
)

// Override applies Config to the series whose id matches the glob Match
// (path.Match syntax: *, ?, [...]).
type Override struct {
	Match  string
	Config Config
}

// RegistryConfig configures a Registry.
type RegistryConfig struct {
	// Default is the configuration of a series no override matches.
	Default Config
	// Overrides are tried in order; the first match wins.
	Overrides []Override
	// MaxSeries caps the live series; beyond it the least recently used
	// series is evicted (its state is dropped). 0 means no cap.
	MaxSeries int
	// OnEvict, if set, is called with the id of every evicted series.
	OnEvict func(id string)
}

// Validate reports the first invalid configuration or pattern.
func (c RegistryConfig) Validate() error {
	if err := c.Default.Validate(); err != nil {
		return fmt.Errorf("default: %w", err)
	}
	for i, o := range c.Overrides {
		if _, err := path.Match(o.Match, ""); err != nil {
			return fmt.Errorf("override %d: bad pattern %q: %w", i, o.Match, err)
		}
		if err := o.Config.Validate(); err != nil {
			return fmt.Errorf("override %d (%s): %w", i, o.Match, err)
		}
	}
	if c.MaxSeries < 0 {
		return fmt.Errorf("max series must be ≥ 0 (got %d)", c.MaxSeries)
	}
	return nil
}

// Registry holds the Learners of the series one owner sees, creating them on
// first use and evicting the least recently used one beyond MaxSeries, so
// that unbounded key cardinality cannot exhaust memory.
//
// A Registry is owned by exactly one goroutine (in the daemon, the goroutine
// of one partition): it has no locks.
type Registry struct {
	cfg     RegistryConfig
	series  map[string]*list.Element // of *registryEntry
	lru     *list.List               // front = most recently used
	evicted int64
}

type registryEntry struct {
	id string
	l  *Learner
}

// NewRegistry returns an empty registry.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Registry{cfg: cfg, series: map[string]*list.Element{}, lru: list.New()}, nil
}

// ConfigFor returns the configuration series id gets: the first matching
// override, else the default.
func (r *Registry) ConfigFor(id string) Config {
	for _, o := range r.cfg.Overrides {
		if ok, _ := path.Match(o.Match, id); ok {
			return o.Config
		}
	}
	return r.cfg.Default
}

// Get returns the Learner of series id, creating it (and evicting the least
// recently used series if the registry is full) when it is new, and marks it
// the most recently used. created reports a new Learner.
func (r *Registry) Get(id string) (l *Learner, created bool, err error) {
	if e, ok := r.series[id]; ok {
		r.lru.MoveToFront(e)
		return e.Value.(*registryEntry).l, false, nil
	}
	l, err = NewLearner(r.ConfigFor(id))
	if err != nil {
		return nil, false, err
	}
	r.insert(id, l)
	return l, true, nil
}

// insert adds a new series as the most recently used, evicting the least
// recently used one if the registry is full.
func (r *Registry) insert(id string, l *Learner) {
	if r.cfg.MaxSeries > 0 && r.lru.Len() >= r.cfg.MaxSeries {
		r.evictOldest()
	}
	r.series[id] = r.lru.PushFront(&registryEntry{id: id, l: l})
}

// evictOldest removes the least recently used series, calling OnEvict.
func (r *Registry) evictOldest() {
	oldest := r.lru.Back()
	gone := oldest.Value.(*registryEntry).id
	delete(r.series, gone)
	r.lru.Remove(oldest)
	r.evicted++
	if r.cfg.OnEvict != nil {
		r.cfg.OnEvict(gone)
	}
}

// Put installs l (e.g. restored from a checkpoint) as the Learner of series
// id, as Get would place a new one.
func (r *Registry) Put(id string, l *Learner) {
	if e, ok := r.series[id]; ok {
		e.Value.(*registryEntry).l = l
		r.lru.MoveToFront(e)
		return
	}
	r.insert(id, l)
}

// EvictOldest evicts the least recently used series (calling OnEvict) and
// reports whether it did: not when one series or none is left, so that the
// series a caller just created is never the one evicted.
func (r *Registry) EvictOldest() bool {
	if r.lru.Len() <= 1 {
		return false
	}
	r.evictOldest()
	return true
}

// SetOnEvict replaces the eviction callback (a registry handed from one
// owner to the next).
func (r *Registry) SetOnEvict(fn func(id string)) { r.cfg.OnEvict = fn }

// Lookup returns the Learner of series id without creating it or changing
// the recency order.
func (r *Registry) Lookup(id string) (*Learner, bool) {
	e, ok := r.series[id]
	if !ok {
		return nil, false
	}
	return e.Value.(*registryEntry).l, true
}

// Len returns the number of live series.
func (r *Registry) Len() int { return r.lru.Len() }

// Evicted returns how many series were evicted so far.
func (r *Registry) Evicted() int64 { return r.evicted }

// IDs returns the live series ids in sorted order (deterministic, unlike the
// map behind the registry).
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.series))
	for id := range r.series {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
