package narx

import (
	"fmt"
	"math"
)

// LogEvidence returns the level-3 log evidence ln p(D | σ², lags) of the fitted
// model (book §4.2.4, eq. 4.66–4.68, primal form), up to terms that are equal
// for every model fitted to the same targets with the same weights:
//
//	ln p(D|H) ≈ ln p(D | μ, ζ, H) + ½ ln(2/(d_eff − 1)) + ½ ln(2/(n_c − d_eff)),
//	ln p(D | μ, ζ, H) = −½ Σ_i ln(1 + γλ_i) + ((n_c − 1)/2) ln ζ − μE_W − ζE_D
//	                    − (n_c/2) ln 2π − ½ ln n_c,
//
// at the level-2 estimates μ, ζ (γ = ζ/μ). The first line's extra terms are the
// Occam factors of ln μ and ln ζ (Gaussian posteriors with variances
// 2/(d_eff − 1) and 2/(n_c − d_eff)). The Laplace integral over [w; b] is exact
// here (the posterior is Gaussian); the flat prior on b contributes a constant.
// O(r³), or O(1) when nothing has changed the statistics or γ since the
// last level-2 refresh that decomposed them (at the end of a fit, in
// SetGamma, and every NoiseEvery learned samples unless γ is held and the
// RLS's inverse gave the refresh without a spectrum: refreshNoiseHeld),
// which computed it. Returns
// −Inf when there is too little data to rank.
func (m *Model) LogEvidence() float64 {
	if !m.fitted {
		return math.Inf(-1)
	}
	if m.logEvRLS == m.rls && m.logEvAt == m.rls.Version() {
		return m.logEv
	}
	return m.logEvidenceNow()
}

// logEvidenceNow is LogEvidence from the statistics, without the value the
// last level-2 refresh kept.
func (m *Model) logEvidenceNow() float64 {
	a, rv, s, nc := m.rls.Stats()
	ev, ok := newEvidence(a, rv, s, nc)
	if !ok {
		return math.Inf(-1)
	}
	defer ev.release()
	l2 := ev.at(m.rls.Gamma())
	if m.cfg.AutoGamma {
		l2 = ev.minimise()
	}
	return ev.logEvidence(l2)
}

func (ev evidence) logEvidence(l2 Level2) float64 {
	if !(l2.DEff > 1) || !(ev.nc > l2.DEff) || !(l2.Zeta > 0) {
		return math.Inf(-1)
	}
	var logdet float64
	for _, l := range ev.lambda {
		logdet += math.Log1p(l2.Gamma * l)
	}
	le := -0.5*logdet + 0.5*(ev.nc-1)*math.Log(l2.Zeta) - l2.Mu*l2.EW - l2.Zeta*l2.ED -
		0.5*ev.nc*math.Log(2*math.Pi) - 0.5*math.Log(ev.nc)
	return le + 0.5*math.Log(2/(l2.DEff-1)) + 0.5*math.Log(2/(ev.nc-l2.DEff))
}

// WidthTrial is one candidate of a kernel-width search.
type WidthTrial struct {
	Sigma2, LogEvidence, Gamma, NoiseStd float64
}

// WidthSearch is the result of SearchSigma2.
type WidthSearch struct {
	Best   WidthTrial
	Trials []WidthTrial
}

