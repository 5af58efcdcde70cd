package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/streamd/streamd/internal/narx"
	"github.com/streamd/streamd/internal/online"
	"github.com/streamd/streamd/internal/sink"
	"github.com/streamd/streamd/internal/webui"
)

// The HTTP series API. Learners are owned by their partition goroutine (or,
// while their series is busy, a worker: pool.go), so: reads (/v1/series,
// /v1/series/{id}) use the per-series summaries each partition publishes at
// every flush, and a what-if forecast goes to the owning goroutine through
// its request channel, which hands back a copy of the model taken behind
// the series' own pending work (online.Learner.ForecastCopy); the forecast
// runs on the request's goroutine in the what-if lane (pool.go), so that no
// record is held up by it.

// SeriesSummary is what /v1/series and /v1/series/{id} report of a series.
type SeriesSummary struct {
	ID        string `json:"id"`
	Partition int    `json:"partition"`
	Topic     string `json:"topic"`
	LastT     int64  `json:"last_t"`
	// Time says the series' t are times in Unix milliseconds (true) or
	// sequence numbers (false); absent before its first record.
	Time     *bool `json:"time,omitempty"`
	Fitted   bool  `json:"fitted"`
	Outliers int64 `json:"outliers"`
	Bytes    int   `json:"bytes"`
	// Running one-step scores since the fit: the RMSE of the one-step
	// predictions and the share of values inside their 95 % band.
	// Non-finite numbers (a ruined model's) are reported as null.
	Predicted  int64          `json:"predicted"`
	OneStepRMS optFloat       `json:"one_step_rmse"`
	Coverage95 optFloat       `json:"coverage95"`
	Model      sink.ModelInfo `json:"model"`
	// Level is the level of the forecasts' [lo, hi] bands.
	Level optFloat `json:"level"`
	// Latest is the last forecast message published for the series.
	Latest *sink.Message `json:"latest,omitempty"`
	// Updated is when the summary was published (wall clock, UTC).
	Updated time.Time `json:"updated"`
	// History holds the series' last observations (histLen at most), oldest
	// first: read-only, it shares the partition goroutine's buffer. The web
	// view's endpoint reports it.
	History []HistoryPoint `json:"-"`
	// seq is the directory's publication count when the summary was
	// published: the event streams send what changed since they last sent.
	seq uint64
}

// HistoryPoint is one observation of a series with its one-step verdict
// (series' units). Fitted is false in warm-up: there was no prediction, and
// Prediction and Std are zero.
type HistoryPoint struct {
	T          int64
	Y          float64
	Prediction float64
	Std        float64
	Fitted     bool
	Outlier    bool
}

// directory maps series ids to the partition run that owns them and holds
// their published summaries. Safe for concurrent use.
type directory struct {
	mu     sync.RWMutex
	owners map[string]*partitionRun
	sums   map[string]SeriesSummary
	// seq counts publications and drops; changed, when an event stream
	// waits, is closed at the next notify.
	seq     uint64
	changed chan struct{}
}

func newDirectory() *directory {
	return &directory{owners: map[string]*partitionRun{}, sums: map[string]SeriesSummary{}}
}

func (dir *directory) publish(r *partitionRun, s SeriesSummary) {
	dir.mu.Lock()
	dir.seq++
	s.seq = dir.seq
	dir.owners[s.ID] = r
	dir.sums[s.ID] = s
	dir.mu.Unlock()
}

// watch returns a channel that notify closes.
func (dir *directory) watch() <-chan struct{} {
	dir.mu.Lock()
	defer dir.mu.Unlock()
	if dir.changed == nil {
		dir.changed = make(chan struct{})
	}
	return dir.changed
}

// notify wakes the watchers after a flush's publications (nothing to do, and
// no allocation, when nobody watches).
func (dir *directory) notify() {
	dir.mu.Lock()
	if dir.changed != nil {
		close(dir.changed)
		dir.changed = nil
	}
	dir.mu.Unlock()
}

// drop forgets series ids owned by r (after eviction or when r ends).
func (dir *directory) drop(r *partitionRun, ids ...string) {
	dir.mu.Lock()
	dropped := false
	for _, id := range ids {
		if dir.owners[id] == r {
			delete(dir.owners, id)
			delete(dir.sums, id)
			dropped = true
		}
	}
	if dropped {
		dir.seq++
	}
	dir.mu.Unlock()
	if dropped {
		dir.notify()
	}
}

