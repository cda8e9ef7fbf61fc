#include "shiftop/io/operator_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <filesystem>
#include <system_error>

#include "io/consistency.hpp"
#include "io/fftmatvec_format.hpp"
#include "io/format_codec.hpp"
#include "io/nonfinite.hpp"
#include "io/npy_slice.hpp"
#include "io/regular_input.hpp"
#include "io/shiftop_format.hpp"
#include "io/text.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/file_kind.hpp"
#include "shiftop/io/npy.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;

void resolve_range(const BlockRange& range, index_t total, std::string_view what,
                   std::string_view path, index_t& begin, index_t& end) {
  begin = range.begin;
  end = range.end == -1 ? total : range.end;
  require(0 <= begin && begin < end && end <= total,
          "{}: {} range [{}, {}) is empty or outside the operator's {} {}: expected "
          "0 <= begin < end <= {}",
          path, what, range.begin, range.end, total, what, total);
}

// The kernels of an .npy file, shape (Nd, Nm, Nt).
Shape npy_shape(const NpyHeader& header, const std::string& path) {
  require(header.shape.size() == 3,
          "{}: has shape ({}): expected operator kernels, a 3-D array of shape (Nd, Nm, Nt)", path,
          fmt::join(header.shape, ", "));
  const Shape shape{header.shape[0], header.shape[1], header.shape[2]};
  require_indexable(shape, path);
  return shape;
}

OperatorData read_npy_operator(const std::string& path, const OperatorReadOptions& options) {
  const NpyHeader header = read_npy_header(path);
  const Shape full = npy_shape(header, path);
  const ResolvedSlice slice = resolve_slice(options.slice, full, path);
  OperatorData op = slice_to_read(full, slice, true, path);
  op.first_column =
      read_npy_slice(path, header, slice.row_begin, slice.row_end, slice.col_begin, slice.col_end);
  if (!options.allow_nonfinite)
    require_finite_kernels(op.first_column, op.shape, op.row_begin, op.col_begin, path,
                           options.allow_nonfinite_name);
  return op;
}

void write_npy_operator(const std::string& path, const OperatorData& op) {
  require_triangular(op, path, "an .npy file holds the kernels of a",
                     "write a general operator to .h5");
  const std::array<index_t, 3> dims = {op.shape.nd, op.shape.nm, op.shape.nt};
  write_npy(path, op.first_column, dims);
}

OperatorInfo inspect_npy_operator(const std::string& path) {
  const NpyHeader header = read_npy_header(path);
  const Shape shape = npy_shape(header, path);
  const index_t itemsize = header.dtype == DType::Float64 ? 8 : 4;
  return {
      .format = OperatorFormat::Npy,
      .shape = shape,
      .triangular = true,
      .stored_bytes = shape.kernel_size() * itemsize,
      .details = {{"dtype", std::string(header.dtype == DType::Float64 ? "float64" : "float32")}}};
}

constexpr OperatorCodec kNpyCodec{read_npy_operator, write_npy_operator, inspect_npy_operator};

// Shiftop, and Auto (which the callers resolve first): shiftop's own HDF5 file.
const OperatorCodec& codec(OperatorFormat format) {
  return format == OperatorFormat::FFTMatvec ? fftmatvec::kOperatorCodec
         : format == OperatorFormat::Npy     ? kNpyCodec
                                             : shiftop_h5::kOperatorCodec;
}

void require_exists(const std::string& path) {
  require_regular_input(path, "an operator (shiftop .h5, .npy, or an FFTMatvec directory)", true);
  std::error_code error;
  require(fs::exists(path, error),
          "{}: no such file or directory: expected an operator (shiftop .h5, .npy, or an FFTMatvec "
          "directory)",
          path);
}

}  // namespace

ResolvedSlice resolve_slice(const OperatorSlice& slice, const Shape& full, std::string_view path) {
  ResolvedSlice out;
  resolve_range(slice.rows, full.nd, "rows", path, out.row_begin, out.row_end);
  resolve_range(slice.cols, full.nm, "parameter blocks", path, out.col_begin, out.col_end);
  return out;
}

OperatorFormat detect_operator_format(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return OperatorFormat::FFTMatvec;
  return lowercase_extension(path) == ".npy" ? OperatorFormat::Npy : OperatorFormat::Shiftop;
}

OperatorFormat output_operator_format(const std::string& path) {
  const std::string extension = lowercase_extension(path);
  if (extension == ".h5" || extension == ".hdf5") return OperatorFormat::Shiftop;
  if (extension == ".npy") return OperatorFormat::Npy;
  return OperatorFormat::FFTMatvec;
}

OperatorData read_operator(const std::string& path, const OperatorReadOptions& options) {
  require_exists(path);
  return codec(detect_operator_format(path)).read(path, options);
}

void write_operator(const std::string& path, const OperatorData& op, OperatorFormat format) {
  require(op.full_shape == op.shape && op.row_begin == 0 && op.col_begin == 0,
          "{}: cannot write a slice {} of an operator {} as an operator: expected a whole operator",
          path, op.shape.str(), op.full_shape.str());
  require_writable(op, path);
  codec(format == OperatorFormat::Auto ? output_operator_format(path) : format).write(path, op);
}

OperatorInfo inspect_operator(const std::string& path) {
  require_exists(path);
  return codec(detect_operator_format(path)).inspect(path);
}

}  // namespace shiftop::io
