// The operations of a block Toeplitz plan (include/shiftop/btt/op.hpp).
#include "shiftop/btt/op.hpp"

#include <array>

#include "shiftop/core/error.hpp"

namespace shiftop::btt {

namespace {
constexpr std::array<std::string_view, 4> kOpNames = {"F", "Fadj", "FadjF", "FFadj"};
}

std::string_view to_string(Op op) {
  return kOpNames[static_cast<std::size_t>(op)];
}

Op parse_op(std::string_view text) {
  for (Op op : kAllOps)
    if (text == to_string(op)) return op;
  fail("unknown operation '{}': expected one of F, Fadj, FadjF, FFadj", text);
}

index_t input_blocks(Op op, const Shape& shape) {
  return (op == Op::F || op == Op::FadjF) ? shape.nm : shape.nd;
}

index_t output_blocks(Op op, const Shape& shape) {
  return (op == Op::F || op == Op::FFadj) ? shape.nd : shape.nm;
}

}  // namespace shiftop::btt
