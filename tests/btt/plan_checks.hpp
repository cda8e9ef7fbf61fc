// What the plan tests share, for every backend (tests/btt/plan_test.hpp, and the backend files
// such as test_btt_cuda.cpp): the backend under test, random operators, the reference a backend
// is checked against, and the check of every op x precision x right-hand-side count.
//
// The reference is the explicit dense block Toeplitz product (support/dense_reference.hpp) for
// the CPU plan, and the CPU plan in FP64 for every other backend, so every backend is checked
// against the dense product, the others through the CPU plan.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "support/dense_reference.hpp"
#include "support/precision_bound.hpp"

namespace shiftop::btt::plan_test {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A precision string with an FP32 phase must lose more than this (relative): FP32 rounds at
/// about 6e-8, so an error below 1e-3 of that means the phase ran in FP64.
inline const double kFp32Floor = 1e-3 * unit_roundoff(Precision::Single);

/// A backend as the shared plan tests see it. One is made in the backend's instantiation file
/// (test_plan_<backend>.cpp).
struct BackendUnderTest {
  /// The last part of every shared test's name ("cpu", "cuda").
  std::string name;
  /// Every plan of the shared tests starts from these: the backend, Planning::Estimate.
  PlanOptions options;
  /// The options under which the plan reports last_phase_times() (the CPU always does; the CUDA
  /// plan with gpu.profile).
  PlanOptions timed;
  /// Why the backend cannot run here (e.g. "no CUDA device"); empty when it can. Null: always.
  std::function<std::string()> unavailable;
  /// The FP64 tolerances of the shared tests are the CPU's times this factor. The CPU: 1 (1e-13
  /// against the dense product); CUDA: 10 (1e-12 against the CPU plan).
  double fp64_scale = 1.0;
  /// The per-case slack over the eq. (6) bound of PlanVsReference and EveryPrecision (measured on
  /// the CPU) times this.
  double precision_slack = 1.0;
};

inline void PrintTo(const BackendUnderTest& backend, std::ostream* os) {
  *os << backend.name;
}

/// A random block Toeplitz operator: first block column and first block row, which agree at lag 0.
struct TestOperator {
  Shape shape;
  bool triangular = true;
  std::vector<double> col, row;

  /// The first block row a plan or a reference sees: none for a triangular operator.
  std::span<const double> row_used() const {
    return triangular ? std::span<const double>{} : std::span<const double>(row);
  }
  Plan make(const PlanOptions& options) const {
    return triangular ? Plan::create(col, shape, options)
                      : Plan::create_general(col, row, shape, options);
  }
};

/// Column from `seed`, row from `seed + 1` (its lag 0 set to the column's).
inline TestOperator random_operator(const Shape& s, bool triangular, unsigned seed) {
  const auto n = static_cast<std::size_t>(s.kernel_size());
  TestOperator a{s, triangular, testing::random_vector(n, seed),
                 testing::random_vector(n, seed + 1)};
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    a.row[static_cast<std::size_t>(k * s.nt)] = a.col[static_cast<std::size_t>(k * s.nt)];
  return a;
}

inline std::size_t input_size(Op op, const Shape& s, index_t nrhs = 1) {
  return static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt);
}
inline std::size_t output_size(Op op, const Shape& s, index_t nrhs = 1) {
  return static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt);
}

/// An output vector poisoned with NaN, so that elements a plan leaves unwritten fail every check.
inline std::vector<double> poisoned(std::size_t n) {
  return std::vector<double>(n, kNaN);
}

/// op applied to x by the reference of `backend`: the dense matrix for the CPU, the CPU plan in
/// FP64 (Planning::Estimate) for every other backend.
class Reference {
 public:
  Reference(const TestOperator& a, Backend backend) : shape_(a.shape) {
    if (backend == Backend::Cpu)
      dense_ = testing::dense_block_toeplitz(a.col, a.row_used(), a.shape);
    else
      cpu_.emplace(a.make({.planning = Planning::Estimate}));
  }

