// Test builds poison every workspace (SHIFTOP_POISON_WORKSPACES, core/poison.hpp): a new
// AlignedBuffer holds NaN in every element, in FP64 and seen as FP32, on both allocation paths
// (64-byte lines, and 2 MiB pages filled by the threads). If the option is lost from the build,
// the plan tests would read whatever the allocator left (often zeros) and this test fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/aligned_buffer.hpp"

namespace shiftop {
namespace {

TEST(PoisonedWorkspaces, EveryNewAlignedBufferIsNaN) {
  ASSERT_TRUE(kPoisonWorkspaces) << "configure the tests with SHIFTOP_POISON_WORKSPACES=ON";
  // 3 values; just under and over the 8 MiB huge-page threshold (odd counts: a partial page).
  for (std::size_t count :
       {std::size_t{3}, (std::size_t{8} << 20) / 8 - 1, (std::size_t{9} << 20) / 8 + 5}) {
    AlignedBuffer<double> buffer(count);
    EXPECT_TRUE(
        std::all_of(buffer.data(), buffer.data() + count, [](double v) { return std::isnan(v); }))
        << count << " doubles";
    const float* single = buffer.as<float>();
    EXPECT_TRUE(std::all_of(single, single + 2 * count, [](float v) { return std::isnan(v); }))
        << count << " doubles seen as floats";
  }
}

}  // namespace
}  // namespace shiftop
