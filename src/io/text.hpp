// Small text helpers shared by the readers and writers: untrusted bytes shown in a message and
// (from shiftop/io/extension.hpp) file extensions. Header-only, so that the fuzz harnesses
// (tests/fuzz), which compile single parsers, get them without another source file.
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

}  // namespace shiftop::io
