// The __float128 one-sided Jacobi (support/quad_reference.hpp) that the relative-accuracy tests
// trust: against closed forms it must give the correctly rounded double of the exact singular
// values (a double-precision Jacobi misses that by several ulps), and against LAPACK's dgesvd
// on well-conditioned matrices it must agree to a few n eps.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "support/prescribed_spectra.hpp"
#include "support/quad_reference.hpp"

namespace {

using shiftop::testing::exact_spectrum_matrix;
using shiftop::testing::quad;
using shiftop::testing::quad_singular_values;
using shiftop::testing::quad_sqrt;

constexpr double kEps = std::numeric_limits<double>::epsilon() / 2;  // unit roundoff

TEST(QuadReference, SqrtIsCorrectToQuadPrecision) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> exponent(-200.0, 200.0);
  for (int k = 0; k < 200; ++k) {
    const quad x = std::pow(10.0, exponent(rng));
    const quad y = quad_sqrt(x);
    const quad residual = (y * y - x) / x;
    EXPECT_LT(static_cast<double>(residual < 0 ? -residual : residual), 1e-32) << k;
  }
  EXPECT_EQ(static_cast<double>(quad_sqrt(0)), 0.0);
}

// A diagonal matrix (a zero column included) is already orthogonal: the values are the sorted
// |d_j|, exactly, over 200 decades.
TEST(QuadReference, DiagonalIsExact) {
  const std::int64_t m = 9, n = 7;
  const std::vector<double> d{3.0, -1e-100, 0.0, 2.5e80, -7.0, 1e-3, 4.0e100};
  std::vector<double> a(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    a[j + j * m] = d[j];
  std::vector<double> want(d.size());
  std::transform(d.begin(), d.end(), want.begin(), [](double x) { return std::abs(x); });
  std::sort(want.begin(), want.end(), std::greater<>());
  EXPECT_EQ(quad_singular_values(a.data(), m, n, m), want);
}

// 2 x 2: sigma_1 = (sqrt((a + d)^2 + (c - b)^2) + sqrt((a - d)^2 + (b + c)^2)) / 2 and
// sigma_2 = |ad - bc| / sigma_1, evaluated in quad and rounded: equal to the reference's double.
TEST(QuadReference, TwoByTwoClosedForm) {
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal;
  for (int k = 0; k < 300; ++k) {
    const double a = normal(rng), b = normal(rng), c = normal(rng), d = normal(rng);
    const std::vector<double> matrix{a, c, b, d};  // column-major [a b; c d]
    const quad qa = a, qb = b, qc = c, qd = d;
    const quad s1 = (quad_sqrt((qa + qd) * (qa + qd) + (qc - qb) * (qc - qb)) +
                     quad_sqrt((qa - qd) * (qa - qd) + (qb + qc) * (qb + qc))) /
                    2;
    const quad det = qa * qd - qb * qc;
    const quad s2 = (det < 0 ? -det : det) / s1;
    const std::vector<double> want{static_cast<double>(s1), static_cast<double>(s2)};
    EXPECT_EQ(quad_singular_values(matrix.data(), 2, 2, 2), want) << k;
  }
}

// Orthogonal x diag(2^e) x orthogonal built exactly in double (support/prescribed_spectra.hpp),
// repeated values and kappa up to 2^40 included: the reference returns exactly 2^e. (Its error
// is about kappa * 1e-34 here, far below half an ulp.)
TEST(QuadReference, ExactSpectraAreReproducedExactly) {
  struct Case {
    std::int64_t m, n;
    int lo, hi;
  };
  std::mt19937_64 rng(3);
  for (const Case& c : {Case{1, 1, -3, 3}, Case{4, 4, -2, 2}, Case{32, 8, -10, 10},
                        Case{16, 16, -8, 8}, Case{64, 16, -20, 20}, Case{64, 64, -20, 20}}) {
    std::uniform_int_distribution<int> exponent(c.lo, c.hi);
    std::vector<int> e(static_cast<std::size_t>(c.n));
    for (int& x : e)
      x = exponent(rng);
    const std::vector<double> a = exact_spectrum_matrix(c.m, c.n, e, 4);
    std::vector<double> want(e.size());
    std::transform(e.begin(), e.end(), want.begin(), [](int x) { return std::ldexp(1.0, x); });
    std::sort(want.begin(), want.end(), std::greater<>());
    EXPECT_EQ(quad_singular_values(a.data(), c.m, c.n, c.m), want) << c.m << "x" << c.n;
  }
}

TEST(QuadReference, ExactSpectrumRejectsBadShapes) {
  EXPECT_THROW(exact_spectrum_matrix(8, 4, std::vector<int>(4, 0), 1), shiftop::Error);  // 32
  EXPECT_THROW(exact_spectrum_matrix(12, 3, std::vector<int>(3, 0), 1), shiftop::Error);
  EXPECT_THROW(exact_spectrum_matrix(16, 16, {0, 1}, 1), shiftop::Error);       // 2 exponents
  EXPECT_THROW(exact_spectrum_matrix(4, 4, {0, 51, 0, 0}, 1), shiftop::Error);  // 53 bits
}

// Well-conditioned random matrices (sizes 1, odd, tall, 48): against dgesvd, whose error is
// about n eps sigma_max.
TEST(QuadReference, AgreesWithDgesvd) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  for (const auto& [m, n] : {std::pair<int, int>{1, 1}, {7, 7}, {33, 17}, {48, 48}}) {
    std::vector<double> a(static_cast<std::size_t>(m * n));
    for (double& x : a)
      x = normal(rng);
    const std::vector<double> reference = quad_singular_values(a.data(), m, n, m);
    std::vector<double> work = a, s(static_cast<std::size_t>(n)),
                        superb(static_cast<std::size_t>(n));
    ASSERT_EQ(LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', m, n, work.data(), m, s.data(), nullptr, 1,
                             nullptr, 1, superb.data()),
              0);
    double worst = 0;
    for (int i = 0; i < n; ++i)
      worst = std::max(worst, std::abs(s[i] - reference[i]) / reference[0]);
    // Measured 0, 0.17, 0.31, 0.10 n eps (1x1, 7x7, 33x17, 48x48).
    EXPECT_LT(worst, 1.5 * n * kEps) << m << "x" << n;
    std::printf("%dx%d: max |s_dgesvd - s_quad| / s_max = %.2e (%.2f n eps)\n", m, n, worst,
                worst / (n * kEps));
  }
}

}  // namespace
