#include "shiftop/io/file_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <system_error>

#include "io/hdf5.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/operator_file.hpp"

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

FileKind detect_file_kind(const std::string& path, FileKind prefer) {
  switch (detect_operator_format(path)) {
    case OperatorFormat::FFTMatvec:
      return FileKind::Operator;
    case OperatorFormat::Npy: {
      const NpyHeader header = read_npy_header(path);
      if (header.shape.size() == 2) return FileKind::Vector;
      require(header.shape.size() == 3,
              "{}: has shape ({}): expected operator kernels (Nd, Nm, Nt) or vectors (blocks, Nt) "
              "or (nrhs, blocks, Nt)",
              path, fmt::join(header.shape, ", "));
      return prefer;
    }
    default:
      break;
  }
  const h5::Handle file = h5::open_file(path);
  if (h5::has_link(file.get(), "kernels", path)) return FileKind::Operator;
  if (h5::has_link(file.get(), "vector", path) || h5::has_link(file.get(), "vec", path))
    return FileKind::Vector;
  const std::vector<std::string> names = h5::link_names(file.get(), path);
  fail(
      "{}: expected dataset 'kernels' (an operator), 'vector' (a shiftop vector) or 'vec' (an "
      "FFTMatvec vector); it has {}",
      path, names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(names, ", ")));
}

}  // namespace shiftop::io
