// libFuzzer harness for the decoding of HDF5 attribute values into counts
// (src/io/attribute_value.hpp). The first input byte chooses the stored type (modulo 3: int64,
// double, string); an int64 or double takes the next 8 bytes (little-endian, zero-padded when the
// input is shorter), a string the rest of the input. Any value is either refused with
// shiftop::Error or gives a count in [0, kMaxAttributeCount] equal to the value; the value's text
// form is checked too.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <variant>

#include "fuzz_check.hpp"
#include "io/attribute_value.hpp"
#include "shiftop/core/error.hpp"

namespace {

template <typename T>
T from_bytes(std::string_view bytes) {
  unsigned char raw[sizeof(T)] = {};
  std::memcpy(raw, bytes.data(), std::min(bytes.size(), sizeof(T)));
  T value;
  std::memcpy(&value, raw, sizeof(T));
  return value;
}

shiftop::io::AttributeValue decode(std::string_view input) {
  const std::string_view rest = input.substr(1);
  switch (static_cast<unsigned char>(input[0]) % 3) {
    case 0:
      return from_bytes<std::int64_t>(rest);
    case 1:
      return from_bytes<double>(rest);
    default:
      return std::string(rest);
  }
}

// attribute_to_string: integers in decimal, doubles in a form that reads back exactly.
void check_text(const shiftop::io::AttributeValue& value) {
  const std::string text = shiftop::io::attribute_to_string(value);
  if (const auto* integer = std::get_if<std::int64_t>(&value)) {
    shiftop::fuzz::check(text == std::to_string(*integer), "an integer is written in decimal");
  } else if (const auto* real = std::get_if<double>(&value)) {
    const double back = std::strtod(text.c_str(), nullptr);
    shiftop::fuzz::check(back == *real || (std::isnan(back) && std::isnan(*real)),
                         "a double is written in a form that reads back exactly");
  } else {
    shiftop::fuzz::check(text == std::get<std::string>(value), "a string is written as is");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using shiftop::fuzz::check;
  if (size == 0) return 0;
  constexpr std::string_view context = "fuzz.h5: attribute 'n_param'";
  const shiftop::io::AttributeValue value =
      decode(std::string_view(reinterpret_cast<const char*>(data), size));
  check_text(value);
  try {
    const shiftop::index_t count = shiftop::io::attribute_to_count(value, context);
    check(count >= 0 && count <= shiftop::io::kMaxAttributeCount, "the count is in range");
    if (const auto* integer = std::get_if<std::int64_t>(&value)) {
      check(count == *integer, "an integer attribute gives its value");
    } else if (const auto* real = std::get_if<double>(&value)) {
      check(static_cast<double>(count) == *real, "a float attribute gives its value");
    } else {
      // Decimal digits, the same number once leading zeros are dropped ("-0" also reads as 0).
      std::string_view digits = std::get<std::string>(value);
      if (count == 0 && digits.starts_with('-')) digits.remove_prefix(1);
      const std::size_t first = std::min(digits.find_first_not_of('0'), digits.size());
      check(!digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos &&
                digits.substr(first) == (count == 0 ? "" : std::to_string(count)),
            "a string attribute gives the decimal integer it holds");
    }
  } catch (const shiftop::Error& error) {
    shiftop::fuzz::check_error_message(error.what(), context);
  }
  return 0;
}
