// The operator-pair tests, written once and instantiated per backend (as plan_test.hpp):
// SHIFTOP_PAIR_TESTS(Prefix, backend) in test_pair.cpp (CPU) and test_pair_cuda.cpp (label gpu).
//
// Every operation of btt::OperatorPair (include/shiftop/btt/pair.hpp) against the explicit dense
// matrices (G x, G^T x, G^T F x, F G^T x by plain loops, support/dense_reference.hpp) on random
// kernels, with right-hand sides crossing the pair's groups (max_rhs = 2: 1, 3 and 5 vectors),
// sizes down to 1 and odd, Nq != Nd for FG* and Nm' != Nm for G*F, outputs poisoned with NaN and
// nothing written outside the caller's vectors (support/guarded_vector.hpp); the
// mixed products equal the two-step products of the same plans (F, then G's adjoint pass); a
// general (non-triangular) F; operations the shapes do not allow refused naming the dimensions.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "btt/plan_checks.hpp"
#include "shiftop/btt/pair.hpp"
#include "support/dense_reference.hpp"
#include "support/expect_error.hpp"
#include "support/guarded_vector.hpp"

namespace shiftop::btt::pair_test {

using plan_test::BackendUnderTest;
using plan_test::poisoned;
using plan_test::random_operator;
using plan_test::TestOperator;

/// FP64 against the dense product on the CPU: the largest error measured over these cases was
/// 8.8e-16 on the native build and 9.8e-16 on the portable one (G*F of a general F; the two-step
/// products of the same plans matched bit for bit).
inline constexpr double kFp64Tolerance = 1e-14;

/// F and G with their dense matrices.
struct PairCase {
  std::string name;
  TestOperator f, g;
  std::vector<double> dense_f, dense_g;

  PairCase(std::string case_name, const Shape& f_shape, const Shape& g_shape, bool f_triangular,
           unsigned seed)
      : name(std::move(case_name)),
        f(random_operator(f_shape, f_triangular, seed)),
        g(random_operator(g_shape, true, seed + 7)),
        dense_f(testing::dense_block_toeplitz(f.col, f.row_used(), f.shape)),
        dense_g(testing::dense_block_toeplitz(g.col, {}, g.shape)) {}

