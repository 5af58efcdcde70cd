package narx

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/streamd/streamd/internal/recursive"
)

// ModelState is everything a Model needs to continue bit-identically: the
// working set with its incrementally kept row sums (recomputing them would
// change the rounding, hence later swap decisions), the eigendecomposition, the
// RLS statistics, the retained window, the RNG state and the counters. The
// feature map is not stored: it is a deterministic function of the eigenpairs.
type ModelState struct {
	Fitted bool
	Kernel Kernel // may differ from the configured one (inferred width)

	Points, RowSum, Diag []float64
	Total                float64

	Eigen recursive.SymEigenState
	RLS   recursive.RLSState

	WinX, WinY, WinV []float64
	WinHead          int
	WinCount         int

	RNG []byte

	Swaps, EigRefresh, SinceSwap, SinceNoise, SwapFailures int
	NoiseVar, DEff                                         float64

	CalE2, CalA, CalB      []float64
	CalHead, CalCount      int
	CalScale, CalTau       float64
	SinceCal               int
	LastMean, LastA, LastB float64
}

// State returns a deep copy of m's state. O(M² + W·n).
func (m *Model) State() ModelState {
	if !m.fitted {
		return ModelState{Kernel: m.cfg.Kernel}
	}
	rng, err := m.pcg.MarshalBinary()
	if err != nil {
		panic(err) // PCG's MarshalBinary cannot fail
	}
	return ModelState{
		Fitted: true, Kernel: m.cfg.Kernel,
		Points: slices.Clone(m.ws.points), RowSum: slices.Clone(m.ws.rowSum), Diag: slices.Clone(m.ws.diag), Total: m.ws.total,
		Eigen: m.eig.State(), RLS: m.rls.State(),
		WinX: slices.Clone(m.win.x), WinY: slices.Clone(m.win.y), WinV: slices.Clone(m.win.v),
		WinHead: m.win.head, WinCount: m.win.count,
		RNG:   rng,
		Swaps: m.swaps, EigRefresh: m.eigRefresh, SinceSwap: m.sinceSwap, SinceNoise: m.sinceNoise, SwapFailures: m.swapFailures,
		NoiseVar: m.noiseVar, DEff: m.dEff,
		CalE2: slices.Clone(m.cal.e2), CalA: slices.Clone(m.cal.a), CalB: slices.Clone(m.cal.b),
		CalHead: m.cal.head, CalCount: m.cal.count, CalScale: m.cal.scale, CalTau: m.cal.tau, SinceCal: m.sinceCal,
		LastMean: m.lastMean, LastA: m.lastA, LastB: m.lastB,
	}
}

