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

}  // namespace shiftop
