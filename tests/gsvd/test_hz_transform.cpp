// The Hari-Zimmermann 2 x 2 transformation of gsvd/hz_transform.hpp, checked in long double on
// random real and complex pairs: Z^H B^ Z = I, Z^H A^ Z diagonal with the predicted diagonal,
// sorted; for real pairs equal to the thesis' (3.7)-(3.8) with the corrected xi; the identities of
// Proposition 3.1 and det Z = 1 / sqrt(1 - b^2), which the garbled xi fails.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

#include "gsvd/hz_transform.hpp"

namespace shiftop::svd::detail {
namespace {

// A transformation is proper when it moves a column by at least this fraction of its norm: the
// drivers pass their orthogonality tolerance (eps sqrt(2) for a pair of 2-row columns).
const double kNegligible = unit_roundoff<double>() * std::sqrt(2.0);

using Long = long double;
using C = std::complex<Long>;

struct Mat2 {
  C ii, ij, ji, jj;
};

Mat2 as_matrix(const HzTransform<double>& t) {
  return {{t.z_ii.re, t.z_ii.im},
          {t.z_ij.re, t.z_ij.im},
          {t.z_ji.re, t.z_ji.im},
          {t.z_jj.re, t.z_jj.im}};
}

// Z^H H Z for Hermitian H = [h_ii h_ij; conj(h_ij) h_jj].
Mat2 congruence(const Mat2& z, Long h_ii, C h_ij, Long h_jj) {
  const Mat2 h{h_ii, h_ij, std::conj(h_ij), h_jj};
  const Mat2 hz{h.ii * z.ii + h.ij * z.ji, h.ii * z.ij + h.ij * z.jj, h.ji * z.ii + h.jj * z.ji,
                h.ji * z.ij + h.jj * z.jj};
  return {std::conj(z.ii) * hz.ii + std::conj(z.ji) * hz.ji,
          std::conj(z.ii) * hz.ij + std::conj(z.ji) * hz.jj,
          std::conj(z.ij) * hz.ii + std::conj(z.jj) * hz.ji,
          std::conj(z.ij) * hz.ij + std::conj(z.jj) * hz.jj};
}

struct RandomPair {
  HzPivot<double> pivot;
  Long a_ii, a_jj;
  C a_ij, b;
};

// Columns of length 6: f scaled by `scale_j` in the second column, g normalised.
RandomPair random_pair(std::mt19937_64& engine, bool complex, double scale_j, double tilt) {
  std::normal_distribution<double> normal;
  C f[2][6], g[2][6];
  for (int i = 0; i < 6; ++i) {
    for (int k = 0; k < 2; ++k) {
      f[k][i] = C(normal(engine), complex ? normal(engine) : 0.0) * Long(k == 1 ? scale_j : 1.0);
      g[k][i] = C(normal(engine), complex ? normal(engine) : 0.0);
    }
    g[1][i] += Long(tilt) * g[0][i];  // nearly parallel columns of G for tilt >> 1
  }
  auto dot = [](const C* x, const C* y) {
    C s = 0;
    for (int i = 0; i < 6; ++i)
      s += std::conj(x[i]) * y[i];
    return s;
  };
  const Long n0 = std::sqrt(dot(g[0], g[0]).real()), n1 = std::sqrt(dot(g[1], g[1]).real());
  RandomPair r;
  r.a_ii = dot(f[0], f[0]).real() / (n0 * n0);
  r.a_jj = dot(f[1], f[1]).real() / (n1 * n1);
  r.a_ij = dot(f[0], f[1]) / (n0 * n1);
  r.b = dot(g[0], g[1]) / (n0 * n1);
  // Round to double, and use the rounded values as the exact pair from here on.
  r.pivot = {static_cast<double>(r.a_ii),
             static_cast<double>(r.a_jj),
             {static_cast<double>(r.a_ij.real()), static_cast<double>(r.a_ij.imag())},
             {static_cast<double>(r.b.real()), static_cast<double>(r.b.imag())}};
  r.a_ii = r.pivot.a_ii;
  r.a_jj = r.pivot.a_jj;
  r.a_ij = {r.pivot.a_ij.re, r.pivot.a_ij.im};
  r.b = {r.pivot.b.re, r.pivot.b.im};
  return r;
}

class HzTransformTest : public ::testing::TestWithParam<bool> {};

TEST_P(HzTransformTest, DiagonalisesThePairAndSorts) {
  const bool complex = GetParam();
  std::mt19937_64 engine(complex ? 7 : 3);
  Long worst_b = 0, worst_a = 0, worst_prediction = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, (trial % 9) - 4.0);
    const double tilt = trial % 5 == 0 ? 30.0 : 0.0;
    const RandomPair r = random_pair(engine, complex, scale, tilt);
    const HzTransform<double> t = hz_transform(r.pivot, true, kNegligible);
    const Mat2 z = as_matrix(t);
    const Mat2 b = congruence(z, 1, r.b, 1);
    const Mat2 a = congruence(z, r.a_ii, r.a_ij, r.a_jj);
    const Long a_scale = r.a_ii + r.a_jj;
    // Z^H B Z = I; conditioning: 1 / (1 - |b|^2) amplifies the rounding of Z.
    const Long kappa_b = 1 / (1 - std::norm(r.b));
    worst_b = std::max<Long>(
        worst_b,
        std::max({std::abs(b.ii - Long(1)), std::abs(b.jj - Long(1)), std::abs(b.ij)}) / kappa_b);
    worst_a = std::max<Long>(worst_a, std::abs(a.ij) / (a_scale * kappa_b));
    worst_prediction = std::max<Long>(
        worst_prediction,
        std::max(std::abs(a.ii.real() - t.new_a_ii), std::abs(a.jj.real() - t.new_a_jj)) /
            (a_scale * kappa_b));
    EXPECT_GE(t.new_a_ii, t.new_a_jj) << trial;
    EXPECT_GE(a.ii.real() * (1 + 1e-12L), a.jj.real() * (1 - 1e-12L)) << trial;
  }
  const Long eps = std::numeric_limits<double>::epsilon();
  RecordProperty("worst_b_over_eps", std::to_string(static_cast<double>(worst_b / eps)));
  RecordProperty("worst_a_over_eps", std::to_string(static_cast<double>(worst_a / eps)));
  EXPECT_LT(worst_b, 16 * eps);
  EXPECT_LT(worst_a, 16 * eps);
  EXPECT_LT(worst_prediction, 16 * eps);
}

