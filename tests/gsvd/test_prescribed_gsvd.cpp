// support/prescribed_gsvd.hpp, the generator of pairs with known GSVD: its factors reproduce the
// pair (U, V orthonormal, sigma_f^2 + sigma_g^2 = 1, F = U diag(sigma_f) X, G = V diag(sigma_g) X
// to the rounding of F and G), X has the prescribed singular values (the __float128 reference),
// and LAPACK's dsygv / zhegv finds the prescribed s^2 as the eigenvalues of the pencil
// (F^H F, G^H G). Real and complex; m > n, m = n, m < n (zero values), n = 1.
#include <gtest/gtest.h>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <iostream>
#include <limits>
#include <vector>

#include "support/expect_error.hpp"
#include "support/prescribed_gsvd.hpp"
#include "support/prescribed_spectra.hpp"

namespace shiftop::testing {
namespace {

using Long = long double;
using C = std::complex<Long>;
constexpr double kEps = std::numeric_limits<double>::epsilon();

struct Size {
  std::int64_t m, p, n;
};
// n = 1; m > n with p > n; m = p = n; m < n (two zero values); odd sizes.
const Size kSizes[] = {{1, 1, 1}, {9, 8, 6}, {7, 7, 7}, {5, 7, 7}, {13, 17, 16}};

template <class T>
C widen(const T& x) {
  return C(std::complex<double>(x));
}

// max_ij |A - B diag(s) X|_ij / (|B| diag(s) |X|)_ij over the entries with a nonzero bound, in
// long double: the relative error of the pair's entries against its own factors.
template <class T>
double factor_residual(const std::vector<T>& a, const std::vector<T>& b,
                       const std::vector<double>& s, const std::vector<T>& x, std::int64_t rows,
                       std::int64_t n) {
  double worst = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      C sum = 0;
      Long bound = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        const C term = widen(b[i + k * rows]) * Long(s[k]) * widen(x[k + j * n]);
        sum += term;
        bound += std::abs(term);
      }
      if (bound > 0)
        worst =
            std::max(worst, static_cast<double>(std::abs(widen(a[i + j * rows]) - sum) / bound));
    }
  return worst;
}

// max |Q^H Q - I| over the first `cols` columns of Q (rows x n), and max |column| of the rest.
template <class T>
std::pair<double, double> orthonormality(const std::vector<T>& q, std::int64_t rows, std::int64_t n,
                                         std::int64_t cols) {
  double off = 0, rest = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      C dot = 0;
      for (std::int64_t k = 0; k < rows; ++k)
        dot += std::conj(widen(q[k + i * rows])) * widen(q[k + j * rows]);
      if (i < cols && j < cols)
        off = std::max(off, static_cast<double>(std::abs(dot - C(i == j ? 1 : 0))));
      else if (i == j)
        rest = std::max(rest, static_cast<double>(std::abs(dot)));
    }
  return {off, rest};
}

