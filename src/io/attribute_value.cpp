#include "io/attribute_value.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <utility>

#include "io/text.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

[[noreturn]] void not_a_count(std::string_view context, std::string_view found) {
  fail("{}: expected a non-negative integer count of at most {}, got {}", context,
       kMaxAttributeCount, found);
}

}  // namespace

index_t attribute_to_count(const AttributeValue& value, std::string_view context) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    if (*integer < 0 || *integer > kMaxAttributeCount)
      not_a_count(context, fmt::format("{}", *integer));
    return *integer;
  }
  if (const auto* real = std::get_if<double>(&value)) {
    // The comparisons are false for NaN, so NaN is refused with the rest.
    if (!(*real >= 0 && *real <= static_cast<double>(kMaxAttributeCount) &&
          std::floor(*real) == *real))
      not_a_count(context, fmt::format("{}", *real));
    return static_cast<index_t>(*real);
  }
  const auto* string = std::get_if<std::string>(&value);
  if (string == nullptr)
    not_a_count(context, fmt::format("the array {}", attribute_to_string(value)));
  const std::string& text = *string;
  index_t parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || parsed < 0 ||
      parsed > kMaxAttributeCount)
    not_a_count(context, fmt::format("the string '{}'", printable(text)));
  return parsed;
}

std::string attribute_to_string(const AttributeValue& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return fmt::format("{}", *integer);
  if (const auto* real = std::get_if<double>(&value)) return fmt::format("{}", *real);
  if (const auto* integers = std::get_if<std::vector<std::int64_t>>(&value))
    return fmt::format("[{}]", fmt::join(*integers, ", "));
  if (const auto* reals = std::get_if<std::vector<double>>(&value)) {
    // Element by element: fmt::join over doubles trips GCC 13's -Warray-bounds inside fmt 9's
    // format_dragon (a false positive that -Werror turns into a failed build).
    std::string text = "[";
    for (std::size_t i = 0; i < reals->size(); ++i)
      text += fmt::format("{}{}", i == 0 ? "" : ", ", (*reals)[i]);
    return text + "]";
  }
  return std::get<std::string>(value);
}

Detail to_detail(std::string key, const AttributeValue& value) {
  return {std::move(key), std::visit([](const auto& v) { return Detail::Value(v); }, value)};
}

}  // namespace shiftop::io
