// Planar complex storage used in Fourier space: real parts and imaginary parts in separate
// row blocks, so that the complex GEMV/GEMM kernels are plain vertical SIMD with no shuffles.
#pragma once

#include <type_traits>

#include "shiftop/core/shape.hpp"

namespace shiftop::cpu {

/// SIMD lanes of one 64-byte register; planar rows are padded with zeros to a multiple of it.
template <typename T>
inline constexpr index_t kLanes = 64 / static_cast<index_t>(sizeof(T));

/// `rows` complex rows of leading dimension `ld`: row k is (re + k*ld, im + k*ld).
template <typename T>
struct PlanarRows {
  T* re = nullptr;
  T* im = nullptr;
  index_t ld = 0;

  PlanarRows<T> shifted(index_t rows) const { return {re + rows * ld, im + rows * ld, ld}; }
  operator PlanarRows<const T>() const requires(!std::is_const_v<T>) { return {re, im, ld}; }
};

/// Frequency-major planar spectrum (TOSI): for each frequency w a block of `rows` real rows
/// followed by `rows` imaginary rows, each of `ld` values. F^ is stored this way with one row per
/// observation block; vectors with one row per right-hand side.
template <typename T>
struct PlanarSpectrum {
  T* data = nullptr;
  index_t rows = 0;
  index_t ld = 0;

  index_t frequency_stride() const { return 2 * rows * ld; }
  PlanarRows<T> at(index_t w) const {
    T* re = data + w * frequency_stride();
    return {re, re + rows * ld, ld};
  }
};

}  // namespace shiftop::cpu
