// GaussianNoise (shiftop/inverse/noise.hpp) against its explicit dense covariance
// diag(variance_i) ⊗ I_Nt: apply, apply_inverse (its product with apply is I) and apply_sqrt
// (S S^T = Gamma_noise), on odd sizes and several right-hand sides; bad inputs are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dense_solve_reference.hpp"
#include "shiftop/inverse/noise.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

std::vector<double> positive_values(std::size_t n, unsigned seed) {
  auto v = testing::random_vector(n, seed);
  for (double& x : v)
    x = 0.1 + x * x;
  return v;
}

std::vector<double> dense_noise(const std::vector<double>& variances, index_t nt) {
  const auto nd = static_cast<index_t>(variances.size());
  const index_t n = nd * nt;
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (index_t i = 0; i < nd; ++i)
    for (index_t t = 0; t < nt; ++t)
      a[(i * nt + t) * n + i * nt + t] = variances[i];
  return a;
}

TEST(GaussianNoise, MatchesItsDenseCovariance) {
  for (auto [nd, nt] : {std::pair<index_t, index_t>{1, 1}, {1, 9}, {5, 1}, {3, 7}}) {
    const auto variances = positive_values(static_cast<std::size_t>(nd), 3);
    const GaussianNoise noise(variances, nt);
    EXPECT_EQ(noise.blocks(), nd);
    EXPECT_EQ(noise.nt(), nt);
    const index_t n = nd * nt;
    auto as_fn = [&](auto method) {
      return [&noise, method](std::span<const double> x, std::span<double> y, index_t k) {
        (noise.*method)(x, y, k);
      };
    };
    const auto gamma = testing::dense_from_action(n, as_fn(&GaussianNoise::apply));
    const auto inverse = testing::dense_from_action(n, as_fn(&GaussianNoise::apply_inverse));
    const auto sqrt = testing::dense_from_action(n, as_fn(&GaussianNoise::apply_sqrt));
    const auto reference = dense_noise(variances, nt);
    EXPECT_EQ(testing::max_relative_difference(gamma, reference), 0.0);
    // One rounding per entry (1/v times v).
    EXPECT_LT(testing::distance_from_identity(testing::dense_product(gamma, inverse, n, n, n), n),
              3e-16);
    // sqrt(v)^2 = v to two roundings.
    EXPECT_LT(testing::max_relative_difference(testing::dense_product(sqrt, sqrt, n, n, n, true),
                                               reference),
              5e-16);
  }
}

TEST(GaussianNoise, AppliesInPlace) {
  const GaussianNoise noise({2.0, 0.5}, 3);
  std::vector<double> x{1, 2, 3, 4, 5, 6, 1, 1, 1, 2, 2, 2};
  noise.apply(x, x, 2);
  EXPECT_EQ(x, (std::vector<double>{2, 4, 6, 2, 2.5, 3, 2, 2, 2, 1, 1, 1}));
}

TEST(GaussianNoise, BadInputsAreRefused) {
  using testing::expect_error;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expect_error([] { GaussianNoise({}, 4); }, "expected one value per sensor");
  expect_error([] { GaussianNoise({1.0, 0.0}, 4); }, "noise variance of sensor 1 is 0");
  expect_error([] { GaussianNoise({-1.0}, 4); }, "noise variance of sensor 0 is -1");
  expect_error([&] { GaussianNoise({nan}, 4); }, "expected a positive finite value");
  expect_error([] { GaussianNoise({1.0}, 0); }, "Nt 0 is not positive");
  const GaussianNoise noise({1.0, 2.0}, 3);
  std::vector<double> x(6), y(5), z(12);
  expect_error([&] { noise.apply(x, y); }, "y 5 values, expected nrhs*Nd*Nt = 1*2*3 = 6");
  expect_error([&] { noise.apply_inverse(x, z, 2); }, "x holds 6 and y 12 values");
  expect_error([&] { noise.apply_sqrt(x, x, 0); }, "nrhs 0 is not positive");
}

}  // namespace
}  // namespace shiftop::inverse
