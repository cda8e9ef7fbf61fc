// The blocked implicit Hari-Zimmermann method (jacobi-svd-gsvd-gpu-thesis, section 3.2.1,
// Algorithm 8, Table 3.2): the columns are split into block columns; each step of the outer
// strategy takes disjoint block pairs, shortens [F_i F_j] and [G_i G_j] to square factors R_F,
// R_G of the same Gram matrices (Gram + Cholesky, Householder QR where Cholesky fails or loses
// digits), runs the pointwise method (gsvd/gsvd_pointwise.hpp) on (R_F, R_G) accumulating Z^_ij
// from the identity, and postmultiplies [F_i F_j], [G_i G_j] and [Z_i Z_j] by Z^_ij.
#pragma once

#include <cstdint>

#include "gsvd/gsvd_pointwise.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::detail {

struct HzBlockedCounts {
  HzCounts counts;                  ///< block-sweeps, and the inner transformations summed
  std::int64_t qr_shortenings = 0;  ///< factors obtained by QR instead of Gram + Cholesky
};

/// The blocked method on `columns` (`columns.columns` must be null; W, when given, is
/// postmultiplied like F, G and Z). Block columns of
/// width near `width` (svd/blocked.hpp's block_boundaries); `outer` over the blocks, `inner` inside
/// a block pair; full_block runs the inner method up to max_sweeps sweeps (HZ-FB), otherwise one
/// (HZ-BO). Stops after a block-sweep that transforms no pair or after max_sweeps. OpenMP
/// over the block pairs of a step (threads); each pair is sequential, so the result does not
/// depend on the thread count, bit for bit. Throws as hz_pointwise for a numerically rank
/// deficient G.
/// progress: called after every block-sweep (progress.hpp; matrix 0), from the calling thread.
template <class T>
HzBlockedCounts hz_blocked(const HzColumns<T>& columns, StrategyKind outer, StrategyKind inner,
                           index_t width, bool full_block, int max_sweeps, bool sort, int threads,
                           const SweepCallback& progress = {});

}  // namespace shiftop::svd::detail
