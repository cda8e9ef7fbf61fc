// The 2 x 2 transformation of the implicit Hari-Zimmermann GSVD (jacobi-svd-gsvd-gpu-thesis,
// eqs. (3.7)-(3.8) and (3.14)), real and complex, shared by the CPU and the GPU.
//
// The pair. For pivot columns (f_i, f_j) of F and (g_i, g_j) of G, first scaled so that the
// columns of G have unit norm, the pivot submatrices of (3.14) are
//   A^ = [a_ii  a_ij; conj(a_ij)  a_jj],   B^ = [1  b; conj(b)  1],   |b| < 1 (G of full rank).
// The transformation Z^ makes Z^H B^ Z^ = I and Z^H A^ Z^ diagonal, so that [f_i f_j] Z^ and
// [g_i g_j] Z^ are orthogonal pairs and the new columns of G keep unit norm.
//
// The eqs. (3.8), with the bracket the text conversion garbled put back:
//   xi  = b / (sqrt(1 + b) + sqrt(1 - b)),
//   eta = b / ((1 + sqrt(1 + b)) (1 + sqrt(1 - b))).
// The check is Proposition 3.1's identity xi (1 + eta^2) = 2 eta (cos^2 + sin^2 = 1), which these
// satisfy exactly (and the garbled sqrt(1 + b + sqrt(1 - b)) does not), and det Z^ =
// (1 - 2 xi^2) / (1 - b^2) = 1 / sqrt(1 - b^2): with c = sqrt(1 - b^2),
// (sqrt(1 + b) + sqrt(1 - b))^2 = 2 (1 + c), so 2 xi^2 = b^2 / (1 + c) and 1 - 2 xi^2 = c.
// test_hz_transform checks both identities and the conditions above on random pairs.
//
// A factorisation that carries over to complex pairs. For real b, (3.7) at theta = 0 is
//   N = (1 / c) [1 - xi eta,  -xi; -xi,  1 - xi eta],
// which is B^{-1/2}, the symmetric inverse square root of B^ (its entries are
// (1/sqrt(1+b) +- 1/sqrt(1-b)) / 2, and 1/sqrt(1+b) - 1/sqrt(1-b) = -2 b / ((sqrt(1+b) +
// sqrt(1-b)) c), the cancellation-free form xi gives). And (3.7) is N R(theta), R(theta) =
// [cos sin; -sin cos], the Jacobi rotation that diagonalises H = N A^ N: with N = [p q; q p],
//   H_ij = (p^2 + q^2) a_ij + p q (a_ii + a_jj) = (2 a_ij - b (a_ii + a_jj)) / (2 c^2),
//   H_jj - H_ii = (p^2 - q^2)(a_jj - a_ii) = (a_jj - a_ii) / c,
// and tan 2 theta = 2 H_ij / (H_jj - H_ii) is the thesis' tan(2 theta) of (3.8).
//
// Complex pairs. Write b = |b| e_b and take the phase out with D = diag(1, conj(e_b)):
// D^H B^ D = [1 |b|; |b| 1] =: M (real), D^H A^ D has the off-diagonal a' = a_ij conj(e_b). With
// N = M^{-1/2} as above (from |b|), H = N (D^H A^ D) N is Hermitian with
//   h = H_ij = (2 Re a' - |b| (a_ii + a_jj)) / (2 c^2) + i Im a' / c,
//   H_jj - H_ii = (a_jj - a_ii) / c,
//   H_ii = p^2 a_ii + 2 p q Re a' + q^2 a_jj,   H_jj = q^2 a_ii + 2 p q Re a' + p^2 a_jj.
// With h = |h| e_h, E = diag(1, conj(e_h)) and R(theta) the real rotation for |h|, the unitary
// Q = E R E^H diagonalises H, and
//   Z^ = D N Q D^H = D N E R E^H D^H
// satisfies Z^H B^ Z^ = D Q^H N M N Q D^H = I and Z^H A^ Z^ = D (Q^H H Q) D^H, diagonal. The
// outer D^H keeps Z^ -> I as b, a_ij -> 0 (a bare D N Q would leave a phase in Z^_jj). Entries,
// with cs = cos theta, sn = sin theta:
//   Z_ii = p cs - q sn conj(e_h),          Z_ij = (p sn e_h + q cs) e_b,
//   Z_ji = (q cs - p sn conj(e_h)) conj(e_b),   Z_jj = p cs + q sn e_h.
// For real pairs e_b and e_h are signs and this is (3.7) (test_hz_transform compares).
//
// The new diagonal (the local sorting of section 3.2.2, Algorithm 7): the new squared norms of
// f_i, f_j are the eigenvalues of H, H_ii - tn |h| and H_jj + tn |h| (svd/rotation.hpp's
// predicted_diagonal); when the first is the smaller the columns of Z^ are swapped, so the pair
// leaves with ||f_i'|| >= ||f_j'|| (the columns of G have unit norm, so this orders sigma_f /
// sigma_g).
#pragma once

