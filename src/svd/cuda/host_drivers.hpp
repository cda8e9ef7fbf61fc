// The GPU drivers of the batched Jacobi (H)SVD and GSVD on host arrays, which svd::jacobi,
// jacobi_batched, gsvd_hz and gsvd_hz_batched call when options.backend is Backend::Cuda:
// svd/cuda/jacobi_batched.cpp and gsvd/cuda/gsvd_batched.cpp, or, in a build without CUDA,
// backend/cuda_hooks.cpp, which refuses.
#pragma once

#include "shiftop/gpu/context.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd::detail {

/// The batch as jacobi_batched takes it, checked as the CPU driver checks it (and against what
/// the GPU does not run), copied to the GPU of options.gpu, solved there, the results copied back.
template <class T>
BatchedJacobiResult<T> jacobi_batched_cuda(const T* a, index_t batch, index_t m, index_t n,
                                           index_t lda, index_t stride,
                                           const JacobiOptions& options);

/// The batch of pairs as gsvd_hz_batched takes it, on the GPU of options.gpu likewise.
template <class T>
BatchedGsvdResult<T> gsvd_hz_batched_cuda(const T* f, index_t ldf, index_t stride_f, const T* g,
                                          index_t ldg, index_t stride_g, index_t batch, index_t m,
                                          index_t p, index_t n, const GsvdOptions& options);

/// The context a call with these options runs on, held until the result is destroyed:
/// options.context when given (its owner orders its other uses), else the shared context of GPU
/// options.device with its lock (gpu/context.hpp).
inline gpu::SharedContext held_context(const GpuOptions& options) {
  if (options.context) return {options.context, {}};
  return gpu::shared_context(options.device);
}

}  // namespace shiftop::svd::detail
