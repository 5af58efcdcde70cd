package robust

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var benchSink float64

func benchInput(n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// BenchmarkStreamingScaleAdd measures Add on a full window (one removal and
// one insertion).
func BenchmarkStreamingScaleAdd(b *testing.B) {
	x := benchInput(1 << 16)
	for _, w := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("W=%d", w), func(b *testing.B) {
			s := NewStreamingScale(w, ScaleIQR)
			for _, v := range x[:w] {
				s.Add(v)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.Add(x[i&(len(x)-1)])
				i++
			}
			benchSink += s.Quantile(0.5)
		})
	}
}

// BenchmarkStreamingScaleScale measures Scale on a full window: O(log W) for
// IQR, O(log² W) for MAD.
func BenchmarkStreamingScaleScale(b *testing.B) {
	x := benchInput(1 << 16)
	for _, kind := range []ScaleKind{ScaleIQR, ScaleMAD} {
		for _, w := range []int{100, 1000, 10000} {
			b.Run(fmt.Sprintf("%v/W=%d", kind, w), func(b *testing.B) {
				s := NewStreamingScale(w, kind)
				for _, v := range x[:w] {
					s.Add(v)
				}
				b.ReportAllocs()
				for b.Loop() {
					benchSink += s.Scale()
				}
			})
		}
	}
}

// BenchmarkIQRScale is the from-scratch O(n log n) alternative, for
// comparison.
func BenchmarkIQRScale(b *testing.B) {
	x := benchInput(10000)
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			scratch := make([]float64, n)
			b.ReportAllocs()
			for b.Loop() {
				benchSink += IQRScale(x[:n], scratch)
			}
		})
	}
}

func BenchmarkWeight(b *testing.B) {
	r := benchInput(1024)
	for _, f := range []WeightFunc{Hampel, Huber, Logistic, Myriad} {
		w := Weights{Func: f, C1: 2.5, C2: 3, Floor: DefaultFloor}
		b.Run(f.String(), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				benchSink += w.Weight(3 * r[i&1023])
				i++
			}
		})
	}
}
