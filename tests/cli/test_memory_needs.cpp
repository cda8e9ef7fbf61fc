// The vector sizes the tool adds to a plan's (btt::Plan::host_bytes, tested in
// tests/btt/test_host_bytes.cpp) before it allocates (apps/shiftop/memory_needs.hpp).
#include "memory_needs.hpp"

#include <gtest/gtest.h>

#include "shiftop/btt/op.hpp"

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

}  // namespace
}  // namespace shiftop::app
