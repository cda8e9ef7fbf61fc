// Every CUDA runtime, cuFFT, cuBLAS and cuSOLVER call is checked. A failure the user can act on
// (out of device memory, no usable device) becomes a shiftop::Error in words ("out of GPU memory
// (...)"), without source paths; any other failure is a bug or a broken installation: an internal
// error (std::runtime_error, exit status 2) that names the call, the library's error and the
// source line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

#include "shiftop/core/error_type.hpp"

namespace shiftop::cuda {

// Messages are built without fmt: nvcc cannot evaluate fmt's compile-time format checks.
// `user_words` is the failure in the user's terms, or null for an internal error.
[[noreturn]] inline void raise_failure(const char* call, const char* file, int line,
                                       const std::string& library_error, const char* user_words) {
  if (user_words != nullptr) throw Error(std::string(user_words) + " (" + library_error + ")");
  throw std::runtime_error(std::string(call) + " (" + file + ":" + std::to_string(line) +
                           "): " + library_error);
}

inline const char* user_words(cudaError_t status) {
  switch (status) {
    case cudaErrorMemoryAllocation:
      return "out of GPU memory";
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorInsufficientDriver:
      return "no CUDA device";
    default:
      return nullptr;
  }
}

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    raise_failure(call, file, line, std::string("CUDA error: ") + cudaGetErrorString(status),
                  user_words(status));
}

inline void check(cufftResult status, const char* call, const char* file, int line) {
  if (status != CUFFT_SUCCESS)
    raise_failure(call, file, line, "cuFFT error " + std::to_string(static_cast<int>(status)),
                  status == CUFFT_ALLOC_FAILED ? "out of GPU memory" : nullptr);
}

inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    raise_failure(call, file, line, std::string("cuBLAS error: ") + cublasGetStatusString(status),
                  status == CUBLAS_STATUS_ALLOC_FAILED ? "out of GPU memory" : nullptr);
}

inline void check(cusolverStatus_t status, const char* call, const char* file, int line) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    raise_failure(call, file, line, "cuSOLVER error " + std::to_string(static_cast<int>(status)),
                  status == CUSOLVER_STATUS_ALLOC_FAILED ? "out of GPU memory" : nullptr);
}

}  // namespace shiftop::cuda

#define SHIFTOP_CUDA_CHECK(call) ::shiftop::cuda::check((call), #call, __FILE__, __LINE__)
