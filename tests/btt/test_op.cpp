// The operations of a block Toeplitz plan and the sizes of its circulant embedding
// (include/shiftop/btt/op.hpp).
#include <gtest/gtest.h>

#include "shiftop/btt/op.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::btt {
namespace {

TEST(Shape, BlocksPerOperation) {
  const Shape s{3, 5, 7};
  EXPECT_EQ(input_blocks(Op::F, s), 5);
  EXPECT_EQ(output_blocks(Op::F, s), 3);
  EXPECT_EQ(input_blocks(Op::Fadj, s), 3);
  EXPECT_EQ(output_blocks(Op::Fadj, s), 5);
  EXPECT_EQ(input_blocks(Op::FadjF, s), 5);
  EXPECT_EQ(output_blocks(Op::FadjF, s), 5);
  EXPECT_EQ(input_blocks(Op::FFadj, s), 3);
  EXPECT_EQ(output_blocks(Op::FFadj, s), 3);
  EXPECT_EQ(frequencies(s), 8);
  EXPECT_EQ(padded_length(s), 14);
}

TEST(Op, ParsesItsNames) {
  for (Op op : kAllOps)
    EXPECT_EQ(parse_name<Op>(name_of(op), "op"), op);
  EXPECT_THROW(parse_name<Op>("Fadjoint", "op"), Error);
}

}  // namespace
}  // namespace shiftop::btt