  std::vector<double> apply(Op op, std::span<const double> x, index_t nrhs = 1) {
    if (cpu_) {
      std::vector<double> y = poisoned(output_size(op, shape_, nrhs));
      cpu_->apply(op, x, y, nrhs);
      return y;
    }
    const index_t rows = shape_.nd * shape_.nt, cols = shape_.nm * shape_.nt;
    const auto dense = [&](bool transpose, std::span<const double> in) {
      return testing::dense_apply(dense_, rows, cols, transpose, in, nrhs);
    };
    switch (op) {
      case Op::F:
        return dense(false, x);
      case Op::Fadj:
        return dense(true, x);
      case Op::FadjF:
        return dense(true, dense(false, x));
      case Op::FFadj:
        return dense(false, dense(true, x));
    }
    return {};
  }

  /// "dense" or "cpu plan", for failure messages.
  const char* name() const { return cpu_ ? "cpu plan" : "dense"; }

 private:
  Shape shape_;
  std::vector<double> dense_;
  std::optional<Plan> cpu_;
};

/// The first-order bound of eq. (6) for op; for F*F and FF*: kappa * bound(first half) +
/// bound(second half), the first half's error amplified by the second operator.
inline double mixed_bound(const PrecisionConfig& p, Op op, const Shape& s, double kappa) {
  switch (op) {
    case Op::F:
    case Op::Fadj:
      return testing::eq6_bound(p, op, s, kappa);
    case Op::FadjF:
      return kappa * testing::eq6_bound(p, Op::F, s, kappa) +
             testing::eq6_bound(p, Op::Fadj, s, kappa);
    case Op::FFadj:
      return kappa * testing::eq6_bound(p, Op::Fadj, s, kappa) +
             testing::eq6_bound(p, Op::F, s, kappa);
  }
  return 0;
}

/// Applies `plan` (made from `a`) for every op, every count in `rhs_counts` and every precision
/// string, each time to random inputs from `x_seed` and into an output poisoned with NaN. FP64
/// must be within `fp64_tolerance` (relative) of the reference; every other string within
/// `slack` times the eq. (6) bound (mixed_bound) and above kFp32Floor. The plan is left in the
/// last precision string. Returns the largest error/bound, which callers print to set `slack`.
inline double expect_every_op_precision_and_rhs(Plan& plan, const TestOperator& a,
                                                Reference& reference,
                                                std::span<const index_t> rhs_counts,
                                                unsigned x_seed, double fp64_tolerance,
                                                double slack) {
  const Shape& s = a.shape;
  const double kappa = testing::spectrum_condition_number(a.col, a.row_used(), s);
  struct Input {
    Op op;
    index_t nrhs;
    std::vector<double> x, exact;
  };
  std::vector<Input> inputs;
  for (Op op : kAllOps)
    for (index_t nrhs : rhs_counts) {
      auto x = testing::random_vector(input_size(op, s, nrhs), x_seed);
      auto exact = reference.apply(op, x, nrhs);
      inputs.push_back({op, nrhs, std::move(x), std::move(exact)});
    }
  double worst = 0;
  for (const PrecisionConfig& config : PrecisionConfig::all()) {
    plan.set_precision(config.str());
    EXPECT_EQ(plan.precision().str(), config.str());
    for (const Input& in : inputs) {
      std::vector<double> y = poisoned(in.exact.size());
      plan.apply(in.op, in.x, y, in.nrhs);
      const double error = testing::relative_error(y, in.exact);
      SCOPED_TRACE(fmt::format("{} nrhs={} {} error {:.3e} against the {}, kappa {:.2e}",
                               name_of(in.op), in.nrhs, config.str(), error, reference.name(),
                               kappa));
      if (config.all_double()) {
        EXPECT_LT(error, fp64_tolerance);
      } else {
        const double bound = mixed_bound(config, in.op, s, kappa);
        worst = std::max(worst, error / bound);
        EXPECT_LE(error, slack * bound);
        EXPECT_GT(error, kFp32Floor);  // FP32 was really used
      }
    }
  }
  return worst;
}

}  // namespace shiftop::btt::plan_test
