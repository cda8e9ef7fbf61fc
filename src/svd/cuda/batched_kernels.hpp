// The three stages of the batched Jacobi (H)SVD on the GPU (svd/jacobi_gpu.hpp), one thread block
// per matrix in each (except the blocked method of stage 2), and the description of a batch they
// share. The driver (svd/cuda/jacobi_batched.cpp) allocates the buffers and launches them in
// order on one stream:
//
//  1. preprocess (preprocess_kernel.cu): A' (A, or A^H when m < n: rows x cols, rows >= cols) is
//     scaled by a power of two when its entries are huge, checked for non-finite entries, and
//     - SVD: its rows sorted by decreasing infinity norm, factored P_r A' P = Q R by Householder QR
//       with column pivoting; G = R^H (cols x cols);
//     - HSVD with rows > cols: A' = Q R without pivoting; G = R (J stays on the columns);
//     - otherwise (no preprocessing, and always before the blocked method): G = A' (rows x cols).
//  2. orthogonalize (orthogonalize_kernel.cu): the pointwise one-sided Jacobi method on G under a
//     parallel strategy, accumulating the rotations into W when asked; sigma_j = ||g_j|| written
//     sorted descending (per part of J), X = G's columns normalised, and each column's place in
//     that order (the vectors stage permutes X and W as it writes U and V). For a G too large for
//     one block's shared memory in a batch too small to fill the GPU, the blocked method instead
//     (blocked_method.hpp: cuBLAS products and one thread block per pivot block pair, which
//     writes sigma, X and W sorted straight into the outputs; no vectors stage).
//  3. vectors (vectors_kernel.cu): U' and V' of A' from X and W (thesis eqs. (2.1)-(2.2), as the
//     CPU driver, svd/preprocess.hpp): SVD: U' = P_r^T Q [W; 0], V' = P X; HSVD: U' = Q X, V' = W;
//     unpreprocessed: U' = X, V' = W; then U = U', V = V' (A' = A) or U = V', V = U' (A' = A^H).
//
// Each kernel keeps its matrices in shared memory when they fit (plan_shared) and works on
// their global copies otherwise; the code is the same, through generic pointers.
#pragma once

#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>
#include <cstdint>

#include "shiftop/core/shape.hpp"
#include "svd/cuda/device_types.hpp"

namespace shiftop::svd::gpu_kernels {

/// What the driver reads back per matrix (JacobiStats plus the preprocessing's findings).
struct MatrixReport {
  int sweeps;
  int converged;       ///< 1: a sweep rotated no pair and every norm stayed finite
  int rank;            ///< nonzero diagonal entries of R (cols when not preprocessed)
  int scale_exponent;  ///< A' was multiplied by 2^-scale_exponent
  long long rotations, proper_rotations;
  long long first_nonfinite;  ///< the column-major index in A of the first non-finite entry, or -1
};

enum class Preprocessing : int {
  None,         ///< G = A'
  PivotedQr,    ///< SVD: rows sorted, QR with column pivoting, G = R^H
  UnpivotedQr,  ///< HSVD: QR, G = R
};

/// One batch, its buffers (device memory, per matrix at b * <size>) and its choices.
template <class T>
struct Batch {
  using V = DeviceType<T>;
  index_t count = 0;
  index_t m = 0, n = 0, lda = 0, stride = 0;
  const V* a = nullptr;
  bool wide = false;   ///< m < n: A' = A^H
  index_t rows = 0;    ///< of A': max(m, n)
  index_t cols = 0;    ///< of A': min(m, n)
  index_t g_rows = 0;  ///< rows of G: cols when preprocessed, else rows
  Preprocessing preprocessing = Preprocessing::None;
  int n_plus = -1;   ///< -1: SVD; else J = diag(I_{n_plus}, -I) on the columns of G
  int lanes = 32;    ///< lanes per group (svd/cuda/group_ops.cuh)
  int threads = 32;  ///< per block

  V* qr = nullptr;   ///< rows x cols: the Householder vectors below R's diagonal (kept for U)
  V* tau = nullptr;  ///< cols
  std::int32_t* col_perm = nullptr;  ///< cols: column j of A'P is column col_perm[j] of A'
  std::int32_t* row_perm = nullptr;  ///< rows: row i of P_r A' is row row_perm[i] of A'
  double* row_keys = nullptr;        ///< rows: the rows' infinity norms (sorting scratch)
  V* g = nullptr;       ///< g_rows x cols: G, then X (its columns normalised, in place)
  V* w = nullptr;       ///< cols x cols: the accumulated rotations, or null
  bool keep_x = false;  ///< X is needed for U' or V'
  /// cols: sigma_j (and columns j of X and W) belong at position order[j] of the sorted output
  std::int32_t* order = nullptr;
  typename Device<T>::real* sigma = nullptr;  ///< count x cols (the caller's)
  MatrixReport* reports = nullptr;

  /// Strategy: steps x pairs_per_step pairs (p, q) of G's columns; p = -1 pads a short step.
  const int2* pairs = nullptr;
  int steps = 0, pairs_per_step = 0;
  int max_sweeps = 60;
};

/// The dynamic shared memory a stage uses for `matrix_elements` elements of V plus its small
/// arrays (`small_bytes`), or only the small arrays when the matrix does not fit `limit`.
struct SharedPlan {
  std::size_t bytes = 0;
  bool matrix_in_shared = false;
};
inline SharedPlan plan_shared(std::size_t matrix_bytes, std::size_t small_bytes,
                              std::size_t limit) {
  const std::size_t small = (small_bytes + 15) / 16 * 16;
  if (matrix_bytes + small <= limit) return {matrix_bytes + small, true};
  return {small, false};
}

template <class T>
void launch_preprocess(const Batch<T>& batch, std::size_t shared_limit, cudaStream_t stream);
template <class T>
void launch_orthogonalize(const Batch<T>& batch, std::size_t shared_limit, cudaStream_t stream);
/// u and v: the caller's outputs (U: m x cols, V: n x cols per matrix), either may be null;
/// scratch: rows x cols elements per matrix, used when U' does not fit in shared memory.
template <class T>
void launch_vectors(const Batch<T>& batch, DeviceType<T>* u, DeviceType<T>* v,
                    DeviceType<T>* scratch, std::size_t shared_limit, cudaStream_t stream);

}  // namespace shiftop::svd::gpu_kernels
