// The memory check readers make before allocating what a file asks for.
#include "shiftop/core/available_memory.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/io_test_support.hpp"

namespace shiftop {
namespace {

using shiftop::testing::contains;
using shiftop::testing::error_of;

TEST(AvailableMemoryTest, ReadsMemAvailable) {
  const auto available = available_memory_bytes();
  ASSERT_TRUE(available.has_value()) << "/proc/meminfo has no MemAvailable line";
  EXPECT_GT(*available, std::uint64_t{1} << 20);
  EXPECT_EQ(*available % 1024, 0u);  // reported in kB
}

TEST(AvailableMemoryTest, RefusesWithBytesNeededAndAvailable) {
  EXPECT_NO_THROW(require_available_memory(4096, "small"));
  const std::string absurd = error_of([] { require_available_memory(1e30, "F.h5: kernels"); });
  EXPECT_TRUE(contains(absurd, "F.h5: kernels needs 1000000000000000019884624838656 bytes"))
      << absurd;
  EXPECT_TRUE(contains(absurd, "more than this machine can address")) << absurd;
  const double too_much = 2.0 * static_cast<double>(*available_memory_bytes());
  const std::string message =
      error_of([&] { require_available_memory(too_much, "F.h5: kernels"); });
  EXPECT_TRUE(contains(message, "F.h5: kernels needs ")) << message;
  EXPECT_TRUE(contains(message, "GiB) but only ")) << message;
  EXPECT_TRUE(contains(message, "are available (MemAvailable in /proc/meminfo)")) << message;
}

}  // namespace
}  // namespace shiftop