  std::vector<double> apply_f(bool adjoint, std::span<const double> x, index_t nrhs) const {
    return testing::dense_apply(dense_f, f.shape.nd * f.shape.nt, f.shape.nm * f.shape.nt, adjoint,
                                x, nrhs);
  }
  std::vector<double> apply_g(bool adjoint, std::span<const double> x, index_t nrhs) const {
    return testing::dense_apply(dense_g, g.shape.nd * g.shape.nt, g.shape.nm * g.shape.nt, adjoint,
                                x, nrhs);
  }
  /// op x by dense products: G^T (F x) and F (G^T x) for the mixed ones.
  std::vector<double> reference(PairOp op, std::span<const double> x, index_t nrhs) const {
    switch (op) {
      case PairOp::G:
        return apply_g(false, x, nrhs);
      case PairOp::Gadj:
        return apply_g(true, x, nrhs);
      case PairOp::GadjF:
        return apply_g(true, apply_f(false, x, nrhs), nrhs);
      case PairOp::FGadj:
        return apply_f(false, apply_g(true, x, nrhs), nrhs);
    }
    return {};
  }
};

/// Shapes that cross every rule: both mixed products (Nq = Nd, Nm' = Nm), only G*F (Nm' != Nm),
/// only FG* (Nq != Nd), all sizes 1, and Nt = 1 with several blocks.
inline std::vector<PairCase> pair_cases() {
  std::vector<PairCase> cases;
  cases.emplace_back("both", Shape{5, 7, 13}, Shape{5, 7, 13}, true, 3);
  cases.emplace_back("gadjf_only", Shape{3, 4, 9}, Shape{3, 6, 9}, true, 5);
  cases.emplace_back("fgadj_only", Shape{2, 5, 7}, Shape{4, 5, 7}, true, 9);
  cases.emplace_back("ones", Shape{1, 1, 1}, Shape{1, 1, 1}, true, 13);
  cases.emplace_back("nt1", Shape{3, 2, 1}, Shape{3, 2, 1}, true, 17);
  cases.emplace_back("general_f", Shape{4, 3, 11}, Shape{4, 3, 11}, false, 21);
  return cases;
}

inline std::size_t size_of(const OperatorPair& pair, PairOp op, bool input, index_t nrhs) {
  const index_t blocks = input ? pair.input_blocks(op) : pair.output_blocks(op);
  return static_cast<std::size_t>(nrhs * blocks * pair.f().shape().nt);
}

class PairTest : public ::testing::TestWithParam<BackendUnderTest> {
 protected:
  void SetUp() override {
    const BackendUnderTest& b = GetParam();
    if (b.unavailable) {
      const std::string why = b.unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
  }
  PlanOptions options() const {
    PlanOptions o = GetParam().options;
    o.max_rhs = 2;
    return o;
  }
  /// The pair of two shared plans, as OperatorPair::create(plan, plan) makes it.
  OperatorPair make(const PairCase& c) const {
    const PlanOptions o = options();
    auto f = std::make_shared<Plan>(c.f.make(o));
    auto g = std::make_shared<Plan>(c.g.make(o));
    return OperatorPair::create(f, g, {.max_rhs = o.max_rhs, .gpu = {.device = o.gpu.device}});
  }
  double tolerance() const { return kFp64Tolerance * GetParam().fp64_scale; }
};

// Every operation the shapes allow against the dense matrices, 1, 3 and 5 right-hand sides in
// groups of 2, into NaN; the others refused with the dimensions that do not match.
TEST_P(PairTest, EveryOperationEqualsTheDenseProducts) {
  for (const PairCase& c : pair_cases()) {
    OperatorPair pair = make(c);
    for (const PairOp op : kAllPairOps) {
      if (!pair.supports(op)) {
        testing::expect_error(
            [&] {
              std::vector<double> x(64), y(64);
              pair.apply(op, x, y, 1);
            },
            op == PairOp::GadjF ? fmt::format("G has Nq = {} block rows and F has Nd = {}",
                                              c.g.shape.nd, c.f.shape.nd)
                                : fmt::format("G has Nm = {} parameter blocks and F has Nm = {}",
                                              c.g.shape.nm, c.f.shape.nm));
        continue;
      }
      for (const index_t nrhs : {1, 3, 5}) {
        const auto x =
            testing::random_vector(size_of(pair, op, true, nrhs), static_cast<unsigned>(40 + nrhs));
        std::vector<double> y = poisoned(size_of(pair, op, false, nrhs));
        pair.apply(op, x, y, nrhs);
        EXPECT_LT(testing::relative_error(y, c.reference(op, x, nrhs)), tolerance())
            << c.name << ", " << name_of(op) << ", " << nrhs << " rhs";
      }
    }
  }
}

// Every operation with 1, 3 and 5 right-hand sides in groups of 2 writes only the caller's y and
// nothing around x or y (guards that hold a whole group; see plan_test.hpp's
// ApplyStaysInsideTheCallersVectors).
TEST_P(PairTest, ApplyStaysInsideTheCallersVectors) {
  for (const PairCase& c : pair_cases()) {
    OperatorPair pair = make(c);
    for (const PairOp op : kAllPairOps) {
      if (!pair.supports(op)) continue;
      for (const index_t nrhs : {1, 3, 5}) {
        const std::size_t guard =
            2 * std::max(size_of(pair, op, true, 1), size_of(pair, op, false, 1));
        testing::GuardedVector x(testing::random_vector(size_of(pair, op, true, nrhs), 90), guard);
        testing::GuardedVector y(size_of(pair, op, false, nrhs), plan_test::kNaN, guard);
        pair.apply(op, x.span(), y.span(), nrhs);
        const std::string where =
            fmt::format("{}, {}, {} right-hand sides", c.name, name_of(op), nrhs);
        EXPECT_EQ(y.damage(), "") << where << ": the output";
        EXPECT_EQ(x.damage(), "") << where << ": the input";
      }
    }
  }
}

// One call equals the two-step product of the same plans (the first pass into a vector, then the
// second): the pair only shares the group loop and the middle buffer.
TEST_P(PairTest, MixedProductsEqualTheTwoStepProducts) {
  for (const PairCase& c : pair_cases()) {
    OperatorPair pair = make(c);
    const index_t nrhs = 5;
    if (pair.supports(PairOp::GadjF)) {
      const auto x = testing::random_vector(size_of(pair, PairOp::GadjF, true, nrhs), 7);
      std::vector<double> middle(static_cast<std::size_t>(nrhs * c.f.shape.nd * c.f.shape.nt));
      std::vector<double> two = poisoned(size_of(pair, PairOp::GadjF, false, nrhs));
      std::vector<double> one = poisoned(two.size());
      pair.f_plan()->apply(Op::F, x, middle, nrhs);
      pair.g_plan()->apply(Op::Fadj, middle, two, nrhs);
      pair.apply(PairOp::GadjF, x, one, nrhs);
      EXPECT_LT(testing::relative_error(one, two), 1e-15) << c.name << ", GadjF";
    }
    if (pair.supports(PairOp::FGadj)) {
      const auto x = testing::random_vector(size_of(pair, PairOp::FGadj, true, nrhs), 8);
      std::vector<double> middle(static_cast<std::size_t>(nrhs * c.f.shape.nm * c.f.shape.nt));
      std::vector<double> two = poisoned(size_of(pair, PairOp::FGadj, false, nrhs));
      std::vector<double> one = poisoned(two.size());
      pair.g_plan()->apply(Op::Fadj, x, middle, nrhs);
      pair.f_plan()->apply(Op::F, middle, two, nrhs);
      pair.apply(PairOp::FGadj, x, one, nrhs);
      EXPECT_LT(testing::relative_error(one, two), 1e-15) << c.name << ", FGadj";
    }
  }
}

// The pair made from kernels (one shared GPU context) gives what the pair of separate plans
// gives, and repeated applies are identical.
TEST_P(PairTest, FromKernelsEqualsFromPlans) {
  const PairCase c("both", Shape{4, 6, 10}, Shape{4, 6, 10}, true, 31);
  OperatorPair from_plans = make(c);
  OperatorPair from_kernels =
      OperatorPair::create(c.f.col, c.f.shape, c.g.col, c.g.shape, options());
  EXPECT_EQ(from_kernels.max_rhs(), 2);
  for (const PairOp op : kAllPairOps) {
    const auto x = testing::random_vector(size_of(from_plans, op, true, 3), 2);
    std::vector<double> a = poisoned(size_of(from_plans, op, false, 3)), b = poisoned(a.size());
    std::vector<double> again = poisoned(a.size());
    from_plans.apply(op, x, a, 3);
    from_kernels.apply(op, x, b, 3);
    from_kernels.apply(op, x, again, 3);
    EXPECT_LT(testing::relative_error(b, a), 1e-15) << name_of(op);
    EXPECT_EQ(b, again) << name_of(op);
  }
}

// Sizes, overlap and time grids refused with the operation and the expected values.
TEST_P(PairTest, BadInputsAreRefused) {
  const PairCase c("both", Shape{2, 3, 4}, Shape{2, 3, 4}, true, 41);
  OperatorPair pair = make(c);
  std::vector<double> x(3 * 4), y(3 * 4), short_y(5);
  testing::expect_error([&] { pair.apply(PairOp::GadjF, x, short_y); },
                        "output of GadjF has 5 values, expected nrhs*blocks*Nt = 1*3*4 = 12");
  testing::expect_error([&] { pair.apply(PairOp::FGadj, x, y, 2); },
                        "input of FGadj has 12 values, expected nrhs*blocks*Nt = 2*2*4 = 16");
  testing::expect_error([&] { pair.apply(PairOp::GadjF, x, x); },
                        "input and output of GadjF overlap");
  testing::expect_error([&] { pair.apply(PairOp::G, x, y, 0); },
                        "invalid number of right-hand sides 0");
  const TestOperator other_nt = random_operator(Shape{2, 3, 5}, true, 1);
  testing::expect_error(
      [&] {
        (void)OperatorPair::create(c.f.col, c.f.shape, other_nt.col, other_nt.shape, options());
      },
      "G has Nt = 5 time steps and F has Nt = 4: expected one time grid");
  testing::expect_error([&] { (void)OperatorPair::create(pair.f_plan(), nullptr); },
                        "operator pair: G is null");
  testing::expect_error(
      [&] { (void)OperatorPair::create(pair.f_plan(), pair.g_plan(), {.max_rhs = 0}); },
      "invalid max_rhs 0");
}

inline std::string backend_name(const ::testing::TestParamInfo<BackendUnderTest>& info) {
  return info.param.name;
}

}  // namespace shiftop::btt::pair_test

#define SHIFTOP_PAIR_TESTS(Prefix, backend) \
  INSTANTIATE_TEST_SUITE_P(Prefix, PairTest, ::testing::Values(backend), backend_name)
