// The priors (shiftop/inverse/prior.hpp) against their explicit dense covariances:
// apply_covariance, apply_precision (its product with the covariance is I), apply_sqrt (S S^T =
// Gamma_prior) and the circulant spectrum against the DFT by definition; odd sizes, Nm = 1, Nt = 1,
// several right-hand sides; bad inputs are refused with messages naming them.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <numbers>
#include <vector>

#include "dense_solve_reference.hpp"
#include "shiftop/inverse/prior.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::dense_from_action;
using testing::dense_product;
using testing::dense_transpose;
using testing::distance_from_identity;
using testing::max_relative_difference;

btt::PlanOptions quick() {
  btt::PlanOptions options;
  options.planning = btt::Planning::Estimate;
  options.max_rhs = 4;  // the dense references apply Nm*Nt unit vectors: several groups
  return options;
}

std::vector<double> positive_values(std::size_t n, unsigned seed) {
  auto v = testing::random_vector(n, seed);
  for (double& x : v)
    x = 0.1 + x * x;
  return v;
}

struct DenseForms {
  std::vector<double> covariance, precision, sqrt;
};

DenseForms dense_forms(const Prior& prior) {
  const index_t n = prior.blocks() * prior.nt();
  auto as_fn = [&prior](auto method) {
    return [&prior, method](std::span<const double> x, std::span<double> y, index_t k) {
      (prior.*method)(x, y, k);
    };
  };
  DenseForms forms{dense_from_action(n, as_fn(&Prior::apply_covariance)), {}, {}};
  if (prior.has_precision()) forms.precision = dense_from_action(n, as_fn(&Prior::apply_precision));
  if (prior.has_sqrt()) forms.sqrt = dense_from_action(n, as_fn(&Prior::apply_sqrt));
  return forms;
}

// The three checks every prior with a precision and a factor passes, with the callers' bounds
// (the errors are printed).
void check_forms(const Prior& prior, const std::vector<double>& reference, double covariance_bound,
                 double identity_bound, double factor_bound) {
  const index_t n = prior.blocks() * prior.nt();
  const DenseForms forms = dense_forms(prior);
  const double covariance_error = max_relative_difference(forms.covariance, reference);
  const double identity_error =
      distance_from_identity(dense_product(forms.precision, forms.covariance, n, n, n), n);
  const auto st = dense_transpose(forms.sqrt, n, n);
  const double factor_error =
      max_relative_difference(dense_product(st, st, n, n, n, true), reference);
  std::printf("%s Nm=%lld Nt=%lld: covariance %.2e, precision*covariance-I %.2e, SS^T %.2e\n",
              std::string(prior.name()).c_str(), static_cast<long long>(prior.blocks()),
              static_cast<long long>(prior.nt()), covariance_error, identity_error, factor_error);
  EXPECT_LT(covariance_error, covariance_bound);
  EXPECT_LT(identity_error, identity_bound);
  EXPECT_LT(factor_error, factor_bound);
}

const std::vector<std::pair<index_t, index_t>> kSizes = {{1, 1}, {1, 13}, {4, 1}, {3, 9}, {5, 17}};

TEST(DiagonalPrior, MatchesItsDenseCovariance) {
  for (auto [nm, nt] : kSizes) {
    const auto variances = positive_values(static_cast<std::size_t>(nm), 11);
    const DiagonalPrior prior(variances, nt);
    EXPECT_EQ(prior.blocks(), nm);
    EXPECT_EQ(prior.nt(), nt);
    // From the analysis (u = eps/2): the covariance is exact; (1/v) v rounds twice (2u = 2.2e-16,
    // measured 1.1e-16 on the native and portable builds); sqrt(v)^2 three times (3.3e-16).
    check_forms(prior,
                testing::dense_separable_covariance(variances, nt,
                                                    [](index_t k) { return k == 0 ? 1.0 : 0.0; }),
                1e-300, 3e-16, 5e-16);
  }
}

