// The pointwise implicit Hari-Zimmermann method (jacobi-svd-gsvd-gpu-thesis, section 3.2,
// Algorithm 5's loop): pairs of columns (f_i, f_j), (g_i, g_j) are transformed by the 2 x 2
// Z^ of gsvd/hz_transform.hpp until F Z and G Z have orthogonal columns. It is the whole method
// for small n and the inner method of the blocked variants (gsvd/gsvd_blocked.hpp), where it runs
// on the shortened factors (R_F, R_G) and accumulates Z^_ij from the identity.
#pragma once

#include <cstdint>

#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::detail {

/// What a run of the (pointwise or blocked) Hari-Zimmermann method did.
struct HzCounts {
  int sweeps = 0;
  std::int64_t transformations = 0;         ///< pairs not yet orthogonal, transformed
  std::int64_t proper_transformations = 0;  ///< of those, not the identity (section 3.5)
  bool converged = false;                   ///< the last sweep transformed no pair
};

/// The matrices one run transforms: F (rows_f x n), G (rows_g x n), Z (rows_z x n) and, unless w
/// is null, W (rows_w x n), column-major with their leading dimensions; the same column
/// transformations are applied to all of them.
///
/// Z's column norms measure which columns of F are zero: F Z has rank at most rank(F) (< n when
/// F is wide), so n - rank(F) of its columns converge to rounding noise, among which the relative
/// test |a_ij| < tol sqrt(a_ii a_jj) never holds (more noise columns than dimensions cannot be
/// orthogonal). The driver passes Z = diag(||f_k||) Z_acc (the accumulated transformation weighted
/// by F's initial column norms: the noise of column i is about eps ||z_i||, whatever the columns'
/// scaling). A column with ||f_i||^2 <= f_zero2 ||z_i||^2 is set to exactly 0; a pair with a zero
/// column of F is then only G-orthonormalised (Gram-Schmidt), which keeps the zero exact. As the
/// whole method W is Z_acc itself; as the inner method of the blocked variants, Z is a factor of
/// the block pair's columns of the outer Z (same Gram matrix, so the same column norms) and W
/// accumulates Z^_ij from the identity.
///
/// `columns`, when not null, maps a local column to the caller's index for the error messages.
template <class T>
struct HzColumns {
  T* f = nullptr;
  index_t rows_f = 0, ldf = 0;
  T* g = nullptr;
  index_t rows_g = 0, ldg = 0;
  T* z = nullptr;
  index_t rows_z = 0, ldz = 0;
  T* w = nullptr;
  index_t rows_w = 0, ldw = 0;
  index_t n = 0;
  Real<T> f_zero2 = 0;
  const index_t* columns = nullptr;
};

/// Runs sweeps of `strategy` (order n) over the columns until a sweep transforms no
/// pair or after max_sweeps. Per pair (i, j): the Gram entries of F and of G, the
/// columns normalised by d = 1 / ||g||, the transformation when hz_needs_transform(eps sqrt(n))
/// holds: [x_i x_j] <- [d_i x_i  d_j x_j] Z^ for x = f, g, z. `sort`: the local sorting of section
/// 3.2.2. threads: OpenMP threads over the disjoint pairs of a step; each pair is sequential, so
/// the result does not depend on it, bit for bit. Throws shiftop::Error when two columns of G
/// become parallel to working precision ((1 - |b|)(1 + |b|) <= n eps): G is then numerically rank
/// deficient, which the method cannot handle.
/// progress: called after every sweep (progress.hpp; matrix 0), from the calling thread.
template <class T>
HzCounts hz_pointwise(const HzColumns<T>& columns, const Strategy& strategy, int max_sweeps,
                      bool sort, int threads, const SweepCallback& progress = {});

}  // namespace shiftop::svd::detail
