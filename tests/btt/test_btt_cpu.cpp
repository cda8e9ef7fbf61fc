// What only the CPU plan has. The operator tests it shares with every backend (every operation,
// precision string and right-hand-side count against the dense product, the adjoint identity, bad
// inputs, ...) are in plan_test.hpp, instantiated for the CPU by test_plan_cpu.cpp. Here: thread
// counts, the choices it reports, the GPU-only calls and options it refuses, and the CUDA options
// Plan::create checks before it makes any engine (so that they run on machines without a GPU).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "btt/plan_checks.hpp"
#include "shiftop/core/error.hpp"
#include "support/expect_error.hpp"

namespace shiftop::btt {
namespace {

using plan_test::input_size;
using plan_test::output_size;
using plan_test::poisoned;
using plan_test::random_operator;
using plan_test::Reference;
using plan_test::TestOperator;

using testing::expect_error;

// Every thread count gives the dense product, and the same result as one thread; the blocks are
// split over threads in chunks, so 2, 3 and 7 threads leave uneven remainders.
TEST(Cpu, EveryThreadCountGivesTheSameProduct) {
  const Shape s{6, 41, 37};
  const index_t nrhs = 3;
  const TestOperator a = random_operator(s, false, 11);
  Reference dense(a, Backend::Cpu);
  Plan one = a.make({.max_rhs = 2, .planning = Planning::Estimate, .cpu = {.threads = 1}});
  for (int threads : {0, 2, 3, 7}) {
    Plan plan = a.make({.max_rhs = 2, .planning = Planning::Estimate, .cpu = {.threads = threads}});
    for (Op op : kAllOps) {
      const auto x = testing::random_vector(input_size(op, s, nrhs), 71);
      std::vector<double> y = poisoned(output_size(op, s, nrhs)), y1 = poisoned(y.size());
      plan.apply(op, x, y, nrhs);
      one.apply(op, x, y1, nrhs);
      EXPECT_LT(testing::relative_error(y, dense.apply(op, x, nrhs)), 1e-13)
          << name_of(op) << ", " << threads << " threads";
      EXPECT_LT(testing::relative_error(y, y1), 1e-15)
          << name_of(op) << ", " << threads << " threads against 1";
    }
  }
  expect_error([&] { (void)a.make({.planning = Planning::Estimate, .cpu = {.threads = -1}}); },
               "invalid thread count -1");
}

// FFTW, the CPU's own phase-3 product, and L = 2*Nt, for both directions.
TEST(Cpu, ChoicesAreFftwTheCpuProductAndTwiceNt) {
  const Shape s{3, 5, 9};
  const TestOperator a = random_operator(s, true, 1);
  for (Planning planning : {Planning::Estimate, Planning::Measure}) {
    const PlanChoices choices = a.make({.planning = planning}).choices();
    EXPECT_EQ(choices.fft_length, 18);
    for (const PassChoice& pass : choices.passes) {
      EXPECT_EQ(pass.transforms, Transforms::Fftw);
      EXPECT_EQ(pass.gemv, Gemv::Cpu);
      EXPECT_EQ(pass.gemv_name(), "cpu");
    }
  }
}

TEST(Cpu, RefusesWhatOnlyAGpuPlanDoes) {
  const Shape s{2, 3, 4};
  const auto k = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 61);
  expect_error([&] { Plan::create(k, s, {.gpu_engine = {.fft_length = 16}}); },
               "CUDA backend option");
  Plan plan = Plan::create(k, s, {.planning = Planning::Estimate});
  expect_error([&] { plan.set_gemv(GemvImplementation::Fused); }, "this plan runs on the CPU");
  std::vector<double> m(input_size(Op::F, s)), d(output_size(Op::F, s));
  expect_error([&] { plan.apply_device(Op::F, m.data(), d.data()); },
               "apply_device needs a plan with Backend::Cuda");
}

// The CUDA backend's options are checked before any engine is made, so these run without a GPU
// and in builds without CUDA.
TEST(CudaOptions, CheckedBeforeAnyDevice) {
  const Shape s{2, 3, 4};
  const auto k = testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 61);
  for (index_t bad : {7, 9, -8})  // 2*Nt = 8: too short, odd, or negative
    expect_error(
        [&] { Plan::create(k, s, {.backend = Backend::Cuda, .gpu_engine = {.fft_length = bad}}); },
        "an even length of at least 2*Nt = 8");
  // Without a GPU (CI) or without CUDA in the build, the CUDA backend refuses with a reason.
  try {
    (void)Plan::create(k, s, {.backend = Backend::Cuda, .planning = Planning::Estimate});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace shiftop::btt
