// Package robust provides robust scale estimates, weight functions for
// weighted LS-SVM (book ch. 5), a windowed streaming robust scale and trimmed
// means.
//
// Everything here is numbers in, numbers out and deterministic: results depend
// only on the values given (for StreamingScale: on the multiset in the window),
// never on map order, time or a random source.
//
// Reference: J.A.K. Suykens, T. Van Gestel, J. De Brabanter, B. De Moor,
// J. Vandewalle, Least Squares Support Vector Machines, World Scientific 2002
// ("the book"), ch. 5 (weighted LS-SVM, §5.2–5.3); K. De Brabanter et al.,
// "Robustness of kernel based regression: a comparison of iterative weighting
// schemes", ICANN 2009 (the Huber, logistic and Myriad weights).
//
// Conventions shared by every estimator:
//
//   - Quantiles are Hyndman–Fan type 7 (R's default): for the sorted finite
//     values x₍₀₎ ≤ … ≤ x₍ₙ₋₁₎, h = (n−1)p, Q(p) = x₍⌊h⌋₎ + (h−⌊h⌋)(x₍⌊h⌋+1₎ − x₍⌊h⌋₎).
//   - Non-finite values (NaN, ±Inf) are bad data, not programmer errors: the
//     sample functions skip them and StreamingScale.Add ignores them, so n
//     counts finite values only.
//   - Results stay finite for finite inputs of magnitude below
//     math.MaxFloat64/2 (differences of two values must not overflow).
package robust