template <class T>
void check_factors(double x_condition) {
  double worst_orth = 0, worst_f = 0, worst_g = 0, worst_x = 0;
  for (const Size& size : kSizes) {
    SCOPED_TRACE(::testing::Message() << "m " << size.m << " p " << size.p << " n " << size.n);
    const auto pair = random_gsvd_pair<T>(size.m, size.p, size.n, 7u, x_condition, 1e-5, 1e4,
                                          /*with_factors=*/true);
    ASSERT_EQ(pair.f.size(), static_cast<std::size_t>(size.m * size.n));
    ASSERT_EQ(pair.g.size(), static_cast<std::size_t>(size.p * size.n));
    ASSERT_EQ(pair.u.size(), pair.f.size());
    ASSERT_EQ(pair.v.size(), pair.g.size());
    ASSERT_EQ(pair.x.size(), static_cast<std::size_t>(size.n * size.n));
    const std::int64_t rank = std::min(size.m, size.n);
    for (std::int64_t i = 0; i < size.n; ++i) {
      const double s = pair.sigma[i], sf = pair.sigma_f[i], sg = pair.sigma_g[i];
      if (i > 0) {
        EXPECT_LE(s, pair.sigma[i - 1]);
      }
      if (i >= rank) {
        EXPECT_EQ(s, 0.0);
      } else {
        EXPECT_GE(s, 1e-5);
        EXPECT_LE(s, 1e4);
      }
      EXPECT_NEAR(sf * sf + sg * sg, 1.0, 2 * kEps);
      EXPECT_GT(sg, 0.0);
      if (s > 0) {
        EXPECT_NEAR(sf / sg, s, 2 * kEps * s);
      }
    }
    const auto [u_off, u_rest] = orthonormality(pair.u, size.m, size.n, rank);
    const auto [v_off, v_rest] = orthonormality(pair.v, size.p, size.n, size.n);
    EXPECT_EQ(u_rest, 0.0);  // U's columns past m are zero
    EXPECT_EQ(v_rest, 0.0);
    worst_orth = std::max({worst_orth, u_off, v_off});
    worst_f =
        std::max(worst_f, factor_residual(pair.f, pair.u, pair.sigma_f, pair.x, size.m, size.n));
    worst_g =
        std::max(worst_g, factor_residual(pair.g, pair.v, pair.sigma_g, pair.x, size.p, size.n));
    // X's singular values are x_condition^(-i/(n-1)) before X is rounded: the rounding moves the
    // smallest by about eps sqrt(n) relative to the largest.
    const auto reference = embedded_reference(pair.x, size.n, size.n);
    for (std::int64_t i = 0; i < size.n; ++i) {
      const double expected =
          size.n == 1
              ? 1.0
              : std::pow(x_condition, -static_cast<double>(i) / static_cast<double>(size.n - 1));
      worst_x = std::max(worst_x, std::abs(reference.sigma[i] - expected));
    }
  }
  std::cout << "x_condition " << x_condition << ": |Q^H Q - I| " << worst_orth << ", F residual "
            << worst_f << ", G residual " << worst_g << ", |sigma(X) - prescribed| " << worst_x
            << "\n";
  // Measured (real and complex, kappa(X) 10 and 1e4): orthonormality 1.3e-16, residuals 1.6e-16
  // (the rounding of F, U and sigma_f: under one eps of the entry's bound), X's singular values
  // 1.1e-16.
  EXPECT_LE(worst_orth, 8 * kEps);
  EXPECT_LE(worst_f, 8 * kEps);
  EXPECT_LE(worst_g, 8 * kEps);
  EXPECT_LE(worst_x, 8 * kEps);
  // The checks can fail: the factors are not mere rounding noise of each other.
  EXPECT_GT(worst_f, 0.0);
}

TEST(PrescribedGsvd, RealFactorsReproduceThePair) {
  check_factors<double>(10);
  check_factors<double>(1e4);
}

TEST(PrescribedGsvd, ComplexFactorsReproduceThePair) {
  check_factors<std::complex<double>>(10);
  check_factors<std::complex<double>>(1e4);
}

// The eigenvalues of the pencil (F^H F, G^H G), by LAPACK from the rounded F and G, against
// `sigma`^2 (nonincreasing): the largest relative difference (zero values: absolute against the
// largest).
template <class T>
double pencil_error(const PrescribedGsvd<T>& pair, const std::vector<double>& sigma) {
  const std::int64_t m = pair.m, p = pair.p, n = pair.n;
  std::vector<T> a(static_cast<std::size_t>(n * n)), b(a.size());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      C fa = 0, gb = 0;
      for (std::int64_t k = 0; k < m; ++k)
        fa += std::conj(widen(pair.f[k + i * m])) * widen(pair.f[k + j * m]);
      for (std::int64_t k = 0; k < p; ++k)
        gb += std::conj(widen(pair.g[k + i * p])) * widen(pair.g[k + j * p]);
      if constexpr (std::is_same_v<T, double>) {
        a[i + j * n] = static_cast<double>(fa.real());
        b[i + j * n] = static_cast<double>(gb.real());
      } else {
        a[i + j * n] = T(static_cast<double>(fa.real()), static_cast<double>(fa.imag()));
        b[i + j * n] = T(static_cast<double>(gb.real()), static_cast<double>(gb.imag()));
      }
    }
  std::vector<double> w(static_cast<std::size_t>(n));
  const lapack_int ln = static_cast<lapack_int>(n);
  lapack_int info;
  if constexpr (std::is_same_v<T, double>)
    info = LAPACKE_dsygv(LAPACK_COL_MAJOR, 1, 'N', 'U', ln, a.data(), ln, b.data(), ln, w.data());
  else
    info = LAPACKE_zhegv(LAPACK_COL_MAJOR, 1, 'N', 'U', ln, a.data(), ln, b.data(), ln, w.data());
  EXPECT_EQ(info, 0);
  double worst = 0;  // w ascending, sigma nonincreasing
  const double largest = sigma[0] * sigma[0];
  for (std::int64_t i = 0; i < n; ++i) {
    const double expected = sigma[n - 1 - i] * sigma[n - 1 - i];
    worst = std::max(
        worst, expected > 0 ? std::abs(w[i] - expected) / expected : std::abs(w[i]) / largest);
  }
  return worst;
}

