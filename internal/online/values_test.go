package online

import (
	"math"
	"testing"
)

// The bounds' references (ValueStats.LoRef, HiRef: the bounds at count
// P/2, P ≤ N < 2P a power of two) in closed form. A sine of period 20
// reaches its lowest and highest values within its first period, so from
// count 64 on (P/2 ≥ 20) neither bound is extended. A ramp k = 1, …, n
// raises its highest value by n − P/2 ≥ n/2 over the later values, half its
// range and more, and never lowers its lowest. A quantised scale's lowest
// value lowered by 2 units of a range of 254 late in the series (the
// laser's) is lowered by less than recordStep: not extended.
func TestBoundsExtended(t *testing.T) {
	var sine ValueStats
	for k := range 400 {
		sine.add(math.Sin(2 * math.Pi * float64(k) / 20))
		if sine.N >= 64 && (sine.extended(true) || sine.extended(false)) {
			t.Fatalf("sine at %d: extended %v, %v (references %g, %g of %g, %g)", sine.N,
				sine.extended(true), sine.extended(false), sine.LoRef, sine.HiRef, sine.Lo, sine.Hi)
		}
	}
	var ramp ValueStats
	for k := 1; k <= 400; k++ {
		ramp.add(float64(k))
		if ramp.N >= 2 && (!ramp.extended(false) || ramp.extended(true)) {
			t.Fatalf("ramp at %d: extended lowest %v, highest %v; want false, true", ramp.N, ramp.extended(true), ramp.extended(false))
		}
	}
	var q ValueStats
	for k := range 400 {
		q.add(float64(2 + k%253))
	}
	q.add(1)
	q.add(0)
	if q.extended(true) || q.Lo != 0 || !q.valid() || !sine.valid() || !ramp.valid() {
		t.Errorf("two one-unit records: extended %v, lowest %g; valid %v %v %v", q.extended(true), q.Lo, q.valid(), sine.valid(), ramp.valid())
	}
	// The power of two's shift: at count 256 the references are the
	// bounds at 128.
	var w ValueStats
	for k := 1; k <= 256; k++ {
		w.add(float64(k))
	}
	if w.HiRef != 128 || w.HiNext != 256 || w.LoRef != 1 {
		t.Errorf("ramp at 256: references %g, next %g, lowest's %g; want 128, 256, 1", w.HiRef, w.HiNext, w.LoRef)
	}
}

// A point forecast beyond a bound the later values have not extended is
// implausible from recordRanges of the range on, and plausible just
// within; beyond a bound the values extend (a ramp's highest), it is
// judged by implausibleRanges alone. The band is not judged by the bounds'
// references: a random walk's may reach past its range.
func TestPlausibleBeyondAKeptBound(t *testing.T) {
	var sine ValueStats
	for k := range 400 {
		sine.add(math.Sin(2 * math.Pi * float64(k) / 20))
	}
	r := sine.Hi - sine.Lo
	for _, c := range []struct {
		mean float64
		want bool
	}{
		{sine.Lo - 0.99*recordRanges*r, true},
		{sine.Lo - 1.01*recordRanges*r, false},
		{sine.Hi + 0.99*recordRanges*r, true},
		{sine.Hi + 1.01*recordRanges*r, false},
	} {
		if got := sine.plausible(c.mean, c.mean-r, c.mean+r); got != c.want {
			t.Errorf("sine in [%g, %g]: point forecast %g plausible %v, want %v", sine.Lo, sine.Hi, c.mean, got, c.want)
		}
	}
	if !sine.plausible(0, sine.Lo-2*r, sine.Hi+2*r) {
		t.Error("a band five ranges wide around a point within the range judged implausible")
	}
	// Restored from a snapshot without references (version < 20), the
	// bounds count as extended until the count has passed two more powers
	// of two: 512 and 1 024 from 400.
	restored := sine
	restored.unknownRefs()
	if !restored.valid() {
		t.Fatalf("references unknown: not valid: %+v", restored)
	}
	far := sine.Lo - 2*r
	for restored.N < 1023 {
		restored.add(0)
		if !restored.plausible(far, far-r, far+r) {
			t.Fatalf("restored at %d values, judged by its references at %d", sine.N, restored.N)
		}
	}
	restored.add(0)
	if restored.plausible(far, far-r, far+r) {
		t.Errorf("restored at %d values: not judged by its references at %d", sine.N, restored.N)
	}
	var ramp ValueStats
	for k := 1; k <= 400; k++ {
		ramp.add(float64(k))
	}
	rr := ramp.Hi - ramp.Lo
	if !ramp.plausible(ramp.Hi+2*rr, ramp.Hi+rr, ramp.Hi+3*rr) {
		t.Error("a ramp's forecast two ranges above judged implausible: its highest value is extended all along")
	}
	if ramp.plausible(ramp.Lo-0.6*rr, ramp.Lo-rr, ramp.Lo) {
		t.Error("a ramp's forecast 0.6 ranges below its first value judged plausible")
	}
}
