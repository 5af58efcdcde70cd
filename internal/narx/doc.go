// Package narx is the fixed-size LS-SVM NARX model of one series, in numbers
// only (it knows nothing of Kafka, HTTP or YAML): the regressor embedding and
// lag history (embedding.go), kernels (kernel.go), the working set chosen
// greedily or by the book's entropy criterion (workingset.go), the Nyström feature map (featuremap.go), the
// primal ridge regression kept current by recursive.RLS and the working-set
// swaps (model.go), Bayesian levels 1–3 (evidence.go, level3.go), the
// calibration of the level-1 variance (calibrate.go), iterated forecasts
// with propagated uncertainty (forecast.go) and the model's state
// (state.go). The mathematics, with the reference book's corrections, is in
// docs/design.md.
//
// A Model is owned by one goroutine: none of its methods may run
// concurrently.
package narx
