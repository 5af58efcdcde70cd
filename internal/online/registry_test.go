package online

import (
	"fmt"
	"slices"
	"testing"
)

func TestRegistryOverridesAndEviction(t *testing.T) {
	laser := testConfig()
	laser.Model.Size = 7
	r, err := NewRegistry(RegistryConfig{Default: testConfig(), MaxSeries: 3,
		Overrides: []Override{{Match: "laser-*", Config: laser}, {Match: "laser-2", Config: testConfig()}}})
	if err != nil {
		t.Fatal(err)
	}
	// First match wins: laser-2 matches laser-* before its own entry.
	for id, want := range map[string]int{"laser-1": 7, "laser-2": 7, "mg": 20} {
		if got := r.ConfigFor(id).Model.Size; got != want {
			t.Errorf("%s: working set %d, want %d", id, got, want)
		}
	}
	a, created, err := r.Get("a")
	if err != nil || !created {
		t.Fatal(err, created)
	}
	if again, created, _ := r.Get("a"); again != a || created {
		t.Error("a second Get made a new learner")
	}
	r.Get("b")
	r.Get("c")
	r.Get("a") // a is now the most recent; b the least
	r.Get("d") // evicts b
	if r.Len() != 3 || r.Evicted() != 1 {
		t.Errorf("len %d evicted %d, want 3 and 1", r.Len(), r.Evicted())
	}
	if _, ok := r.Lookup("b"); ok {
		t.Error("b, the least recently used, was not evicted")
	}
	if got := r.IDs(); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Errorf("ids %v", got)
	}
	// Put replaces in place, or inserts with eviction (c is now the oldest).
	l, _ := NewLearner(testConfig())
	r.Put("a", l)
	if got, _ := r.Lookup("a"); got != l {
		t.Error("Put did not replace")
	}
	r.Put("e", l)
	if _, ok := r.Lookup("c"); ok || r.Evicted() != 2 {
		t.Errorf("Put did not evict the oldest (evicted %d)", r.Evicted())
	}
}

func TestRegistryRejectsBadConfig(t *testing.T) {
	bad := testConfig()
	bad.Warmup = 0
	for i, c := range []RegistryConfig{
		{Default: bad},
		{Default: testConfig(), Overrides: []Override{{Match: "[", Config: testConfig()}}},
		{Default: testConfig(), Overrides: []Override{{Match: "x*", Config: bad}}},
		{Default: testConfig(), MaxSeries: -1},
	} {
		if _, err := NewRegistry(c); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}

// Many series stay bounded by the cap.
func TestRegistryCapHolds(t *testing.T) {
	r, _ := NewRegistry(RegistryConfig{Default: testConfig(), MaxSeries: 100})
	for i := 0; i < 1000; i++ {
		if _, _, err := r.Get(fmt.Sprintf("s%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if r.Len() != 100 || r.Evicted() != 900 {
		t.Errorf("len %d evicted %d", r.Len(), r.Evicted())
	}
}

// SizeBytes accounts for the model's dominant buffers: with M = 20 and a
// window of 100 four-lag regressors it must exceed the O(M²) eigen and RLS
// matrices plus the window, and stay within a small factor of them.
func TestLearnerSizeBytes(t *testing.T) {
	l, _ := NewLearner(testConfig())
	before := l.SizeBytes()
	for i, v := range noisySine(300, 0.1, 9) {
		l.Observe(Observation{T: int64(i), Y: v})
	}
	got := l.SizeBytes()
	M, W, n := 20, 100, 4
	floor := 8 * (2*M*M + 2*M*M + W*(n+2)) // A and U of Ω; A and P̃ of the RLS; the window
	if got < floor || got > 10*floor {
		t.Errorf("SizeBytes = %d, want within [%d, %d]", got, floor, 10*floor)
	}
	if before >= got {
		t.Errorf("warm-up %d bytes ≥ fitted %d", before, got)
	}
	t.Logf("M=%d W=%d n=%d: %d bytes", M, W, n, got)
}
