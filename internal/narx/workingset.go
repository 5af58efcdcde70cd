package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/streamd/streamd/internal/recursive"
)

// WorkingSet is the set S = {s_1..s_M} of support vectors of a fixed-size LS-SVM
// (book §6.2.2) with the row sums of its kernel matrix Ω, so that the quadratic
// Rényi entropy H = −log(1ᵀΩ1/M²) and the swap test cost O(M) given the
// candidate's kernel column.
type WorkingSet struct {
	kern   Kernel
	n      int       // regressor dimension
	points []float64 // M×n row-major
	rowSum []float64 // rowSum[j] = Σ_i Ω_ij
	diag   []float64 // Ω_jj
	total  float64   // 1ᵀΩ1
}

// NewWorkingSet returns the working set of the given points (M×n row-major,
// copied) and fills omega (len M·M, row-major, may be nil) with Ω. O(M²·n).
func NewWorkingSet(kern Kernel, n int, points []float64, omega []float64) *WorkingSet {
	m := len(points) / n
	if m*n != len(points) || m == 0 {
		panic("narx: NewWorkingSet: points is not M×n")
	}
	w := &WorkingSet{kern: kern, n: n, points: slices.Clone(points),
		rowSum: make([]float64, m), diag: make([]float64, m)}
	col := make([]float64, m)
	for j := 0; j < m; j++ {
		kern.Column(col, w.points, w.Point(j))
		w.diag[j] = col[j]
		for i, c := range col {
			w.rowSum[j] += c
			if omega != nil {
				omega[i*m+j] = c
			}
		}
	}
	w.retotal()
	return w
}

func (w *WorkingSet) retotal() {
	w.total = 0
	for _, s := range w.rowSum {
		w.total += s
	}
}

// Size returns M.
func (w *WorkingSet) Size() int { return len(w.rowSum) }

// Point returns s_j (a view, len n).
func (w *WorkingSet) Point(j int) []float64 { return w.points[j*w.n : (j+1)*w.n] }

// Points returns all points, M×n row-major (a view).
func (w *WorkingSet) Points() []float64 { return w.points }

// Entropy returns the quadratic Rényi entropy −log(1ᵀΩ1/M²) (book eq. 6.8 with
// the Parzen estimate of ∫p² replaced by its kernel-matrix form).
func (w *WorkingSet) Entropy() float64 {
	m := float64(w.Size())
	return -math.Log(w.total / (m * m))
}

// SwapGain returns the change of 1ᵀΩ1 if member j is replaced by x, whose kernel
// column against the current set is kx (len M) and K(x,x) = kxx:
// 2Σ_{i≠j}(K(s_i,x) − Ω_ij) + (K(x,x) − Ω_jj). The entropy rises iff the gain is
// negative. O(M).
func (w *WorkingSet) SwapGain(j int, kx []float64, kxx float64) float64 {
	var s float64
	for _, k := range kx {
		s += k
	}
	s -= kx[j]
	return 2*(s-(w.rowSum[j]-w.diag[j])) + (kxx - w.diag[j])
}

// Swap replaces member j by x (kernel column kx against the current set, K(x,x)
// = kxx) and writes the new column j of Ω into newCol (len M). O(M·n): the
// old column of Ω is re-evaluated to update the row sums.
func (w *WorkingSet) Swap(j int, x, kx []float64, kxx float64, newCol []float64) {
	w.swap(j, x, kx, kxx, newCol, nil)
}

// swap is Swap with the old column j of Ω given (oldCol[i] = K(s_i, s_j),
// i ≠ j, as Eval computes it), or re-evaluated if oldCol is nil.
func (w *WorkingSet) swap(j int, x, kx []float64, kxx float64, newCol, oldCol []float64) {
	for i := range w.rowSum {
		if i == j {
			continue
		}
		var old float64
		if oldCol != nil {
			old = oldCol[i]
		} else {
			old = w.kern.Eval(w.Point(i), w.Point(j))
		}
		w.rowSum[i] += kx[i] - old
	}
	var s float64
	for i, k := range kx {
		if i != j {
			s += k
		}
	}
	w.rowSum[j] = s + kxx
	w.diag[j] = kxx
	copy(w.Point(j), x)
	copy(newCol, kx)
	newCol[j] = kxx
	w.retotal()
}

// WorkingSetState is the serialisable content of a WorkingSet.
type WorkingSetState struct {
	N      int
	Points []float64
}

// State returns a copy of w's content.
func (w *WorkingSet) State() WorkingSetState {
	return WorkingSetState{N: w.n, Points: slices.Clone(w.points)}
}

