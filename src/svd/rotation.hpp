// The Jacobi rotations of the one-sided method (jacobi-svd-gsvd-gpu-thesis, section 2.3.4):
// trigonometric (2.13), t = +1, and hyperbolic (2.14), t = -1,
//   (2.13)  [g_p' g_q'] = cos [g_p g_q] [1 tan; -tan 1]:
//           g_p' = c (g_p - tn g_q),  g_q' = c (tn g_p + g_q);
//   (2.14)  [g_p' g_q'] = cosh [g_p g_q] [1 tanh; tanh 1]:
//           g_p' = c (g_p + tn g_q),  g_q' = c (tn g_p + g_q);
// with the parameters of (2.15)-(2.18), cosine cs_2 (the thesis' choice, "A choice of the rotation
// formulas", Table 2.1).
//
// Annihilation. With h = G^H G restricted to (p, q) and h_pq real (see the complex case below):
//   (2.13): h'_pq = c^2 (g_p - tn g_q)^T (tn g_p + g_q) = c^2 [tn (h_pp - h_qq) + (1 - tn^2) h_pq],
//           zero iff cot 2phi = (1 - tn^2) / (2 tn) = (h_qq - h_pp) / (2 h_pq);
//   (2.14): h'_pq = c^2 [tn (h_pp + h_qq) + (1 + tn^2) h_pq],
//           zero iff coth 2phi = (1 + tn^2) / (2 tn) = -(h_pp + h_qq) / (2 h_pq);
// both are (2.15): ct 2phi = t (h_qq - t h_pp) / (2 h_pq). Cauchy-Schwarz gives |coth 2phi| >= 1.
//
// The new diagonal (the prediction that sorting and the norm updates use). For (2.13), with
// c^2 = 1 / (1 + tn^2):
//   h'_pp = c^2 (h_pp - 2 tn h_pq + tn^2 h_qq).
// (1 + tn^2)(h_pp - tn h_pq) differs from the bracket by -tn [tn (h_pp - h_qq) + (1 - tn^2) h_pq],
// which the annihilation condition makes zero, so
//   h'_pp = h_pp - tn h_pq,   h'_qq = h_qq + tn h_pq   (the trace is kept).
// For (2.14), c^2 = 1 / (1 - tn^2), h'_pp = c^2 (h_pp + 2 tn h_pq + tn^2 h_qq) and the same
// argument (the difference is tn [tn (h_pp + h_qq) + (1 + tn^2) h_pq] = 0) gives
//   h'_pp = h_pp + tn h_pq,   h'_qq = h_qq + tn h_pq   (h_pp - h_qq is kept; tn h_pq < 0).
// In one formula: h'_pp = h_pp - t tn h_pq, h'_qq = h_qq + tn h_pq. The thesis' step 5 of section
// 2.3.3 writes h'_pp = fma(tan, h_pq, h_pp), h'_qq = fma(-tan, h_pq, h_qq) for the trigonometric
// case: the opposite sign for the rotation as (2.13) defines it (test_rotation checks both).
//
// Complex columns. Let h_pq = |h_pq| e^{i theta}. With g~_q = e^{-i theta} g_q the pair (g_p, g~_q)
// has the real, nonnegative h~_pq = |h_pq|; rotate it by the real rotation above computed from
// |h_pq|, and multiply the new g~_q back by e^{i theta} (a unitary diagonal factor, which keeps
// norms and orthogonality). Together:
//   g_p' = c (g_p - t tn e^{-i theta} g_q),   g_q' = c (tn e^{i theta} g_p + g_q),
// i.e. [g_p' g_q'] = [g_p g_q] c [1, tn e^{i theta}; -t tn e^{-i theta}, 1], which is unitary for
// t = +1 and J-unitary (M^H J M = J, J = diag(1, -1)) for t = -1. For real data e^{i theta} is the
// sign of h_pq, and the formulas are (2.13)-(2.14) with the sign folded into tn.
//
// Scaled form. The one-sided method never forms h_pp, h_qq, h_pq (they can overflow where G does
// not); it keeps the column norms nu_p, nu_q (svd/column_norms.hpp) and the cosine of the angle,
// a = h_pq / (nu_p nu_q) (as LAPACK's dgsvj0 does). With r = nu_q / nu_p, (2.15) becomes
//   trigonometric: cot 2phi = (r - 1/r) / (2 |a|),   hyperbolic: coth 2phi = -(r + 1/r) / (2 |a|),
// and the prediction becomes a factor on the squared norms:
//   nu_p'^2 = nu_p^2 (1 - t tn |a| r),   nu_q'^2 = nu_q^2 (1 + tn |a| / r).
#pragma once

#include <cmath>
#include <limits>

#include "core/host_device.hpp"

