#include "shiftop/io/matrix_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <type_traits>
#include <vector>

#include "io/hdf5.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"
#include "shiftop/io/extension.hpp"

namespace shiftop::io {
namespace {

using namespace h5;

// T's real type: T itself, or R of std::complex<R>.
template <class T>
struct ScalarOf {
  using type = T;
};
template <class R>
struct ScalarOf<std::complex<R>> {
  using type = R;
};
template <class T>
using Scalar = typename ScalarOf<T>::type;

template <class T>
constexpr bool kComplex = !std::is_same_v<Scalar<T>, T>;

// The element type T is written as.
template <class T>
constexpr Element kElement = kComplex<T>
                                 ? (std::is_same_v<Scalar<T>, float> ? Element::Complex64
                                                                     : Element::Complex128)
                                 : (std::is_same_v<T, float> ? Element::Float32 : Element::Float64);

MatrixFormat format_of(const std::string& path, MatrixFormat format) {
  if (format != MatrixFormat::Auto) return format;
  const std::string extension = lowercase_extension(path);
  if (extension == ".npy") return MatrixFormat::Npy;
  if (extension == ".h5" || extension == ".hdf5") return MatrixFormat::Hdf5;
  fail("{}: {}: expected a matrix file named .npy, .h5 or .hdf5", path,
       extension.empty() ? std::string("has no extension to name its format")
                         : fmt::format("ends in '{}'", extension));
}

// ---- HDF5 ----------------------------------------------------------------------------------

// The root's 2-D datasets, for choosing one when no dataset is named.
std::vector<std::string> matrix_datasets(hid_t file, const std::string& context) {
  std::vector<std::string> found;
  for (const std::string& name : link_names(file, context)) {
    const Handle object(H5Oopen(file, name.c_str(), H5P_DEFAULT), H5Oclose);
    if (object.get() < 0 || H5Iget_type(object.get()) != H5I_DATASET) continue;
    const Handle dataset = open_dataset(file, name, context);
    if (dataset_dims(dataset.get(), context).size() == 2) found.push_back(name);
  }
  return found;
}

// h5py's complex type: a compound of two IEEE floats of one size, "r" then "i", stored in
// `byte_order` (H5T_IEEE_F64LE, ...: the file's) or native (H5T_NATIVE_DOUBLE, ...: memory).
Handle complex_type(hid_t scalar, const std::string& context) {
  const std::size_t size = H5Tget_size(scalar);
  Handle type(H5Tcreate(H5T_COMPOUND, 2 * size), H5Tclose);
  require(type.get() >= 0 && H5Tinsert(type.get(), "r", 0, scalar) >= 0 &&
              H5Tinsert(type.get(), "i", size, scalar) >= 0,
          "{}: cannot make HDF5's complex type", context);
  return type;
}

// The Element a dataset stores: float64/float32, or h5py's complex compound of either.
Element hdf5_element(hid_t dataset, const std::string& context) {
  const Handle type(H5Dget_type(dataset), H5Tclose);
  require(type.get() >= 0, "{}: cannot read the element type", context);
  const auto float_size = [](hid_t t) {
    return H5Tget_class(t) == H5T_FLOAT ? H5Tget_size(t) : std::size_t{0};
  };
  if (const std::size_t size = float_size(type.get()); size == 8 || size == 4)
    return size == 8 ? Element::Float64 : Element::Float32;
  if (H5Tget_class(type.get()) == H5T_COMPOUND && H5Tget_nmembers(type.get()) == 2 &&
      H5Tget_member_index(type.get(), "r") >= 0 && H5Tget_member_index(type.get(), "i") >= 0) {
    const Handle re(H5Tget_member_type(type.get(), 0), H5Tclose);
    const Handle im(H5Tget_member_type(type.get(), 1), H5Tclose);
    const std::size_t size = float_size(re.get());
    if ((size == 8 || size == 4) && float_size(im.get()) == size)
      return size == 8 ? Element::Complex128 : Element::Complex64;
  }
  fail(
      "{}: stores {} values: expected float64, float32, or complex as h5py writes it (a "
      "compound of two floats 'r' and 'i')",
      context, element_type_name(dataset, context));
}

// The dataset holding the matrix, and "file: dataset 'name'" for messages about it.
struct OpenMatrix {
  Handle file, dataset;
  std::string context;
  std::vector<index_t> dims;
};

OpenMatrix open_hdf5_matrix(const std::string& path, const MatrixReadOptions& options) {
  OpenMatrix open{.file = open_file(path), .dataset = {}, .context = {}, .dims = {}};
  std::string name = options.dataset;
  if (name.empty()) {
    const std::vector<std::string> candidates = matrix_datasets(open.file.get(), path);
    require(candidates.size() == 1,
            "{}: expected exactly one 2-D dataset at the root, found {} ({}): name it with {}",
            path, candidates.size(), fmt::join(candidates, ", "), options.dataset_option);
    name = candidates.front();
  }
  open.context = fmt::format("{}: dataset '{}'", path, name);
  open.dataset = open_dataset(open.file.get(), name, path);
  open.dims = dataset_dims(open.dataset.get(), open.context);
  require(open.dims.size() == 2, "{}: expected a 2-D dataset (a matrix), got {} dimensions ({})",
          open.context, open.dims.size(), fmt::join(open.dims, ", "));
  return open;
}

// As read_npy_matrix returns it: column-major doubles, complex as (re, im) pairs.
DenseMatrix read_hdf5_matrix(const std::string& path, const MatrixReadOptions& options) {
  const OpenMatrix open = open_hdf5_matrix(path, options);
  const Element element = hdf5_element(open.dataset.get(), open.context);
  const std::size_t scalars = is_complex(element) ? 2 : 1;
  DenseMatrix matrix{.element = element, .rows = open.dims[0], .cols = open.dims[1], .data = {}};
  const auto rows = static_cast<std::size_t>(matrix.rows);
  const auto cols = static_cast<std::size_t>(matrix.cols);
  std::vector<double> row_major(rows * cols * scalars);
  const std::vector<index_t> offset{0, 0};
  // HDF5 converts float32 to double exactly, and the complex compound member by member.
  const Handle memory_type = scalars == 2 ? complex_type(H5T_NATIVE_DOUBLE, open.context)
                                          : Handle(H5Tcopy(H5T_NATIVE_DOUBLE), H5Tclose);
  read_values(open.dataset.get(), memory_type.get(), offset, open.dims, row_major.data(),
              open.context);
  matrix.data.resize(row_major.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      for (std::size_t s = 0; s < scalars; ++s)
        matrix.data[(c * rows + r) * scalars + s] = row_major[(r * cols + c) * scalars + s];
  return matrix;
}

// `dims` (one or two) of the column-major `data` as a dataset of T's element type, in C order.
template <class T>
void write_hdf5(const std::string& path, std::span<const index_t> dims, std::span<const T> data,
                const std::string& dataset) {
  std::vector<T> c_order(data.size());
  const std::size_t rows = static_cast<std::size_t>(dims[0]);
  const std::size_t cols = dims.size() == 2 ? static_cast<std::size_t>(dims[1]) : 1;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      c_order[r * cols + c] = data[c * rows + r];
  constexpr bool single = std::is_same_v<Scalar<T>, float>;
  const hid_t file_scalar = single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
  const hid_t memory_scalar = single ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
  AtomicOutput output(path, AtomicOutput::Kind::File);
  Handle file = create_file(output.path());
  if constexpr (kComplex<T>) {
    write_values(file.get(), dataset, complex_type(file_scalar, path).get(),
                 complex_type(memory_scalar, path).get(), dims, c_order.data(), path);
  } else {
    write_values(file.get(), dataset, file_scalar, memory_scalar, dims, c_order.data(), path);
  }
  file.close(path);
  output.commit();
}

// ---- conversions ---------------------------------------------------------------------------

// Whether T holds every value of `stored` exactly.
template <class T>
bool holds(Element stored) {
  if (is_complex(stored) && !kComplex<T>) return false;
  return !std::is_same_v<Scalar<T>, float> || is_single(stored);
}

template <class T>
void require_holds(Element stored, std::string_view path) {
  if (holds<T>(stored)) return;
  if (is_complex(stored) && !kComplex<T>)
    fail("{}: holds {} values, which have no real reading as {}: expected a real matrix", path,
         name_of(stored), name_of(kElement<T>));
  fail("{}: holds {} values, which {} would round: expected {}", path, name_of(stored),
       name_of(kElement<T>), kComplex<T> ? "complex64 or float32" : "float32");
}

void require_finite(const DenseMatrix& a, std::string_view path) {
  const std::size_t scalars = is_complex(a.element) ? 2 : 1;
  for (std::size_t k = 0; k < a.data.size(); ++k) {
    if (std::isfinite(a.data[k])) continue;
    const auto element = static_cast<index_t>(k / scalars);
    fail("{}: {} at (row {}, column {}): expected finite values", path,
         std::isnan(a.data[k]) ? "NaN" : "infinity", element % a.rows, element / a.rows);
  }
}

// T's elements as the doubles write_npy takes (complex as (re, im) pairs); floats convert
// exactly and write_npy rounds them back to the same floats.
template <class T>
std::vector<double> to_doubles(std::span<const T> values) {
  std::vector<double> out;
  out.reserve(values.size() * (kComplex<T> ? 2 : 1));
  for (const T& v : values) {
    if constexpr (kComplex<T>) {
      out.push_back(static_cast<double>(v.real()));
      out.push_back(static_cast<double>(v.imag()));
    } else {
      out.push_back(static_cast<double>(v));
    }
  }
  return out;
}

template <class T>
void write_array(const std::string& path, std::span<const index_t> dims, std::span<const T> data,
                 const MatrixWriteOptions& options) {
  const MatrixFormat format = format_of(path, options.format);
  index_t count = 1;
  for (const index_t n : dims) {
    require(n >= 0, "{}: cannot write shape ({}): expected non-negative dimensions", path,
            fmt::join(dims, ", "));
    count *= n;
  }
  require(static_cast<std::size_t>(count) == data.size(),
          "{}: cannot write shape ({}): it has {} elements but {} values were given, expected "
          "the same number",
          path, fmt::join(dims, ", "), count, data.size());
  if (format == MatrixFormat::Npy) {
    // Column-major is Fortran order; a 1-D array is the same in both.
    write_npy(path, to_doubles(data), dims, kElement<T>, dims.size() == 2);
  } else {
    write_hdf5(path, dims, data, options.dataset);
  }
}

// Whether `path` is read as .npy (else HDF5); refuses a dataset named for an .npy file.
bool is_npy_input(const std::string& path, const MatrixReadOptions& options) {
  if (format_of(path, MatrixFormat::Auto) == MatrixFormat::Hdf5) return false;
  require(options.dataset.empty(),
          "{} {}: {} is an .npy file, which holds one array: expected no {}",
          options.dataset_option, options.dataset, path, options.dataset_option);
  return true;
}

}  // namespace

Element matrix_element(const std::string& path, const MatrixReadOptions& options) {
  if (is_npy_input(path, options)) return read_npy_matrix_element(path);
  const OpenMatrix open = open_hdf5_matrix(path, options);
  return hdf5_element(open.dataset.get(), open.context);
}

template <class T>
Matrix<T> read_matrix(const std::string& path, const MatrixReadOptions& options) {
  const DenseMatrix stored =
      is_npy_input(path, options) ? read_npy_matrix(path) : read_hdf5_matrix(path, options);
  const std::string named =
      options.option.empty() ? path : fmt::format("{} {}", options.option, path);
  require_holds<T>(stored.element, named);
  if (!options.allow_nonfinite) require_finite(stored, named);
  Matrix<T> matrix{.rows = stored.rows, .cols = stored.cols, .data = {}};
  matrix.data.resize(static_cast<std::size_t>(stored.rows * stored.cols));
  const bool complex_file = is_complex(stored.element);
  for (std::size_t k = 0; k < matrix.data.size(); ++k) {
    if constexpr (kComplex<T>) {
      using R = Scalar<T>;
      matrix.data[k] = complex_file ? T(static_cast<R>(stored.data[2 * k]),
                                        static_cast<R>(stored.data[2 * k + 1]))
                                    : T(static_cast<R>(stored.data[k]), R(0));
    } else {
      matrix.data[k] = static_cast<T>(stored.data[k]);
    }
  }
  return matrix;
}

template <class T>
void write_matrix(const std::string& path, index_t rows, index_t cols, std::span<const T> data,
                  const MatrixWriteOptions& options) {
  const index_t dims[] = {rows, cols};
  write_array(path, std::span<const index_t>(dims), data, options);
}

template <class T>
void write_values(const std::string& path, std::span<const T> values,
                  const MatrixWriteOptions& options) {
  const index_t dims[] = {static_cast<index_t>(values.size())};
  write_array(path, std::span<const index_t>(dims), values, options);
}

#define SHIFTOP_MATRIX_FILE(T)                                                            \
  template Matrix<T> read_matrix<T>(const std::string&, const MatrixReadOptions&);        \
  template void write_matrix<T>(const std::string&, index_t, index_t, std::span<const T>, \
                                const MatrixWriteOptions&);                               \
  template void write_values<T>(const std::string&, std::span<const T>, const MatrixWriteOptions&);
SHIFTOP_MATRIX_FILE(float)
SHIFTOP_MATRIX_FILE(double)
SHIFTOP_MATRIX_FILE(std::complex<float>)
SHIFTOP_MATRIX_FILE(std::complex<double>)
#undef SHIFTOP_MATRIX_FILE

}  // namespace shiftop::io
