// Reading and writing block Toeplitz operators in every format shiftop knows, whole or in part:
//   * shiftop's own HDF5 file (.h5/.hdf5): dataset "kernels" of shape (Nd, Nm, Nt), float64, SOTI,
//     the first block column; for a general (non-triangular) operator also "first_row" of the same
//     shape; root attributes nd, nm, nt, triangular (optional on reading, checked against the
//     datasets when present); free-form metadata as attributes of group "metadata" (units,
//     provenance), carried through conversions; the FFTMatvec block-row attributes it carries
//     (OperatorData::fftmatvec_attributes) in group "fftmatvec_attributes": as its attributes when
//     every block row has the same, else in subgroups row_NNNNNN, one per block row;
//     root attribute format_version, when present, must be 1; other attributes are ignored;
//   * FFTMatvec's matrix directory (fftmatvec_format.hpp): the directory that contains binary/;
//   * .npy: the kernels array of shape (Nd, Nm, Nt), float64 or float32 (triangular operators
//     only, no metadata).
// Every reader refuses NaN/infinity unless asked not to, and checks that the slice it is asked
// for fits in memory before allocating it (core/available_memory.hpp).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/io/attribute.hpp"
#include "shiftop/io/file_details.hpp"

namespace shiftop::io {

/// A half-open range [begin, end) of block indices; end = -1 means "to the last block".
struct BlockRange {
  index_t begin = 0;
  index_t end = -1;
};

/// Which observation blocks (rows) and parameter blocks (cols) of the operator to read.
struct OperatorSlice {
  BlockRange rows;
  BlockRange cols;
};

/// An operator, or the slice of one that was read.
struct OperatorData {
  Shape full_shape;
  /// Shape of the slice held here: {rows, cols, nt}.
  Shape shape;
  index_t row_begin = 0, col_begin = 0;
  bool triangular = true;
  /// First block column, double[rows][cols][nt] (SOTI).
  std::vector<double> first_column{};
  /// First block row, same shape; empty when triangular.
  std::vector<double> first_row{};
  /// Free-form (key, value) metadata carried through conversions (units, provenance).
  std::vector<std::pair<std::string, std::string>> metadata{};
  /// Per block row of the slice (or empty: none), the scalar attributes of FFTMatvec's block-row
  /// dataset "vec" that shiftop does not interpret (all but reindex, n_param, param_steps and
  /// checksum), with their types: carried to shiftop .h5 (group "fftmatvec_attributes") and back
  /// to the block rows of an FFTMatvec directory.
  std::vector<Attributes> fftmatvec_attributes{};
  /// Names of block-row attributes of types shiftop cannot carry (compound, multi-dimensional,
  /// arrays of strings): named by `convert` as dropped.
  std::vector<std::string> uncarried_attributes{};
};

/// The rows [row_begin, row_end) and parameter blocks [col_begin, col_end) a slice selects.
struct ResolvedSlice {
  index_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  index_t rows() const { return row_end - row_begin; }
  index_t cols() const { return col_end - col_begin; }
};

/// Resolves end = -1 to the last block; throws shiftop::Error naming `path` unless
/// 0 <= begin < end <= Nd (rows) or Nm (cols).
ResolvedSlice resolve_slice(const OperatorSlice& slice, const Shape& full, std::string_view path);

enum class OperatorFormat { Auto, Shiftop, FFTMatvec, Npy };

}  // namespace shiftop::io

template <>
struct shiftop::EnumNames<shiftop::io::OperatorFormat> {
  static constexpr std::array<std::pair<io::OperatorFormat, std::string_view>, 4> table{
      {{io::OperatorFormat::Auto, "auto"},
       {io::OperatorFormat::Shiftop, "shiftop"},
       {io::OperatorFormat::FFTMatvec, "fftmatvec"},
       {io::OperatorFormat::Npy, "npy"}}};
};

namespace shiftop::io {

struct OperatorReadOptions {
  OperatorSlice slice{};
  /// Accept NaN and infinity in the kernels instead of refusing them with their location.
  bool allow_nonfinite = false;
  /// What accepts them in the caller's words, which the refusal names ("--allow-nonfinite" in
  /// the tool, "allow_nonfinite=True" in Python); empty where the caller offers no such choice.
  std::string_view allow_nonfinite_name = {};
};

/// The format of an existing operator: FFTMatvec for a directory (the one that contains
/// binary/meta_adj), Npy for a .npy file, Shiftop for any other file (HDF5, checked on reading).
OperatorFormat detect_operator_format(const std::string& path);
/// The format write_operator picks for Auto: Shiftop for .h5/.hdf5, Npy for .npy, FFTMatvec for
/// anything else (a directory name).
OperatorFormat output_operator_format(const std::string& path);

/// Reads the slice `options.slice` of the operator at `path`; only that slice is read from disk.
/// Throws shiftop::Error naming the file and what was expected on any bad input, and before
/// allocating if the slice does not fit in the available memory.
OperatorData read_operator(const std::string& path, const OperatorReadOptions& options = {});

/// Writes the whole operator `op` (which must not be a slice) atomically: under a temporary name
/// renamed into place, so a failure leaves nothing at `path` (nor changes what was there).
void write_operator(const std::string& path, const OperatorData& op,
                    OperatorFormat format = OperatorFormat::Auto);

/// What an operator file holds, from its metadata alone (no kernel values are read).
struct OperatorInfo {
  OperatorFormat format = OperatorFormat::Auto;
  Shape shape;
  bool triangular = true;
  /// Bytes of kernel data stored (both block column and row for a general operator).
  index_t stored_bytes = 0;
  /// Format-specific facts (FFTMatvec flags, dtype, ...) followed by the file's metadata.
  Details details{};
};

OperatorInfo inspect_operator(const std::string& path);

}  // namespace shiftop::io