#include <cmath>

#include "core/host_device.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd::detail {

/// A complex number as two reals (the GPU has no std::complex); im is 0 for real pairs.
template <class R>
struct Pair2 {
  R re = 0;
  R im = 0;
};

/// The inputs of one transformation, for G's columns scaled to unit norm: a_ii, a_jj >= 0 the
/// squared norms of f_i, f_j; a_ij = f_i^H f_j; b = g_i^H g_j, |b| < 1.
template <class R>
struct HzPivot {
  R a_ii = 0, a_jj = 0;
  Pair2<R> a_ij, b;
};

/// The transformation: [f_i f_j] <- [f_i f_j] [z_ii z_ij; z_ji z_jj] (and the same for G, Z).
template <class R>
struct HzTransform {
  Pair2<R> z_ii{1, 0}, z_ij, z_ji, z_jj{1, 0};
  R new_a_ii = 0, new_a_jj = 0;  ///< the predicted new squared norms of f_i, f_j (sorted)
  bool swapped = false;          ///< the columns were swapped by the local sorting
  /// Moves a column of F or G by at least `negligible` of its norm (section 3.5's convergence
  /// test; see hz_transform).
  bool proper = false;
};

template <class R>
SHIFTOP_HOST_DEVICE Pair2<R> mul(Pair2<R> x, Pair2<R> y) {
  return {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re};
}
template <class R>
SHIFTOP_HOST_DEVICE Pair2<R> conj(Pair2<R> x) {
  return {x.re, -x.im};
}
/// x / |x|, and 1 for x = 0.
template <class R>
SHIFTOP_HOST_DEVICE Pair2<R> unit_phase(Pair2<R> x, R abs_x) {
  if (abs_x == R(0)) return {R(1), R(0)};
  return {x.re / abs_x, x.im / abs_x};
}

/// Whether the pair must be transformed (section 3.5): |b| >= eps sqrt(n) or
/// |a_ij| >= eps sqrt(n) sqrt(a_ii a_jj), with n the order of the sweep.
template <class R>
SHIFTOP_HOST_DEVICE bool hz_needs_transform(const HzPivot<R>& pivot, R tolerance) {
  const R abs_b = std::hypot(pivot.b.re, pivot.b.im);
  const R abs_a = std::hypot(pivot.a_ij.re, pivot.a_ij.im);
  return abs_b >= tolerance || abs_a >= tolerance * std::sqrt(pivot.a_ii) * std::sqrt(pivot.a_jj);
}

/// |z| times `ratio` (a quotient of column norms), 0 for z = 0 whatever the ratio.
template <class R>
SHIFTOP_HOST_DEVICE R weighted_abs(Pair2<R> z, R ratio) {
  const R abs_z = std::hypot(z.re, z.im);
  return abs_z > R(0) ? abs_z * ratio : R(0);
}

