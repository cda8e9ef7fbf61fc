// The Jacobi SVD's stopping rule and range on graded and extreme matrices (issue 28): row- and
// column-graded matrices D B and B D (gradings to 24 decades) of sizes 2 to 64, each also
// transposed (the other memory order of the same matrix: what a C-order NumPy array reaches the
// driver as), through every variant and strategy, against the __float128 Jacobi
// (support/quad_reference.hpp), with U and V orthonormal. Before the fix, a sweep whose rotations
// all had cos == 1 in floating point ended the method although their tangents still moved the
// smaller columns: 4x4 row-graded matrices came back 2-6% wrong, V^T V - I at 0.23, "converged".
// The Hari-Zimmermann GSVD had the same stopping rule: its values of (D B, I), the singular values
// of D B, are checked too. Also: subnormal matrices are scaled into the normal range, and values
// that overflow are refused.
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "support/expect_error.hpp"
#include "support/graded_matrices.hpp"
#include "support/quad_reference.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::JacobiOptions;
using shiftop::svd::StrategyKind;
using shiftop::svd::Variant;
using shiftop::testing::equilibrated_condition;
using shiftop::testing::graded;
using shiftop::testing::graded_reference;
using shiftop::testing::Grading;
using shiftop::testing::orthogonality_error;
using shiftop::testing::transpose;

constexpr double kEps = std::numeric_limits<double>::epsilon() / 2;  // unit roundoff

struct Outcome {
  double values = 0;         // max relative error of the singular values
  double orthogonality = 0;  // max of U's and V's
};

Outcome run(const std::vector<double>& a, index_t m, index_t n, const std::vector<double>& want,
            const JacobiOptions& base) {
  JacobiOptions options = base;
  options.compute_u = options.compute_v = true;
  const auto result = shiftop::svd::jacobi(a.data(), m, n, m, options);
  EXPECT_TRUE(result.stats.converged);
  Outcome outcome;
  for (std::size_t i = 0; i < want.size(); ++i)
    outcome.values = std::max(outcome.values, std::abs(result.sigma[i] - want[i]) / want[i]);
  const index_t r = std::min(m, n);
  outcome.orthogonality =
      std::max(orthogonality_error(result.u, m, r), orthogonality_error(result.v, n, r));
  return outcome;
}

using Size = std::tuple<index_t, index_t>;

class GradedConvergence : public ::testing::TestWithParam<Size> {};

// Every variant (block width 2, so that blocks occur from n = 4 on, and the default) and strategy
// on D B and B D and their transposes. Bounds (the relative perturbation theory of one-sided
// Jacobi, Demmel and Veselic: each sweep perturbs sigma_i relatively by O(n eps) kappa of the
// equilibrated matrix): values within 16 n eps kappa, U and V orthonormal to 16 n eps.
// (Measured worst over these cases, native and portable builds: values 2.4 n eps kappa,
// orthogonality 0.5 n eps.) Before the fix 4x4 D B at 24 decades gave 6e-2 and 0.23.
TEST_P(GradedConvergence, ValuesToTheirRelativeAccuracyAndVectorsOrthonormal) {
  const auto [m, n] = GetParam();
  unsigned seed = 1;
  double worst_values = 0, worst_orthogonality = 0;
  for (const Grading grading : {Grading::Rows, Grading::Columns})
    for (const double decades : {8.0, 16.0, 24.0}) {
      const std::vector<double> a = graded(m, n, grading, decades, seed++);
      const std::vector<double> want = graded_reference(a, m, n, grading);
      // The premise: absolute accuracy (eps sigma_max, bidiagonalisation's) would not do.
      if (decades >= 16 && m == n) {
        ASSERT_LT(want.back() / want.front(), 1e-12);
      }
      const double kappa = equilibrated_condition(a, m, n, grading);
      const double size = static_cast<double>(std::max(m, n));
      const double bound = 16 * size * kEps;
      for (const bool transposed : {false, true})
        for (const Variant variant :
             {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock, Variant::Auto})
          for (const StrategyKind strategy :
               {StrategyKind::ReversedRowCyclicClosest, StrategyKind::RowCyclicClosest,
                StrategyKind::ModifiedModulus}) {
            JacobiOptions options;
            options.variant = variant;
            options.strategy = strategy;
            options.block_width = variant == Variant::Auto ? 0 : 2;
            SCOPED_TRACE(::testing::Message()
                         << (grading == Grading::Rows ? "D B " : "B D ") << decades << " decades, "
                         << (transposed ? "transposed" : "as built") << ", variant "
                         << shiftop::name_of(variant) << ", strategy "
                         << static_cast<int>(strategy));
            const Outcome out = transposed ? run(transpose(a, m, n), n, m, want, options)
                                           : run(a, m, n, want, options);
            EXPECT_LE(out.values, bound * kappa);
            EXPECT_LE(out.orthogonality, bound);
            worst_values = std::max(worst_values, out.values / (kEps * size * kappa));
            worst_orthogonality = std::max(worst_orthogonality, out.orthogonality / (kEps * size));
          }
    }
  std::printf("%lld x %lld: worst value error %.2f n eps kappa, orthogonality %.2f n eps\n",
              static_cast<long long>(m), static_cast<long long>(n), worst_values,
              worst_orthogonality);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GradedConvergence,
                         ::testing::Values(Size{2, 2}, Size{3, 3}, Size{4, 4}, Size{5, 5},
                                           Size{5, 3}, Size{7, 7}, Size{8, 8}, Size{13, 9},
                                           Size{16, 16}, Size{33, 33}, Size{64, 64}),
                         [](const ::testing::TestParamInfo<Size>& param_info) {
                           return std::to_string(std::get<0>(param_info.param)) + "x" +
                                  std::to_string(std::get<1>(param_info.param));
                         });

