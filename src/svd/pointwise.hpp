// The pointwise one-sided Jacobi method (jacobi-svd-gsvd-gpu-thesis, section 2.1 and the inner
// method of section 2.3.3): column pairs of G orthogonalised by plane rotations (2.13), or, for a
// pair of columns of opposite sign in J, hyperbolic rotations (2.14), with the parameters of
// (2.15)-(2.18), until a (quasi-)sweep finds every pair relatively orthogonal. It is the whole
// method for small matrices and the inner method of the blocked variants (svd/blocked.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::detail {

/// What a run of the pointwise method did.
struct SweepCounts {
  int sweeps = 0;
  std::int64_t rotations = 0;         ///< pairs not relatively orthogonal, rotated
  std::int64_t proper_rotations = 0;  ///< of those, cos != 1
  bool converged = false;             ///< the last sweep rotated no pair
};

/// Orthogonalises the columns of G (rows x cols, column-major, leading dimension ldg) in place.
/// * v: when not null, the transformations are accumulated into V (v_rows x cols, ldv):
///   V <- V * rotation, so pass V = I to get G_in * V = G_out (hyperbolic: V^H J V = J).
/// * signs: J as +1/-1 per column (size cols), or empty for J = I. Pairs of equal sign get
///   plane rotations, pairs of opposite sign hyperbolic ones.
/// * strategy: a Strategy of order cols; its (quasi-)sweep is repeated.
/// * max_sweeps: 1 for the block-oriented inner method; otherwise the limit.
/// * sort: keep the columns ordered (section 2.3.3 step 5, with the corrected prediction of the
///   new diagonal, see svd/rotation.hpp): within each sign, squared norms nonincreasing for +1
///   and nondecreasing for -1.
/// * threads: OpenMP threads over the disjoint pairs of a step (1: none). The result does not
///   depend on it, bit for bit.
/// Relative orthogonality: |g_p^H g_q| < tolerance * ||g_p|| * ||g_q||, with column norms
/// computed safely (section 2.6, svd/column_norms.hpp).
/// * progress: called after every sweep (progress.hpp; matrix 0), from the calling thread.
/// * tolerance: 0 (the default) for orthogonality_tolerance(rows, cols) (svd/rotation.hpp),
///   eps * sqrt(max(rows, cols)); the blocked method passes the threshold of the whole G, whose
///   columns the shortened pair R_pq stands for (svd/blocked.cpp says why).
template <class T>
SweepCounts orthogonalize_pointwise(T* g, index_t rows, index_t cols, index_t ldg, T* v,
                                    index_t v_rows, index_t ldv, std::span<const std::int8_t> signs,
                                    const Strategy& strategy, int max_sweeps, bool sort,
                                    int threads, const SweepCallback& progress = {},
                                    Real<T> tolerance = 0);

}  // namespace shiftop::svd::detail