// SetState restores a state saved by State from a model with the same
// configuration (up to the kernel, which the state carries). On error m is
// unchanged.
func (m *Model) SetState(s ModelState) error {
	if err := s.Kernel.Validate(); err != nil {
		return fmt.Errorf("narx: state: %w", err)
	}
	if !s.Fitted {
		m2 := &Model{cfg: m.cfg, n: m.n, pcg: m.pcg, rng: m.rng}
		m2.cfg.Kernel = s.Kernel
		*m = *m2
		return nil
	}
	n := m.n
	M := len(s.RowSum)
	if M == 0 || len(s.Points) != M*n || len(s.Diag) != M {
		return fmt.Errorf("narx: state: working set does not fit dimension %d", n)
	}
	W := m.cfg.Window
	if len(s.WinX) != W*n || len(s.WinY) != W || len(s.WinV) != W || s.WinCount < 0 || s.WinCount > W ||
		s.WinHead < 0 || s.WinHead >= W {
		return fmt.Errorf("narx: state: window does not fit W = %d", W)
	}
	if len(s.CalE2) != calWindow || len(s.CalA) != calWindow || len(s.CalB) != calWindow ||
		s.CalHead < 0 || s.CalHead >= calWindow || s.CalCount < 0 || s.CalCount > calWindow ||
		!(s.CalScale >= calMinScale*(1-1e-12) && s.CalScale <= calMaxScale*(1+1e-12) || s.CalScale == 1) || !(s.CalTau >= calMinTau && s.CalTau <= calMaxTau) {
		return fmt.Errorf("narx: state: calibration does not fit")
	}
	if !(s.NoiseVar > 0) || math.IsInf(s.NoiseVar, 0) || !(s.DEff >= 1) || math.IsInf(s.DEff, 0) ||
		s.Swaps < 0 || s.SinceSwap < 0 || s.SinceNoise < 0 || s.SinceCal < 0 || math.IsNaN(s.Total) {
		return fmt.Errorf("narx: state: bad noise level, d_eff or counters")
	}
	for _, x := range [][]float64{s.Points, s.RowSum, s.Diag, s.WinX, s.WinY, s.WinV, s.CalE2, s.CalA, s.CalB} {
		if !recursive.AllFinite(x) {
			return fmt.Errorf("narx: state: non-finite values")
		}
	}
	eig, err := recursive.SymEigenFromState(s.Eigen)
	if err != nil {
		return fmt.Errorf("narx: state: %w", err)
	}
	if eig.Dim() != M {
		return fmt.Errorf("narx: state: eigendecomposition is %d×%d, working set %d", eig.Dim(), eig.Dim(), M)
	}
	rls, err := recursive.RLSFromState(s.RLS)
	if err != nil {
		return fmt.Errorf("narx: state: %w", err)
	}
	fm := newFeatureMap(M)
	fm.build(eig.Values(), eig.Vectors(), m.cfg.Cutoff)
	if rls.Dim() != fm.r+1 {
		return fmt.Errorf("narx: state: statistics have dimension %d, features %d", rls.Dim(), fm.r+1)
	}
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("narx: state: rng: %w", err)
	}
	cfg := m.cfg
	cfg.Kernel = s.Kernel
	r := &Model{cfg: cfg, n: n, m: M, pcg: pcg, rng: rand.New(pcg)}
	r.ws = &WorkingSet{kern: s.Kernel, n: n, points: slices.Clone(s.Points), rowSum: slices.Clone(s.RowSum),
		diag: slices.Clone(s.Diag), total: s.Total}
	r.eig, r.rls, r.fm = eig, rls, fm
	r.win = &window{n: n, cap: W, x: slices.Clone(s.WinX), y: slices.Clone(s.WinY), v: slices.Clone(s.WinV),
		head: s.WinHead, count: s.WinCount}
	r.x, r.k, r.alpha = make([]float64, n), make([]float64, M), make([]float64, M)
	r.psi = make([]float64, M+1)
	r.fitted = true
	r.swaps, r.eigRefresh, r.sinceSwap, r.sinceNoise, r.swapFailures = s.Swaps, s.EigRefresh, s.SinceSwap, s.SinceNoise, s.SwapFailures
	r.noiseVar, r.dEff = s.NoiseVar, s.DEff
	r.cal = &calibration{e2: slices.Clone(s.CalE2), a: slices.Clone(s.CalA), b: slices.Clone(s.CalB),
		head: s.CalHead, count: s.CalCount, scale: s.CalScale, tau: s.CalTau, level: m.cfg.IntervalLevel}
	r.sinceCal, r.lastMean, r.lastA, r.lastB = s.SinceCal, s.LastMean, s.LastA, s.LastB
	*m = *r
	return nil
}

// SizeBytes returns the bytes held by m's own numeric buffers: working set,
// eigendecomposition, RLS, feature map, retained window, calibration ring,
// and the per-sample buffers (Go object headers excluded). Workspaces that
// are borrowed from the shared pools per call (the forecast's, the swap's,
// the eigen-updates', the RLS solver's, the calibration refit's; see
// recursive.Pool) are not held per model and not counted. 0 before the fit.
func (m *Model) SizeBytes() int {
	if !m.fitted {
		return 0
	}
	f := 0
	for _, b := range [][]float64{m.ws.points, m.ws.rowSum, m.ws.diag, m.fm.f, m.fm.vals,
		m.win.x, m.win.y, m.win.v, m.cal.e2, m.cal.a, m.cal.b, m.x, m.k, m.psi, m.alpha} {
		f += cap(b)
	}
	return 8*f + m.eig.SizeBytes() + m.rls.SizeBytes()
}
