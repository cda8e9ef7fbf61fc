#include "shiftop/distributed/grid_shape.hpp"

#include <fmt/format.h>

#include <charconv>

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {
namespace {

bool parse_positive(std::string_view text, int& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value > 0;
}

}  // namespace

std::string GridShape::str() const {
  return fmt::format("{}x{}", rows, cols);
}

GridShape GridShape::parse(std::string_view text) {
  const std::size_t x = text.find('x');
  GridShape grid;
  const bool ok = x != std::string_view::npos && parse_positive(text.substr(0, x), grid.rows) &&
                  parse_positive(text.substr(x + 1), grid.cols);
  require(ok, "invalid process grid '{}': expected ROWSxCOLS with positive integers, e.g. 2x4",
          text);
  return grid;
}

}  // namespace shiftop::distributed
