// The device element type of each shiftop type for the batched Jacobi SVD kernels: float, double,
// and float2 and double2 for std::complex<float> and std::complex<double> (layout-compatible), so
// that host code and kernels agree on the buffers' types.
#pragma once

#include <vector_types.h>

#include <complex>
#include <type_traits>

namespace shiftop::svd::gpu_kernels {

template <class T>
struct Device {
  using type = T;  // float, double
  using real = T;
  static constexpr bool complex = false;
};
template <class R>
struct Device<std::complex<R>> {
  using type = std::conditional_t<std::is_same_v<R, float>, float2, double2>;
  using real = R;
  static constexpr bool complex = true;
};
/// The device element type of shiftop type T.
template <class T>
using DeviceType = typename Device<T>::type;

}  // namespace shiftop::svd::gpu_kernels