// Moderate values and X (s in [0.2, 5], kappa(X) = 10) so that dsygv's own error (about
// eps kappa(G)^2) stays far below the tolerance.
template <class T>
void check_pencil() {
  double worst = 0;
  for (const Size& size : kSizes)
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const auto pair = random_gsvd_pair<T>(size.m, size.p, size.n, seed, 10.0, 0.2, 5.0);
      worst = std::max(worst, pencil_error(pair, pair.sigma));
    }
  std::cout << "pencil eigenvalues vs s^2: " << worst << "\n";
  // Measured: 2.5e-14 real, 1.8e-14 complex (dsygv's error, about eps kappa(B) lambda_max /
  // lambda).
  EXPECT_LE(worst, 1e-12);
}

TEST(PrescribedGsvd, RealPencilHasThePrescribedEigenvalues) {
  check_pencil<double>();
}

TEST(PrescribedGsvd, ComplexPencilHasThePrescribedEigenvalues) {
  check_pencil<std::complex<double>>();
}

// The pencil check sees a wrong generator: a pair built with one value 1e-9 off fails it.
TEST(PrescribedGsvd, PencilCheckSeesAWrongValue) {
  const auto pair = random_gsvd_pair<double>(9, 8, 6, 3u, 10.0, 0.2, 5.0);
  auto values = pair.sigma;
  values[2] *= 1 + 1e-9;
  const auto other = prescribed_gsvd_pair<double>(9, 8, 6, values, 10.0, 3u);
  EXPECT_EQ(other.sigma[2], values[2]);
  EXPECT_GT(pencil_error(other, pair.sigma), 1e-9);
  EXPECT_LT(pencil_error(other, other.sigma), 1e-12);
}

TEST(PrescribedGsvd, DeterministicPerSeed) {
  const auto a = random_gsvd_pair<std::complex<double>>(6, 7, 5, 11u);
  const auto b = random_gsvd_pair<std::complex<double>>(6, 7, 5, 11u);
  const auto c = random_gsvd_pair<std::complex<double>>(6, 7, 5, 12u);
  EXPECT_EQ(a.f, b.f);
  EXPECT_EQ(a.g, b.g);
  EXPECT_EQ(a.sigma, b.sigma);
  EXPECT_NE(a.f, c.f);
  EXPECT_NE(a.sigma, c.sigma);
  EXPECT_TRUE(a.u.empty() && a.v.empty() && a.x.empty());
}

TEST(PrescribedGsvd, LogUniformValues) {
  const auto s = log_uniform_gsvd_values(997, 1000, 1e-5, 1e4, 5u);
  ASSERT_EQ(s.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
  for (std::size_t i = 0; i < 997; ++i) {
    EXPECT_GE(s[i], 1e-5);
    EXPECT_LE(s[i], 1e4);
  }
  for (std::size_t i = 997; i < 1000; ++i)
    EXPECT_EQ(s[i], 0.0);
  // Spread over the decades: both ends are reached within a decade.
  EXPECT_GT(s[0], 1e3);
  EXPECT_LT(s[996], 1e-4);
}

TEST(PrescribedGsvd, RejectsBadInput) {
  expect_error([] { prescribed_gsvd_pair<double>(4, 3, 4, {1, 1, 1, 1}, 10, 1u); }, "p >= n");
  expect_error([] { prescribed_gsvd_pair<double>(4, 4, 4, {1, 1, 1}, 10, 1u); }, "n entries");
  expect_error([] { prescribed_gsvd_pair<double>(4, 4, 2, {1, -1}, 10, 1u); }, "nonnegative");
  expect_error([] { prescribed_gsvd_pair<double>(4, 4, 2, {1, NAN}, 10, 1u); }, "finite");
  expect_error([] { prescribed_gsvd_pair<double>(2, 4, 3, {1, 1, 1}, 10, 1u); }, "m < n");
  expect_error([] { prescribed_gsvd_pair<double>(4, 4, 2, {1, 1}, 0.5, 1u); }, "x_condition");
  expect_error([] { log_uniform_gsvd_values(4, 4, 0, 1, 1u); }, "lo");
}

}  // namespace
}  // namespace shiftop::testing
