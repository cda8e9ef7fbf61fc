// One fact `shiftop info` reports about a file beyond its shape: a value with the type it has (a
// number, a flag, text, or none), and for people an explanation of what the value means.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace shiftop::io {

struct Detail {
  /// nullptr: there is none (JSON null); arrays are an attribute's 1-D arrays.
  using Value = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string,
                             std::vector<std::int64_t>, std::vector<double>>;
  std::string key;
  Value value;
  /// Shown after the value in text output, e.g. "parameter-to-observable"; empty for none.
  std::string meaning{};
};

using Details = std::vector<Detail>;

}  // namespace shiftop::io
