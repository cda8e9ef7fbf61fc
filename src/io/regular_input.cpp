#include "io/regular_input.hpp"

#include <filesystem>
#include <system_error>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;

std::string_view describe(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    default:
      return "not a regular file";
  }
}

}  // namespace

void require_regular_input(const std::string& path, std::string_view expected,
                           bool directory_allowed) {
  std::error_code error;
  const fs::file_type type = fs::status(path, error).type();
  if (type == fs::file_type::not_found || type == fs::file_type::none ||
      type == fs::file_type::regular || (directory_allowed && type == fs::file_type::directory))
    return;
  fail("{}: is {}, not a file: expected {}", path, describe(type), expected);
}

}  // namespace shiftop::io
