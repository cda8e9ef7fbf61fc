// The operator tests, written once for every backend (as Ginkgo builds its test/ once per
// executor). A backend's instantiation file, test_plan_<backend>.cpp, includes this header and
// names the backend:
//
//   namespace shiftop::btt::plan_test {
//   BackendUnderTest hip() { return {.name = "hip", .options = {.backend = Backend::Hip, ...}}; }
//   SHIFTOP_PLAN_TESTS(Hip, hip());
//   }
//
// and tests/btt/CMakeLists.txt builds it with shiftop_add_test(test_plan_hip [GPU] LIBS lapacke).
// Include this header in one file per executable: it defines the tests.
//
// The CPU plan is checked against the explicit dense block Toeplitz product, every other backend
// against the CPU plan in FP64 (plan_checks.hpp). Tests are named
// <Backend>/<Suite>.<Case>/<parameter>, for example Cpu/Plan.BadInputsGiveClearErrors/cpu or
// Cuda/PlanVsReference.EveryOpPrecisionAndRhsCount/nd3_nm5_nt9_gen_rhs5_max2.
//
//   PlanVsReference  every op x every precision string x nrhs in {1, 3, 16, the case's}, on
//                    triangular and general operators down to Nt = 1, with max_rhs groups,
//                    within the case's slack times the bound of eq. (6) and above FP32's floor
//   Plan             adjoint identity, F*F and FF* as their halves chained, many right-hand sides
//                    against one at a time, nothing written outside the caller's vectors,
//                    repeated applies, phase times, memory_bytes and choices(), bad inputs
//   EveryPrecision   all 32 precision strings against the same plan in FP64, every op with 1, 3,
//                    4 and 7 right-hand sides, within the case's slack times the bound of eq. (6),
//                    and really less accurate when a phase is FP32
//   Fp64             FP64 against the reference to 1e-14 (times fp64_scale)
//   RecoverKernels   recover_kernels against the kernels the plan was made from, on every
//                    operator case, within the FFT round trip's error; the plan's precision back
//
// Every output is poisoned with NaN first, so that unwritten elements fail.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "btt/plan_checks.hpp"
#include "shiftop/btt/recover_kernels.hpp"
#include "shiftop/core/error.hpp"
#include "support/expect_error.hpp"
#include "support/guarded_vector.hpp"

namespace shiftop::btt::plan_test {

/// Skips the test when the backend cannot run here (no device).
template <typename Param>
class BackendTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const BackendUnderTest& b = backend();
    if (b.unavailable) {
      const std::string why = b.unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
  }
  const BackendUnderTest& backend() const {
    if constexpr (std::is_same_v<Param, BackendUnderTest>)
      return this->GetParam();
    else
      return std::get<0>(this->GetParam());
  }
};

inline std::string backend_name(const ::testing::TestParamInfo<BackendUnderTest>& info) {
  return info.param.name;
}

// ---- PlanVsReference: every op x precision x right-hand-side count ------------------------------

struct OperatorCase {
  Shape shape;
  bool triangular;
  /// Applied besides 1, 3 and 16 right-hand sides.
  index_t nrhs;
  index_t max_rhs;
  /// The error allowed in units of the eq. (6) bound: at least 4 times the largest error/bound the
  /// CPU plan gave over the native and portable (SHIFTOP_NATIVE=OFF) builds (printed by the test),
  /// so that a tenfold loss of accuracy fails; a backend's BackendUnderTest::precision_slack
  /// scales it.
  double slack;
};

