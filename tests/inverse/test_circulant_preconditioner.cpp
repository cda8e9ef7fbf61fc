// The circulant preconditioner (shiftop/inverse/circulant_preconditioner.hpp) against its
// definition, built densely and independently: M^{-1} = U^T A^{-1} U with A = C_F^T
// Gamma_noise^{-1} C_F + P^{-1}, C_F the explicit block-circulant embedding (period 2*Nt) of F's
// kernels, P the circulant with the prior's spectrum, U the zero padding. Also: M^{-1} is
// symmetric positive definite; a prior without a spectrum is refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <numbers>

#include "random_inverse_problem.hpp"
#include "shiftop/inverse/circulant_preconditioner.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::PriorKind;

// The dense L-periodic circulant (L x L per block pair) of real symbols given at w = 0..L/2:
// c[k] = (1/L) sum_{w=0}^{L-1} lambda_w e^{2 pi i w k / L}, lambda_{L-w} = lambda_w.
std::vector<double> circulant_from_spectrum(const std::vector<double>& lambda, index_t length) {
  std::vector<double> c(static_cast<std::size_t>(length));
  for (index_t k = 0; k < length; ++k) {
    double sum = 0;
    for (index_t w = 0; w < length; ++w) {
      const double value = lambda[w <= length / 2 ? w : length - w];
      sum += value * std::cos(2 * std::numbers::pi * static_cast<double>(w * k) /
                              static_cast<double>(length));
    }
    c[k] = sum / static_cast<double>(length);
  }
  return c;
}

struct Case {
  Shape shape;
  PriorKind prior;
  bool general;
};

class CirculantPreconditionerDefinition : public ::testing::TestWithParam<Case> {};