INSTANTIATE_TEST_SUITE_P(RealAndComplex, HzTransformTest, ::testing::Values(false, true));

// Real pairs: the transformation is (3.7) with cos phi, sin phi, cos psi, sin psi of (3.8) and the
// corrected xi (up to the swap of the local sorting, switched off here).
TEST(HzTransform, RealPairsAreTheThesisFormulas) {
  std::mt19937_64 engine(11);
  for (int trial = 0; trial < 500; ++trial) {
    const RandomPair r = random_pair(engine, false, std::pow(10.0, trial % 5 - 2.0), 0.0);
    const HzTransform<double> t = hz_transform(r.pivot, false, kNegligible);
    const Long b = r.b.real(), a_ij = r.a_ij.real();
    const Long root_plus = std::sqrt(1 + b), root_minus = std::sqrt(1 - b);
    const Long xi = b / (root_plus + root_minus);
    const Long eta = b / ((1 + root_plus) * (1 + root_minus));
    const Long c = std::sqrt(1 - b * b);
    const Long theta = std::atan2(2 * a_ij - (r.a_ii + r.a_jj) * b, (r.a_jj - r.a_ii) * c) / 2;
    // atan2 gives 2 theta in (-pi, pi]; the thesis' range (-pi/4, pi/4] folds it.
    Long th = theta;
    if (th > std::acos(Long(-1)) / 4) th -= std::acos(Long(-1)) / 2;
    if (th <= -std::acos(Long(-1)) / 4) th += std::acos(Long(-1)) / 2;
    const Long cos_phi = std::cos(th) + xi * (std::sin(th) - eta * std::cos(th));
    const Long sin_phi = std::sin(th) - xi * (std::cos(th) + eta * std::sin(th));
    const Long cos_psi = std::cos(th) - xi * (std::sin(th) + eta * std::cos(th));
    const Long sin_psi = std::sin(th) + xi * (std::cos(th) - eta * std::sin(th));
    EXPECT_NEAR(t.z_ii.re, static_cast<double>(cos_phi / c), 1e-13) << trial;
    EXPECT_NEAR(t.z_ij.re, static_cast<double>(sin_phi / c), 1e-13) << trial;
    EXPECT_NEAR(t.z_ji.re, static_cast<double>(-sin_psi / c), 1e-13) << trial;
    EXPECT_NEAR(t.z_jj.re, static_cast<double>(cos_psi / c), 1e-13) << trial;
    // Proposition 3.1 and the determinant.
    EXPECT_NEAR(static_cast<double>(xi * (1 + eta * eta)), static_cast<double>(2 * eta), 1e-17);
    EXPECT_NEAR(static_cast<double>((1 - 2 * xi * xi) / (1 - b * b)), static_cast<double>(1 / c),
                1e-15);
    // The garbled xi = b / sqrt(1 + b + sqrt(1 - b)) breaks the identity (for b away from 0).
    if (std::abs(b) > 0.1) {
      const Long garbled = b / std::sqrt(1 + b + root_minus);
      EXPECT_GT(std::abs(garbled * (1 + eta * eta) - 2 * eta), 1e-3L) << trial;
    }
  }
}

