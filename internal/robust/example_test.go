package robust_test

import (
	"fmt"

	"github.com/streamd/streamd/internal/robust"
)

func ExampleStreamingScale() {
	s := robust.NewStreamingScale(5, robust.ScaleIQR)
	for _, e := range []float64{9, 1, 2, 3, 4, 5} { // 9 is evicted by the sixth value
		s.Add(e)
	}
	fmt.Println(s.Len(), s.Quantile(0.25), s.Quantile(0.75))
	fmt.Printf("%.4f\n", s.Scale()) // (4 − 2)/1.349
	// Output:
	// 5 2 4
	// 1.4826
}

func ExampleWeights_Weight() {
	w := robust.DefaultWeights() // Hampel, c1 = 2.5, c2 = 3, floor 1e-4
	const scale = 2.0            // ŝ
	for _, e := range []float64{1, 5.5, 7} {
		fmt.Println(w.Weight(e / scale))
	}
	// Output:
	// 1
	// 0.5
	// 0.0001
}

func ExampleMADScale() {
	x := []float64{1, 1, 2, 2, 4, 6, 9}
	scratch := make([]float64, len(x))
	fmt.Println(robust.MADScale(x, scratch)) // median 2, MAD 1
	// Output: 1.483
}

func ExampleTrimmedMean() {
	sq := []float64{1, 4, 0, 9, 1e6}                 // squared errors
	fmt.Println(robust.TrimmedMean(sq, nil, 0, 0.2)) // drop the largest 20 %
	// Output: 3.5
}
