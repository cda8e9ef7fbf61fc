// cuBLAS's strided batched complex GEMM and GEMV in either precision: complex_t<T> is cuComplex
// (float2) or cuDoubleComplex (double2), and overloading picks the C or Z routine.
#pragma once

#include <cublas_v2.h>

#include "backend/cuda/check.hpp"
#include "backend/cuda/complex.cuh"

namespace shiftop::cuda {

namespace detail {
template <typename T>
struct Cublas;
template <>
struct Cublas<float> {
  static constexpr auto gemm = cublasCgemmStridedBatched;
  static constexpr auto gemv = cublasCgemvStridedBatched;
};
template <>
struct Cublas<double> {
  static constexpr auto gemm = cublasZgemmStridedBatched;
  static constexpr auto gemv = cublasZgemvStridedBatched;
};
}  // namespace detail

/// c[i] = op_a(a[i]) b[i] for i < batch (column-major, as cuBLAS).
template <typename T>
void gemm_batched(cublasHandle_t handle, cublasOperation_t op_a, int m, int n, int k,
                  const complex_t<T>* a, int lda, long long stride_a, const complex_t<T>* b,
                  int ldb, long long stride_b, complex_t<T>* c, int ldc, long long stride_c,
                  int batch) {
  const complex_t<T> one{1, 0}, zero{0, 0};
  SHIFTOP_CUDA_CHECK(detail::Cublas<T>::gemm(handle, op_a, CUBLAS_OP_N, m, n, k, &one, a, lda,
                                             stride_a, b, ldb, stride_b, &zero, c, ldc, stride_c,
                                             batch));
}

/// y[i] = op(a[i]) x[i] for i < batch, unit-stride vectors.
template <typename T>
void gemv_batched(cublasHandle_t handle, cublasOperation_t op, int m, int n, const complex_t<T>* a,
                  int lda, long long stride_a, const complex_t<T>* x, long long stride_x,
                  complex_t<T>* y, long long stride_y, int batch) {
  const complex_t<T> one{1, 0}, zero{0, 0};
  SHIFTOP_CUDA_CHECK(detail::Cublas<T>::gemv(handle, op, m, n, &one, a, lda, stride_a, x, 1,
                                             stride_x, &zero, y, 1, stride_y, batch));
}

}  // namespace shiftop::cuda
