#include "shiftop/core/shape.hpp"

#include <fmt/format.h>

#include <limits>

#include "shiftop/core/error.hpp"

namespace shiftop {

void Shape::validate() const {
  require(nd > 0 && nm > 0 && nt > 0, "invalid operator shape {}: every size must be positive",
          str());
  const double entries =
      static_cast<double>(nd) * static_cast<double>(nm) * static_cast<double>(nt);
  require(entries < static_cast<double>(std::numeric_limits<index_t>::max() / 16),
          "operator shape {} is too large to index", str());
}

std::string Shape::str() const {
  return fmt::format("(Nd={}, Nm={}, Nt={})", nd, nm, nt);
}

std::string_view to_string(Op op) {
  switch (op) {
    case Op::F:
      return "F";
    case Op::Fadj:
      return "Fadj";
    case Op::FadjF:
      return "FadjF";
    case Op::FFadj:
      return "FFadj";
  }
  return "?";
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

}  // namespace shiftop
