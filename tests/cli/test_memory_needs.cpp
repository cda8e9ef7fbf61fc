// The host-memory estimate the tool checks before it allocates (apps/shiftop/memory_needs.hpp),
// against what CPU plans really hold (Plan::memory_bytes): never less, so that a refused size
// is never one that fits the check and then fails with std::bad_alloc, and not much more, so that
// sizes that fit are not refused.
#include "memory_needs.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shiftop/btt/plan.hpp"

namespace shiftop::app {
namespace {

struct Case {
  Shape shape;
  std::string precision;
  index_t max_rhs;
  int threads;
};

TEST(MemoryNeedsTest, CpuPlanEstimateBoundsWhatThePlanHolds) {
  const std::vector<Case> cases = {{{8, 40, 16}, "DDDDD", 1, 1},   {{8, 40, 16}, "DDSDD", 1, 2},
                                   {{16, 33, 100}, "DSSDD", 4, 2}, {{40, 8, 64}, "SSSSS", 16, 1},
                                   {{12, 200, 37}, "DDDDD", 3, 2}, {{9, 9, 513}, "DDSDD", 7, 1}};
  for (const Case& c : cases) {
    const btt::PlanOptions options{.precision = c.precision,
                                   .max_rhs = c.max_rhs,
                                   .planning = btt::Planning::Estimate,
                                   .cpu = {.threads = c.threads}};
    const std::vector<double> kernels(static_cast<std::size_t>(c.shape.kernel_size()), 1.0);
    const btt::Plan plan = btt::Plan::create(kernels, c.shape, options);
    const auto held = static_cast<double>(plan.memory_bytes());
    const double estimate = plan_host_bytes(c.shape, options);
    // Above: F^'s Nm series while it is computed, and the chunk scratch at its largest (64
    // blocks) for a plan that chose fewer.
    EXPECT_GE(estimate, held) << c.shape.str() << " " << c.precision;
    EXPECT_LE(estimate, 1.6 * held + 2e5) << c.shape.str() << " " << c.precision;
  }
}

TEST(MemoryNeedsTest, GpuPlanHoldsNoHostMemoryOfItsOwn) {
  EXPECT_EQ(plan_host_bytes({8, 40, 16}, {.backend = btt::Backend::Cuda}), 0.0);
}

TEST(MemoryNeedsTest, VectorsOfEveryOp) {
  const Shape s{3, 5, 7};
  EXPECT_EQ(vector_bytes(s, btt::Op::F, 1), 8.0 * (5 + 3) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::Fadj, 2), 8.0 * 2 * (3 + 5) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::FadjF, 3), 8.0 * 3 * (5 + 5) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::FFadj, 1), 8.0 * (3 + 3) * 7);
}

TEST(MemoryNeedsTest, AbsurdSizesDoNotOverflow) {
  // 1.6e19 bytes each: past what an int64 holds (9.2e18), so an integer product would wrap.
  const Shape huge{1'000'000, 1'000'000, 1'000'000};
  EXPECT_GT(plan_host_bytes(huge, {}), 1.5e19);
  EXPECT_GT(vector_bytes(huge, btt::Op::F, 1'000'000), 1.5e19);
}

}  // namespace
}  // namespace shiftop::app
