#include "shiftop/io/file_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/hdf5.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/operator_file.hpp"

namespace shiftop::io {
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
  if (h5::has_link(file.get(), "indptr", path)) return FileKind::Circulant;
  const std::vector<std::string> names = h5::link_names(file.get(), path);
  fail(
      "{}: expected dataset 'kernels' (an operator), 'vector' (a shiftop vector), 'vec' (an "
      "FFTMatvec vector) or 'indptr' (a block-circulant operator); it has {}",
      path, names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(names, ", ")));
}

}  // namespace shiftop::io
