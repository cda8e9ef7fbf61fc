// NumPy .npy files: read format versions 1.0, 2.0 and 3.0 of little-endian float64/float32
// C-order arrays (whole arrays also in Fortran order), write float64 as version 1.0 (2.0 only
// when the header needs it). Dense matrices (the svd command) may also be complex.
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/enum_names.hpp"
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
  DType dtype = DType::Float64;  // the file's
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

/// Reads a whole .npy file, in C or Fortran order (returned in C order, unlike the header, which
/// readers of parts use and so must be C order); throws shiftop::Error for what
/// parse_npy_header refuses but the order, and if the data section is shorter than the header
/// says. Bytes after the data section are ignored, as NumPy does.
NpyArray read_npy(const std::string& path);

/// The element types of the dense matrices that read_npy_matrix reads and write_npy writes.
/// Named as NumPy names them.
enum class Element { Float64, Float32, Complex128, Complex64 };

}  // namespace shiftop::io

template <>
struct shiftop::EnumNames<shiftop::io::Element> {
  static constexpr std::array<std::pair<io::Element, std::string_view>, 4> table{
      {{io::Element::Float64, "float64"},
       {io::Element::Float32, "float32"},
       {io::Element::Complex128, "complex128"},
       {io::Element::Complex64, "complex64"}}};
};

namespace shiftop::io {

bool is_complex(Element element);
bool is_single(Element element);

/// A 2-D array, column-major in float64 whatever the file's order and precision; complex
/// elements as (re, im) pairs (2 * rows * cols doubles).
struct DenseMatrix {
  Element element = Element::Float64;
  index_t rows = 0, cols = 0;
  std::vector<double> data;
};

/// Reads a 2-D .npy array of any Element type, in C or Fortran order. Throws shiftop::Error
/// naming `path` for another rank or dtype, and for what read_npy refuses.
DenseMatrix read_npy_matrix(const std::string& path);
/// The Element type of the 2-D array read_npy_matrix would read, from the header alone (its
/// refusals but the data section's length).
Element read_npy_matrix_element(const std::string& path);

/// Writes `data` with the given C-order `shape` as little-endian float64. The file is written
/// under a temporary name next to `path` and renamed into place, so a failure leaves no partial
/// output (and any previous file at `path` untouched).
void write_npy(const std::string& path, std::span<const double> data,
               std::span<const index_t> shape);
/// The same as `element` (float32 and complex64 rounded to nearest; complex elements as (re, im)
/// pairs in `data`), with `fortran_order` `data` holds the array in column-major order.
void write_npy(const std::string& path, std::span<const double> data,
               std::span<const index_t> shape, Element element, bool fortran_order);

}  // namespace shiftop::io
