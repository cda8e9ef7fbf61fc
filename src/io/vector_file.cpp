#include "shiftop/io/vector_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "io/consistency.hpp"
#include "io/fftmatvec_format.hpp"
#include "io/format_codec.hpp"
#include "io/hdf5.hpp"
#include "io/nonfinite.hpp"
#include "io/regular_input.hpp"
#include "io/shiftop_format.hpp"
#include "io/text.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/file_kind.hpp"
#include "shiftop/io/npy.hpp"

namespace shiftop::io {
namespace {

bool is_npy(const std::string& path) {
  return lowercase_extension(path) == ".npy";
}

// (blocks, Nt) or (nrhs, blocks, Nt), every size positive.
void require_vector_shape(const std::vector<index_t>& shape, const std::string& path) {
  require((shape.size() == 2 || shape.size() == 3) &&
              std::ranges::none_of(shape, [](index_t n) { return n == 0; }),
          "{}: has shape ({}): expected a vector of shape (blocks, Nt) or (nrhs, blocks, Nt)", path,
          fmt::join(shape, ", "));
}

VectorData read_npy_vector(const std::string& path, const VectorReadOptions& options) {
  const NpyHeader header = read_npy_header(path);
  require_vector_shape(header.shape, path);
  require_available_memory(8.0 * static_cast<double>(header.count()),
                           fmt::format("{}: reading a vector of {} values", path, header.count()));
  NpyArray array = read_npy(path);
  VectorData vector;
  set_sizes(vector, array.shape);
  vector.values = std::move(array.data);
  if (!options.allow_nonfinite)
    require_finite_vectors(vector.values, vector.blocks, vector.nt, path,
                           options.allow_nonfinite_name);
  return vector;
}

void write_npy_vector(const std::string& path, const VectorData& vector) {
  write_npy(path, vector.values, stored_dims(vector));
}

VectorInfo inspect_npy_vector(const std::string& path) {
  const NpyHeader header = read_npy_header(path);
  require_vector_shape(header.shape, path);
  VectorInfo info;
  info.format = VectorFormat::Npy;
  set_sizes(info, header.shape);
  info.details = {{"dtype", std::string(header.dtype == DType::Float64 ? "float64" : "float32")}};
  return info;
}

constexpr VectorCodec kNpyCodec{read_npy_vector, write_npy_vector, inspect_npy_vector};

// Shiftop, and Auto (which the callers resolve first): shiftop's own HDF5 file.
const VectorCodec& codec(VectorFormat format) {
  return format == VectorFormat::FFTMatvec ? fftmatvec::kVectorCodec
         : format == VectorFormat::Npy     ? kNpyCodec
                                           : shiftop_h5::kVectorCodec;
}

}  // namespace

VectorFormat detect_vector_format(const std::string& path) {
  require_regular_input(path, "a vector file (shiftop or FFTMatvec .h5, or .npy)");
  std::error_code error;
  require(std::filesystem::is_regular_file(path, error),
          "{}: no such file: expected a vector file (shiftop or FFTMatvec .h5, or .npy)", path);
  if (is_npy(path)) return VectorFormat::Npy;
  const h5::Handle file = h5::open_file(path);
  if (h5::has_link(file.get(), "vec", path)) return VectorFormat::FFTMatvec;
  if (h5::has_link(file.get(), "vector", path)) return VectorFormat::Shiftop;
  const std::vector<std::string> names = h5::link_names(file.get(), path);
  fail(
      "{}: no dataset 'vector' (shiftop) or 'vec' (FFTMatvec): expected a vector file; it has "
      "{}",
      path, names.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(names, ", ")));
}

VectorFormat output_vector_format(const std::string& path) {
  return is_npy(path) ? VectorFormat::Npy : VectorFormat::Shiftop;
}

VectorData read_vector(const std::string& path, const VectorReadOptions& options) {
  return codec(detect_vector_format(path)).read(path, options);
}

void write_vector(const std::string& path, const VectorData& vector, VectorFormat format) {
  require_writable(vector, path);
  codec(format == VectorFormat::Auto ? output_vector_format(path) : format).write(path, vector);
}

VectorInfo inspect_vector(const std::string& path) {
  return codec(detect_vector_format(path)).inspect(path);
}

}  // namespace shiftop::io
