// Interleaved complex numbers in FP32/FP64 for the CUDA kernels (cuFFT's cufftComplex and
// cufftDoubleComplex are float2 and double2), with the casts that fuse precision changes into
// the memory phases (mixed-precision paper, section 3.2).
#pragma once

#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

template <typename T>
struct ComplexOf;
template <>
struct ComplexOf<float> {
  using type = float2;
};
template <>
struct ComplexOf<double> {
  using type = double2;
};
/// The interleaved complex type of real type T.
template <typename T>
using complex_t = typename ComplexOf<T>::type;

/// z converted to precision To (rounds when narrowing).
template <typename To, typename C>
__device__ __forceinline__ complex_t<To> to_complex(C z) {
  return {static_cast<To>(z.x), static_cast<To>(z.y)};
}

template <typename C>
__device__ __forceinline__ C conjugate(C z) {
  return {z.x, -z.y};
}

/// acc += a * x.
template <typename C>
__device__ __forceinline__ void multiply_add(C& acc, C a, C x) {
  acc.x = fma(a.x, x.x, fma(-a.y, x.y, acc.x));
  acc.y = fma(a.x, x.y, fma(a.y, x.x, acc.y));
}

/// acc += conj(a) * x.
template <typename C>
__device__ __forceinline__ void conj_multiply_add(C& acc, C a, C x) {
  acc.x = fma(a.x, x.x, fma(a.y, x.y, acc.x));
  acc.y = fma(a.x, x.y, fma(-a.y, x.x, acc.y));
}

/// Complex values per 16-byte load: the widest load a thread can issue.
template <typename T>
inline constexpr int kPacket = static_cast<int>(16 / sizeof(complex_t<T>));

/// out[0..kPacket) = p[0..kPacket) with one streaming 16-byte load (p 16-byte aligned): F^ is read
/// once per apply, so it should not evict the vectors from L2.
__device__ __forceinline__ void load_streaming(const double2* p, double2 (&out)[1]) {
  out[0] = load_streaming_once(p);
}
__device__ __forceinline__ void load_streaming(const float2* p, float2 (&out)[2]) {
  const float4 v = load_streaming_once(reinterpret_cast<const float4*>(p));
  out[0] = {v.x, v.y};
  out[1] = {v.z, v.w};
}

}  // namespace shiftop::cuda