TEST_P(CirculantPreconditionerDefinition, EqualsTheUnpaddedInverseOfTheCirculantHessian) {
  const Case c = GetParam();
  const Shape s = c.shape;
  const auto problem = testing::random_inverse_problem(s, c.prior, c.general, 41);
  const GaussianNoise noise = problem.noise();
  CirculantPreconditioner preconditioner(*problem.plan, noise, *problem.prior);
  const index_t n = problem.parameters(), length = 2 * s.nt;

  // C_F: block (i, j) is the L x L circulant of the kernel f_ij padded to L (lags 0..Nt-1 at
  // 0..Nt-1, lags -(Nt-1)..-1 of a general F at L-(Nt-1)..L-1), read from the dense F.
  const index_t big_rows = s.nd * length, big_cols = s.nm * length;
  std::vector<double> cf(static_cast<std::size_t>(big_rows * big_cols), 0.0);
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j) {
      std::vector<double> kernel(static_cast<std::size_t>(length), 0.0);
      for (index_t t = 0; t < s.nt; ++t)
        kernel[t] = problem.forward[(i * s.nt + t) * n + j * s.nt];  // F[(i,t),(j,0)]
      for (index_t t = 1; t < s.nt; ++t)
        kernel[length - t] = problem.forward[(i * s.nt) * n + j * s.nt + t];  // F[(i,0),(j,t)]
      for (index_t a = 0; a < length; ++a)
        for (index_t b = 0; b < length; ++b)
          cf[(i * length + a) * big_cols + j * length + b] = kernel[(a - b + length) % length];
    }
  // A = C_F^T Gamma_noise^{-1} C_F + P^{-1}, P^{-1} circulant with symbols 1/P_w per block.
  auto weighted = cf;
  for (index_t r = 0; r < big_rows; ++r)
    for (index_t q = 0; q < big_cols; ++q)
      weighted[r * big_cols + q] /= problem.noise_variances[r / length];
  auto a = testing::dense_product(cf, weighted, big_cols, big_rows, big_cols, true);
  const auto spectrum = problem.prior->circulant_spectrum(length);
  for (index_t j = 0; j < s.nm; ++j) {
    std::vector<double> inverse_symbol(static_cast<std::size_t>(s.nt + 1));
    for (index_t w = 0; w <= s.nt; ++w)
      inverse_symbol[w] = 1 / spectrum[w * s.nm + j];
    const auto pinv = circulant_from_spectrum(inverse_symbol, length);
    for (index_t x = 0; x < length; ++x)
      for (index_t y = 0; y < length; ++y)
        a[(j * length + x) * big_cols + j * length + y] += pinv[(x - y + length) % length];
  }
  const auto a_inverse = testing::dense_spd_inverse(a, big_cols);
  std::vector<double> expected(static_cast<std::size_t>(n * n));
  for (index_t j = 0; j < s.nm; ++j)
    for (index_t t = 0; t < s.nt; ++t)
      for (index_t l = 0; l < s.nm; ++l)
        for (index_t u = 0; u < s.nt; ++u)
          expected[(j * s.nt + t) * n + l * s.nt + u] =
              a_inverse[(j * length + t) * big_cols + l * length + u];

  auto got = testing::dense_from_action(
      n, [&](std::span<const double> x, std::span<double> y, index_t count) {
        for (index_t r = 0; r < count; ++r)
          preconditioner.apply(x.subspan(r * n, n), y.subspan(r * n, n));
      });
  const double error = testing::max_relative_difference(got, expected);
  const double asymmetry =
      testing::max_relative_difference(testing::dense_transpose(got, n, n), got);
  std::printf("%s nd%lld nm%lld nt%lld: M^-1 vs dense %.2e, asymmetry %.2e\n",
              testing::to_string(c.prior).c_str(), static_cast<long long>(s.nd),
              static_cast<long long>(s.nm), static_cast<long long>(s.nt), error, asymmetry);
  EXPECT_LT(error, 2e-13);  // measured up to 2.6e-14
  EXPECT_LT(asymmetry, 1e-13);
  EXPECT_NO_THROW(testing::dense_spd_inverse(got, n));  // positive definite
  // In place.
  auto x = testing::random_vector(static_cast<std::size_t>(n), 3);
  std::vector<double> z(x.size());
  preconditioner.apply(x, z);
  preconditioner.apply(x, x);
  EXPECT_EQ(x, z);
  EXPECT_GT(preconditioner.memory_bytes(), 0u);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return fmt::format("{}_{}_nd{}_nm{}_nt{}", testing::to_string(c.prior),
                     c.general ? "general" : "triangular", c.shape.nd, c.shape.nm, c.shape.nt);
}

INSTANTIATE_TEST_SUITE_P(Sizes, CirculantPreconditionerDefinition,
                         ::testing::Values(Case{{2, 3, 7}, PriorKind::Diagonal, false},
                                           Case{{1, 4, 9}, PriorKind::Smoothing, false},
                                           Case{{3, 1, 5}, PriorKind::Smoothing, true},
                                           Case{{3, 2, 1}, PriorKind::Diagonal, true},
                                           Case{{4, 2, 6}, PriorKind::Smoothing, false}),
                         case_name);

TEST(CirculantPreconditioner, BadInputsAreRefused) {
  using testing::expect_error;
  const auto problem = testing::random_inverse_problem({2, 3, 5}, PriorKind::Kernels, false, 1);
  expect_error([&] { CirculantPreconditioner(*problem.plan, problem.noise(), *problem.prior); },
               "the kernels prior has no circulant spectrum; use the prior preconditioner");
  const DiagonalPrior wrong({1.0, 1.0}, 5);
  expect_error([&] { CirculantPreconditioner(*problem.plan, problem.noise(), wrong); },
               "do not match F's shape");
  const DiagonalPrior prior({1.0, 1.0, 1.0}, 5);
  CirculantPreconditioner preconditioner(*problem.plan, problem.noise(), prior);
  std::vector<double> r(15), z(14);
  expect_error([&] { preconditioner.apply(r, z); },
               "r holds 15 and z 14 values, expected Nm*Nt = 15");
}

}  // namespace
}  // namespace shiftop::inverse
