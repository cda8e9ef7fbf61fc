// The CPU plan against the explicit dense block Toeplitz matrix, for every operation, triangular
// and general operators, one and many right-hand sides, and sizes down to Nt = 1.
#include <gtest/gtest.h>

#include <limits>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::btt {
namespace {

using testing::dense_apply;
using testing::dense_block_toeplitz;
using testing::random_vector;
using testing::relative_error;

struct Case {
  Shape shape;
  bool triangular;
  index_t nrhs;
  index_t max_rhs;
};

std::string name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return fmt::format("nd{}_nm{}_nt{}_{}_rhs{}_max{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "tri" : "gen", c.nrhs, c.max_rhs);
}

class PlanVsDense : public ::testing::TestWithParam<Case> {};

// The explicit result of op applied to x with the dense matrix A.
std::vector<double> reference(Op op, const std::vector<double>& a, const Shape& s,
                              std::span<const double> x, index_t nrhs) {
  const index_t rows = s.nd * s.nt, cols = s.nm * s.nt;
  switch (op) {
    case Op::F:
      return dense_apply(a, rows, cols, false, x, nrhs);
    case Op::Fadj:
      return dense_apply(a, rows, cols, true, x, nrhs);
    case Op::FadjF:
      return dense_apply(a, rows, cols, true, dense_apply(a, rows, cols, false, x, nrhs), nrhs);
    case Op::FFadj:
      return dense_apply(a, rows, cols, false, dense_apply(a, rows, cols, true, x, nrhs), nrhs);
  }
  return {};
}

TEST_P(PlanVsDense, EveryOperationMatchesTheDenseProduct) {
  const Case c = GetParam();
  const Shape& s = c.shape;
  const auto n = static_cast<std::size_t>(s.kernel_size());
  const std::vector<double> col = random_vector(n, 1);
  std::vector<double> row = random_vector(n, 2);
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    row[k * s.nt] = col[k * s.nt];
  PlanOptions options{.max_rhs = c.max_rhs, .planning = Planning::Estimate};
  Plan plan =
      c.triangular ? Plan::create(col, s, options) : Plan::create_general(col, row, s, options);
  const auto a = dense_block_toeplitz(col, c.triangular ? std::span<const double>{} : row, s);
  for (Op op : kAllOps) {
    const auto x = random_vector(static_cast<std::size_t>(c.nrhs * input_blocks(op, s) * s.nt), 3);
    std::vector<double> y(static_cast<std::size_t>(c.nrhs * output_blocks(op, s) * s.nt),
                          std::numeric_limits<double>::quiet_NaN());  // unwritten entries fail
    plan.apply(op, x, y, c.nrhs);
    EXPECT_LT(relative_error(y, reference(op, a, s, x, c.nrhs)), 1e-13) << to_string(op);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, PlanVsDense,
    ::testing::Values(Case{{1, 1, 1}, true, 1, 16}, Case{{1, 1, 1}, false, 2, 16},
                      Case{{2, 3, 1}, true, 1, 16}, Case{{1, 4, 7}, true, 1, 16},
                      Case{{1, 4, 7}, false, 3, 16}, Case{{5, 1, 6}, true, 2, 16},
                      Case{{5, 1, 6}, false, 1, 16}, Case{{3, 5, 9}, true, 5, 2},
                      Case{{3, 5, 9}, false, 5, 2}, Case{{7, 13, 17}, true, 3, 16},
                      Case{{7, 13, 17}, false, 4, 4}, Case{{4, 19, 2}, false, 9, 4},
                      Case{{17, 3, 8}, true, 6, 16}, Case{{9, 33, 11}, false, 1, 1}),
    name);

Shape random_shape_and_data(std::vector<double>& col, std::vector<double>& row) {
  const Shape s{6, 41, 37};
  col = random_vector(static_cast<std::size_t>(s.kernel_size()), 11);
  row = random_vector(static_cast<std::size_t>(s.kernel_size()), 12);
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    row[k * s.nt] = col[k * s.nt];
  return s;
}

TEST(Plan, AdjointIdentityHoldsForTriangularAndGeneral) {
  std::vector<double> col, row;
  const Shape s = random_shape_and_data(col, row);
  const PlanOptions options{.planning = Planning::Estimate};
  for (bool triangular : {true, false}) {
    Plan plan =
        triangular ? Plan::create(col, s, options) : Plan::create_general(col, row, s, options);
    const auto m = random_vector(static_cast<std::size_t>(s.nm * s.nt), 21);
    const auto d = random_vector(static_cast<std::size_t>(s.nd * s.nt), 22);
    std::vector<double> fm(d.size()), fd(m.size());
    plan.apply(Op::F, m, fm);
    plan.apply(Op::Fadj, d, fd);
    const double lhs = testing::dot(fm, d), rhs = testing::dot(m, fd);
    EXPECT_NEAR(lhs, rhs, 1e-13 * testing::norm(fm) * testing::norm(d));
  }
}

TEST(Plan, NormalOperatorsEqualTheirHalvesChained) {
  std::vector<double> col, row;
  const Shape s = random_shape_and_data(col, row);
  Plan plan = Plan::create_general(col, row, s, {.planning = Planning::Estimate});
  const auto m = random_vector(static_cast<std::size_t>(3 * s.nm * s.nt), 31);
  std::vector<double> fm(static_cast<std::size_t>(3 * s.nd * s.nt)), ffm(m.size()), hm(m.size());
  plan.apply(Op::F, m, fm, 3);
  plan.apply(Op::Fadj, fm, ffm, 3);
  plan.apply(Op::FadjF, m, hm, 3);
  EXPECT_LT(relative_error(hm, ffm), 1e-14);
  std::vector<double> fadj(m.size()), gg(fm.size()), g2(fm.size());
  plan.apply(Op::Fadj, fm, fadj, 3);
  plan.apply(Op::F, fadj, gg, 3);
  plan.apply(Op::FFadj, fm, g2, 3);
  EXPECT_LT(relative_error(g2, gg), 1e-14);
}

TEST(Plan, ManyRightHandSidesEqualOneAtATime) {
  std::vector<double> col, row;
  const Shape s = random_shape_and_data(col, row);
  Plan plan = Plan::create(col, s, {.max_rhs = 4, .planning = Planning::Estimate});
  const index_t nrhs = 11;
  for (Op op : {Op::F, Op::Fadj}) {
    const index_t nin = input_blocks(op, s) * s.nt, nout = output_blocks(op, s) * s.nt;
    const auto x = random_vector(static_cast<std::size_t>(nrhs * nin), 41);
    std::vector<double> all(static_cast<std::size_t>(nrhs * nout));
    plan.apply(op, x, all, nrhs);
    for (index_t r = 0; r < nrhs; ++r) {
      std::vector<double> one(static_cast<std::size_t>(nout));
      plan.apply(
          op,
          std::span(x).subspan(static_cast<std::size_t>(r * nin), static_cast<std::size_t>(nin)),
          one);
      EXPECT_LT(relative_error(
                    std::span(all).subspan(static_cast<std::size_t>(r * nout), one.size()), one),
                1e-15);
    }
  }
}

TEST(Plan, RepeatedAppliesAreIdenticalAndReportPhaseTimes) {
  std::vector<double> col, row;
  const Shape s = random_shape_and_data(col, row);
  Plan plan = Plan::create(col, s, {.planning = Planning::Estimate});
  const auto m = random_vector(static_cast<std::size_t>(s.nm * s.nt), 51);
  std::vector<double> first(static_cast<std::size_t>(s.nd * s.nt)), again(first.size());
  plan.apply(Op::F, m, first);
  plan.apply(Op::F, m, again);
  EXPECT_EQ(first, again);
  const PhaseTimes t = plan.last_phase_times();
  EXPECT_GT(t[ApplyPhase::Gemv], 0.0);
  EXPECT_GT(t.total(), 0.0);
  EXPECT_GT(plan.memory_bytes(), static_cast<std::size_t>(frequencies(s) * s.nd * s.nm * 16));
}

template <typename F>
void expect_error(F&& f, const std::string& fragment) {
  try {
    f();
    FAIL() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Plan, BadInputsGiveClearErrors) {
  const Shape s{2, 3, 4};
  const auto k = random_vector(static_cast<std::size_t>(s.kernel_size()), 61);
  const PlanOptions fast{.planning = Planning::Estimate};
  expect_error([&] { Plan::create(std::span(k).first(5), s, fast); }, "expected Nd*Nm*Nt = 24");
  expect_error([&] { Plan::create(k, Shape{2, 0, 4}, fast); }, "every size must be positive");
  expect_error([&] { Plan::create(k, s, {.precision = "DDSXD"}); }, "precision string");
  expect_error([&] { Plan::create(k, s, {.max_rhs = 0}); }, "max_rhs");
  expect_error([&] { Plan::create(k, s, {.gpu = {.fft_length = 16}}); }, "CUDA backend option");
  for (index_t bad : {7, 9, -8})  // 2*Nt = 8: too short, odd, or negative
    expect_error(
        [&] { Plan::create(k, s, {.backend = Backend::Cuda, .gpu = {.fft_length = bad}}); },
        "an even length of at least 2*Nt = 8");
  // Without a GPU (CI) or without CUDA in the build, the CUDA backend refuses with a reason.
  try {
    (void)Plan::create(k, s, {.backend = Backend::Cuda, .planning = Planning::Estimate});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
  auto row = k;
  row[4] += 1.0;  // lag 0 of kernel (0, 1)
  expect_error([&] { Plan::create_general(k, row, s, fast); },
               "disagree at lag 0 in kernel (i=0, j=1)");

  Plan plan = Plan::create(k, s, fast);
  std::vector<double> m(static_cast<std::size_t>(s.nm * s.nt)),
      d(static_cast<std::size_t>(s.nd * s.nt));
  expect_error([&] { plan.apply(Op::F, std::span(m).first(11), d); }, "expected nrhs*blocks*Nt");
  expect_error([&] { plan.apply(Op::F, m, std::span(d).first(3)); }, "output of F has 3 values");
  expect_error([&] { plan.apply(Op::Fadj, m, d); }, "input of Fadj has 12 values");
  expect_error([&] { plan.apply(Op::F, m, d, 0); }, "right-hand sides");
  std::vector<double> both(static_cast<std::size_t>(s.nm * s.nt + s.nd * s.nt));
  expect_error(
      [&] {
        plan.apply(Op::FadjF, std::span(both).first(m.size()),
                   std::span(both).subspan(4, m.size()));
      },
      "overlap");
  expect_error([&] { plan.set_precision("SS"); }, "precision string");
  EXPECT_EQ(plan.precision().str(), "DDDDD");
}

}  // namespace
}  // namespace shiftop::btt
