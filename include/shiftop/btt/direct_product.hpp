// The block Toeplitz product computed directly in the time domain from the kernels, with no FFT:
// d_i[t] = sum_j sum_{s<=t} f_ij[t-s] m_j[s] and its adjoint. O(Nd Nm Nt^2 / 2) work; it is the
// baseline shiftop's FFT algorithm is measured against, and an independent check of it.
#pragma once

#include <span>

#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// d = F m for block lower-triangular F given by `kernels` (double[Nd][Nm][Nt]); m is [Nm][Nt],
/// d is [Nd][Nt].
void direct_product(std::span<const double> kernels, const Shape& shape, std::span<const double> m,
                    std::span<double> d, int threads = 0);

/// m = F* d, the same kernels read as the block upper-triangular transpose.
void direct_adjoint_product(std::span<const double> kernels, const Shape& shape,
                            std::span<const double> d, std::span<double> m, int threads = 0);

}  // namespace shiftop::btt