func (dir *directory) lookup(id string) (*partitionRun, SeriesSummary, bool) {
	dir.mu.RLock()
	defer dir.mu.RUnlock()
	r, ok := dir.owners[id]
	return r, dir.sums[id], ok
}

// seriesOrders are the orders of a series list (the sort parameter): by id,
// or by a score, ties by id (ascending in either direction). A score that
// is null (nothing predicted yet, or a ruined model's: the order's null)
// sorts last in either direction (page).
var seriesOrders = map[string]seriesOrder{
	"id":       {cmp: func(a, b *SeriesSummary) int { return cmp.Compare(a.ID, b.ID) }},
	"rmse":     {cmp: func(a, b *SeriesSummary) int { return cmp.Compare(a.OneStepRMS, b.OneStepRMS) }, null: func(s *SeriesSummary) bool { return s.OneStepRMS.null() }},
	"coverage": {cmp: func(a, b *SeriesSummary) int { return cmp.Compare(a.Coverage95, b.Coverage95) }, null: func(s *SeriesSummary) bool { return s.Coverage95.null() }},
	"outliers": {cmp: func(a, b *SeriesSummary) int { return cmp.Compare(a.Outliers, b.Outliers) }},
	"updated":  {cmp: func(a, b *SeriesSummary) int { return a.Updated.Compare(b.Updated) }},
	"last_t":   {cmp: func(a, b *SeriesSummary) int { return cmp.Compare(a.LastT, b.LastT) }},
}

// seriesOrder compares two summaries by a key; null, when set, says a
// summary has no value of it.
type seriesOrder struct {
	cmp  func(a, b *SeriesSummary) int
	null func(s *SeriesSummary) bool
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// page returns items offset.. (at most limit) of the series sorted by order
// (a key of seriesOrders; descending when desc), the total number of series
// and the directory's publication count. O(n log n) in the number of series.
func (dir *directory) page(offset, limit int, withLatest bool, order string, desc bool) (items []SeriesSummary, total int, seq uint64) {
	by, ok := seriesOrders[order]
	if !ok {
		by = seriesOrders["id"]
	}
	dir.mu.RLock()
	all := make([]SeriesSummary, 0, len(dir.sums))
	for _, s := range dir.sums {
		all = append(all, s)
	}
	seq = dir.seq
	dir.mu.RUnlock()
	slices.SortFunc(all, func(a, b SeriesSummary) int {
		if null := by.null; null != nil {
			if na, nb := null(&a), null(&b); na || nb {
				if na && nb {
					return cmp.Compare(a.ID, b.ID)
				}
				return cmpBool(na, nb)
			}
		}
		c := by.cmp(&a, &b)
		if desc {
			c = -c
		}
		if c == 0 { // by id, whatever the direction
			c = cmp.Compare(a.ID, b.ID)
		}
		return c
	})
	total = len(all)
	offset = min(offset, total)
	items = all[offset:min(total, offset+limit)]
	if !withLatest {
		for i := range items {
			items[i].Latest = nil // the HTTP list stays small; the detail has it
		}
	}
	return items, total, seq
}

// Series returns a page of the series summaries, sorted by id, each with its
// latest forecast, and the total number of series.
func (d *Daemon) Series(offset, limit int) ([]SeriesSummary, int) {
	items, total, _ := d.dir.page(offset, limit, true, "id", false)
	return items, total
}

// errNotOwned: the series is not (or no longer) on this instance.
var errNotOwned = errors.New("series not owned by this instance")

// onOwner runs fn with series id's Learner owned — on its partition
// goroutine, after the series' work in flight — and waits for it. fn holds
// up the partition: it must be cheap (a copy, a read). It does not run once
// ctx has ended.
func (d *Daemon) onOwner(ctx context.Context, id string, fn func(l *online.Learner)) error {
	r, _, ok := d.dir.lookup(id)
	if !ok {
		return errNotOwned
	}
	if d.pool != nil {
		d.pool.waitLive(ctx)
	}
	q := &ownerReq{ctx: ctx, id: id, fn: fn, done: make(chan error, 1)}
	select {
	case r.reqs <- q:
	case <-r.gone:
		return errNotOwned
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-q.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Daemon) apiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/series", func(w http.ResponseWriter, req *http.Request) {
		q, ok := listQueryOf(w, req)
		if !ok {
			return
		}
		items, total, _ := d.dir.page(q.offset, q.limit, false, q.sort, q.desc)
		writeJSON(w, http.StatusOK, q.body(items, total))
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

// listQuery is the query of a series list: offset, limit (1..1000, default
// 100), sort (a key of seriesOrders, default id) and order (asc or desc).
type listQuery struct {
	offset, limit int
	sort          string
	desc          bool
}

// listQueryOf parses req's list query; on a bad sort or order it answers 400
// and returns false.
func listQueryOf(w http.ResponseWriter, req *http.Request) (listQuery, bool) {
	v := req.URL.Query()
	q := listQuery{sort: cmp.Or(v.Get("sort"), "id")}
	q.offset, _ = strconv.Atoi(v.Get("offset"))
	q.offset = max(q.offset, 0)
	limit, err := strconv.Atoi(v.Get("limit"))
	if err != nil || limit <= 0 || limit > 1000 {
		limit = 100
	}
	q.limit = limit
	if _, ok := seriesOrders[q.sort]; !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "sort must be one of id, rmse, coverage, outliers, updated, last_t"})
		return q, false
	}
	switch v.Get("order") {
	case "", "asc":
	case "desc":
		q.desc = true
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "order must be asc or desc"})
		return q, false
	}
	return q, true
}