// The matrix: diag(1, 1e-8, 1e-16, 1e-24) times a normal 4 x 4, as built (NumPy's
// Fortran order) and transposed. The values stated there: 3.822e-17 and 6.469e-25 (the fix), not
// 3.904e-17 and 6.846e-25 (the premature stop).
TEST(GradedConvergence, SweepsDoNotStopWhileAPairIsStillRotated) {
  const index_t n = 4;
  const std::vector<double> a = graded(n, n, Grading::Rows, 24, 7);
  const std::vector<double> want = graded_reference(a, n, n, Grading::Rows);
  JacobiOptions options;
  options.variant = Variant::Pointwise;
  options.compute_u = options.compute_v = true;
  const auto result = shiftop::svd::jacobi(a.data(), n, n, n, options);
  ASSERT_TRUE(result.stats.converged);
  // The last sweep rotated nothing: that is what converged means.
  const auto one_more = [&] {
    JacobiOptions limited = options;
    limited.max_sweeps = result.stats.sweeps - 1;
    return shiftop::svd::jacobi(a.data(), n, n, n, limited);
  }();
  EXPECT_FALSE(one_more.stats.converged);
  for (index_t i = 0; i < n; ++i)
    EXPECT_LE(std::abs(result.sigma[i] - want[i]) / want[i], 64 * n * kEps) << "sigma " << i;
}

// The GSVD of (A, I) is the SVD of A, and the Hari-Zimmermann method on it is one-sided Jacobi on
// A's columns with G's trivially orthonormal. It had the SVD's stopping rule: a transformation
// whose diagonal rounds to 1 while its off-diagonal still moves a column did not count. A = R^T
// of the QR factorisation of a row-graded D B with its rows sorted (what the SVD's preprocessing
// hands its Jacobi: a lower triangle with graded columns) exposed it. Every variant, 24 decades,
// against the __float128 SVD; bound as for the SVD above.
TEST(GradedConvergence, GsvdOfAGradedTriangleAndTheIdentity) {
  unsigned seed = 40;
  for (const index_t n : {3, 4, 5, 8, 16}) {
    std::vector<double> a = graded(n, n, Grading::Rows, 24, seed++);
    std::vector<double> rows(static_cast<std::size_t>(n));  // sorted by decreasing norm
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j)
        rows[i] = std::max(rows[i], std::abs(a[i + j * n]));
    std::vector<index_t> order(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i)
      order[i] = i;
    std::sort(order.begin(), order.end(), [&](index_t x, index_t y) { return rows[x] > rows[y]; });
    std::vector<double> sorted(a.size()), tau(static_cast<std::size_t>(n));
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        sorted[i + j * n] = a[order[i] + j * n];
    ASSERT_EQ(LAPACKE_dgeqrf(LAPACK_COL_MAJOR, static_cast<int>(n), static_cast<int>(n),
                             sorted.data(), static_cast<int>(n), tau.data()),
              0);
    std::vector<double> f(a.size(), 0.0);  // R^T
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i <= j; ++i)
        f[j + i * n] = sorted[i + j * n];
    const std::vector<double> want = shiftop::testing::quad_singular_values(f.data(), n, n, n);
    std::vector<double> identity(static_cast<std::size_t>(n * n), 0.0);
    for (index_t i = 0; i < n; ++i)
      identity[i + i * n] = 1;
    const double kappa = equilibrated_condition(f, n, n, Grading::Columns);
    for (const Variant variant : {Variant::Pointwise, Variant::BlockOriented, Variant::FullBlock}) {
      SCOPED_TRACE(::testing::Message()
                   << n << " x " << n << ", variant " << shiftop::name_of(variant));
      shiftop::svd::GsvdOptions options;
      options.variant = variant;
      options.block_width = 2;
      const auto result = shiftop::svd::gsvd_hz(f.data(), n, n, identity.data(), n, n, n, options);
      EXPECT_TRUE(result.stats.converged);
      const std::vector<double> values = result.values();
      for (index_t i = 0; i < n; ++i)
        EXPECT_LE(std::abs(values[i] - want[i]) / want[i],
                  16 * static_cast<double>(n) * kEps * kappa)
            << "value " << i;
    }
  }
}

