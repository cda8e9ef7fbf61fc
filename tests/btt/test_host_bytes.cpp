// Plan::host_bytes, the estimate a caller checks before it makes a plan (the tool's bench, tune
// and demo refuse a size that does not fit), against what real CPU plans hold
// (Plan::memory_bytes): equal to the byte, less the Nm series F^ is computed through, which the
// plan frees once F^ is made. The shapes cross the engine's rounding boundaries: Nm and Nd to 16
// (leading dimensions), Nt+1 to 8 (series stride), and the chunk size (64 blocks at small Nt, 8
// at Nt = 513).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "support/expect_error.hpp"

namespace shiftop::btt {
namespace {

// The series compute_kernel_spectrum works in: Nm series of (Nt+1 rounded up to 8) complex
// values, written out here on their own so that the test does not reuse the engine's layout.
std::size_t series_bytes(const Shape& s) {
  const auto stride = static_cast<std::size_t>((frequencies(s) + 7) / 8 * 8);
  return static_cast<std::size_t>(s.nm) * 2 * stride * sizeof(double);
}

TEST(HostBytes, EqualsWhatCpuPlansHoldPlusTheSeries) {
  struct Options {
    index_t max_rhs;
    int threads;
    const char* precision;
  };
  std::vector<Options> every;
  for (index_t max_rhs : {1, 3, 16})
    for (int threads : {1, 2})
      for (const char* precision : {"DDDDD", "DDSDD"})
        every.push_back({max_rhs, threads, precision});
  int plans = 0;
  for (index_t nd : {1, 15, 16, 17, 100})
    for (index_t nm : {1, 15, 16, 17, 100})
      for (index_t nt : {1, 7, 513}) {
        const Shape s{nd, nm, nt};
        const std::vector<double> kernels(static_cast<std::size_t>(s.kernel_size()), 0.5);
        for (const Options& o : every) {
          const PlanOptions options{.precision = o.precision,
                                    .max_rhs = o.max_rhs,
                                    .planning = Planning::Estimate,
                                    .cpu = {.threads = o.threads}};
          const std::size_t estimate = Plan::host_bytes(s, options);
          const Plan plan = Plan::create(kernels, s, options);
          EXPECT_EQ(estimate - series_bytes(s), plan.memory_bytes())
              << s.str() << " max_rhs " << o.max_rhs << " threads " << o.threads << " "
              << o.precision;
          ++plans;
        }
      }
  EXPECT_EQ(plans, 5 * 5 * 3 * 12);
}

TEST(HostBytes, CountsTheFp32CopyOfAPlanSwitchedToIt) {
  // A plan made in FP64 and switched to an FP32 phase 3 holds what a plan made so holds.
  const Shape s{17, 15, 7};
  const std::vector<double> kernels(static_cast<std::size_t>(s.kernel_size()), 0.5);
  const PlanOptions wide{.precision = "DDSDD", .max_rhs = 3, .planning = Planning::Estimate};
  Plan plan = Plan::create(kernels, s, {.max_rhs = 3, .planning = Planning::Estimate});
  plan.set_precision("DDSDD");
  EXPECT_EQ(Plan::host_bytes(s, wide) - series_bytes(s), plan.memory_bytes());
}

TEST(HostBytes, DefaultThreadsAreOpenMPs) {
  const Shape s{16, 17, 7};
  const std::vector<double> kernels(static_cast<std::size_t>(s.kernel_size()), 0.5);
  const PlanOptions options{.planning = Planning::Estimate};
  EXPECT_EQ(Plan::host_bytes(s, options) - series_bytes(s),
            Plan::create(kernels, s, options).memory_bytes());
}

TEST(HostBytes, AbsurdSizesSaturateInsteadOfWrapping) {
  // F^ alone is 1.6e19 bytes, its FP32 copy 8e18 more: past SIZE_MAX (1.8e19) together.
  const Shape huge{1'000'000, 1'000'000, 1'000'000};
  EXPECT_GT(static_cast<double>(Plan::host_bytes(huge)), 1e18);
  EXPECT_EQ(Plan::host_bytes(huge, {.precision = "DDSDD"}),
            std::numeric_limits<std::size_t>::max());
  EXPECT_GT(static_cast<double>(Plan::host_bytes({1, 1, index_t{1} << 40}, {.max_rhs = 1 << 20})),
            1e18);
  const Shape wide{index_t{1} << 40, index_t{1} << 40, 1};
  EXPECT_EQ(Plan::host_bytes(wide), std::numeric_limits<std::size_t>::max());
}

TEST(HostBytes, GpuPlansHoldNoHostMemoryOfTheirOwn) {
  EXPECT_EQ(Plan::host_bytes({8, 40, 16}, {.backend = Backend::Cuda}), 0U);
}

TEST(HostBytes, RefusesWhatCreateRefuses) {
  using testing::expect_error;
  expect_error([] { (void)Plan::host_bytes({0, 4, 4}); }, "every size must be positive");
  expect_error([] { (void)Plan::host_bytes({4, 4, 4}, {.max_rhs = 0}); }, "max_rhs");
  expect_error([] { (void)Plan::host_bytes({4, 4, 4}, {.cpu = {.threads = -1}}); }, "thread count");
  expect_error([] { (void)Plan::host_bytes({4, 4, 4}, {.precision = "DDXDD"}); }, "DDXDD");
}

}  // namespace
}  // namespace shiftop::btt
