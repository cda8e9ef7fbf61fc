// The first-order error bound of the mixed-precision paper, eq. (6), for tests of every precision
// configuration:
//   |dv5|/|v5| <= kappa(F^) [c1 e1 + (e_d + c2 e2 + c4 e4) log2(2 Nt) + c3 e3 n + c5 e5 max(1, log2
//   p)]
// with c_k = 1 when phase k is FP32 (0 otherwise), e_k the unit roundoff of that phase, n the
// length of the GEMV dot products (Nm for F, Nd for F*), p = 1 process. Two deliberate choices:
// log2(2 Nt) (the padded FFT length of the derivation) so that Nt = 1 keeps the FFT terms, and
// max(1, log2 p) because rounding the output to FP32 in phase 5 costs one rounding even on one
// process. Tests allow a factor kSlack over the bound for the unknown constants of the paper's
// Higham/Van Loan estimates.
#pragma once

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "shiftop/btt/op.hpp"
#include "shiftop/core/precision.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::testing {

inline constexpr double kSlack = 4.0;

/// kappa(F^) = largest over smallest nonzero singular value over all frequencies (LAPACK).
inline double spectrum_condition_number(std::span<const double> col, std::span<const double> row,
                                        const Shape& s) {
  const auto dft = kernel_dft(col, row, s);
  const index_t k = std::min(s.nd, s.nm);
  double smax = 0, smin = std::numeric_limits<double>::infinity();
  for (index_t w = 0; w < btt::frequencies(s); ++w) {
    std::vector<lapack_complex_double> a(static_cast<std::size_t>(s.nd * s.nm));
    for (index_t e = 0; e < s.nd * s.nm; ++e) {
      const auto v = dft[static_cast<std::size_t>(w * s.nd * s.nm + e)];
      a[static_cast<std::size_t>(e)] = lapack_make_complex_double(v.real(), v.imag());
    }
    std::vector<double> sv(static_cast<std::size_t>(k)), superb(static_cast<std::size_t>(k));
    const lapack_int info = LAPACKE_zgesvd(
        LAPACK_ROW_MAJOR, 'N', 'N', static_cast<lapack_int>(s.nd), static_cast<lapack_int>(s.nm),
        a.data(), static_cast<lapack_int>(s.nm), sv.data(), nullptr, 1, nullptr, 1, superb.data());
    if (info != 0) return std::numeric_limits<double>::infinity();
    smax = std::max(smax, sv.front());
    smin = std::min(smin, sv.back());
  }
  return smax / smin;
}

inline double eq6_bound(const PrecisionConfig& p, btt::Op op, const Shape& s, double kappa) {
  const auto e = [&](Phase phase) {
    return p[phase] == Precision::Single ? unit_roundoff(Precision::Single) : 0.0;
  };
  const double ed = unit_roundoff(Precision::Double);
  const double n = static_cast<double>(op == btt::Op::F ? s.nm : s.nd);
  const double logn = std::log2(static_cast<double>(2 * s.nt));
  return kappa * (e(Phase::Pad) + (ed + e(Phase::Fft) + e(Phase::Ifft)) * logn +
                  e(Phase::Gemv) * n + e(Phase::Unpad));
}

}  // namespace shiftop::testing
