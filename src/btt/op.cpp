// The operations of a block Toeplitz plan (include/shiftop/btt/op.hpp).
#include "shiftop/btt/op.hpp"

namespace shiftop::btt {

index_t input_blocks(Op op, const Shape& shape) {
  return (op == Op::F || op == Op::FadjF) ? shape.nm : shape.nd;
}

index_t output_blocks(Op op, const Shape& shape) {
  return (op == Op::F || op == Op::FFadj) ? shape.nd : shape.nm;
}

}  // namespace shiftop::btt
