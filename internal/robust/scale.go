package robust

import (
	"math"
	"slices"
)

// Normal-consistency constants (docs/design.md, "The model"; book §5.3 uses ŝ = 1.483·MAD).
// For a N(μ, σ²) sample both estimators tend to σ: IQR = 2Φ⁻¹(3/4)σ ≈ 1.34898σ
// and MAD = Φ⁻¹(3/4)σ ≈ σ/1.482602. The rounded constants bias the estimates by
// < 0.03 %.
const (
	// IQRDivisor turns an interquartile range into a scale: ŝ = IQR/1.349.
	IQRDivisor = 1.349
	// MADFactor turns a median absolute deviation into a scale: ŝ = 1.483·MAD.
	MADFactor = 1.483
)

// orderStats is a multiset of n finite values with access to the k-th smallest
// (0-based). Both the sorted-slice estimators and StreamingScale evaluate
// their statistics through the helpers below, so the two give bit-identical
// results on the same multiset.
type orderStats interface {
	count() int
	kth(k int) float64
}

// sortedSlice is an ascending slice of finite values.
type sortedSlice []float64

func (s sortedSlice) count() int        { return len(s) }
func (s sortedSlice) kth(k int) float64 { return s[k] }

// quantile7 returns the type-7 quantile Q(p) of s, p ∈ [0, 1], count() ≥ 1.
// Cost: two kth calls.
func quantile7[T orderStats](s T, p float64) float64 {
	n := s.count()
	h := float64(n-1) * p
	lo := int(h) // h ≥ 0, so truncation is ⌊h⌋
	if lo >= n-1 {
		return s.kth(n - 1)
	}
	a := s.kth(lo)
	frac := h - float64(lo)
	if frac == 0 {
		return a
	}
	return a + frac*(s.kth(lo+1)-a)
}

// iqrScale returns (Q(0.75) − Q(0.25))/1.349, or 0 when count() < 2.
func iqrScale[T orderStats](s T) float64 {
	if s.count() < 2 {
		return 0
	}
	return (quantile7(s, 0.75) - quantile7(s, 0.25)) / IQRDivisor
}

// SortedQuantile returns the type-7 quantile Q(p), p ∈ [0, 1], of s, which
// holds at least one finite value, in ascending order. Cost O(1).
func SortedQuantile(s []float64, p float64) float64 { return quantile7(sortedSlice(s), p) }

// Select returns the k-th smallest (0-based) of a's values, 0 ≤ k <
// len(a), reordering a: Hoare's quickselect with median-of-three pivots,
// expected O(len(a)) where sorting is O(n log n). a must hold no NaN. The
// answer is a value, not a position, so it does not depend on the order a
// comes in (but for the sign of a zero when a holds both −0 and +0).
func Select(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default: // between the two parts every value equals p
			return a[k]
		}
	}
	return a[k]
}

// SortedIQRScale returns IQRScale of s, which is finite and ascending,
// without copying or sorting it: IQR/1.349, 0 when len(s) < 2. Cost O(1).
func SortedIQRScale(s []float64) float64 { return iqrScale(sortedSlice(s)) }

// finiteCopy copies the finite values of x into scratch (or a new slice when
// cap(scratch) < len(x)) and returns that prefix.
func finiteCopy(x, scratch []float64) []float64 {
	if cap(scratch) < len(x) {
		scratch = make([]float64, len(x))
	}
	w := scratch[:0]
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			w = append(w, v)
		}
	}
	return w
}

// IQRScale returns the robust scale IQR/1.349 of the finite values of x, with
// type-7 quartiles; 0 when fewer than 2 values are finite.
//
// x is not modified. scratch is the workspace and is overwritten: when
// cap(scratch) ≥ len(x) nothing is allocated, otherwise a workspace of len(x)
// is allocated. scratch must not overlap x. Cost O(n log n) (a sort).
func IQRScale(x, scratch []float64) float64 {
	w := finiteCopy(x, scratch)
	slices.Sort(w)
	return iqrScale(sortedSlice(w))
}

// MADScale returns the robust scale 1.483·median(|x − median(x)|) of the
// finite values of x (medians are type-7, i.e. the mean of the two middle
// values for even n); 0 when no value is finite.
//
// x is not modified; scratch as for IQRScale. Cost O(n log n) (two sorts).
func MADScale(x, scratch []float64) float64 {
	w := finiteCopy(x, scratch)
	if len(w) == 0 {
		return 0
	}
	slices.Sort(w)
	m := quantile7(sortedSlice(w), 0.5)
	for i, v := range w {
		w[i] = math.Abs(v - m)
	}
	slices.Sort(w)
	return MADFactor * quantile7(sortedSlice(w), 0.5)
}

// TrimmedMean returns the (β1, β2)-trimmed mean of the finite values of x: of
// the n finite values it drops the ⌊β1·n⌋ smallest and the ⌊β2·n⌋ largest
// (β·n evaluated in float64) and averages the rest, summed in ascending order.
// The book (§5.3) uses (0, β2) on squared errors. It returns 0 when no value
// is finite; at least one value is kept otherwise, because β1 + β2 < 1.
//
// It panics unless β1 ≥ 0, β2 ≥ 0 and β1 + β2 < 1 (NaN included). x is not
// modified; scratch as for IQRScale. Cost O(n log n) (a sort).
func TrimmedMean(x, scratch []float64, beta1, beta2 float64) float64 {
	if !(beta1 >= 0 && beta2 >= 0 && beta1+beta2 < 1) {
		panic("robust: TrimmedMean needs β1, β2 ≥ 0 and β1 + β2 < 1")
	}
	w := finiteCopy(x, scratch)
	n := len(w)
	if n == 0 {
		return 0
	}
	slices.Sort(w)
	lo := int(math.Floor(beta1 * float64(n)))
	hi := n - int(math.Floor(beta2*float64(n)))
	if hi <= lo { // only reachable through rounding of β·n for n ≳ 2⁵²
		lo, hi = min(lo, n-1), min(lo, n-1)+1
	}
	var sum float64
	for _, v := range w[lo:hi] {
		sum += v
	}
	return sum / float64(hi-lo)
}