func (q listQuery) body(items []SeriesSummary, total int) map[string]any {
	return map[string]any{"total": total, "offset": q.offset, "limit": q.limit, "series": items}
}

// whatIfRequest is the body of POST /v1/series/{id}/forecast: the horizon
// and the planned exogenous inputs for each future step (series' units).
type whatIfRequest struct {
	Horizon int         `json:"horizon"`
	Inputs  [][]float64 `json:"inputs"`
}

// parseWhatIf reads a what-if body: one JSON object with a horizon in
// 1..maxHorizon and at most one input row per step, none null; every way
// it can be wrong has its own message.
func parseWhatIf(r io.Reader, maxHorizon int) (whatIfRequest, error) {
	var body whatIfRequest
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return body, fmt.Errorf("body: want one JSON object {\"horizon\": 1..%d, \"inputs\": [[...], ...]}: %v", maxHorizon, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return body, errors.New("body: data after the JSON object")
	}
	if body.Horizon < 1 || body.Horizon > maxHorizon {
		return body, fmt.Errorf("horizon must be 1..%d (got %d)", maxHorizon, body.Horizon)
	}
	if len(body.Inputs) > body.Horizon {
		return body, fmt.Errorf("inputs: %d rows for a horizon of %d; want one per step", len(body.Inputs), body.Horizon)
	}
	for h, row := range body.Inputs {
		if row == nil {
			return body, fmt.Errorf("inputs[%d] is null; want an array of numbers", h)
		}
	}
	return body, nil
}