// SelectOptions tunes SelectWorkingSet.
type SelectOptions struct {
	// Method is the selection rule.
	Method SelectMethod
	// MaxIter bounds the number of swap trials (SelectEntropy).
	MaxIter int
	// Patience stops the search once this many consecutive trials were
	// rejected (SelectEntropy).
	Patience int
}

// SelectMethod is how Fit chooses the working set from the samples.
type SelectMethod int

const (
	// SelectGreedy is the pivoted Cholesky factorisation of the samples'
	// kernel matrix: each member is the sample whose kernel function is
	// farthest from the span of the members before it, the largest
	// Nyström residual K(x,x) − k_S(x)ᵀΩ⁻¹k_S(x) (Fine and Scheinberg
	// 2001; Bach and Jordan 2005). Each step removes the most of what the
	// features cannot yet represent, so M members leave the least
	// residual variance a greedy choice can (the trace of K − K_NS Ω⁻¹
	// K_SN), and it needs no random draws.
	SelectGreedy SelectMethod = iota
	// SelectEntropy is the book's rule (§6.2.2): the members that
	// maximise the quadratic Rényi entropy of the working set, by random
	// swap trials. It spreads the members over the input distribution
	// whatever the kernel function needs.
	SelectEntropy
)

func (m SelectMethod) String() string {
	if m == SelectEntropy {
		return "entropy"
	}
	return "greedy"
}

// SelectResult reports a working-set selection.
type SelectResult struct {
	Index   []int     // rows of X chosen, len M
	Entropy []float64 // entropy after each accepted swap, starting with the initial set
	Trials  int
}

// SelectWorkingSet chooses M of the N rows of X (N×n row-major) by
// opt.Method; if M ≥ N every row is taken. SelectGreedy: selectGreedy,
// O(N·M·(M + n)), no use of rng. SelectEntropy: the book's active selection
// (§6.2.2, Algorithm 6.2): start from M random distinct rows, then
// repeatedly propose replacing a random member by a random non-member and
// accept iff the quadratic Rényi entropy rises; stops after opt.MaxIter
// trials or opt.Patience consecutive rejections; deterministic given rng,
// O(M·n) per trial.
func SelectWorkingSet(kern Kernel, X []float64, n, m int, rng *rand.Rand, opt SelectOptions) SelectResult {
	nrow := len(X) / n
	if m >= nrow {
		idx := make([]int, nrow)
		for i := range idx {
			idx[i] = i
		}
		return SelectResult{Index: idx}
	}
	if opt.Method == SelectGreedy {
		return SelectResult{Index: selectGreedy(kern, X, n, m)}
	}
	perm := rng.Perm(nrow)
	idx := slices.Clone(perm[:m])
	inSet := make([]bool, nrow)
	pts := make([]float64, 0, m*n)
	for _, i := range idx {
		inSet[i] = true
		pts = append(pts, X[i*n:(i+1)*n]...)
	}
	ws := NewWorkingSet(kern, n, pts, nil)
	res := SelectResult{Entropy: []float64{ws.Entropy()}}
	kx := make([]float64, m)
	col := make([]float64, m)
	// The trials draw from the same N rows again and again (about 1200
	// trials on 140 rows at M = 50): with N² ≤ MaxIter·M the kernel values
	// between rows are cached, each row's computed once on its first draw
	// (the other half of each pair by symmetry: Eval(a, b) and Eval(b, a)
	// are bit-identical, (a−b)² = (b−a)² and products commute). The values
	// are those Column and Eval would compute, so the selection is the same.
	var gram *selGram
	if selGramOn && nrow <= selGramMaxRows && nrow*nrow <= opt.MaxIter*m {
		gram = newSelGram(kern, X, n)
		defer gram.release()
	}
	var oldCol []float64
	if gram != nil {
		oldCol = make([]float64, m)
	}
	rejected := 0
	for res.Trials < opt.MaxIter && rejected < opt.Patience {
		res.Trials++
		j := rng.IntN(m)
		c := rng.IntN(nrow)
		if inSet[c] {
			rejected++
			continue
		}
		x := X[c*n : (c+1)*n]
		var kxx float64
		if gram != nil {
			g := gram.row(c)
			for i, r := range idx {
				kx[i] = g[r]
			}
			kxx = g[c]
		} else {
			kern.Column(kx, ws.points, x)
			kxx = kern.Eval(x, x)
		}
		if ws.SwapGain(j, kx, kxx) >= 0 {
			rejected++
			continue
		}
		rejected = 0
		if gram != nil {
			g := gram.row(idx[j])
			for i, r := range idx {
				oldCol[i] = g[r]
			}
		}
		ws.swap(j, x, kx, kxx, col, oldCol)
		inSet[idx[j]] = false
		inSet[c] = true
		idx[j] = c
		res.Entropy = append(res.Entropy, ws.Entropy())
	}
	res.Index = idx
	return res
}

