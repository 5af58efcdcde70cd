package recursive

import "math"

// AllFinite reports whether every entry of x is finite (neither NaN nor
// ±Inf): v·0 is ±0 for a finite v and NaN otherwise, and a sum of zeros is
// zero while one NaN makes it NaN. Four sums, so that the additions do not
// wait on one another: the checks guard every update and forecast step,
// where a branch per entry cost a tenth of a forecast.
func AllFinite(x []float64) bool {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * 0
		s1 += x[i+1] * 0
		s2 += x[i+2] * 0
		s3 += x[i+3] * 0
	}
	for ; i < len(x); i++ {
		s0 += x[i] * 0
	}
	return s0+s1+s2+s3 == 0
}

// SameBits reports whether x and y are bit-identical: a cache keyed on an
// input vector is valid only for that vector's exact bits. len(y) ≥ len(x).
func SameBits(x, y []float64) bool {
	y = y[:len(x)]
	for i, xi := range x {
		if math.Float64bits(xi) != math.Float64bits(y[i]) {
			return false
		}
	}
	return true
}
