// Built instead of svd/cuda/*.cu when shiftop is configured without CUDA: the GPU twins of the
// batched Jacobi SVD (shiftop/svd/jacobi_gpu.hpp) and of the batched GSVD
// (shiftop/svd/gsvd_gpu.hpp) say why they cannot run.
#include <complex>

#include "shiftop/core/error.hpp"
#include "shiftop/svd/gsvd_gpu.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"

namespace shiftop::svd {

template <class T>
BatchedJacobiResult<T> jacobi_batched(const gpu::Context&, const T*, index_t, index_t, index_t,
                                      index_t, index_t, const JacobiOptions&) {
  fail("svd: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

template <class T>
std::vector<JacobiStats> jacobi_batched_device(const gpu::Context&, const T*, index_t, index_t,
                                               index_t, index_t, index_t,
                                               const DeviceJacobiOutput<T>&, const JacobiOptions&) {
  fail("svd: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

#define SHIFTOP_INSTANTIATE(T)                                                              \
  template BatchedJacobiResult<T> jacobi_batched<T>(const gpu::Context&, const T*, index_t, \
                                                    index_t, index_t, index_t, index_t,     \
                                                    const JacobiOptions&);                  \
  template std::vector<JacobiStats> jacobi_batched_device<T>(                               \
      const gpu::Context&, const T*, index_t, index_t, index_t, index_t, index_t,           \
      const DeviceJacobiOutput<T>&, const JacobiOptions&);
SHIFTOP_INSTANTIATE(float)
SHIFTOP_INSTANTIATE(double)
SHIFTOP_INSTANTIATE(std::complex<float>)
SHIFTOP_INSTANTIATE(std::complex<double>)
#undef SHIFTOP_INSTANTIATE

template <class T>
BatchedGsvdResult<T> gsvd_hz_batched(const gpu::Context&, const T*, index_t, index_t, const T*,
                                     index_t, index_t, index_t, index_t, index_t, index_t,
                                     const GsvdOptions&) {
  fail(
      "gsvd: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU "
      "gsvd_hz_batched");
}

template BatchedGsvdResult<double> gsvd_hz_batched<double>(const gpu::Context&, const double*,
                                                           index_t, index_t, const double*, index_t,
                                                           index_t, index_t, index_t, index_t,
                                                           index_t, const GsvdOptions&);
template BatchedGsvdResult<std::complex<double>> gsvd_hz_batched<std::complex<double>>(
    const gpu::Context&, const std::complex<double>*, index_t, index_t, const std::complex<double>*,
    index_t, index_t, index_t, index_t, index_t, index_t, const GsvdOptions&);

}  // namespace shiftop::svd
