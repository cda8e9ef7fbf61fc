// Small text helpers shared by the readers and writers: untrusted bytes shown in a message, names
// of enumerators, and (from shiftop/io/extension.hpp) file extensions. Header-only, so that the
// fuzz harnesses (tests/fuzz), which compile single parsers, get them without another source file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "shiftop/io/extension.hpp"

namespace shiftop::io {

/// Untrusted text (from a file's header or attributes) as shown in an error message: at most
/// `shown` bytes, followed by "..." if there were more, with non-printable bytes as '?'.
inline std::string printable(std::string_view text, std::size_t shown = 32) {
  std::string out(text.substr(0, shown));
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) c = '?';
  }
  if (text.size() > shown) out += "...";
  return out;
}

/// One row of a table of enumerator names (see name_of).
template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

/// The name `names` gives `value`, "?" if it gives none. The table lists (value, name) pairs, so
/// that to_string of an enum is its table: name_of(format, {{Format::Npy, "npy"}, ...}).
template <typename Enum, std::size_t N>
constexpr std::string_view name_of(Enum value, const EnumName<Enum> (&names)[N]) {
  for (const EnumName<Enum>& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

}  // namespace shiftop::io
