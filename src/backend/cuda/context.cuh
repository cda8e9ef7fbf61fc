// The CUDA handles of a gpu::Context (include/shiftop/gpu/context.hpp), for the code that queues
// work on it: kernels, cuFFT, cuBLAS and cuSOLVER calls take the stream and the handles from here.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <atomic>
#include <cstddef>

#include "backend/cuda/device_memory.cuh"
#include "shiftop/gpu/context.hpp"

struct shiftop::gpu::Context::Handles {
  int device = 0;
  int multiprocessors = 1;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  /// cuBLAS's workspace: with one of its own cuBLAS never allocates, also not while a CUDA graph
  /// is captured.
  cuda::DeviceMemory cublas_workspace;
  /// cuSOLVER's dense handle, bound to the stream; made on first use (cusolver_of), since most
  /// contexts never factor a matrix.
  cusolverDnHandle_t cusolver = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;  // wait_for and signal
  std::atomic<std::size_t> allocated{0};
};

namespace shiftop::cuda {

inline cudaStream_t stream_of(const gpu::Context& context) {
  return context.handles().stream;
}

/// The context's cuSOLVER handle (bound to its stream), made on first use.
cusolverDnHandle_t cusolver_of(const gpu::Context& context);

/// Device memory of `bytes` bytes counted in the context's allocated_bytes().
inline DeviceMemory allocate(const gpu::Context& context, std::size_t bytes) {
  return DeviceMemory(bytes, &context.handles().allocated);
}

}  // namespace shiftop::cuda
