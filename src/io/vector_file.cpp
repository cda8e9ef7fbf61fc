#include "shiftop/io/vector_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/available_memory.hpp"
#include "shiftop/core/error.hpp"
#include "io/consistency.hpp"
#include "io/fftmatvec_format.hpp"
#include "io/hdf5.hpp"
#include "io/nonfinite.hpp"
#include "shiftop/io/npy.hpp"
#include "io/shiftop_format.hpp"

namespace shiftop::io {
namespace {

bool is_npy(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".npy";
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
  vector.batched = array.shape.size() == 3;
  vector.nrhs = vector.batched ? array.shape[0] : 1;
  vector.blocks = array.shape[array.shape.size() - 2];
  vector.nt = array.shape.back();
  vector.values = std::move(array.data);
  if (!options.allow_nonfinite)
    require_finite_vectors(vector.values, vector.blocks, vector.nt, path);
  return vector;
}

}  // namespace

std::string_view to_string(VectorFormat format) {
  switch (format) {
    case VectorFormat::Auto:
      return "auto";
    case VectorFormat::Shiftop:
      return "shiftop";
    case VectorFormat::FFTMatvec:
      return "fftmatvec";
    case VectorFormat::Npy:
      return "npy";
  }
  return "?";
}

std::string_view to_string(VectorSpace space) {
  switch (space) {
    case VectorSpace::Unknown:
      return "unknown";
    case VectorSpace::Parameter:
      return "parameter";
    case VectorSpace::Data:
      return "data";
  }
  return "?";
}

VectorFormat detect_vector_format(const std::string& path) {
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
  switch (detect_vector_format(path)) {
    case VectorFormat::Npy:
      return read_npy_vector(path, options);
    case VectorFormat::FFTMatvec:
      return fftmatvec::read_vector(path, options);
    default:
      return shiftop_h5::read_vector(path, options);
  }
}

void write_vector(const std::string& path, const VectorData& vector, VectorFormat format) {
  switch (format == VectorFormat::Auto ? output_vector_format(path) : format) {
    case VectorFormat::Npy: {
      require_writable(vector, path);
      std::vector<index_t> shape = {vector.blocks, vector.nt};
      if (vector.batched || vector.nrhs != 1) shape.insert(shape.begin(), vector.nrhs);
      return write_npy(path, vector.values, shape);
    }
    case VectorFormat::FFTMatvec:
      return fftmatvec::write_vector(path, vector);
    default:
      return shiftop_h5::write_vector(path, vector);
  }
}

VectorInfo inspect_vector(const std::string& path) {
  switch (detect_vector_format(path)) {
    case VectorFormat::Npy: {
      const NpyHeader header = read_npy_header(path);
      require_vector_shape(header.shape, path);
      VectorInfo info;
      info.format = VectorFormat::Npy;
      info.batched = header.shape.size() == 3;
      info.nrhs = info.batched ? header.shape[0] : 1;
      info.blocks = header.shape[header.shape.size() - 2];
      info.nt = header.shape.back();
      info.details = {{"dtype", header.dtype == DType::Float64 ? "float64" : "float32"}};
      return info;
    }
    case VectorFormat::FFTMatvec:
      return fftmatvec::inspect_vector(path);
    default:
      return shiftop_h5::inspect_vector(path);
  }
}

}  // namespace shiftop::io
