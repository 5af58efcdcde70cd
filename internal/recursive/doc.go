// Package recursive implements weighted recursive least squares with
// forgetting and a non-fading ridge term, kept in O(m²) per sample and per
// exchange of one of its features, with the shared scratch pools and finite
// checks it needs.
//
// The package takes and returns plain numbers; it knows nothing of Kafka,
// HTTP or YAML. Its values are owned by one goroutine each (see the types
// for their concurrency contracts).
package recursive
