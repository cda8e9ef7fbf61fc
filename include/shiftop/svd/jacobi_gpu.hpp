// shiftop::svd::jacobi_batched on a GPU — the twin of the CPU batched one-sided Jacobi (H)SVD
// (svd/jacobi.hpp) with the same options, layouts and results (equal within rounding, not
// bitwise: the GPU sums dot products in another order). One thread block per matrix
// (jacobi-svd-gsvd-gpu-thesis, section 2.3, the pointwise level): the rows are sorted by their
// infinity norm, the matrix is factored by Householder QR with column pivoting (as the CPU
// driver and LAPACK's xGEJSV do) and the transposed triangular factor is orthogonalised by the
// pointwise method under the parallel strategy of the options; each matrix lives in the
// multiprocessor's shared memory when it fits (Hopper: up to 227 KB per block) and in global
// memory otherwise. Work is queued on the context's stream (gpu/context.hpp); both functions
// return after that stream is synchronised, because the convergence counters come back to the
// host.
//
// Options on the GPU: compute_u, compute_v, n_plus (the hyperbolic SVD), strategy, max_sweeps and
// preprocess as on the CPU; variant Auto or Pointwise (the blocked variants are CPU-only so far:
// refused); rank_tolerance must be 0 (refused otherwise); block_width and threads are ignored.
#pragma once

#include <vector>

#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd {

/// Host arrays: `batch` m x n column-major matrices, matrix b at a + b * stride (as the CPU
/// jacobi_batched), copied to the GPU of `context`, the results copied back. Throws
/// shiftop::Error for what the CPU version refuses (naming the first non-finite entry), for the
/// options the GPU does not support, and when shiftop was built without CUDA.
template <class T>
BatchedJacobiResult<T> jacobi_batched(const gpu::Context& context, const T* a, index_t batch,
                                      index_t m, index_t n, index_t lda, index_t stride,
                                      const JacobiOptions& options = {});

/// The outputs of jacobi_batched_device, in device memory of the context's GPU, r = min(m, n).
template <class T>
struct DeviceJacobiOutput {
  Real<T>* sigma = nullptr;  ///< batch x r, row b descending (hyperbolic: per part of J)
  T* u = nullptr;            ///< batch x (m x r), column-major, leading dimension m; when compute_u
  T* v = nullptr;            ///< batch x (n x r), column-major, leading dimension n; when compute_v
};

/// Device arrays: `a` (device memory, not modified) holds the batch as above; the results go to
/// `out` (device memory, not overlapping `a`). The work is ordered after what is queued on the
/// context's stream (use Context::wait_for to order it after a caller's stream). Returns the
/// statistics of each matrix (host memory).
template <class T>
std::vector<JacobiStats> jacobi_batched_device(const gpu::Context& context, const T* a,
                                               index_t batch, index_t m, index_t n, index_t lda,
                                               index_t stride, const DeviceJacobiOutput<T>& out,
                                               const JacobiOptions& options = {});

}  // namespace shiftop::svd