// selectGreedy returns the M < N rows of X (N×n row-major) that a pivoted
// Cholesky factorisation of their kernel matrix K takes as pivots, in that
// order: with L the N×k factor of the first k pivots (LLᵀ = K on them and
// their columns), d_i = K_ii − ‖L_i‖² is row i's Nyström residual, and the
// next pivot is the row of the largest d (the first such row on a tie).
// Each pivot p adds the column (K_·p − L L_pᵀ)/√d_p. Once every residual
// is at most selectResidualFloor of the largest K_ii — the rows span no
// more than the members do, as a linear kernel's n + 1 dimensions —, the
// remaining members are the first rows not taken, which the Fit's cut-off
// then drops. O(N·M·(M + n)) time, N·M + N floats of scratch.
func selectGreedy(kern Kernel, X []float64, n, m int) []int {
	N := len(X) / n
	buf := recursive.GetFloats(N*m + N)
	defer recursive.PutFloats(buf)
	L, d := buf[:N*m], buf[N*m:] // L column-major: column k at L[k·N:]
	maxDiag := 0.0
	for i := range d {
		x := X[i*n : (i+1)*n]
		d[i] = kern.Eval(x, x)
		maxDiag = max(maxDiag, d[i])
	}
	taken := make([]bool, N)
	idx := make([]int, 0, m)
	for k := 0; k < m; k++ {
		p, best := -1, selectResidualFloor*maxDiag
		for i, v := range d {
			if !taken[i] && v > best {
				p, best = i, v
			}
		}
		if p < 0 {
			break
		}
		taken[p] = true
		idx = append(idx, p)
		col := L[k*N : (k+1)*N]
		kern.Column(col, X, X[p*n:(p+1)*n])
		for j := 0; j < k; j++ {
			lj := L[j*N : (j+1)*N]
			floats.AddScaled(col, -lj[p], lj)
		}
		floats.Scale(1/math.Sqrt(best), col)
		for i, c := range col {
			d[i] -= c * c
		}
	}
	for i := 0; len(idx) < m; i++ {
		if !taken[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

// selectResidualFloor is the residual, relative to the largest K(x,x),
// below which selectGreedy stops pivoting: rounding in the factor's
// columns is about ε·M relative, and a pivot divides by √d.
const selectResidualFloor = 1e-12

// selGramMaxRows bounds the rows whose kernel values SelectWorkingSet
// caches (N² floats, 2 MiB at the bound, borrowed from the scratch pool).
const selGramMaxRows = 512

// selGramOn enables the cache (tests compare both ways).
var selGramOn = true

// selGram caches K(x_a, x_c) between the rows of X, a row at a time.
type selGram struct {
	kern Kernel
	X    []float64
	n, N int
	g    []float64 // N×N; row c valid once done[c]
	done []bool
}

func newSelGram(kern Kernel, X []float64, n int) *selGram {
	N := len(X) / n
	return &selGram{kern: kern, X: X, n: n, N: N, g: recursive.GetFloats(N * N), done: make([]bool, N)}
}

func (s *selGram) release() { recursive.PutFloats(s.g) }

// row returns K(x_a, x_c) for all rows a, computing it on first use.
func (s *selGram) row(c int) []float64 {
	N, n := s.N, s.n
	g := s.g[c*N : (c+1)*N]
	if !s.done[c] {
		xc := s.X[c*n : (c+1)*n]
		for a := 0; a < N; a++ {
			if s.done[a] {
				g[a] = s.g[a*N+c]
			} else {
				g[a] = s.kern.Eval(s.X[a*n:(a+1)*n], xc)
			}
		}
		s.done[c] = true
	}
	return g
}

// Validate checks that a restored working set fits n.
func (s WorkingSetState) Validate(n int) error {
	if s.N != n || len(s.Points) == 0 || len(s.Points)%n != 0 {
		return fmt.Errorf("narx: working set state does not fit dimension %d", n)
	}
	for _, v := range s.Points {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("narx: working set state has a non-finite point")
		}
	}
	return nil
}
