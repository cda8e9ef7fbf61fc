// The kernels of the batched implicit Hari-Zimmermann GSVD on the GPU (svd/gsvd.hpp, backend cuda;
// jacobi-svd-gsvd-gpu-thesis, section 3.5), one thread block per pair (F_b, G_b), launched by the
// driver gsvd/cuda/gsvd_batched.cpp on the context's stream:
//
//  1. sweeps (gsvd_kernels.cu): `initZ` (Z = diag(1 / ||g_i||), the columns of F and G scaled by
//     the same), then sweeps of the strategy, each parallel step's disjoint pairs given to the
//     block's groups of lanes (svd/cuda/group_ops.cuh), the 2 x 2 transformation of
//     gsvd/hz_transform.hpp applied to the columns of F, G, Y and Z (`pStep`), with the CPU's
//     deflation of F's noise columns (Y = diag(||f_k||) Z measures them; a zero column is only
//     G-orthonormalised); the pair stops after a sweep that transforms no pair or after
//     max_sweeps. F, G, Y and Z are worked on in shared memory when they fit (each on its own, in
//     that order), else in place in global memory.
//  2. (driver) Z^{-1} by cuBLAS's batched LU (getrfBatched, getriBatched), only for the vectors.
//  3. finish (gsvd_kernels.cu, `Sigma`): sigma_f, sigma_g from the column norms of F Z and G Z,
//     the scaling undone, the values ordered by sigma_f / sigma_g nonincreasing, U, V the columns
//     normalised and X = diag(S) Z^{-1} (rows permuted to the same order).
#pragma once

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>

#include "shiftop/core/shape.hpp"
#include "svd/cuda/device_types.hpp"

namespace shiftop::svd::gpu_kernels {

/// What the driver reads back per pair.
struct GsvdReport {
  int sweeps;
  int converged;  ///< 1: the last sweep transformed no pair
  int status;     ///< kGsvdOk, kGsvdZeroColumn (column i) or kGsvdParallel (columns i, j)
  int column_i, column_j;
  long long transformations, proper;
};
constexpr int kGsvdOk = 0;
constexpr int kGsvdZeroColumn = 1;
constexpr int kGsvdParallel = 2;
constexpr int kGsvdRankDeficient = 3;  ///< column i of G Z fell to rounding level (vectors only)

/// One batch of pairs: the packed device copies (leading dimensions m, p, n; pair b at b * m * n,
/// b * p * n, b * n * n), worked on in place, and the outputs.
template <class T>
struct GsvdBatch {
  using V = DeviceType<T>;
  using R = typename Device<T>::real;
  index_t count = 0, m = 0, p = 0, n = 0;
  V* f = nullptr;             ///< m x n: F scaled by 2^exponents[b].x, then F Z
  V* g = nullptr;             ///< p x n: G scaled by 2^exponents[b].y, then G Z
  double* g_norms = nullptr;  ///< n per pair: G's initial column norms (scaled G), with z only
  V* y = nullptr;             ///< n x n: Y = diag(||f_k||) Z, for F's zero test (always)
  V* z = nullptr;             ///< n x n: Z, or null when the vectors are not wanted
  const int2* exponents = nullptr;  ///< per pair: F, G were multiplied by 2^x, 2^y (exact)
  GsvdReport* reports = nullptr;

  /// Strategy: steps x pairs_per_step pairs (i, j) of columns; i = -1 pads a short step.
  const int2* pairs = nullptr;
  int steps = 0, pairs_per_step = 0;
  int max_sweeps = 50;
  bool sort = true;
  int lanes = 32;    ///< lanes per group
  int threads = 32;  ///< per block

  // finish: outputs per pair (n values; m x n, p x n, n x n), u, v, x null without vectors
  R* sigma_f = nullptr;
  R* sigma_g = nullptr;
  V* u = nullptr;
  V* v = nullptr;
  V* x = nullptr;
  const V* z_inverse = nullptr;  ///< n x n per pair (getriBatched's output)
};

/// Bytes of shared memory per column the finish kernel needs (its per-column arrays).
constexpr std::size_t kGsvdFinishBytesPerColumn = 6 * sizeof(double) + sizeof(int);

template <class T>
void launch_gsvd_sweeps(const GsvdBatch<T>& batch, std::size_t shared_limit, cudaStream_t stream);
template <class T>
void launch_gsvd_finish(const GsvdBatch<T>& batch, std::size_t shared_limit, cudaStream_t stream);

}  // namespace shiftop::svd::gpu_kernels
