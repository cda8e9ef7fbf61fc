#include "memory_needs.hpp"

#include "shiftop/btt/op.hpp"

namespace shiftop::app {

double double_bytes(double count) {
  return 8.0 * count;
}

double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs) {
  return double_bytes(
      static_cast<double>(nrhs) *
      static_cast<double>(btt::input_blocks(op, shape) + btt::output_blocks(op, shape)) *
      static_cast<double>(shape.nt));
}

}  // namespace shiftop::app
