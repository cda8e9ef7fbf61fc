// The Hessian action H = F* Gamma_noise^{-1} F + Gamma_prior^{-1} (shiftop/inverse/hessian.hpp)
// against the dense matrix built by LAPACK (random_inverse_problem.hpp): triangular and general
// F, odd sizes, Nd = 1 and Nm = 1, right-hand sides crossing the plan's max_rhs groups; a prior
// without a precision and mismatched sizes are refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "random_inverse_problem.hpp"
#include "shiftop/inverse/hessian.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::PriorKind;

struct Case {
  Shape shape;
  PriorKind prior;
  bool general;
};

class HessianAction : public ::testing::TestWithParam<Case> {};

TEST_P(HessianAction, MatchesTheDenseHessian) {
  const Case c = GetParam();
  const auto problem = testing::random_inverse_problem(c.shape, c.prior, c.general, 31, 2);
  Hessian hessian(problem.plan, problem.noise(), problem.prior);
  const index_t n = problem.parameters();
  EXPECT_EQ(hessian.size(), n);
  const index_t nrhs = 5;  // groups of 2, 2 and 1 in the plan
  const auto x = testing::random_vector(static_cast<std::size_t>(n * nrhs), 32);
  std::vector<double> y(x.size());
  hessian.apply_misfit(x, y, nrhs);
  const double misfit_error = testing::relative_error(
      y, testing::dense_apply(testing::dense_hessian(problem, false), n, n, false, x, nrhs));
  EXPECT_LT(misfit_error, 1e-14);
  double error = 0;
  if (problem.prior->has_precision()) {
    hessian.apply(x, y, nrhs);
    error = testing::relative_error(
        y, testing::dense_apply(testing::dense_hessian(problem), n, n, false, x, nrhs));
    EXPECT_LT(error, 1e-13);
  } else {
    testing::expect_error([&] { hessian.apply(x, y, nrhs); }, "no closed-form precision");
  }
  std::printf("%s: misfit %.2e, H %.2e\n", testing::to_string(c.prior).c_str(), misfit_error,
              error);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return fmt::format("{}_{}_nd{}_nm{}_nt{}", testing::to_string(c.prior),
                     c.general ? "general" : "triangular", c.shape.nd, c.shape.nm, c.shape.nt);
}

INSTANTIATE_TEST_SUITE_P(Sizes, HessianAction,
                         ::testing::Values(Case{{2, 3, 7}, PriorKind::Diagonal, false},
                                           Case{{1, 4, 9}, PriorKind::Smoothing, false},
                                           Case{{3, 1, 5}, PriorKind::Smoothing, true},
                                           Case{{3, 2, 1}, PriorKind::Diagonal, true},
                                           Case{{2, 3, 6}, PriorKind::Kernels, false},
                                           Case{{1, 1, 11}, PriorKind::Kernels, true}),
                         case_name);

TEST(Hessian, MismatchedSizesAreRefused) {
  const auto problem = testing::random_inverse_problem({2, 3, 5}, PriorKind::Diagonal, false, 1);
  using testing::expect_error;
  expect_error([&] { Hessian(problem.plan, GaussianNoise({1.0}, 5), problem.prior); },
               "the noise covers 1 sensors x 5 steps, but F (shape");
  expect_error(
      [&] {
        Hessian(problem.plan, GaussianNoise({1.0, 1.0}, 4), problem.prior);
      },
      "has Nd = 2, Nt = 5");
  expect_error(
      [&] {
        Hessian(problem.plan, problem.noise(),
                std::make_shared<DiagonalPrior>(std::vector<double>{1.0, 1.0}, 5));
      },
      "the diagonal prior covers 2 blocks x 5 steps");
  expect_error([&] { Hessian(nullptr, problem.noise(), problem.prior); }, "no operator F");
  expect_error([&] { Hessian(problem.plan, problem.noise(), nullptr); }, "no prior");
  Hessian hessian(problem.plan, problem.noise(), problem.prior);
  std::vector<double> x(15), y(14), d(9);
  expect_error([&] { hessian.apply(x, y); },
               "x holds 15 and y 14 values, expected nrhs*Nm*Nt = 15");
  expect_error([&] { hessian.weighted_data_residual(d, x, x); },
               "data vector holds 9 values, expected Nd*Nt = 2*5 = 10");
}

}  // namespace
}  // namespace shiftop::inverse
