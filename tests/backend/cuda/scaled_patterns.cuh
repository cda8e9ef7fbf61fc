// What the kernel tests of the real FFTs (test_real_fft.cu, test_product_inverse_fft.cu) share: the
// library's device arrays (cuda::DeviceArray), and the scheme that keeps their host references
// cheap while the persistent kernels loop over many series: series (or column) s is 2^(s mod 5 - 2)
// times one of 7 random patterns (s mod 7). Scaling by a power of two is exact in every precision,
// so each series' reference is its pattern's, scaled, and a mix-up of two series shows unless their
// distance is a multiple of 35.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstddef>

#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/real_fft.cuh"

namespace shiftop::cuda::test {

constexpr index_t kGuard = 64;  // poisoned elements after each output that must stay untouched
constexpr index_t kPatterns = 7, kScales = 5;
using Exact = std::complex<long double>;

/// The exact factor of series s: 1/4 .. 4.
inline double scale_of(index_t s) {
  return std::ldexp(1.0, static_cast<int>(s % kScales) - 2);
}

}  // namespace shiftop::cuda::test
