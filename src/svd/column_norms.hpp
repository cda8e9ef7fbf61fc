// Column 2-norms that neither overflow nor underflow for entries anywhere in the floating-point
// range (jacobi-svd-gsvd-gpu-thesis, section 2.6: the column norms the Jacobi rotations rely on).
#pragma once

#include <complex>

#include "shiftop/core/shape.hpp"
#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd::detail {

/// ||x||_2 of n real entries. One pass of plain sums of squares when that is safe (the sum is
/// finite, so nothing overflowed, and large enough that underflowed squares cannot matter);
/// otherwise a second pass on x scaled by the power of 2 that brings max |x_i| near 1
/// (section 2.6's DRDSSQ idea). Deterministic: the same x gives the same bits. Accuracy: a few ulps
/// (n eps worst case) relative, for any finite entries, subnormals included.
template <class R>
R safe_norm(const R* x, index_t n);

/// The 2-norm of a column of T (complex: of its 2n real and imaginary parts).
template <class T>
Real<T> column_norm(const T* x, index_t n) {
  if constexpr (std::is_same_v<T, Real<T>>) {
    return safe_norm(x, n);
  } else {
    // std::complex<R> is layout-compatible with R[2] ([complex.numbers.general]).
    return safe_norm(reinterpret_cast<const Real<T>*>(x), 2 * n);
  }
}

}  // namespace shiftop::svd::detail
