package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
)

// The HTTP series API. Learners are owned by their partition goroutine, so:
// reads (/v1/series, /v1/series/{id}) use the per-series summaries each
// partition publishes at every flush, and a what-if forecast is computed by
// the owning goroutine itself, through its request channel.

// SeriesSummary is what /v1/series and /v1/series/{id} report of a series.
type SeriesSummary struct {
	ID        string `json:"id"`
	Partition int    `json:"partition"`
	Topic     string `json:"topic"`
	LastT     int64  `json:"last_t"`
	Fitted    bool   `json:"fitted"`
	Outliers  int64  `json:"outliers"`
	Bytes     int    `json:"bytes"`
	// Running one-step scores since the fit: the RMSE of the one-step
	// predictions and the share of values inside their 95 % band.
	Predicted  int64          `json:"predicted"`
	OneStepRMS float64        `json:"one_step_rmse"`
	Coverage95 float64        `json:"coverage95"`
	Model      sink.ModelInfo `json:"model"`
	// Latest is the last forecast message published for the series.
	Latest *sink.Message `json:"latest,omitempty"`
}

// directory maps series ids to the partition run that owns them and holds
// their published summaries. Safe for concurrent use.
type directory struct {
	mu     sync.RWMutex
	owners map[string]*partitionRun
	sums   map[string]SeriesSummary
}

func newDirectory() *directory {
	return &directory{owners: map[string]*partitionRun{}, sums: map[string]SeriesSummary{}}
}

func (dir *directory) publish(r *partitionRun, s SeriesSummary) {
	dir.mu.Lock()
	dir.owners[s.ID] = r
	dir.sums[s.ID] = s
	dir.mu.Unlock()
}

// drop forgets series ids owned by r (after eviction or when r ends).
func (dir *directory) drop(r *partitionRun, ids ...string) {
	dir.mu.Lock()
	for _, id := range ids {
		if dir.owners[id] == r {
			delete(dir.owners, id)
			delete(dir.sums, id)
		}
	}
	dir.mu.Unlock()
}

func (dir *directory) lookup(id string) (*partitionRun, SeriesSummary, bool) {
	dir.mu.RLock()
	defer dir.mu.RUnlock()
	r, ok := dir.owners[id]
	return r, dir.sums[id], ok
}

func (dir *directory) page(offset, limit int, withLatest bool) (items []SeriesSummary, total int) {
	dir.mu.RLock()
	ids := make([]string, 0, len(dir.sums))
	for id := range dir.sums {
		ids = append(ids, id)
	}
	dir.mu.RUnlock()
	slices.Sort(ids)
	total = len(ids)
	if offset > total {
		offset = total
	}
	ids = ids[offset:min(total, offset+limit)]
	dir.mu.RLock()
	defer dir.mu.RUnlock()
	for _, id := range ids {
		if s, ok := dir.sums[id]; ok {
			if !withLatest {
				s.Latest = nil // the HTTP list stays small; the detail has it
			}
			items = append(items, s)
		}
	}
	return items, total
}

// Series returns a page of the series summaries, sorted by id, each with its
// latest forecast, and the total number of series.
func (d *Daemon) Series(offset, limit int) ([]SeriesSummary, int) {
	return d.dir.page(offset, limit, true)
}

// errNotOwned: the series is not (or no longer) on this instance.
var errNotOwned = errors.New("series not owned by this instance")

// onOwner runs fn on the goroutine that owns series id and waits for it.
func (d *Daemon) onOwner(ctx context.Context, id string, fn func(l *online.Learner)) error {
	r, _, ok := d.dir.lookup(id)
	if !ok {
		return errNotOwned
	}
	done := make(chan bool, 1)
	req := func() {
		l, ok := r.reg.Lookup(id)
		if ok {
			fn(l)
		}
		done <- ok
	}
	select {
	case r.reqs <- req:
	case <-r.gone:
		return errNotOwned
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case ok := <-done:
		if !ok {
			return errNotOwned
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Daemon) apiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/series", func(w http.ResponseWriter, req *http.Request) {
		offset, _ := strconv.Atoi(req.URL.Query().Get("offset"))
		limit, err := strconv.Atoi(req.URL.Query().Get("limit"))
		if err != nil || limit <= 0 || limit > 1000 {
			limit = 100
		}
		items, total := d.dir.page(max(offset, 0), limit, false)
		writeJSON(w, http.StatusOK, map[string]any{"total": total, "offset": offset, "limit": limit, "series": items})
	})
	mux.HandleFunc("GET /v1/series/{id}", func(w http.ResponseWriter, req *http.Request) {
		_, s, ok := d.dir.lookup(req.PathValue("id"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": errNotOwned.Error()})
			return
		}
		writeJSON(w, http.StatusOK, s)
	})
	mux.HandleFunc("POST /v1/series/{id}/forecast", d.whatIf)
}

// whatIfRequest is the body of POST /v1/series/{id}/forecast: the horizon
// and the planned exogenous inputs for each future step (series' units).
type whatIfRequest struct {
	Horizon int         `json:"horizon"`
	Inputs  [][]float64 `json:"inputs"`
}

// maxWhatIfHorizon bounds a what-if request's work.
const maxWhatIfHorizon = 10000

// whatIf computes a forecast for planned future inputs from the current
// model without changing it (the control-loop use).
func (d *Daemon) whatIf(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	var body whatIfRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 1<<20))
	if err := dec.Decode(&body); err != nil || body.Horizon < 1 || body.Horizon > maxWhatIfHorizon {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want {\"horizon\": 1..10000, \"inputs\": [[...], ...]}"})
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
	defer cancel()
	var msg sink.Message
	var ferr error
	err := d.onOwner(ctx, id, func(l *online.Learner) {
		steps := make([]online.ForecastStep, body.Horizon)
		if ferr = l.Forecast(steps, body.Inputs); ferr != nil {
			return
		}
		msg = sink.Message{Series: id, IssuedAt: time.Now().UTC(), Model: sink.ModelInfoOf(l)}
		msg.SetSteps(steps)
	})
	switch {
	case errors.Is(err, errNotOwned):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
	case ferr != nil:
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": ferr.Error()})
	default:
		writeJSON(w, http.StatusOK, &msg)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
