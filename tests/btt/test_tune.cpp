// btt::tune_precision against independent checks: every configuration's measured error recomputed
// with a fresh plan made in that precision against an FP64 plan on the tuner's own input; the
// eq. (6) bound above the error against the exact (dense, FP64) product for every configuration;
// kappa(F^) from LAPACK's SVD of the DFT by definition; the bound's formula evaluated by hand.
#include "shiftop/btt/tune.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "shiftop/core/error.hpp"
#include "support/dense_reference.hpp"
#include "support/precision_bound.hpp"

namespace shiftop::btt {
namespace {

struct TuneCase {
  Shape shape;
  bool triangular;
};

class TunePrecision : public ::testing::TestWithParam<TuneCase> {};

PlanOptions estimate(const std::string& precision) {
  return {.precision = precision,
          .max_rhs = 1,
          .planning = Planning::Estimate,
          .cpu = {.threads = 1},
          .gpu = {}};
}

Plan make_plan(const std::vector<double>& col, const std::vector<double>& row, const Shape& s,
               const std::string& precision) {
  return row.empty() ? Plan::create(col, s, estimate(precision))
                     : Plan::create_general(col, row, s, estimate(precision));
}

TEST_P(TunePrecision, ErrorsMatchFreshPlansAndStayUnderTheBound) {
  const TuneCase c = GetParam();
  const Shape& s = c.shape;
  const std::vector<double> col =
      testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 11);
  std::vector<double> row;
  if (!c.triangular) {
    row = testing::random_vector(col.size(), 12);
    for (index_t k = 0; k < s.nd * s.nm; ++k)  // lag 0 is shared by the first row and column
      row[static_cast<std::size_t>(k * s.nt)] = col[static_cast<std::size_t>(k * s.nt)];
  }
  Plan plan = make_plan(col, row, s, "DSDSD");
  const TuneResult result = tune_precision(plan, col, row, {.repetitions = 1});

  EXPECT_EQ(plan.precision().str(), "DSDSD");  // restored
  const double kappa = testing::spectrum_condition_number(col, row, s);
  EXPECT_NEAR(result.kappa, kappa, 1e-10 * kappa);  // Jacobi and LAPACK: both to ~eps * kappa
  const std::vector<double> dense = testing::dense_block_toeplitz(col, row, s);
  ASSERT_EQ(result.ops.size(), 2u);
  double worst = 0;  // error against the exact product over the bound
  for (const OpTuning& tuning : result.ops) {
    const Op op = tuning.op;
    ASSERT_EQ(tuning.points.size(), 32u);  // the CPU has one phase-3 kernel
    const std::vector<PrecisionConfig> configs = PrecisionConfig::all();
    const index_t out_size = output_blocks(op, s) * s.nt;
    std::vector<double> fp64(static_cast<std::size_t>(out_size));
    make_plan(col, row, s, "DDDDD").apply(op, tuning.input, fp64);
    const std::vector<double> exact =
        testing::dense_apply(dense, s.nd * s.nt, s.nm * s.nt, op == Op::Fadj, tuning.input, 1);
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const TunePoint& p = tuning.points[k];
      SCOPED_TRACE(fmt::format("{} {}", name_of(op), p.precision));
      EXPECT_EQ(p.precision, configs[k].str());
      EXPECT_TRUE(p.gemv_kernel.empty());
      EXPECT_GT(p.milliseconds, 0);
      std::vector<double> y(static_cast<std::size_t>(out_size));
      make_plan(col, row, s, p.precision).apply(op, tuning.input, y);
      // The same arithmetic in a fresh plan: equal up to the order of FFTW's plans' sums, far
      // below the FP32 errors compared (>= 1e-9 measured for every configuration with an S).
      EXPECT_NEAR(p.relative_error, testing::relative_error(y, fp64), 1e-13);
      EXPECT_LE(p.relative_error, p.error_bound);
      const double against_exact = testing::relative_error(y, exact);
      EXPECT_LE(against_exact, p.error_bound);
      worst = std::max(worst, against_exact / p.error_bound);
      EXPECT_DOUBLE_EQ(p.error_bound, precision_error_bound(configs[k], s, op, result.kappa));
    }
    EXPECT_EQ(tuning.points.front().relative_error, 0.0);  // DDDDD is the reference
    // The front: no point is beaten in both time and error by another; DDDDD (error 0) is on it
    // unless another point also has error 0 and is faster.
    for (const TunePoint& p : tuning.points) {
      const bool dominated =
          std::any_of(tuning.points.begin(), tuning.points.end(), [&](const TunePoint& q) {
            return q.milliseconds <= p.milliseconds && q.relative_error <= p.relative_error &&
                   (q.milliseconds < p.milliseconds || q.relative_error < p.relative_error);
          });
      EXPECT_EQ(p.pareto, !dominated) << p.precision;
    }
    const TunePoint* best = tuning.fastest_under(1e-7);
    ASSERT_NE(best, nullptr);  // DDDDD qualifies
    for (const TunePoint& p : tuning.points) {
      if (p.relative_error <= 1e-7) {
        EXPECT_LE(best->milliseconds, p.milliseconds);
      }
    }
  }
  std::printf("largest error against the exact product / eq. (6) bound: %.3g\n", worst);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TunePrecision,
                         ::testing::Values(TuneCase{{3, 20, 16}, true},
                                           TuneCase{{3, 20, 16}, false}, TuneCase{{8, 5, 9}, true},
                                           TuneCase{{1, 7, 1}, true}));