// whatIf computes a forecast for planned future inputs from the current
// model without changing it (the control-loop use). At most
// WhatIfMaxConcurrent run at once; more are answered 429 (503 once the
// daemon is closing).
func (d *Daemon) whatIf(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	body, err := parseWhatIf(http.MaxBytesReader(w, req.Body, 1<<20), d.cfg.HTTP.WhatIfMaxHorizon)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if d.closing.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "shutting down"})
		return
	}
	// The slot is given back before the answer is written: a client that
	// sends its next request once it has read an answer must find it free.
	held := false
	release := func() {
		if held {
			held = false
			<-d.whatIfSlots
		}
	}
	defer release() // also if this handler panics
	select {
	case d.whatIfSlots <- struct{}{}:
		held = true
	default:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{
			"error": fmt.Sprintf("%d what-if forecasts under way (http.what_if.max_concurrent); retry later", cap(d.whatIfSlots))})
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), 10*time.Second)
	defer cancel()
	// The series is held only for the copy: its records go on while the
	// forecast, milliseconds at a long horizon, runs here.
	var c *online.Learner
	var info sink.ModelInfo
	err = d.onOwner(ctx, id, func(l *online.Learner) {
		c, info = l.ForecastCopy(), ModelInfoOf(l)
	})
	var answer []byte
	var ferr, encErr error
	if err == nil {
		if c.Inputs() == 0 && len(body.Inputs) > 0 {
			ferr = errors.New("the series' model has no inputs; leave inputs out")
		} else {
			if hook := d.cfg.beforeWhatIf; hook != nil {
				hook(id)
			}
			// The answer is encoded in the lane too, so that the lane's
			// pacing counts it (at a long horizon it is a large part of a
			// what-if's CPU: BenchmarkWhatIfParts), with the message's own
			// encoder rather than json.Marshal, which runs that encoder and
			// then scans its output again.
			steps := make([]online.ForecastStep, body.Horizon)
			err = d.whatIfs.run(ctx, func() {
				if ferr = c.Forecast(steps, body.Inputs); ferr != nil {
					return
				}
				if !c.Fitted() {
					info = ModelInfoOf(c) // the theta method the copy's young forecast was fitted
				}
				msg := sink.Message{Series: id, T: c.LastT(), IssuedAt: time.Now().UTC(), Model: info}
				SetSteps(&msg, steps)
				answer, encErr = msg.AppendJSON(make([]byte, 0, 128*len(steps)+1024))
			})
		}
	}
	release()
	switch {
	case errors.Is(err, errNotOwned):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case err != nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
	case ferr != nil:
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": ferr.Error()})
	case encErr != nil: // Message encodes every value: a programming error
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "encode response: " + encErr.Error()})
	default:
		writeBody(w, http.StatusOK, answer)
	}
}

// writeJSON answers code with v's JSON encoding. It encodes before writing
// the status, so that a value that cannot be encoded is answered 500 with
// the reason rather than code with an empty body. (The API's types encode
// non-finite numbers as null, so that is a programming error.)
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "encode response: " + err.Error()})
	}
	writeBody(w, code, b)
}

