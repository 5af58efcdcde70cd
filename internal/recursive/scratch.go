package recursive

import (
	"math/bits"
	"sync"
)

// Shared scratch space.
//
// A daemon holds thousands of series, each with its own RLS and model, but only one goroutine per partition runs at a time and a series is
// touched by exactly one goroutine. Pure workspaces — buffers whose contents
// do not outlive one call — are therefore not kept per series: a call borrows
// them from a process-wide pool and returns them before it returns. A
// borrowed buffer is owned exclusively by the borrowing call (the pool never
// hands the same buffer to two borrowers), so calls on different series may
// run concurrently on different goroutines; the pool itself is safe for
// concurrent use. Nothing that a later call reads is left in a borrowed
// buffer, so results do not depend on which buffer a call gets: they are
// bit-identical to per-owner workspaces.
//
// Unlike sync.Pool, the pool never drops buffers (not at GC, not under the
// race detector), so a steady state of calls does not allocate: the pool
// holds, per size, as many buffers as calls have ever been in flight at
// once — at most one per goroutine that uses it: a few buffers per
// goroutine, not one set per series.

// Pool is a free list of scratch values of type T keyed by a size. Get
// returns a value made by New(size) if none of that size is free. The zero
// Pool is not usable: New must be set. A Pool is safe for concurrent use.
type Pool[T any] struct {
	New func(size int) T

	mu   sync.Mutex
	free map[int][]T
}

// Get returns a free value of the given size, or a new one.
func (p *Pool[T]) Get(size int) T {
	p.mu.Lock()
	if l := p.free[size]; len(l) > 0 {
		t := l[len(l)-1]
		var zero T
		l[len(l)-1] = zero
		p.free[size] = l[:len(l)-1]
		p.mu.Unlock()
		return t
	}
	p.mu.Unlock()
	return p.New(size)
}

// Put returns t, obtained from Get(size), to the pool. The caller must not
// use t afterwards.
func (p *Pool[T]) Put(size int, t T) {
	p.mu.Lock()
	if p.free == nil {
		p.free = make(map[int][]T)
	}
	p.free[size] = append(p.free[size], t)
	p.mu.Unlock()
}

// floatPool holds float64 buffers by size class: class c has capacity 2^c.
var floatPool = Pool[[]float64]{New: func(c int) []float64 { return make([]float64, 1<<c) }}

func floatClass(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// GetFloats borrows a scratch buffer of length n (capacity the next power of
// two) from the process-wide pool. Its contents are arbitrary. Return it
// with PutFloats once the call that borrowed it is done with it; see Pool
// for the concurrency contract.
func GetFloats(n int) []float64 {
	return floatPool.Get(floatClass(n))[:n]
}

// PutFloats returns a buffer obtained from GetFloats. nil is ignored.
func PutFloats(b []float64) {
	if b == nil {
		return
	}
	c := floatClass(cap(b))
	if cap(b) != 1<<c {
		panic("recursive: PutFloats: buffer not from GetFloats")
	}
	floatPool.Put(c, b[:cap(b)])
}
