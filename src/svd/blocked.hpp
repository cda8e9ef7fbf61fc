// The blocked one-sided Jacobi method (jacobi-svd-gsvd-gpu-thesis, section 2.1, eqs. (2.6)-(2.9),
// and sections 2.3.1-2.3.6 adapted to CPU caches): G is split into an even number of block
// columns; each step of a parallel block strategy (section 2.2) shortens its disjoint pivot block
// pairs [G_p G_q] to the triangular factor R_pq of their Gram matrix (2.7), or of their QR
// factorisation (2.8) when the columns are badly scaled, orthogonalises R_pq by the pointwise
// method while accumulating V'_pq, and postmultiplies [G_p G_q] and [V_p V_q] by V'_pq (2.9).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shiftop/svd/jacobi.hpp"
#include "svd/pointwise.hpp"

namespace shiftop::svd::detail {

struct BlockedCounts {
  SweepCounts counts;               ///< block-sweeps, and the inner rotations summed
  std::int64_t qr_shortenings = 0;  ///< pivot pairs shortened by QR instead of Gram + Cholesky
  /// Pivot pairs on the QR path (Gram matrix out of range, or Cholesky lost half the digits) found
  /// relatively orthogonal on G's columns first: neither shortened nor rotated (svd/blocked.cpp).
  std::int64_t skipped_orthogonal = 0;
};

/// The first column of each block and `cols` at the end (size b + 1), b even and >= 2, blocks
/// of (almost) equal width near `width` (cols >= 2). With 0 < n_plus < cols, n_plus is a block
/// boundary when the two sign parts can be split into an even number of blocks of width >= 1,
/// so every block has one sign.
std::vector<index_t> block_boundaries(index_t cols, index_t width, index_t n_plus);

/// What a blocked method's sweeps need, built before its parallel region: the block boundaries,
/// the strategy over the blocks and, for every pair width c that occurs, the inner strategy of
/// order c. Shared by the Jacobi SVD and the Hari-Zimmermann GSVD (gsvd/gsvd_blocked.hpp).
struct BlockSweep {
  std::vector<index_t> bounds;  ///< block_boundaries(cols, width, n_plus)
  Strategy outer;               ///< over the blocks
  std::vector<Strategy> inner;  ///< inner[c] for the pairs of c columns (others empty)
  index_t c_max = 0;            ///< the widest pair's columns

  static BlockSweep create(index_t cols, index_t width, index_t n_plus, StrategyKind outer_kind,
                           StrategyKind inner_kind);
};

/// Orthogonalises the columns of G (rows x cols, rows >= cols, ldg) in place by the blocked
/// method; v, v_rows, ldv and signs as in orthogonalize_pointwise. full_block runs the inner
/// method to convergence (max_sweeps), otherwise one inner sweep per pair (block-oriented). Stops
/// when a block-sweep rotates no pair (every pair relatively orthogonal) or after max_sweeps
/// block-sweeps. OpenMP over the pairs of a step (threads), each pair's work sequential: the result
/// does not depend on the thread count, bit for bit. progress: called after every block-sweep
/// (progress.hpp; matrix 0), from the calling thread.
template <class T>
BlockedCounts orthogonalize_blocked(T* g, index_t rows, index_t cols, index_t ldg, T* v,
                                    index_t v_rows, index_t ldv, std::span<const std::int8_t> signs,
                                    StrategyKind strategy, index_t width, bool full_block,
                                    int max_sweeps, int threads,
                                    const SweepCallback& progress = {});

}  // namespace shiftop::svd::detail
