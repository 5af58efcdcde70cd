// Package recursive implements recursive linear algebra: weighted RLS with
// forgetting and a non-fading ridge term; rank-one updates of a symmetric
// eigendecomposition.
//
// The package takes and returns plain numbers; it knows nothing of Kafka,
// HTTP or YAML. Its values are owned by one goroutine each (see the types
// for their concurrency contracts).
package recursive
