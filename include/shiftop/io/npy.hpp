// NumPy .npy files: read format versions 1.0, 2.0 and 3.0 of little-endian float64/float32
// C-order arrays, write float64 as version 1.0 (2.0 only when the header needs it).
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::io {

enum class DType { Float64, Float32 };

/// What an .npy header says about the array that follows it.
struct NpyHeader {
  DType dtype = DType::Float64;
  std::vector<index_t> shape;   // empty for a 0-d array
  std::size_t data_offset = 0;  // bytes from the start of the file to the first element

  /// Number of elements: the product of the shape (1 for a 0-d array).
  index_t count() const;
};

/// An array read from an .npy file, converted to float64 (float32 values convert exactly).
struct NpyArray {
  std::vector<index_t> shape;
  std::vector<double> data;  // C order
};

/// Parses the header at the start of `bytes` (which may also hold the data that follows).
/// Throws shiftop::Error, naming `name`, on any input it does not accept: a bad magic string or
/// version, a header running past `bytes`, a malformed dictionary, an unsupported dtype, Fortran
/// order, or a shape whose element count does not fit in 64-bit byte sizes.
NpyHeader parse_npy_header(std::string_view bytes, std::string_view name);

/// Reads and parses the header of the .npy file at `path`.
NpyHeader read_npy_header(const std::string& path);

/// Reads a whole .npy file; throws shiftop::Error if the data section is shorter than the header
/// says. Bytes after the data section are ignored, as NumPy does.
NpyArray read_npy(const std::string& path);

/// Writes `data` with the given C-order `shape` as little-endian float64. The file is written
/// under a temporary name next to `path` and renamed into place, so a failure leaves no partial
/// output (and any previous file at `path` untouched).
void write_npy(const std::string& path, std::span<const double> data,
               std::span<const index_t> shape);

}  // namespace shiftop::io
