package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestStateBudget: the state's budget is half the memory limit in force,
// whether process.memory_limit_mib or GOMEMLIMIT (here the runtime's
// limit set directly, as the runtime sets it from GOMEMLIMIT at start)
// set it, and 0 without one.
func TestStateBudget(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })

	debug.SetMemoryLimit(math.MaxInt64)
	if got := stateBudget(0); got != 0 {
		t.Errorf("no limit: budget %d, want 0", got)
	}
	if got, want := stateBudget(512), int64(256)<<20; got != want {
		t.Errorf("memory_limit_mib 512: budget %d, want %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != 512<<20 {
		t.Errorf("memory_limit_mib 512: runtime limit %d, want %d", got, 512<<20)
	}
	debug.SetMemoryLimit(300 << 20) // as GOMEMLIMIT=300MiB would
	if got, want := stateBudget(0), int64(150)<<20; got != want {
		t.Errorf("GOMEMLIMIT 300 MiB: budget %d, want %d", got, want)
	}
}