inline void PrintTo(const OperatorCase& c, std::ostream* os) {
  *os << fmt::format("nd{}_nm{}_nt{}_{}_rhs{}_max{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "tri" : "gen", c.nrhs, c.max_rhs);
}

inline std::string operator_case_name(
    const ::testing::TestParamInfo<std::tuple<BackendUnderTest, OperatorCase>>& info) {
  return ::testing::PrintToString(std::get<1>(info.param));
}

// Sizes down to Nt = 1 and Nd = Nm = 1, tall and wide, right-hand sides in groups of max_rhs
// (1, 2, 4) that the counts cross, and the shapes of the CUDA plan's tests: GEMV lengths
// past 1000, Nd in the hundreds, FFT lengths that are and are not powers of two. The CPU plan
// transforms blocks in chunks of at most 64 (fewer when Nt is long: 56 at Nt = 513 and 520), so
// the cases with 100+ blocks on a side cross chunk boundaries on both the input and the output
// side, at short and at long Nt.
inline const std::vector<OperatorCase> kOperatorCases = {
    {{1, 1, 1}, true, 1, 16, 3.0},     {{1, 1, 1}, false, 2, 16, 3.0},
    {{2, 3, 1}, true, 1, 16, 3.5},     {{1, 4, 7}, true, 1, 16, 2.5},
    {{1, 4, 7}, false, 3, 16, 0.8},    {{5, 1, 6}, true, 2, 16, 3.2},
    {{5, 1, 6}, false, 1, 16, 3.0},    {{3, 5, 9}, true, 5, 2, 0.3},
    {{3, 5, 9}, false, 5, 2, 0.5},     {{7, 13, 17}, true, 3, 16, 0.4},
    {{7, 13, 17}, false, 4, 4, 0.4},   {{4, 19, 2}, false, 9, 4, 1.4},
    {{17, 3, 8}, true, 6, 16, 1.0},    {{9, 33, 11}, false, 1, 1, 0.8},
    {{2, 3, 5}, true, 7, 3, 0.5},      {{2, 3, 5}, false, 5, 16, 0.6},
    {{7, 33, 16}, true, 5, 4, 0.8},    {{7, 33, 16}, false, 2, 16, 0.7},
    {{5, 1031, 9}, true, 5, 16, 1.9},  {{5, 1031, 9}, false, 6, 4, 1.8},
    {{37, 300, 12}, true, 2, 16, 0.9}, {{37, 300, 12}, false, 9, 8, 0.9},
    {{300, 40, 7}, true, 17, 16, 0.9}, {{300, 40, 7}, false, 5, 16, 0.9},
    {{1, 100, 513}, true, 3, 2, 2.8},  {{70, 1, 520}, false, 3, 16, 2.5}};

class PlanVsReference : public BackendTest<std::tuple<BackendUnderTest, OperatorCase>> {};

TEST_P(PlanVsReference, EveryOpPrecisionAndRhsCount) {
  const auto& [b, c] = GetParam();
  const TestOperator a = random_operator(c.shape, c.triangular, 1);
  PlanOptions options = b.options;
  options.max_rhs = c.max_rhs;
  btt::Plan plan = a.make(options);
  Reference reference(a, b.options.backend);
  std::vector<index_t> counts = {1, 3, 16};
  if (std::find(counts.begin(), counts.end(), c.nrhs) == counts.end()) counts.push_back(c.nrhs);
  const double worst = expect_every_op_precision_and_rhs(
      plan, a, reference, counts, 3, 1e-13 * b.fp64_scale, c.slack * b.precision_slack);
  fmt::print("{} {}: largest error/bound {:.3g}\n", b.name, ::testing::PrintToString(c), worst);
}

// ---- Plan: identities, repeated applies, what a plan reports, bad inputs ------------------------

class Plan : public BackendTest<BackendUnderTest> {};

// Plans of the same operator agree with their adjoints: <F m, d> = <m, F* d>, to 1e-13 * |<F m, d>|
// (times fp64_scale).
TEST_P(Plan, AdjointIdentityHoldsForTriangularAndGeneral) {
  const BackendUnderTest& b = GetParam();
  struct Setup {
    Shape shape;
    unsigned operator_seed, m_seed, d_seed;
  };
  for (const Setup& setup : {Setup{{6, 41, 37}, 11, 21, 22}, Setup{{9, 70, 31}, 21, 1, 2}})
    for (bool triangular : {true, false}) {
      const Shape& s = setup.shape;
      const TestOperator a = random_operator(s, triangular, setup.operator_seed);
      btt::Plan plan = a.make(b.options);
      const auto m = testing::random_vector(input_size(Op::F, s), setup.m_seed);
      const auto d = testing::random_vector(input_size(Op::Fadj, s), setup.d_seed);
      std::vector<double> fm = poisoned(d.size()), fd = poisoned(m.size());
      plan.apply(Op::F, m, fm);
      plan.apply(Op::Fadj, d, fd);
      const double lhs = testing::dot(fm, d), rhs = testing::dot(m, fd);
      EXPECT_NEAR(lhs, rhs, 1e-13 * b.fp64_scale * std::abs(lhs))
          << s.str() << (triangular ? " triangular" : " general");
    }
}

TEST_P(Plan, NormalOperatorsEqualTheirHalvesChained) {
  const BackendUnderTest& b = GetParam();
  const Shape s{6, 41, 37};
  const index_t nrhs = 3;
  for (bool triangular : {false, true}) {
    const TestOperator a = random_operator(s, triangular, 11);
    btt::Plan plan = a.make(b.options);
    const auto m = testing::random_vector(input_size(Op::F, s, nrhs), 31);
    std::vector<double> fm = poisoned(output_size(Op::F, s, nrhs)), ffm = poisoned(m.size()),
                        hm = poisoned(m.size());
    plan.apply(Op::F, m, fm, nrhs);
    plan.apply(Op::Fadj, fm, ffm, nrhs);
    plan.apply(Op::FadjF, m, hm, nrhs);
    EXPECT_LT(testing::relative_error(hm, ffm), 1e-14 * b.fp64_scale);
    std::vector<double> fadj = poisoned(m.size()), gg = poisoned(fm.size()),
                        g2 = poisoned(fm.size());
    plan.apply(Op::Fadj, fm, fadj, nrhs);
    plan.apply(Op::F, fadj, gg, nrhs);
    plan.apply(Op::FFadj, fm, g2, nrhs);
    EXPECT_LT(testing::relative_error(g2, gg), 1e-14 * b.fp64_scale);
  }
}

// 11 right-hand sides in groups of 4 (4 + 4 + 3) give what each gives alone.
TEST_P(Plan, ManyRightHandSidesEqualOneAtATime) {
  const BackendUnderTest& b = GetParam();
  const Shape s{6, 41, 37};
  const index_t nrhs = 11;
  PlanOptions options = b.options;
  options.max_rhs = 4;
  for (bool triangular : {true, false}) {
    const TestOperator a = random_operator(s, triangular, 11);
    btt::Plan plan = a.make(options);
    for (Op op : kAllOps) {
      const std::size_t nin = input_size(op, s), nout = output_size(op, s);
      const auto x = testing::random_vector(nrhs * nin, 41);
      std::vector<double> all = poisoned(nrhs * nout);
      plan.apply(op, x, all, nrhs);
      for (std::size_t r = 0; r < static_cast<std::size_t>(nrhs); ++r) {
        std::vector<double> one = poisoned(nout);
        plan.apply(op, std::span(x).subspan(r * nin, nin), one);
        EXPECT_LT(testing::relative_error(std::span(all).subspan(r * nout, nout), one),
                  1e-15 * b.fp64_scale)
            << name_of(op) << " right-hand side " << r << (triangular ? " triangular" : "");
      }
    }
  }
}

// Right-hand sides in groups of max_rhs = 4, nrhs 1, 3, 4, 5 and 9 (last groups of 1, 3, 4, 1
// and 1): apply writes only the caller's y, nothing before or after it and nothing into x's
// surroundings, however the last group falls. Both vectors lie between guards that hold a whole
// group, so an overrun fails here with its side and offset instead of corrupting the heap.
TEST_P(Plan, ApplyStaysInsideTheCallersVectors) {
  const BackendUnderTest& b = GetParam();
  const Shape s{3, 5, 7};
  PlanOptions options = b.options;
  options.max_rhs = 4;
  const TestOperator a = random_operator(s, false, 61);
  btt::Plan plan = a.make(options);
  for (Op op : kAllOps) {
    for (const index_t nrhs : {1, 3, 4, 5, 9}) {
      const std::size_t guard = 4 * std::max(input_size(op, s), output_size(op, s));
      testing::GuardedVector x(testing::random_vector(input_size(op, s, nrhs), 62), guard);
      testing::GuardedVector y(output_size(op, s, nrhs), kNaN, guard);
      plan.apply(op, x.span(), y.span(), nrhs);
      const std::string where = fmt::format("{}, {} right-hand sides", name_of(op), nrhs);
      EXPECT_EQ(y.damage(), "") << where << ": the output";
      EXPECT_EQ(x.damage(), "") << where << ": the input";
      EXPECT_TRUE(
          std::none_of(y.span().begin(), y.span().end(), [](double v) { return std::isnan(v); }))
          << where << ": an output value left unwritten";
    }
  }
}

// The same input twice gives the same output, bit for bit, with and without timing. A timed plan
// reports its phase times. memory_bytes() holds at least F^, and choices() an FFT length that
// embeds the operator and, per op, the choice of its first pass.
TEST_P(Plan, RepeatedAppliesAreIdenticalAndReportPhaseTimes) {
  const BackendUnderTest& b = GetParam();
  const Shape s{6, 41, 37};
  const TestOperator a = random_operator(s, true, 11);
  for (const PlanOptions& options : {b.options, b.timed}) {
    btt::Plan plan = a.make(options);
    for (Op op : kAllOps) {
      const auto m = testing::random_vector(input_size(op, s), 51);
      std::vector<double> first = poisoned(output_size(op, s)), again = poisoned(first.size());
      plan.apply(op, m, first);
      plan.apply(op, m, again);
      EXPECT_EQ(first, again) << name_of(op);
    }
    const PlanChoices choices = plan.choices();
    EXPECT_GE(choices.fft_length, padded_length(s));
    EXPECT_EQ(choices.fft_length % 2, 0);
    EXPECT_GT(plan.memory_bytes(), static_cast<std::size_t>(frequencies(s) * s.nd * s.nm * 16));
    EXPECT_GE(plan.memory_bytes(),
              static_cast<std::size_t>((choices.fft_length / 2 + 1) * s.nd * s.nm * 16));
    for (Op op : kAllOps) {
      const PassChoice& first = choices.of(op);
      const PassChoice& expected =
          choices.passes[op == Op::F || op == Op::FadjF ? 0 : 1];  // the direction of pass 1
      EXPECT_EQ(first.transforms, expected.transforms) << name_of(op);
      EXPECT_EQ(first.gemv_name(), expected.gemv_name()) << name_of(op);
    }
  }
  btt::Plan timed = a.make(b.timed);
  const auto m = testing::random_vector(input_size(Op::F, s), 51);
  std::vector<double> d = poisoned(output_size(Op::F, s));
  timed.apply(Op::F, m, d);
  const PhaseTimes t = timed.last_phase_times();
  EXPECT_GT(t[ApplyPhase::Gemv], 0.0);
  EXPECT_GT(t.total(), 0.0);
}

using testing::expect_error;

TEST_P(Plan, BadInputsGiveClearErrors) {
  const BackendUnderTest& b = GetParam();
  const Shape s{2, 3, 4};
  const auto k = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 61);
  const PlanOptions fast = b.options;
  const auto with = [&](auto change) {
    PlanOptions options = b.options;
    change(options);
    return options;
  };
  expect_error([&] { btt::Plan::create(std::span(k).first(5), s, fast); },
               "expected Nd*Nm*Nt = 24");
  expect_error([&] { btt::Plan::create(k, Shape{2, 0, 4}, fast); }, "every size must be positive");
  expect_error(
      [&] { btt::Plan::create(k, s, with([](PlanOptions& o) { o.precision = "DDSXD"; })); },
      "precision string");
  expect_error([&] { btt::Plan::create(k, s, with([](PlanOptions& o) { o.max_rhs = 0; })); },
               "max_rhs");
  auto row = k;
  row[4] += 1.0;  // lag 0 of kernel (0, 1)
  expect_error([&] { btt::Plan::create_general(k, row, s, fast); },
               "disagree at lag 0 in kernel (i=0, j=1)");

  btt::Plan plan = btt::Plan::create(k, s, fast);
  std::vector<double> m = poisoned(input_size(Op::F, s)), d = poisoned(output_size(Op::F, s));
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

// ---- EveryPrecision: all 32 strings against the same plan in FP64 -------------------------------

/// `slack`: the error allowed, in units of the eq. (6) bound (mixed_bound), for every op, string
/// and right-hand-side count of the case: at least 4 times the largest error/bound the CPU plan
/// gave over the native and portable builds (measured per case), so that a tenfold loss of
/// accuracy fails. A backend's
/// BackendUnderTest::precision_slack scales it.
struct PrecisionCase {
  Shape shape;
  bool triangular;
  double slack;
};

inline void PrintTo(const PrecisionCase& c, std::ostream* os) {
  *os << fmt::format("nd{}_nm{}_nt{}_{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "tri" : "gen");
}

inline std::string precision_case_name(
    const ::testing::TestParamInfo<std::tuple<BackendUnderTest, PrecisionCase>>& info) {
  return ::testing::PrintToString(std::get<1>(info.param));
}

// The CPU's largest error/bound (printed by the test), the same on the native and portable builds,
// in the comments.
inline const std::vector<PrecisionCase> kPrecisionCases = {{{3, 20, 16}, true, 1.1},     // 0.265
                                                           {{3, 20, 16}, false, 1.0},    // 0.226
                                                           {{8, 5, 9}, true, 0.3},       // 0.067
                                                           {{1, 7, 1}, true, 2.6},       // 0.64
                                                           {{12, 64, 33}, false, 0.7}};  // 0.166

class EveryPrecision : public BackendTest<std::tuple<BackendUnderTest, PrecisionCase>> {};

// Every op, with one right-hand side (GEMV) and with 3, 4 and 7 (the GEMM over blocks of
// right-hand sides, with a remainder): within the case's slack times the bound of eq. (6), and
// the converse, a string with an FP32 phase must really lose accuracy (FP32 is computed, not
// emulated in FP64). FP64 after any number of precision changes gives the same result bit for
// bit.
TEST_P(EveryPrecision, ErrorIsWithinTheBoundOfEq6) {
  const auto& [b, c] = GetParam();
  const Shape& s = c.shape;
  const TestOperator a = random_operator(s, c.triangular, 101);
  const double kappa = testing::spectrum_condition_number(a.col, a.row_used(), s);
  btt::Plan plan = a.make(b.options);
  double worst = 0;  // the largest error/bound, printed for setting `slack`
  for (Op op : kAllOps)
    for (index_t nrhs : {1, 3, 4, 7}) {
      // Random FP64 inputs: their mantissas carry bits below FP32's, so a rounding shows.
      const auto x = testing::random_vector(input_size(op, s, nrhs), 103);
      std::vector<double> exact = poisoned(output_size(op, s, nrhs));
      plan.set_precision("DDDDD");
      plan.apply(op, x, exact, nrhs);
      for (const PrecisionConfig& config : PrecisionConfig::all()) {
        plan.set_precision(config.str());
        std::vector<double> y = poisoned(exact.size());
        plan.apply(op, x, y, nrhs);
        const double error = testing::relative_error(y, exact);
        const double bound = mixed_bound(config, op, s, kappa);
        SCOPED_TRACE(fmt::format("{} nrhs={} {} error {:.3e} bound {:.3e} kappa {:.3e}",
                                 name_of(op), nrhs, config.str(), error, bound, kappa));
        if (config.all_double()) {
          EXPECT_EQ(error, 0.0);  // the same plan and precision is deterministic
        } else {
          worst = std::max(worst, error / bound);
          EXPECT_LE(error, c.slack * b.precision_slack * bound);
          EXPECT_GT(error, kFp32Floor);  // FP32 was really used
        }
      }
    }
  fmt::print("{} {}: largest error/bound {:.3g}, slack {}\n", b.name, ::testing::PrintToString(c),
             worst, c.slack * b.precision_slack);
}

// ---- Fp64 ---------------------------------------------------------------------------------------

class Fp64 : public BackendTest<BackendUnderTest> {};

TEST_P(Fp64, AllDoubleConfigurationMatchesTheReference) {
  const BackendUnderTest& b = GetParam();
  const Shape s{4, 9, 12};
  const TestOperator a = random_operator(s, true, 7);
  btt::Plan plan = a.make(b.options);
  Reference reference(a, b.options.backend);
  const auto m = testing::random_vector(input_size(Op::F, s), 8);
  std::vector<double> d = poisoned(output_size(Op::F, s));
  plan.apply(Op::F, m, d);
  EXPECT_LT(testing::relative_error(d, reference.apply(Op::F, m)), 1e-14 * b.fp64_scale)
      << "against the " << reference.name();
}

// ---- RecoverKernels -----------------------------------------------------------------------------

class RecoverKernels : public BackendTest<std::tuple<BackendUnderTest, OperatorCase>> {};

/// The largest relative 2-norm error over the kernel series (i, j) of `got` against `want`.
inline double worst_series_error(std::span<const double> got, std::span<const double> want,
                                 const Shape& s) {
  double worst = 0.0;
  for (index_t ij = 0; ij < s.nd * s.nm; ++ij) {
    const auto at = static_cast<std::size_t>(ij * s.nt), n = static_cast<std::size_t>(s.nt);
    worst = std::max(worst, testing::relative_error(got.subspan(at, n), want.subspan(at, n)));
  }
  return worst;
}

// Each kernel series comes back through one FFT of the kernels (F^, made by the plan), a product
// with the impulse's transform and one inverse FFT. An FFT of length L has a normwise relative
// error of at most log2(L) * eta, eta = mu + gamma_4 (sqrt(2) + mu) ~ 3 eps with accurate twiddle
// factors (Higham, Accuracy and Stability, Thm. 24.2), so the round trip about 6 log2(L) eps per
// series; the bound is 10 log2(L) eps times the backend's fp64_scale (the CPU's worst measured:
// 9.0e-16 of 9.3e-15, at 5 x 1031 x 9). The plan is made with an FP32 GEMV, so that a recovery
// not run in FP64 (errors ~1e-8) fails, and must get that precision back.
TEST_P(RecoverKernels, EqualTheKernelsThePlanWasMadeFrom) {
  const auto& [b, c] = GetParam();
  const TestOperator a = random_operator(c.shape, c.triangular, 3);
  PlanOptions options = b.options;
  options.precision = "DSSDD";
  btt::Plan plan = a.make(options);
  const Kernels k = recover_kernels(plan);
  EXPECT_EQ(plan.precision().str(), "DSSDD");
  EXPECT_EQ(k.shape, c.shape);
  const double eps = 2.0 * unit_roundoff(Precision::Double);  // 2^-52
  const double log_length = std::log2(static_cast<double>(plan.choices().fft_length));
  const double bound = 10.0 * std::max(1.0, log_length) * eps * b.fp64_scale;
  ASSERT_EQ(k.first_column.size(), a.col.size());
  const double column_error = worst_series_error(k.first_column, a.col, c.shape);
  EXPECT_LT(column_error, bound) << "first block column";
  double row_error = 0.0;
  if (c.triangular) {
    EXPECT_TRUE(k.first_row.empty());
  } else {
    ASSERT_EQ(k.first_row.size(), a.row.size());
    row_error = worst_series_error(k.first_row, a.row, c.shape);
    EXPECT_LT(row_error, bound) << "first block row";
    for (index_t ij = 0; ij < c.shape.nd * c.shape.nm; ++ij)  // as create_general requires
      EXPECT_EQ(k.first_row[static_cast<std::size_t>(ij * c.shape.nt)],
                k.first_column[static_cast<std::size_t>(ij * c.shape.nt)]);
  }
  fmt::print("{} {}: worst series error {:.3g} (column), {:.3g} (row), bound {:.3g}\n", b.name,
             ::testing::PrintToString(c), column_error, row_error, bound);
}

}  // namespace shiftop::btt::plan_test

/// Instantiates every shared plan test for one backend: Prefix names it in the test names (Cpu,
/// Cuda), backend is an expression giving its BackendUnderTest. Use inside
/// namespace shiftop::btt::plan_test.
#define SHIFTOP_PLAN_TESTS(Prefix, backend)                                                 \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      Prefix, PlanVsReference,                                                              \
      ::testing::Combine(::testing::Values(backend), ::testing::ValuesIn(kOperatorCases)),  \
      operator_case_name);                                                                  \
  INSTANTIATE_TEST_SUITE_P(Prefix, Plan, ::testing::Values(backend), backend_name);         \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      Prefix, EveryPrecision,                                                               \
      ::testing::Combine(::testing::Values(backend), ::testing::ValuesIn(kPrecisionCases)), \
      precision_case_name);                                                                 \
  INSTANTIATE_TEST_SUITE_P(Prefix, Fp64, ::testing::Values(backend), backend_name);         \
  INSTANTIATE_TEST_SUITE_P(                                                                 \
      Prefix, RecoverKernels,                                                               \
      ::testing::Combine(::testing::Values(backend), ::testing::ValuesIn(kOperatorCases)),  \
      operator_case_name)