TEST(TimeSmoothingPrior, MatchesItsDenseCovariance) {
  for (auto [nm, nt] : kSizes) {
    for (double steps : {0.3, 2.5, 40.0}) {
      const auto variances = positive_values(static_cast<std::size_t>(nm), 12);
      const TimeSmoothingPrior prior(variances, steps, nt, quick());
      const double rho = std::exp(-1 / steps);
      EXPECT_DOUBLE_EQ(prior.rho(), rho);
      // T^{-1} amplifies the FFT plan's rounding in T by up to cond(T) <= (1+rho)/(1-rho). The
      // bounds are at least 4x the worst measured over the native and portable builds (the same on
      // both): covariance and S S^T 3.6e-16, precision*covariance - I 5.6e-16 at cond 1.07
      // (2e-15 cond before, 3.9x).
      const double condition = (1 + rho) / (1 - rho);
      check_forms(
          prior,
          testing::dense_separable_covariance(
              variances, nt, [rho](index_t k) { return std::pow(rho, static_cast<double>(k)); }),
          2e-15, 2.5e-15 * condition, 2e-15);
    }
  }
}

TEST(TimeSmoothingPrior, CirculantSpectrumIsTheClampedDftOfStrangsEmbedding) {
  for (auto [nt, steps] : {std::pair<index_t, double>{1, 1.0}, {7, 0.8}, {12, 3.0}, {9, 60.0}}) {
    const std::vector<double> variances{0.5, 2.0};
    const TimeSmoothingPrior prior(variances, steps, nt, quick());
    const double rho = prior.rho();
    for (index_t length : {2 * nt, 2 * nt + 6}) {
      const auto spectrum = prior.circulant_spectrum(length);
      ASSERT_EQ(spectrum.size(), static_cast<std::size_t>((length / 2 + 1) * 2));
      const double floor = (1 - rho) / (1 + rho);
      for (index_t w = 0; w <= length / 2; ++w) {
        double dft = 0;
        for (index_t k = 0; k < length; ++k)
          dft += std::pow(rho, static_cast<double>(std::min(k, length - k))) *
                 std::cos(2 * std::numbers::pi * static_cast<double>(w * k) /
                          static_cast<double>(length));
        for (int j = 0; j < 2; ++j)
          EXPECT_NEAR(spectrum[w * 2 + j], variances[j] * std::max(dft, floor),
                      1e-12 * variances[j] * static_cast<double>(length))
              << "nt " << nt << " w " << w;
      }
    }
  }
  // A long correlation on a short window: Strang's embedding dips below T's symbol, and is
  // clamped there.
  const TimeSmoothingPrior prior({1.0}, 60.0, 9, quick());
  const auto spectrum = prior.circulant_spectrum(18);
  const double floor = (1 - prior.rho()) / (1 + prior.rho());
  EXPECT_EQ(*std::min_element(spectrum.begin(), spectrum.end()), floor);
}

TEST(DiagonalPrior, CirculantSpectrumIsTheVariances) {
  const DiagonalPrior prior({3.0, 0.25, 1.0}, 5);
  const auto spectrum = prior.circulant_spectrum(10);
  ASSERT_EQ(spectrum.size(), 18u);
  for (index_t w = 0; w <= 5; ++w) {
    EXPECT_EQ(spectrum[w * 3], 3.0);
    EXPECT_EQ(spectrum[w * 3 + 1], 0.25);
    EXPECT_EQ(spectrum[w * 3 + 2], 1.0);
  }
}

// Random lags with a symmetric lag-0 block; the covariance need not be definite to be applied.
std::vector<double> random_kernels(const Shape& s, unsigned seed) {
  auto k = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), seed);
  for (index_t i = 0; i < s.nm; ++i) {
    k[(i * s.nm + i) * s.nt] = 1 + std::abs(k[(i * s.nm + i) * s.nt]);
    for (index_t j = 0; j < i; ++j)
      k[(i * s.nm + j) * s.nt] = k[(j * s.nm + i) * s.nt];
  }
  return k;
}

