// Device arithmetic of the batched Jacobi SVD kernels (svd/cuda/*.cu): the few operations the
// kernels need on the element types of svd/cuda/device_types.hpp, and sums over a group of lanes.
//
// A group is a power-of-two run of 4..32 lanes of one warp that owns one column (or one column
// pair) at a time. Sums are accumulated in double for every type: FP32 data then has no
// underflow or overflow in squared norms, and the xor-butterfly leaves the identical sum in every
// lane (each level adds the same two partials, in either order), so all lanes of a group take the
// same branch on it.
#pragma once

#include <cuda_runtime.h>

#include "svd/cuda/device_types.hpp"

namespace shiftop::svd::gpu_kernels {

/// A complex number in double (real data: im == 0), the accumulator of dot products.
struct Acc {
  double re = 0, im = 0;
};

__device__ __forceinline__ double real_of(float x) {
  return x;
}
__device__ __forceinline__ double real_of(double x) {
  return x;
}
__device__ __forceinline__ double real_of(float2 x) {
  return x.x;
}
__device__ __forceinline__ double real_of(double2 x) {
  return x.x;
}
__device__ __forceinline__ double imag_of(float) {
  return 0;
}
__device__ __forceinline__ double imag_of(double) {
  return 0;
}
__device__ __forceinline__ double imag_of(float2 x) {
  return x.y;
}
__device__ __forceinline__ double imag_of(double2 x) {
  return x.y;
}

/// |x|^2 in double.
template <class V>
__device__ __forceinline__ double abs2(V x) {
  const double re = real_of(x), im = imag_of(x);
  return fma(re, re, im * im);
}

/// acc += conj(x) * y in double.
template <class V>
__device__ __forceinline__ void add_conj_product(Acc& acc, V x, V y) {
  const double xr = real_of(x), xi = imag_of(x), yr = real_of(y), yi = imag_of(y);
  acc.re = fma(xr, yr, fma(xi, yi, acc.re));
  acc.im = fma(xr, yi, fma(-xi, yr, acc.im));
}

/// Complex scalars of the element's precision: (re, im) of type R.
template <class R>
struct Scalar {
  R re = 0, im = 0;
};

__device__ __forceinline__ float make_value(float re, float) {
  return re;
}
__device__ __forceinline__ double make_value(double re, double) {
  return re;
}
__device__ __forceinline__ float2 make_value2(float re, float im) {
  return {re, im};
}
__device__ __forceinline__ double2 make_value2(double re, double im) {
  return {re, im};
}

template <class V, class R>
__device__ __forceinline__ V make(R re, R im) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>)
    return static_cast<V>(re);
  else
    return make_value2(re, im);
}

template <class V>
__device__ __forceinline__ V zero() {
  return V{};
}

/// x + a * y for a complex scalar a (real data: a.im ignored).
template <class V, class R>
__device__ __forceinline__ V axpy(Scalar<R> a, V y, V x) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) {
    return fma(a.re, y, x);
  } else {
    return {fma(a.re, y.x, fma(-a.im, y.y, x.x)), fma(a.re, y.y, fma(a.im, y.x, x.y))};
  }
}

template <class V, class R>
__device__ __forceinline__ V scale(R c, V x) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>)
    return c * x;
  else
    return {c * x.x, c * x.y};
}

/// c x computed in double and rounded once (c may be outside the range of x's precision).
template <class V>
__device__ __forceinline__ V scale_in_double(double c, V x) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>)
    return static_cast<V>(c * static_cast<double>(x));
  else
    return make<V>(static_cast<decltype(x.x)>(c * static_cast<double>(x.x)),
                   static_cast<decltype(x.x)>(c * static_cast<double>(x.y)));
}

template <class V>
__device__ __forceinline__ V conj(V x) {
  if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>)
    return x;
  else
    return {x.x, -x.y};
}

template <class V>
__device__ __forceinline__ bool finite(V x) {
  return isfinite(real_of(x)) && isfinite(imag_of(x));
}

/// The sum of x over the `width` lanes of the caller's group (every lane of the warp calls it).
__device__ __forceinline__ double group_sum(double x, int width) {
  for (int offset = width / 2; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset, width);
  return x;
}
__device__ __forceinline__ Acc group_sum(Acc x, int width) {
  return {group_sum(x.re, width), group_sum(x.im, width)};
}

/// The lanes of a block split into groups of `width` lanes.
struct Groups {
  int width;  ///< lanes per group (4..32, a power of two)
  int lane;   ///< this thread's lane in its group
  int index;  ///< this thread's group
  int count;  ///< groups in the block
  __device__ explicit Groups(int w)
      : width(w),
        lane(static_cast<int>(threadIdx.x) % w),
        index(static_cast<int>(threadIdx.x) / w),
        count(static_cast<int>(blockDim.x) / w) {}
};

}  // namespace shiftop::svd::gpu_kernels
