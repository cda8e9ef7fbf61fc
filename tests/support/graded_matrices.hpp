// Graded test matrices for the Jacobi SVD's relative accuracy (CPU and GPU suites): row- or
// column-graded D B and B D, their condition after equilibration (the kappa of the relative
// perturbation theory), transposes and the orthogonality error of computed factors.
#pragma once

#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/quad_reference.hpp"

namespace shiftop::testing {

enum class Grading { Rows, Columns };

// m x n column-major D B (rows) or B D (columns): B normal(0, 1), the scales 10^(-decades t),
// t evenly spaced in [0, 1], shuffled.
inline std::vector<double> graded(std::int64_t m, std::int64_t n, Grading grading, double decades,
                                  unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  const std::int64_t k = grading == Grading::Rows ? m : n;
  std::vector<double> scale(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i)
    scale[i] = std::pow(10.0, -decades * static_cast<double>(i) /
                                  static_cast<double>(std::max<std::int64_t>(k - 1, 1)));
  std::shuffle(scale.begin(), scale.end(), rng);
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      a[i + j * m] = normal(rng) * scale[grading == Grading::Rows ? i : j];
  return a;
}

inline std::vector<double> transpose(const std::vector<double>& a, std::int64_t m, std::int64_t n) {
  std::vector<double> t(a.size());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      t[j + i * n] = a[i + j * m];
  return t;
}

// The condition number of a with its rows (Grading::Rows) or columns scaled to unit norm: the
// kappa of the relative perturbation theory (Demmel and Veselic, SIAM J. Matrix Anal. Appl. 13
// (1992), for B D; Drmac, SIAM J. Sci. Comput. 18 (1997), for D B with the row-sorted QR first),
// which the grading does not enter. LAPACK's dgesvd is accurate for it: the equilibrated matrix is
// well conditioned.
inline double equilibrated_condition(std::vector<double> a, std::int64_t m, std::int64_t n,
                                     Grading grading) {
  const std::int64_t count = grading == Grading::Rows ? m : n;
  for (std::int64_t k = 0; k < count; ++k) {
    double sum = 0;
    for (std::int64_t l = 0; l < (grading == Grading::Rows ? n : m); ++l) {
      const double x = grading == Grading::Rows ? a[k + l * m] : a[l + k * m];
      sum += x * x;
    }
    for (std::int64_t l = 0; l < (grading == Grading::Rows ? n : m); ++l)
      (grading == Grading::Rows ? a[k + l * m] : a[l + k * m]) /= std::sqrt(sum);
  }
  std::vector<double> s(static_cast<std::size_t>(std::min(m, n))), superb(s.size());
  const int info =
      LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', static_cast<int>(m), static_cast<int>(n), a.data(),
                     static_cast<int>(m), s.data(), nullptr, 1, nullptr, 1, superb.data());
  EXPECT_EQ(info, 0);
  return s.front() / s.back();
}

// max |Q^T Q - I| over the cols columns of the rows x cols Q.
inline double orthogonality_error(const std::vector<double>& q, std::int64_t rows,
                                  std::int64_t cols) {
  double worst = 0;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t k = 0; k <= j; ++k) {
      long double dot = 0;
      for (std::int64_t i = 0; i < rows; ++i)
        dot += static_cast<long double>(q[i + j * rows]) * q[i + k * rows];
      worst = std::max(worst, std::abs(static_cast<double>(dot) - (j == k ? 1.0 : 0.0)));
    }
  return worst;
}

/// The min(m, n) singular values of the graded a, descending, from the __float128 Jacobi of the
/// matrix whose columns carry the grading (a, or a^T for D B): one-sided Jacobi is relatively
/// accurate there, to ~1e-30.
inline std::vector<double> graded_reference(const std::vector<double>& a, std::int64_t m,
                                            std::int64_t n, Grading grading) {
  std::vector<double> values = grading == Grading::Rows
                                   ? quad_singular_values(transpose(a, m, n).data(), n, m, n)
                                   : quad_singular_values(a.data(), m, n, m);
  values.resize(static_cast<std::size_t>(std::min(m, n)));  // (the rest are zeros)
  return values;
}

}  // namespace shiftop::testing