// A matrix in the subnormal range (entries 1e-310 and 1e-320): scaled into the normal range by a
// power of two (exact), the values keep their relative accuracy (before: not converged). The
// reference is the quad Jacobi of the same, exactly represented entries.
TEST(GradedConvergence, SubnormalMatricesAreScaledIntoTheNormalRange) {
  const index_t m = 4, n = 3;
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      a[i + j * m] = (1e-10 + (i == j ? 1.0 : 0.0)) * 1e-310;
  ASSERT_LT(a[1], std::numeric_limits<double>::min());  // the premise: subnormal entries
  const std::vector<double> want = shiftop::testing::quad_singular_values(a.data(), m, n, m);
  for (const Variant variant : {Variant::Pointwise, Variant::FullBlock}) {
    for (const bool transposed : {false, true}) {
      JacobiOptions options;
      options.variant = variant;
      options.compute_u = options.compute_v = true;
      const auto input = transposed ? transpose(a, m, n) : a;
      const auto result = transposed ? shiftop::svd::jacobi(input.data(), n, m, n, options)
                                     : shiftop::svd::jacobi(input.data(), m, n, m, options);
      EXPECT_TRUE(result.stats.converged);
      // Relative accuracy, plus the rounding of the values themselves to the subnormal grid.
      for (index_t i = 0; i < n; ++i)
        EXPECT_LE(std::abs(result.sigma[i] - want[i]) / want[i],
                  16 * m * kEps + std::numeric_limits<double>::denorm_min() / want[i])
            << "sigma " << i;
      EXPECT_LE(orthogonality_error(result.u, transposed ? n : m, n), 16 * m * kEps);
      EXPECT_LE(orthogonality_error(result.v, transposed ? m : n, n), 16 * m * kEps);
    }
  }
}

// sqrt(6) * 1e308 is beyond double's range although every entry is finite: refused with what
// happened, not "did not converge".
TEST(GradedConvergence, ValuesBeyondTheRangeAreRefused) {
  const index_t m = 3, n = 2;
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      a[i + j * m] = j == 0 ? 1e308 : -1e308;
  shiftop::testing::expect_error([&] { shiftop::svd::jacobi(a.data(), m, n, m, JacobiOptions{}); },
                                 "a: a singular value exceeds the largest finite float64");
  shiftop::testing::expect_error(
      [&] { shiftop::svd::jacobi_batched(a.data(), 1, m, n, m, m * n, JacobiOptions{}); },
      "a: matrix 0: a singular value exceeds the largest finite float64");
  // Just inside the range: 1e154 * sqrt(6) and the rest of the matrix is accurate.
  for (double& x : a)
    x *= 1e-154;
  const auto result = shiftop::svd::jacobi(a.data(), m, n, m, JacobiOptions{});
  EXPECT_TRUE(result.stats.converged);
  EXPECT_NEAR(result.sigma[0] / (std::sqrt(6.0) * 1e154), 1.0, 8 * kEps);
}

}  // namespace
