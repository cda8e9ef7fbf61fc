// All 32 precision configurations against the FP64 result, within the first-order error bound of
// the mixed-precision paper, eq. (6) (tests/precision_bound.hpp states it and its constants). It
// also checks the converse: a configuration with an FP32 phase must really lose accuracy (FP32 is
// computed, not emulated in FP64).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "shiftop/btt/plan.hpp"
#include "support/dense_reference.hpp"
#include "support/precision_bound.hpp"

namespace shiftop::btt {
namespace {

struct Case {
  Shape shape;
  bool triangular;
};

class EveryPrecision : public ::testing::TestWithParam<Case> {};

TEST_P(EveryPrecision, ErrorIsWithinTheBoundOfEq6) {
  const auto [s, triangular] = GetParam();
  const auto n = static_cast<std::size_t>(s.kernel_size());
  const auto col = testing::random_vector(n, 101);
  auto row = testing::random_vector(n, 102);
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    row[k * s.nt] = col[k * s.nt];
  const std::span<const double> row_used = triangular ? std::span<const double>{} : row;
  const double kappa = testing::spectrum_condition_number(col, row_used, s);
  PlanOptions options{.planning = Planning::Estimate};
  Plan plan =
      triangular ? Plan::create(col, s, options) : Plan::create_general(col, row, s, options);
  for (Op op : {Op::F, Op::Fadj}) {
    // Random FP64 inputs: their mantissas carry bits below FP32's, so a rounding shows.
    const auto x =
        testing::random_vector(static_cast<std::size_t>(input_blocks(op, s) * s.nt), 103);
    std::vector<double> exact(static_cast<std::size_t>(output_blocks(op, s) * s.nt));
    plan.set_precision("DDDDD");
    plan.apply(op, x, exact);
    for (const PrecisionConfig& config : PrecisionConfig::all()) {
      plan.set_precision(config.str());
      std::vector<double> y(exact.size(), std::numeric_limits<double>::quiet_NaN());
      plan.apply(op, x, y);
      const double error = testing::relative_error(y, exact);
      const double bound = testing::eq6_bound(config, op, s, kappa);
      SCOPED_TRACE(fmt::format("{} {} error {:.3e} bound {:.3e} kappa {:.3e}", to_string(op),
                               config.str(), error, bound, kappa));
      if (config.all_double()) {
        EXPECT_EQ(error, 0.0);  // the same plan and precision is deterministic
      } else {
        EXPECT_LE(error, testing::kSlack * bound);
        EXPECT_GT(error, 1e-3 * unit_roundoff(Precision::Single));  // FP32 was really used
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, EveryPrecision,
                         ::testing::Values(Case{{3, 20, 16}, true}, Case{{3, 20, 16}, false},
                                           Case{{8, 5, 9}, true}, Case{{1, 7, 1}, true},
                                           Case{{12, 64, 33}, false}));

TEST(Fp64, AllDoubleConfigurationMatchesTheDenseProduct) {
  const Shape s{4, 9, 12};
  const auto col = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 7);
  Plan plan = Plan::create(col, s, {.planning = Planning::Estimate});
  const auto a = testing::dense_block_toeplitz(col, {}, s);
  const auto m = testing::random_vector(static_cast<std::size_t>(s.nm * s.nt), 8);
  std::vector<double> d(static_cast<std::size_t>(s.nd * s.nt));
  plan.apply(Op::F, m, d);
  EXPECT_LT(
      testing::relative_error(d, testing::dense_apply(a, s.nd * s.nt, s.nm * s.nt, false, m, 1)),
      1e-14);
}

}  // namespace
}  // namespace shiftop::btt
