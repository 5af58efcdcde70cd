// Package recursive implements weighted recursive least squares with
// forgetting and a non-fading ridge term, kept in O(m²) per sample and per
// exchange of one of its features, with the shared scratch pools and finite
// checks it needs.
//
// # Method
//
// An RLS's A, r, s and n_c are updated exactly (A ← λA + vψψᵀ, …). A is kept as a
// full, bit-symmetric m×m matrix Â with a pending scale α (A = αÂ), so that
// forgetting costs one scalar multiplication per update; α is applied to Â
// at every refresh (and is always 1 when λ = 1). The receiver also keeps an
// explicit dense inverse P̃ = B̃⁻¹, stored as σ·Q with Q bit-symmetric (the
// factor 1/λ of each update is σ's), where B̃ follows B̃ ← λB̃ + vψψᵀ since
// the last refresh, at which B̃ = B = A + D/γ exactly. With g = P̃ψ each
// update is the Sherman–Morrison step
//
//	P̃ ← λ⁻¹(P̃ − v·g gᵀ/(λ + v·ψᵀg)),
//
// one bit-symmetric rank-one update of Q. After j updates
// B̃ = A + λʲ·D/γ = B − (1−λʲ)·D/γ, i.e. μ = λʲ and the eigenvalues of P̃B
// lie in [1, 1/μ].
//
// θ first takes the gain step θ ← θ + g·v(y − ψᵀθ)/(λ + v·ψᵀg), the exact
// update of the B̃ system. With λ = 1, B̃ = B and this is the exact solution;
// every refineEvery updates the true residual r − Bθ is recomputed and
// PCG refines θ to backwardTol if needed, so rounding drift cannot accumulate.
// With λ < 1 the gain step is a warm start: the true residual is recomputed
// after every update and PCG, preconditioned by P̃, corrects for the ridge
// gap (1−μ)D/γ. Its inner products B·p are implicit (see pcg), so an
// iteration costs one product with P̃.
//
// P̃ is recomputed from scratch (symmetric Gauss–Jordan sweep of A + D/γ,
// invert; no allocation, no goroutines) when λ·μ would fall below
// muMin = 1/4, when the last solve's iterations reach the cycle's
// average cost per update including a refresh (refreshCost), after
// refreshEvery(m) = 4m+32 updates (rounding drift of P̃ at λ = 1), when
// P̃ has visibly lost definiteness (ψᵀP̃ψ < 0 or a non-finite gain), and when
// a solve fails to converge.
//
// QuadForm and Update share the product P̃ψ: QuadForm(ψ) followed by
// Update(ψ, …) with the same ψ (compared bit by bit, O(m)) pays for it once,
// with bit-identical results.
//
// # Accuracy
//
// With λ < 1, after every update, and with λ = 1 at least every
// refineEvery updates (and after refreshes, Load and SetGamma), θ has
// backward error at most backwardTol on the true residual at the start of the
// solve, reduced to backwardTol by PCG (with implicit products the final
// residual is exact up to the drift of P̃ times the correction, and the next
// update's true residual sees it). In between, at λ = 1, θ is the exact
// gain recursion from such a point, whose rounding stays at the level of a
// backward-stable solve (see refineEvery). QuadForm at μ = 1 (always
// when λ = 1) returns ψᵀP̃ψ, whose relative error is the drift of P̃,
// bounded by the periodic refresh (see refreshEvery). All of this is
// tested against batch solves after every update.
//
// # Cost
//
// Per Update at λ = 1: P̃ψ, the rank-one updates of Q and of Â — three m×m
// passes (m² multiply–adds each) with gonum's assembly kernels (Gemv, Ger)
// — plus an eighth of a pass (refinement) and about m²/8 multiply–adds
// (amortised refresh); O(m) otherwise. QuadForm before an Update with the
// same ψ costs O(m). With λ < 1 add the true residual (one pass) and one
// pass per PCG iteration (2–4 typical for λ = 0.99…0.999, more for smaller
// λ); QuadForm then runs PCG from P̃ψ with the same cost per iteration. The
// refresh interval shrinks with 1−λ; for λ < 1/4 every update refreshes
// (O(m³)). Memory: two m×m matrices (Â and Q) and four vectors of length m
// per RLS. The scratch space — a spare m×m matrix, so that a failed refresh
// leaves the receiver unchanged, and eight vectors — is borrowed per call
// from a process-wide pool (see Pool) and not kept per RLS; once the pool
// holds one for the dimension, Update and QuadForm do not allocate.
//
// # Bias before data
//
// B is positive definite iff A_mm > 0 (A is positive semidefinite and D/γ
// regularises every other direction). While A_mm = 0 — after NewRLS or
// Reset, and as long as every sample has v = 0 or a zero bias coordinate —
// the bias is unidentified. The receiver then works in the leading
// (m−1)-dimensional block, θ_m = 0, which is the limit of the solution with
// a bias ridge δ → 0 (the minimum-norm solution B⁺r). The first sample with
// v > 0 and ψ_m ≠ 0 makes B positive definite and triggers a refresh; from
// then on θ is the exact solution above.
//
// The package takes and returns plain numbers; it knows nothing of Kafka,
// HTTP or YAML. Its values are owned by one goroutine each (see the types
// for their concurrency contracts).
package recursive