TEST(HzTransform, IdentityForAnOrthogonalPair) {
  const HzTransform<double> t =
      hz_transform(HzPivot<double>{4.0, 1.0, {0, 0}, {0, 0}}, true, kNegligible);
  EXPECT_FALSE(t.proper);
  EXPECT_EQ(t.z_ii.re, 1.0);
  EXPECT_EQ(t.z_ij.re, 0.0);
  EXPECT_EQ(t.z_ji.re, 0.0);
  EXPECT_EQ(t.z_jj.re, 1.0);
  // Out of order: the sorting swaps, which moves no column (the finish sorts the values): not
  // proper, so that equal values swapped back and forth by rounding do not keep a sweep going.
  const HzTransform<double> s =
      hz_transform(HzPivot<double>{1.0, 4.0, {0, 0}, {0, 0}}, true, kNegligible);
  EXPECT_TRUE(s.swapped);
  EXPECT_FALSE(s.proper);
  EXPECT_EQ(s.z_ij.re, 1.0);
  EXPECT_EQ(s.z_ji.re, 1.0);
}

// "Proper" is measured on the columns. A pair whose F-columns differ 1e8 in norm and have the
// cosine 0.1: the rotation has cos == 1 and a tangent of 1e-9, so Z^'s diagonal is exactly 1 (the
// thesis' test: not proper, and a graded pair stopped 58% wrong), yet z_ij ||f_i|| moves f_j by a
// tenth of its norm. And a pair F = G at the level of rounding (b = a_ij = 2e-16): the
// transformation moves each column by about |b| / 2, below the tolerance: not proper (before,
// such pairs and the sorting's swaps of their equal values kept every sweep going).
TEST(HzTransform, ProperMeansAColumnMovesBeyondTheTolerance) {
  const HzTransform<double> graded =
      hz_transform(HzPivot<double>{1.0, 1e-16, {1e-9, 0}, {0, 0}}, true, kNegligible);
  EXPECT_EQ(graded.z_ii.re, 1.0);
  EXPECT_EQ(graded.z_jj.re, 1.0);
  EXPECT_FALSE(graded.swapped);
  EXPECT_TRUE(graded.proper);
  const HzTransform<double> rounding =
      hz_transform(HzPivot<double>{1.0, 1.0, {2e-16, 0}, {2e-16, 0}}, true, kNegligible);
  EXPECT_FALSE(rounding.proper);
  const HzTransform<double> large =
      hz_transform(HzPivot<double>{1.0, 1.0, {0.5, 0}, {0.3, 0}}, true, kNegligible);
  EXPECT_TRUE(large.proper);
}

}  // namespace
}  // namespace shiftop::svd::detail