// writeBody answers code with b, a JSON value.
func writeBody(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// The web view (internal/webui) draws what these endpoints send: a series'
// view (GET /v1/series/{id}/view), and event streams (server-sent events)
// that send it again, or the series list, whenever a flush published a
// change. All are read-only and read the published summaries.

// FanLevels are the levels of the central intervals the fan chart draws.
var FanLevels = []float64{0.5, 0.8, 0.95}

// FanStep is one forecast step as the fan chart draws it: Lo[i], Hi[i] bound
// the central interval at FanLevels[i].
type FanStep struct {
	H    int        `json:"h"`
	T    int64      `json:"t"`
	Mean optFloat   `json:"mean"`
	Lo   []optFloat `json:"lo"`
	Hi   []optFloat `json:"hi"`
}

// fan returns the intervals of each step at FanLevels from the band [lo, hi]
// the step reports at level: its predictive distribution is symmetric about
// the point forecast in the form the model learns (y, or ln y for the forms
// "log" and "log+diff"), a Student t of df degrees of freedom (the message's
// model.df; 0: a normal), and its bounds are that distribution's quantiles
// carried back, so each side scales with the quantile: the bound at level p
// is mean + (hi − mean)·q_p/q_level in that form, mapped back, exact for
// either distribution. A fallback step (sink.Step.Fallback) is a normal in
// y whatever the form, but a young series' (youngDF > 0: the message's
// model.theta.df when its kernel is "none"), which is Student's t of youngDF
// degrees of freedom at scale std.
func fan(steps []sink.Step, form string, level, df, youngDF float64) []FanStep {
	inLogs := form == "log" || form == "log+diff"
	// half[d][i]: the half-width at FanLevels[i] in stds, for a normal
	// (d = 0), the model's t scaled to variance std² (d = 1) and the young
	// t at scale std (d = 2); ratio[d][i]: that over the half-width at
	// level, in which a t's scale cancels.
	const normal, modelT, youngT = 0, 1, 2
	quantile := [3]func(p float64) float64{
		func(p float64) float64 { return narx.StandardQuantile(0, p) },
		func(p float64) float64 { return narx.StandardQuantile(df, p) },
		func(p float64) float64 { return narx.TQuantile(youngDF, 0.5+p/2) },
	}
	var ratio, half [3][]float64
	for d, q := range quantile {
		if (d == modelT && !(df > 2)) || (d == youngT && !(youngDF > 0)) {
			continue // not used: a t of df ≤ 2 has no variance to scale to, and the models' have more
		}
		ql := q(level)
		for _, p := range FanLevels {
			qp := q(p)
			ratio[d], half[d] = append(ratio[d], qp/ql), append(half[d], qp)
		}
	}
	id := func(v float64) float64 { return v }
	out := make([]FanStep, len(steps))
	for k, s := range steps {
		f := FanStep{H: s.H, T: s.T, Mean: optFloat(s.Mean), Lo: make([]optFloat, len(FanLevels)), Hi: make([]optFloat, len(FanLevels))}
		to, from := id, id
		if inLogs && !s.Fallback { // a fallback step is a distribution in y
			to, from = math.Log, math.Exp
		}
		m, lo, hi := to(s.Mean), to(s.Lo), to(s.Hi)
		ok := !(math.IsNaN(m) || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(m, 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0))
		d := modelT
		switch {
		case s.Fallback && youngDF > 0:
			d = youngT
		case s.Fallback || !(df > 2):
			d = normal
		}
		for i, r := range ratio[d] {
			if !ok { // a bound at 0 in logs: fall back to the std
				z := half[d][i]
				f.Lo[i], f.Hi[i] = optFloat(s.Mean-z*s.Std), optFloat(s.Mean+z*s.Std)
				continue
			}
			f.Lo[i], f.Hi[i] = optFloat(from(m-(m-lo)*r)), optFloat(from(m+(hi-m)*r))
		}
		out[k] = f
	}
	return out
}

// coverageWindow is the number of predicted observations the view's running
// coverage counts.
const coverageWindow = 50

// z95 is the standard normal quantile of 0.975, the 95 % band the running
// scores count (as oneStep does).
const z95 = 1.959963984540054

// seriesView is the body of GET /v1/series/{id}/view and of the series
// event stream: the summary with its latest forecast, the forecast's fan
// and the recent observations, column by column (null where an observation
// had no prediction: in warm-up).
type seriesView struct {
	SeriesSummary
	Levels  []float64      `json:"levels"`
	Fan     []FanStep      `json:"fan"`
	History historyColumns `json:"history"`
}

type historyColumns struct {
	T          []int64    `json:"t"`
	Y          []optFloat `json:"y"`
	Prediction []optFloat `json:"prediction"`
	Std        []optFloat `json:"std"`
	// Error is y − prediction; Coverage the share of the last
	// coverageWindow predicted observations (this one included) inside
	// their 95 % band.
	Error    []optFloat `json:"error"`
	Coverage []optFloat `json:"coverage"`
	Outlier  []bool     `json:"outlier"`
}

// optFloat is a number that encodes NaN and ±Inf, which JSON lacks, as null.
type optFloat float64

// null says f encodes as null: it is not finite.
func (f optFloat) null() bool { return math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) }

