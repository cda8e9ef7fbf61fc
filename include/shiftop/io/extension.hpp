// A file's format named by its extension, as the readers and writers (and the tool's output
// checks) compare it: case-insensitively. Header-only, so that the fuzz harnesses (tests/fuzz),
// which compile single parsers, get it without another source file.
#pragma once

#include <cctype>
#include <filesystem>
#include <string>

namespace shiftop::io {

/// The extension of `path` in lower case, with its dot: ".npy" for "A.NPY", "" for none.
inline std::string lowercase_extension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension;
}

}  // namespace shiftop::io
