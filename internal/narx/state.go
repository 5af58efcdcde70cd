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
// change the rounding, hence later swap decisions), the feature map (the
// product of the swaps' reflections, not a function of the working set), the
// RLS statistics, the retained window, the RNG state and the counters.
type ModelState struct {
	Fitted bool
	Kernel Kernel // may differ from the configured one (inferred width)

	Points, RowSum, Diag []float64
	Total                float64

	Features []float64 // F, M×M row-major
	RLS      recursive.RLSState

	WinX, WinY, WinV []float64
	WinHead          int
	WinCount         int
	// WinS are the window samples' swap scores (Model.swapScore). The tag
	// is the version of the online Learner snapshot that added the field
	// (its decoder reads it only from that version on); a state without
	// them (nil) restores scores of 0: its first swap test then ranks only
	// the sample at the test.
	WinS []float64 `snapshot:"8"`

	RNG []byte

	Swaps, BasisRefresh, SinceSwap, SinceNoise, SwapFailures int
	NoiseVar, DEff                                           float64

	CalE2, CalN, CalP, CalB       []float64
	CalHead, CalCount             int
	CalScales                     []float64 // 3
	CalDF, CalTau                 float64
	SinceCal                      int
	LastMean, LastN, LastP, LastB float64
	// CalKappa is the calibration's κ, CalCovered and CalJudged its counts
	// since the last refit (calibrate.go); a state without them (before the
	// Learner snapshot's version 10) restores κ = 1 and no counts.
	CalKappa              float64 `snapshot:"10"`
	CalCovered, CalJudged int     `snapshot:"10"`
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
		Features: slices.Clone(m.fm.f), RLS: m.rls.State(),
		WinX: slices.Clone(m.win.x), WinY: slices.Clone(m.win.y), WinV: slices.Clone(m.win.v),
		WinHead: m.win.head, WinCount: m.win.count, WinS: slices.Clone(m.win.s),
		RNG:   rng,
		Swaps: m.swaps, BasisRefresh: m.basisRefresh, SinceSwap: m.sinceSwap, SinceNoise: m.sinceNoise, SwapFailures: m.swapFailures,
		NoiseVar: m.noiseVar, DEff: m.dEff,
		CalE2: slices.Clone(m.cal.e2), CalN: slices.Clone(m.cal.n), CalP: slices.Clone(m.cal.p), CalB: slices.Clone(m.cal.b),
		CalHead: m.cal.head, CalCount: m.cal.count, CalScales: slices.Clone(m.cal.s[:]), CalDF: m.cal.df, CalTau: m.cal.tau, SinceCal: m.sinceCal,
		CalKappa: m.cal.kappa, CalCovered: m.cal.covered, CalJudged: m.cal.judged,
		LastMean: m.lastMean, LastN: m.lastN, LastP: m.lastP, LastB: m.lastB,
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
	// The state's window is checked against its own size, Ws; a model
	// configured with another W (a changed model.window, or its default)
	// keeps the newest min(count, W) samples (window.resized).
	// Until the ring is full its samples are slots 1..count (push advances
	// head before it writes), so head is count then.
	Ws := len(s.WinY)
	if Ws < 1 || len(s.WinX) != Ws*n || len(s.WinV) != Ws || s.WinCount < 0 || s.WinCount > Ws ||
		s.WinHead < 0 || s.WinHead >= Ws || s.WinCount < Ws && s.WinHead != s.WinCount || s.WinS != nil && len(s.WinS) != Ws {
		return fmt.Errorf("narx: state: window of %d samples is not a ring of dimension %d", Ws, n)
	}
	winS := s.WinS
	if winS == nil {
		winS = make([]float64, Ws)
	}
	if slices.ContainsFunc(winS, func(v float64) bool { return !(v >= 0) || math.IsInf(v, 0) }) {
		return fmt.Errorf("narx: state: window scores are not finite and ≥ 0")
	}
	if len(s.CalE2) != calWindow || len(s.CalN) != calWindow || len(s.CalP) != calWindow || len(s.CalB) != calWindow ||
		s.CalHead < 0 || s.CalHead >= calWindow || s.CalCount < 0 || s.CalCount > calWindow ||
		!validCalDF(s.CalDF) || !(s.CalTau >= calMinTau && s.CalTau <= calMaxTau) {
		return fmt.Errorf("narx: state: calibration does not fit")
	}
	kappa := s.CalKappa
	if kappa == 0 && s.CalCovered == 0 && s.CalJudged == 0 {
		kappa = 1 // a state from before κ
	}
	if !(kappa >= calMinKappa && kappa <= calMaxKappa) || s.CalCovered < 0 || s.CalCovered > s.CalJudged {
		return fmt.Errorf("narx: state: calibration feedback κ = %v, %d of %d covered", s.CalKappa, s.CalCovered, s.CalJudged)
	}
	if len(s.CalScales) != len(calBounds) {
		return fmt.Errorf("narx: state: %d calibration scales, want %d", len(s.CalScales), len(calBounds))
	}
	for j, v := range s.CalScales {
		if !(v >= calBounds[j][0] && v <= calBounds[j][1] || v == 1) {
			return fmt.Errorf("narx: state: calibration scale %d = %v outside its bounds", j, v)
		}
	}
	if !(s.NoiseVar > 0) || math.IsInf(s.NoiseVar, 0) || !(s.DEff >= 1) || math.IsInf(s.DEff, 0) ||
		s.Swaps < 0 || s.SinceSwap < 0 || s.SinceNoise < 0 || s.SinceCal < 0 || math.IsNaN(s.Total) {
		return fmt.Errorf("narx: state: bad noise level, d_eff or counters")
	}
	for _, x := range [][]float64{s.Points, s.RowSum, s.Diag, s.WinX, s.WinY, s.WinV, s.CalE2, s.CalN, s.CalP, s.CalB} {
		if !recursive.AllFinite(x) {
			return fmt.Errorf("narx: state: non-finite values")
		}
	}
	if len(s.Features) != M*M || !recursive.AllFinite(s.Features) {
		return fmt.Errorf("narx: state: feature map does not fit working set %d", M)
	}
	rls, err := recursive.RLSFromState(s.RLS)
	if err != nil {
		return fmt.Errorf("narx: state: %w", err)
	}
	fm := &featureMap{m: M, r: M, f: slices.Clone(s.Features)}
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
	r.rls, r.fm = rls, fm
	r.win = &window{n: n, m: M, cap: Ws, x: slices.Clone(s.WinX), y: slices.Clone(s.WinY), v: slices.Clone(s.WinV),
		k: make([]float64, M*Ws), s: slices.Clone(winS), head: s.WinHead, count: s.WinCount}
	if W := m.cfg.Window; W != Ws {
		r.win = r.win.resized(W)
	}
	r.win.fillColumns(s.Kernel, r.ws.points)
	r.x, r.k, r.alpha = make([]float64, n), make([]float64, M), make([]float64, M)
	r.psi = make([]float64, M+1)
	r.fitted = true
	r.swaps, r.basisRefresh, r.sinceSwap, r.sinceNoise, r.swapFailures = s.Swaps, s.BasisRefresh, s.SinceSwap, s.SinceNoise, s.SwapFailures
	r.noiseVar, r.dEff = s.NoiseVar, s.DEff
	r.cal = &calibration{e2: slices.Clone(s.CalE2), n: slices.Clone(s.CalN), p: slices.Clone(s.CalP), b: slices.Clone(s.CalB),
		head: s.CalHead, count: s.CalCount, s: [3]float64(s.CalScales), tau: s.CalTau, level: m.cfg.IntervalLevel,
		kappa: kappa, covered: s.CalCovered, judged: s.CalJudged}
	r.cal.setDF(s.CalDF)
	r.sinceCal, r.lastMean, r.lastN, r.lastP, r.lastB = s.SinceCal, s.LastMean, s.LastN, s.LastP, s.LastB
	*m = *r
	return nil
}

// SizeBytes returns the bytes held by m's own numeric buffers: working set,
// RLS, feature map, retained window, calibration ring,
// and the per-sample buffers (Go object headers excluded). Workspaces that
// are borrowed from the shared pools per call (the forecast's, the swap's,
// the RLS solver's, the calibration refit's; see
// recursive.Pool) are not held per model and not counted. 0 before the fit.
func (m *Model) SizeBytes() int {
	if !m.fitted {
		return 0
	}
	f := 0
	for _, b := range [][]float64{m.ws.points, m.ws.rowSum, m.ws.diag, m.fm.f,
		m.win.x, m.win.y, m.win.v, m.win.k, m.win.s, m.cal.e2, m.cal.n, m.cal.p, m.cal.b, m.x, m.k, m.psi, m.alpha} {
		f += cap(b)
	}
	return 8*f + m.rls.SizeBytes()
}