/// The transformation of the pair (see above). `sort`: the local sorting. `negligible`: a
/// transformation is proper when it moves a column of F or of G (the latter of unit norm) by at
/// least that fraction of the column's norm: f_i' - f_i = (z_ii - 1) f_i + z_ji f_j, so
/// |z_ii - 1| + |z_ji| ||f_j|| / ||f_i||, and likewise for f_j and for G. The thesis' test (section
/// 3.5: a diagonal of Z^ that differs from 1) misses transformations whose diagonal rounds to 1
/// while z_ji times a much longer f_j still moves f_i (graded pairs came back 58% wrong,
/// "converged"), and counts those that only reorder equal values or move columns by rounding (a
/// pair F = G never converged). The sorting's swaps are not counted: the finish sorts the values.
template <class R>
SHIFTOP_HOST_DEVICE HzTransform<R> hz_transform(const HzPivot<R>& pivot, bool sort, R negligible) {
  const R abs_b = std::hypot(pivot.b.re, pivot.b.im);
  const Pair2<R> e_b = unit_phase(pivot.b, abs_b);
  const R one_minus = R(1) - abs_b, one_plus = R(1) + abs_b;
  const R c = std::sqrt(one_minus * one_plus);
  const R root_plus = std::sqrt(one_plus), root_minus = std::sqrt(one_minus);
  const R xi = abs_b / (root_plus + root_minus);
  const R eta = abs_b / ((1 + root_plus) * (1 + root_minus));
  const R p = (1 - xi * eta) / c, q = -xi / c;

  const Pair2<R> a_rot = mul(pivot.a_ij, conj(e_b));  // a' = a_ij conj(e_b)
  const Pair2<R> h{(2 * a_rot.re - abs_b * (pivot.a_ii + pivot.a_jj)) / (2 * c * c), a_rot.im / c};
  const R abs_h = std::hypot(h.re, h.im);
  const Pair2<R> e_h = unit_phase(h, abs_h);
  const R h_ii = p * p * pivot.a_ii + 2 * p * q * a_rot.re + q * q * pivot.a_jj;
  const R h_jj = q * q * pivot.a_ii + 2 * p * q * a_rot.re + p * p * pivot.a_jj;

  // theta = 0 when H is diagonal already: h = 0 (the proportional pair of (3.8)), or h relatively
  // below `negligible`, as the Jacobi SVD leaves a pair whose cosine is below its tolerance. (For
  // equal values, H = c I to rounding, the angle would be the quotient of two rounding errors: an
  // arbitrary rotation, every sweep, that never converged.)
  Rotation<R> rotation;
  if (abs_h > R(0) && !(abs_h < negligible * std::sqrt(h_ii) * std::sqrt(h_jj)))
    rotation = rotation_from_cot2((pivot.a_jj - pivot.a_ii) / c / (2 * abs_h), false);
  const R cs = rotation.cosine, sn = rotation.cosine * rotation.tangent;
  const PairValues<R> diagonal = predicted_diagonal(rotation, h_ii, h_jj, abs_h, false);

  HzTransform<R> t;
  const Pair2<R> sn_e_h{sn * e_h.re, sn * e_h.im};
  t.z_ii = {p * cs - q * sn_e_h.re, q * sn_e_h.im};
  t.z_ij = mul(Pair2<R>{p * sn_e_h.re + q * cs, p * sn_e_h.im}, e_b);
  t.z_ji = mul(Pair2<R>{q * cs - p * sn_e_h.re, p * sn_e_h.im}, conj(e_b));
  t.z_jj = {p * cs + q * sn_e_h.re, q * sn_e_h.im};
  t.new_a_ii = diagonal.p;
  t.new_a_jj = diagonal.q;
  const R dz_ii = std::hypot(t.z_ii.re - 1, t.z_ii.im),
          dz_jj = std::hypot(t.z_jj.re - 1, t.z_jj.im);
  const R f_ratio = std::sqrt(pivot.a_jj) / std::sqrt(pivot.a_ii);  // ||f_j|| / ||f_i||
  const R moved_f =
      std::fmax(dz_ii + weighted_abs(t.z_ji, f_ratio), dz_jj + weighted_abs(t.z_ij, 1 / f_ratio));
  const R moved_g =
      std::fmax(dz_ii + weighted_abs(t.z_ji, R(1)), dz_jj + weighted_abs(t.z_ij, R(1)));
  t.proper = !(std::fmax(moved_f, moved_g) < negligible);  // NaN: proper
  if (sort && diagonal.p < diagonal.q) {
    const Pair2<R> first_ii = t.z_ii, first_ji = t.z_ji;
    t.z_ii = t.z_ij;
    t.z_ji = t.z_jj;
    t.z_ij = first_ii;
    t.z_jj = first_ji;
    t.new_a_ii = diagonal.q;
    t.new_a_jj = diagonal.p;
    t.swapped = true;
  }
  return t;
}

}  // namespace shiftop::svd::detail