TEST(KernelPrior, MatchesTheDenseSymmetricBlockToeplitzMatrix) {
  for (auto [nm, nt] : kSizes) {
    const Shape s{nm, nm, nt};
    const auto kernels = random_kernels(s, 21);
    const auto row = testing::transposed_lags(kernels, nm, nt);
    const auto reference = testing::dense_block_toeplitz(kernels, row, s);
    const KernelPrior prior(kernels, s, quick());
    EXPECT_EQ(prior.blocks(), nm);
    EXPECT_FALSE(prior.has_precision());
    EXPECT_FALSE(prior.has_sqrt());
    EXPECT_FALSE(prior.has_circulant_spectrum());
    const auto covariance = dense_forms(prior).covariance;
    const double error = max_relative_difference(covariance, reference);
    std::printf("kernels Nm=%lld Nt=%lld: covariance %.2e\n", static_cast<long long>(nm),
                static_cast<long long>(nt), error);
    EXPECT_LT(error, 1e-14);
    // Symmetric, as a covariance is.
    EXPECT_LT(max_relative_difference(dense_transpose(covariance, nm * nt, nm * nt), covariance),
              1e-14);
  }
}

TEST(Priors, BadInputsAreRefused) {
  using testing::expect_error;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_error([] { DiagonalPrior({}, 3); }, "diagonal prior variances: expected one value");
  expect_error([] { DiagonalPrior({1.0, -2.0}, 3); }, "diagonal prior variance of block 1 is -2");
  expect_error([] { DiagonalPrior({1.0}, 0); }, "Nt 0 is not positive");
  expect_error([&] { TimeSmoothingPrior({nan}, 1.0, 3); }, "smoothing prior variance of block 0");
  expect_error([] { TimeSmoothingPrior({1.0}, 0.0, 3); }, "smoothing prior correlation steps 0");
  expect_error([&] { TimeSmoothingPrior({1.0}, inf, 3); }, "correlation steps inf");
  expect_error([] { TimeSmoothingPrior({1.0}, 1e300, 3); }, "exp(-1/steps) rounds to 1");

  const Shape s{2, 2, 3};
  auto kernels = random_kernels(s, 5);
  expect_error([&] { KernelPrior(std::span(kernels).first(11), s); }, "holds 11 values, expected");
  expect_error([&] { KernelPrior(kernels, Shape{2, 1, 6}); }, "expected Nm x Nm blocks");
  auto asymmetric = kernels;
  asymmetric[(0 * 2 + 1) * 3] += 1e-3;
  expect_error([&] { KernelPrior(asymmetric, s); }, "lag-0 block is not symmetric");
  auto negative = kernels;
  negative[(1 * 2 + 1) * 3] = -1;
  expect_error([&] { KernelPrior(negative, s); }, "C_0[1,1] = -1 is not positive");

  const KernelPrior kernel_prior(kernels, s, quick());
  std::vector<double> x(6), y(6), short_y(5);
  expect_error([&] { kernel_prior.apply_precision(x, y); }, "no closed-form precision");
  expect_error([&] { kernel_prior.apply_sqrt(x, y); }, "no factor S");
  expect_error([&] { (void)kernel_prior.circulant_spectrum(6); }, "use the prior preconditioner");
  expect_error([&] { kernel_prior.apply_covariance(x, short_y); },
               "kernels prior apply_covariance: x holds 6 and y 5 values");
  const DiagonalPrior diagonal({1.0, 2.0}, 3);
  expect_error([&] { diagonal.apply_precision(x, y, 2); }, "expected nrhs*Nm*Nt = 2*2*3 = 12");
  expect_error([&] { (void)diagonal.circulant_spectrum(5); }, "length 5 is not an even number");
  const TimeSmoothingPrior smoothing({1.0, 2.0}, 2.0, 3, quick());
  expect_error([&] { smoothing.apply_sqrt(x, y, 0); }, "nrhs 0 is not positive");
  expect_error([&] { (void)smoothing.circulant_spectrum(4); },
               "length 4 is not an even number >= 2*Nt = 6");
}

}  // namespace
}  // namespace shiftop::inverse