namespace shiftop::svd::detail {

/// The parameters of a rotation (2.13) (hyperbolic: (2.14)); cosine == 1 marks a rotation that is
/// not proper (section 2.3.3, step 4).
template <class R>
struct Rotation {
  R tangent = 0;  ///< tan phi (tanh phi); its sign is that of ct 2phi
  R cosine = 1;   ///< cos phi (cosh phi), cs_2 of (2.18)
};

/// The unit roundoff, the thesis' epsilon (2^-53 for double).
template <class R>
SHIFTOP_HOST_DEVICE constexpr R unit_roundoff() {
  return std::numeric_limits<R>::epsilon() / 2;
}

/// The relative orthogonality threshold of the one-sided methods: the pair (p, q) is rotated when
/// |g_p^H g_q| >= tolerance ||g_p|| ||g_q||. The thesis' eps sqrt(n) (section 2.3.3) with n the
/// larger of the columns' length and count: the computed cosine of two orthogonal columns of length
/// m is off by about sqrt(m) eps (hence dgesvj's sqrt(M) eps), so a threshold below that would keep
/// a tall matrix rotating forever (a 10^6 x 2 matrix did: 60 sweeps, not converged).
template <class R>
SHIFTOP_HOST_DEVICE R orthogonality_tolerance(long long rows, long long cols) {
  return unit_roundoff<R>() * std::sqrt(static_cast<R>(rows > cols ? rows : cols));
}

/// (2.16)-(2.18) from ct 2phi (cot 2phi, or coth 2phi when hyperbolic), with the special cases of
/// section 2.3.4: |cot 2phi| < sqrt(eps) gives |cot phi| = |cot 2phi| + 1; |ct 2phi| >=
/// sqrt(2/eps) gives |ct phi| = 2 |ct 2phi| and cs = 1 (no square of ct 2phi, which could
/// overflow); |ct phi| >= sqrt(2/eps) gives cs = 1; a hyperbolic |coth 2phi| that is numerically 1
/// (or below 1 by rounding) is replaced by 5/4 (the thesis' [79]), keeping its sign.
template <class R>
SHIFTOP_HOST_DEVICE Rotation<R> rotation_from_cot2(R cot2, bool hyperbolic) {
  const R t = hyperbolic ? R(-1) : R(1);
  const R sqrt_eps = std::sqrt(unit_roundoff<R>());
  const R large = std::sqrt(R(2) / unit_roundoff<R>());
  R abs_cot2 = std::abs(cot2);
  Rotation<R> rotation;
  R abs_cot;
  if (abs_cot2 >= large) {
    abs_cot = 2 * abs_cot2;
  } else {
    if (hyperbolic && abs_cot2 <= 1) abs_cot2 = R(5) / 4;
    if (!hyperbolic && abs_cot2 < sqrt_eps)
      abs_cot = abs_cot2 + 1;
    else
      abs_cot = abs_cot2 + std::sqrt(std::fma(abs_cot2, abs_cot2, t));
    if (abs_cot < large) rotation.cosine = abs_cot / std::sqrt(std::fma(abs_cot, abs_cot, t));
  }
  rotation.tangent = std::copysign(1 / abs_cot, cot2);
  return rotation;
}

/// The rotation that annihilates the (p, q) entry of G^H G, from the column norms' ratio
/// r = nu_q / nu_p (> 0, finite) and |a|, the absolute cosine of the columns' angle (> 0).
template <class R>
SHIFTOP_HOST_DEVICE Rotation<R> rotation_from_norms(R ratio, R abs_cosine, bool hyperbolic) {
  const R numerator = hyperbolic ? -(ratio + 1 / ratio) : ratio - 1 / ratio;
  return rotation_from_cot2(numerator / (2 * abs_cosine), hyperbolic);
}

/// One value for each column of the pivot pair.
template <class R>
struct PairValues {
  R p = 0;
  R q = 0;
};

/// The factors f_p, f_q of the predicted new squared norms, nu_p'^2 = f_p nu_p^2 and
/// nu_q'^2 = f_q nu_q^2 (see the derivation above; clamped at 0 against rounding, as dgsvj0 does).
template <class R>
SHIFTOP_HOST_DEVICE PairValues<R> predicted_norm_factors(const Rotation<R>& rotation, R ratio,
                                                         R abs_cosine, bool hyperbolic) {
  const R tangent_cosine = rotation.tangent * abs_cosine;
  const R t = hyperbolic ? R(-1) : R(1);
  return {std::fmax(R(0), std::fma(-t * tangent_cosine, ratio, R(1))),
          std::fmax(R(0), std::fma(tangent_cosine, 1 / ratio, R(1)))};
}

/// The predicted new diagonal of G^H G after the rotation computed from |h_pq| (h_pq real and
/// nonnegative after the phase is taken out): h'_pp = h_pp - t tn |h_pq|, h'_qq = h_qq + tn |h_pq|.
template <class R>
SHIFTOP_HOST_DEVICE PairValues<R> predicted_diagonal(const Rotation<R>& rotation, R h_pp, R h_qq,
                                                     R abs_h_pq, bool hyperbolic) {
  const R t = hyperbolic ? R(-1) : R(1);
  return {std::fma(-t * rotation.tangent, abs_h_pq, h_pp),
          std::fma(rotation.tangent, abs_h_pq, h_qq)};
}

}  // namespace shiftop::svd::detail