// SearchSigma2 ranks RBF widths by the level-3 evidence on the samples (X
// N×n, y): a grid σ² = center·2^k, k = −5..5 (the median squared pairwise
// distance is the natural center), then a golden-section refinement of ln σ²
// between the best grid point's neighbours to |Δ ln σ²| < 0.05. Each trial is
// a fit (features, statistics, level 2) on the working set selected once at
// the centre width, so the cost is about 19 fits and one selection.
// cfg.Kernel must be RBF or LinearRBF; its Sigma2 is ignored. yield, when
// not nil, is called on the caller's goroutine before each trial (one fit,
// O(N·M²)), so that the caller can pause a long search; the result does
// not depend on it.
func SearchSigma2(cfg Config, X, y []float64, center float64, yield func()) (WidthSearch, error) {
	w, err := newWidthFits(cfg, X, y, center, yield)
	if err != nil {
		return WidthSearch{}, err
	}
	ln0 := math.Log(center)
	best, bestK := math.Inf(1), 0
	for k := -5; k <= 5; k++ {
		f, err := w.try(ln0 + float64(k)*math.Ln2)
		if err != nil {
			return w.out, err
		}
		if f < best {
			best, bestK = f, k
		}
	}
	lo, hi := ln0+float64(bestK-1)*math.Ln2, ln0+float64(bestK+1)*math.Ln2
	const invPhi = 0.6180339887498949
	c, d := hi-invPhi*(hi-lo), lo+invPhi*(hi-lo)
	fc, err := w.try(c)
	if err != nil {
		return w.out, err
	}
	fd, err := w.try(d)
	if err != nil {
		return w.out, err
	}
	for hi-lo > 0.05 {
		if fc < fd {
			hi, d, fd = d, c, fc
			c = hi - invPhi*(hi-lo)
			if fc, err = w.try(c); err != nil {
				return w.out, err
			}
		} else {
			lo, c, fc = c, d, fd
			d = lo + invPhi*(hi-lo)
			if fd, err = w.try(d); err != nil {
				return w.out, err
			}
		}
	}
	return w.out, nil
}

// TryWidths is SearchSigma2's evidence at the given widths only, on the
// working set selected at the width center: len(widths) fits and one
// selection. Its Best is a lower bound of what the search would find at
// widths near them.
func TryWidths(cfg Config, X, y []float64, center float64, widths []float64, yield func()) (WidthSearch, error) {
	w, err := newWidthFits(cfg, X, y, center, yield)
	if err != nil {
		return WidthSearch{}, err
	}
	for _, s := range widths {
		if !(s > 0) || math.IsInf(s, 0) {
			return w.out, fmt.Errorf("narx: width %v", s)
		}
		if _, err := w.try(math.Log(s)); err != nil {
			return w.out, err
		}
	}
	return w.out, nil
}

// widthFits fits cfg at trial widths on one working set, keeping the
// trials and the best.
type widthFits struct {
	cfg   Config
	X, y  []float64
	rows  []int
	yield func()
	out   WidthSearch
}

// newWidthFits selects the working set of every trial at the width center.
// Every trial fits the same working set: the evidence then compares
// widths, not working sets. A selection per width (the greedy pivots move
// with the width) makes the evidence jump by tens of nats between
// neighbouring widths, and a search would follow those jumps.
func newWidthFits(cfg Config, X, y []float64, center float64, yield func()) (*widthFits, error) {
	if !cfg.Kernel.Type.HasRBF() {
		return nil, fmt.Errorf("narx: width search needs a kernel with an RBF part")
	}
	if !(center > 0) || math.IsInf(center, 0) {
		return nil, fmt.Errorf("narx: width search center %v", center)
	}
	c0 := cfg
	c0.Kernel.Sigma2 = center
	m0, err := NewModel(c0)
	if err != nil {
		return nil, err
	}
	rows := SelectWorkingSet(c0.Kernel, X, m0.n, cfg.Size, m0.rng, cfg.Select).Index
	return &widthFits{cfg: cfg, X: X, y: y, rows: rows, yield: yield}, nil
}

// try fits the width e^lnS and returns minus its log evidence.
func (w *widthFits) try(lnS float64) (float64, error) {
	if w.yield != nil {
		w.yield()
	}
	c := w.cfg
	c.Kernel.Sigma2 = math.Exp(lnS)
	m, err := NewModel(c)
	if err != nil {
		return 0, err
	}
	if err := m.fit(w.X, w.y, nil, w.rows); err != nil {
		return 0, err
	}
	tr := WidthTrial{Sigma2: c.Kernel.Sigma2, LogEvidence: m.LogEvidence(), Gamma: m.rls.Gamma(),
		NoiseStd: math.Sqrt(m.noiseVar)}
	w.out.Trials = append(w.out.Trials, tr)
	if len(w.out.Trials) == 1 || tr.LogEvidence > w.out.Best.LogEvidence {
		w.out.Best = tr
	}
	return -tr.LogEvidence, nil
}