func (f optFloat) MarshalJSON() ([]byte, error) {
	if f.null() {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func viewOf(s SeriesSummary) seriesView {
	v := seriesView{SeriesSummary: s, Levels: FanLevels, Fan: []FanStep{}}
	if s.Latest != nil {
		// The latest message's model made its steps (the summary's model
		// may be newer, after a refit that has not forecast yet).
		mi := s.Latest.Model
		youngDF := 0.0
		if mi.Kernel == youngKernel && mi.Theta != nil {
			youngDF = mi.Theta.DF
		}
		v.Fan = fan(s.Latest.Steps, mi.Form, float64(s.Level), mi.DF, youngDF)
	}
	n := len(s.History)
	c := historyColumns{T: make([]int64, n), Y: make([]optFloat, n), Prediction: make([]optFloat, n),
		Std: make([]optFloat, n), Error: make([]optFloat, n), Coverage: make([]optFloat, n), Outlier: make([]bool, n)}
	in := make([]bool, 0, n) // inside the band, per predicted observation
	inside := 0
	for i, p := range s.History {
		c.T[i], c.Y[i], c.Outlier[i] = p.T, optFloat(p.Y), p.Outlier
		if !p.Fitted {
			nan := optFloat(math.NaN())
			c.Prediction[i], c.Std[i], c.Error[i], c.Coverage[i] = nan, nan, nan, nan
			continue
		}
		e := p.Y - p.Prediction
		c.Prediction[i], c.Std[i], c.Error[i] = optFloat(p.Prediction), optFloat(p.Std), optFloat(e)
		ok := math.Abs(e) <= z95*p.Std
		in = append(in, ok)
		if ok {
			inside++
		}
		if len(in) > coverageWindow && in[len(in)-1-coverageWindow] {
			inside--
		}
		c.Coverage[i] = optFloat(float64(inside) / float64(min(len(in), coverageWindow)))
	}
	v.History = c
	return v
}

// The updates of an event stream are spaced: a series that changes at every
// record is sent at most four times a second, and the list, which sorts
// every series for each update, once a second.
const (
	seriesEventInterval = 250 * time.Millisecond
	listEventInterval   = time.Second
)

// eventKeepAlive is how often an idle event stream sends a comment, so that
// proxies do not close it.
const eventKeepAlive = 15 * time.Second

// eventWriteTimeout bounds one write of an event stream: two keep-alive
// periods.
const eventWriteTimeout = 2 * eventKeepAlive

func (d *Daemon) webRoutes(mux *http.ServeMux) {
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	mux.Handle("GET /ui/", http.StripPrefix("/ui", webui.Handler()))
	mux.HandleFunc("GET /v1/series/{id}/view", func(w http.ResponseWriter, req *http.Request) {
		_, s, ok := d.dir.lookup(req.PathValue("id"))
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": errNotOwned.Error()})
			return
		}
		writeJSON(w, http.StatusOK, viewOf(s))
	})
	// The list's stream sends the page its query asks for (as GET
	// /v1/series) after every change.
	mux.HandleFunc("GET /v1/events/series", func(w http.ResponseWriter, req *http.Request) {
		q, ok := listQueryOf(w, req)
		if !ok {
			return
		}
		d.serveEvents(w, req, "series", listEventInterval, func() (any, uint64) {
			items, total, seq := d.dir.page(q.offset, q.limit, false, q.sort, q.desc)
			return q.body(items, total), seq
		})
	})
	// A series' stream sends its view after every change; null while the
	// series is not on this instance (evicted, or moved by a rebalance).
	mux.HandleFunc("GET /v1/events/series/{id}", func(w http.ResponseWriter, req *http.Request) {
		id := req.PathValue("id")
		d.serveEvents(w, req, "view", seriesEventInterval, func() (any, uint64) {
			_, s, ok := d.dir.lookup(id)
			if !ok {
				return nil, 0
			}
			return viewOf(s), s.seq
		})
	})
}

// serveEvents streams snapshot's value as server-sent events of type event:
// the first at once, then one whenever its version changed after a
// publication, at most one per interval. It ends when the client goes, the
// server shuts down, or a write (an event or a keep-alive) is not taken
// within eventWriteTimeout: a client that stopped reading without closing
// would otherwise hold the handler until TCP gives up.
func (d *Daemon) serveEvents(w http.ResponseWriter, req *http.Request, event string, interval time.Duration,
	snapshot func() (v any, version uint64)) {
	rc := http.NewResponseController(w)
	// A stream outlives the server's write timeout; each write has its own.
	send := func(s string) bool {
		rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout))
		_, err := io.WriteString(w, s)
		return err == nil && rc.Flush() == nil
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not buffer the stream
	w.WriteHeader(http.StatusOK)
	keepAlive := time.NewTicker(eventKeepAlive)
	defer keepAlive.Stop()
	sent, first := uint64(0), true
	for {
		changed := d.dir.watch() // before the snapshot: no change is missed
		if v, version := snapshot(); first || version != sent {
			b, err := json.Marshal(v)
			if err != nil {
				return
			}
			if !send("event: " + event + "\ndata: " + string(b) + "\n\n") {
				return
			}
			sent, first = version, false
		}
		select {
		case <-changed:
		case <-keepAlive.C:
			if !send(": keep-alive\n\n") {
				return
			}
			continue
		case <-req.Context().Done():
			return
		case <-d.quit:
			return
		}
		select {
		case <-time.After(interval):
		case <-req.Context().Done():
			return
		case <-d.quit:
			return
		}
	}
}
