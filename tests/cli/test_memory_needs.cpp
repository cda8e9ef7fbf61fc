// The vector sizes and bench's flags' allocations the tool adds to a plan's (btt::Plan::host_bytes,
// tested in tests/btt/test_host_bytes.cpp) before it allocates (apps/shiftop/memory_needs.hpp).
#include "memory_needs.hpp"

#include <gtest/gtest.h>

#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"

namespace shiftop::app {
namespace {

TEST(MemoryNeedsTest, VectorsOfEveryOp) {
  const Shape s{3, 5, 7};
  EXPECT_EQ(vector_bytes(s, btt::Op::F, 1), 8.0 * (5 + 3) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::Fadj, 2), 8.0 * 2 * (3 + 5) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::FadjF, 3), 8.0 * 3 * (5 + 5) * 7);
  EXPECT_EQ(vector_bytes(s, btt::Op::FFadj, 1), 8.0 * (3 + 3) * 7);
}

TEST(MemoryNeedsTest, AbsurdSizesDoNotOverflow) {
  // 1.6e19 bytes: past what an int64 holds (9.2e18), so an integer product would wrap.
  const Shape huge{1'000'000, 1'000'000, 1'000'000};
  EXPECT_GT(vector_bytes(huge, btt::Op::F, 1'000'000), 1.5e19);
}

// Each of bench's flags adds its own allocation: --check the FP64 CPU reference plan and its
// nrhs outputs, --direct one output; the CPU bandwidth probe its two arrays.
TEST(MemoryNeedsTest, BenchCountsCheckDirectAndTheProbe) {
  const Shape s{3, 40, 17};
  const btt::PlanOptions options{.precision = "DSSSD", .max_rhs = 2, .cpu = {.threads = 1}};
  BenchOptions o;
  o.nrhs = 5;
  o.threads = 1;
  const double output = 8.0 * 3 * 17;  // F's output: Nd blocks of Nt
  const double base = host_bytes(o, s, btt::Op::F, options);
  EXPECT_EQ(base, 8.0 * static_cast<double>(s.kernel_size()) +
                      static_cast<double>(btt::Plan::host_bytes(s, options)) +
                      vector_bytes(s, btt::Op::F, 5));
  o.check = true;
  EXPECT_EQ(host_bytes(o, s, btt::Op::F, options) - base,
            static_cast<double>(btt::Plan::host_bytes(s, {.cpu = {.threads = 1}})) + 5 * output);
  o.check = false;
  o.direct = true;
  EXPECT_EQ(host_bytes(o, s, btt::Op::F, options) - base, output);
  EXPECT_EQ(probe_bytes(btt::Backend::Cpu), 2.0 * static_cast<double>(kCpuProbeArrayBytes));
  EXPECT_EQ(probe_bytes(btt::Backend::Cuda), 0.0);
}

}  // namespace
}  // namespace shiftop::app