TEST(PrecisionErrorBound, IsEquationSixEvaluatedByHand) {
  const Shape s{4, 10, 8};  // log2(2 Nt) = 4
  const double es = std::ldexp(1.0, -23), ed = std::ldexp(1.0, -52);
  // FP64 throughout: kappa [(ed + ed + ed) 4 + ed Nm].
  EXPECT_DOUBLE_EQ(precision_error_bound(PrecisionConfig{}, s, Op::F, 2.0),
                   2.0 * (3 * ed * 4 + ed * 10));
  // SSSSS on F*: kappa [es + (ed + es + es) 4 + es Nd + es].
  EXPECT_DOUBLE_EQ(precision_error_bound(PrecisionConfig::parse("SSSSS"), s, Op::Fadj, 3.0),
                   3.0 * (es + (ed + 2 * es) * 4 + es * 4 + es));
  // DDSDD on F: only phase 3 in FP32: kappa [(3 ed) 4 + es Nm].
  EXPECT_DOUBLE_EQ(precision_error_bound(PrecisionConfig::parse("DDSDD"), s, Op::F, 1.0),
                   3 * ed * 4 + es * 10);
  EXPECT_EQ(
      precision_error_bound(PrecisionConfig{}, s, Op::F, std::numeric_limits<double>::infinity()),
      std::numeric_limits<double>::infinity());
  EXPECT_THROW(precision_error_bound(PrecisionConfig{}, s, Op::FadjF, 1.0), Error);
  EXPECT_THROW(precision_error_bound(PrecisionConfig{}, s, Op::F, 0.5), Error);
}

TEST(TunePrecisionOptions, RefusesWhatItCannotTune) {
  const Shape s{2, 3, 4};
  const std::vector<double> col =
      testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 1);
  Plan plan = make_plan(col, {}, s, "DDDDD");
  EXPECT_THROW(tune_precision(plan, col, {}, {.ops = {Op::FadjF}}), Error);
  EXPECT_THROW(tune_precision(plan, col, {}, {.repetitions = 0}), Error);
  EXPECT_THROW(tune_precision(plan, {}, {}, {}), Error);    // no kernels and no kappa
  EXPECT_THROW(tune_precision(plan, col, col, {}), Error);  // a row for a triangular plan
  // A given kappa needs no kernels and is the bounds' kappa.
  const TuneResult r = tune_precision(plan, {}, {}, {.ops = {Op::F}, .repetitions = 1, .kappa = 5});
  EXPECT_EQ(r.kappa, 5.0);
  EXPECT_DOUBLE_EQ(r.ops.front().points.back().error_bound,
                   precision_error_bound(PrecisionConfig::parse("SSSSS"), s, Op::F, 5.0));
}

}  // namespace
}  // namespace shiftop::btt
