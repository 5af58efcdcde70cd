package narx

import (
	"fmt"
	"slices"
)

// Embedding says which past values form a NARX regressor (book §8.1, eq. 8.1).
// For the target y_k the regressor is
//
//	x_k = [y_{k−l} for l in YLags] ++ [u⁽ⁱ⁾_{k−l} for l in InputLags[i]], i = 0..len(InputLags)−1,
//
// so len(x_k) == Dim(). Lag 0 of an input (u_k, known when y_k is predicted) is
// allowed; lag 0 of y is not. YLags may be empty: y = f(u) is then a static
// regression, which is how the book's noisy-sinc experiments run through the
// same code.
type Embedding struct {
	YLags     []int
	InputLags [][]int
}

// Lags returns the lag list 1..p.
func Lags(p int) []int {
	l := make([]int, p)
	for i := range l {
		l[i] = i + 1
	}
	return l
}

// Validate reports the first problem with e, or nil.
func (e Embedding) Validate() error {
	if e.Dim() == 0 {
		return fmt.Errorf("embedding has no regressors: give y lags or input lags")
	}
	if err := checkLags(e.YLags, 1); err != nil {
		return fmt.Errorf("y lags: %w", err)
	}
	for i, l := range e.InputLags {
		if err := checkLags(l, 0); err != nil {
			return fmt.Errorf("input %d lags: %w", i, err)
		}
	}
	return nil
}

func checkLags(lags []int, lowest int) error {
	for i, l := range lags {
		if l < lowest {
			return fmt.Errorf("lag %d is below %d", l, lowest)
		}
		if i > 0 && l <= lags[i-1] {
			return fmt.Errorf("lags must be strictly increasing (got %v)", lags)
		}
	}
	return nil
}

// Dim returns n = len(YLags) + Σ len(InputLags[i]).
func (e Embedding) Dim() int {
	n := len(e.YLags)
	for _, l := range e.InputLags {
		n += len(l)
	}
	return n
}

// Inputs returns the number of exogenous inputs n_u.
func (e Embedding) Inputs() int { return len(e.InputLags) }

// Depth returns how many past records a History must hold: the largest lag.
func (e Embedding) Depth() int {
	d := 0
	if len(e.YLags) > 0 {
		d = e.YLags[len(e.YLags)-1]
	}
	for _, l := range e.InputLags {
		if len(l) > 0 {
			d = max(d, l[len(l)-1])
		}
	}
	return d
}

// Clone returns a deep copy, so a caller's later edits cannot reach a model.
func (e Embedding) Clone() Embedding {
	c := Embedding{YLags: slices.Clone(e.YLags), InputLags: make([][]int, len(e.InputLags))}
	for i, l := range e.InputLags {
		c.InputLags[i] = slices.Clone(l)
	}
	return c
}

// History is a ring of the last Depth() records (y and the inputs) of one series.
// Record 1 is the newest. The zero value is not usable; use NewHistory.
type History struct {
	emb   Embedding
	width int       // 1 + n_u floats per record
	buf   []float64 // Depth() records, each width floats
	head  int       // slot of the newest record
	count int       // records pushed, saturating at Depth()
	lastU []float64 // inputs of the newest record, kept even when Depth() == 0
}

// NewHistory returns an empty history for e. e must be valid.
func NewHistory(e Embedding) *History {
	d := e.Depth()
	w := 1 + e.Inputs()
	return &History{emb: e.Clone(), width: w, buf: make([]float64, d*w), lastU: make([]float64, w-1)}
}

// Ready reports whether enough records were pushed to form a regressor.
func (h *History) Ready() bool { return h.count >= h.emb.Depth() }

// Len returns the number of records held (at most Depth()).
func (h *History) Len() int { return h.count }

// Push appends the record (y_k, u_k). len(u) must equal n_u. O(n_u).
func (h *History) Push(y float64, u []float64) {
	if len(u) != h.width-1 {
		panic(fmt.Sprintf("narx: History.Push: %d inputs, want %d", len(u), h.width-1))
	}
	copy(h.lastU, u)
	d := len(h.buf) / h.width
	if d == 0 {
		return
	}
	h.head = (h.head + 1) % d
	rec := h.buf[h.head*h.width : (h.head+1)*h.width]
	rec[0] = y
	copy(rec[1:], u)
	if h.count < d {
		h.count++
	}
}

// record returns the l-th newest record (l ≥ 1).
func (h *History) record(l int) []float64 {
	d := len(h.buf) / h.width
	slot := ((h.head-(l-1))%d + d) % d
	return h.buf[slot*h.width : (slot+1)*h.width]
}

// Regressor writes the regressor for the next target into dst, using uNow for
// input lag 0. len(dst) == Dim(); len(uNow) == n_u. Panics if !Ready(). O(n).
func (h *History) Regressor(dst, uNow []float64) {
	if len(dst) != h.emb.Dim() || len(uNow) != h.width-1 {
		panic("narx: History.Regressor: dimension mismatch")
	}
	if !h.Ready() {
		panic("narx: History.Regressor: not enough records")
	}
	i := 0
	for _, l := range h.emb.YLags {
		dst[i] = h.record(l)[0]
		i++
	}
	for in, lags := range h.emb.InputLags {
		for _, l := range lags {
			if l == 0 {
				dst[i] = uNow[in]
			} else {
				dst[i] = h.record(l)[1+in]
			}
			i++
		}
	}
}

// LastInputs returns the inputs of the newest record (a view), or of a zero
// record if none was pushed or the embedding looks at no past record.
func (h *History) LastInputs() []float64 { return h.lastU }

// CopyFrom makes h an exact copy of o (same embedding). No allocation.
func (h *History) CopyFrom(o *History) {
	copy(h.buf, o.buf)
	copy(h.lastU, o.lastU)
	h.head, h.count = o.head, o.count
}

// HistoryState is the serialisable content of a History.
type HistoryState struct {
	Buf   []float64
	LastU []float64
	Head  int
	Count int
}

// State returns a copy of h's content.
func (h *History) State() HistoryState {
	return HistoryState{Buf: slices.Clone(h.buf), LastU: slices.Clone(h.lastU), Head: h.head, Count: h.count}
}

// SetState restores content saved by State for the same embedding.
func (h *History) SetState(s HistoryState) error {
	d := len(h.buf) / max(h.width, 1)
	if len(s.Buf) != len(h.buf) || len(s.LastU) != len(h.lastU) || s.Count < 0 || s.Count > d || s.Head < 0 || (d > 0 && s.Head >= d) {
		return fmt.Errorf("narx: history state does not fit the embedding")
	}
	copy(h.buf, s.Buf)
	copy(h.lastU, s.LastU)
	h.head, h.count = s.Head, s.Count
	return nil
}
