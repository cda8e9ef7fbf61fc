// Every CUDA runtime, cuFFT and cuBLAS call is checked; a failure becomes a shiftop::Error that
// names the call, the library's own error string, and the source line.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "shiftop/core/error_type.hpp"

namespace shiftop::cuda {

// Messages are built without fmt: nvcc cannot evaluate fmt's compile-time format checks.
inline std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " (" + file + ":" + std::to_string(line) + "): ";
}

inline void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess)
    throw Error(where(call, file, line) + "CUDA error: " + cudaGetErrorString(status));
}

inline void check(cufftResult status, const char* call, const char* file, int line) {
  if (status != CUFFT_SUCCESS)
    throw Error(where(call, file, line) + "cuFFT error " +
                std::to_string(static_cast<int>(status)));
}

inline void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(where(call, file, line) + "cuBLAS error: " + cublasGetStatusString(status));
}

}  // namespace shiftop::cuda

#define SHIFTOP_CUDA_CHECK(call) ::shiftop::cuda::check((call), #call, __FILE__, __LINE__)
