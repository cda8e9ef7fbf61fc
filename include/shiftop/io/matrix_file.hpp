// Dense matrices in files, typed: io::read_matrix<T> and io::write_matrix<T> for T = float,
// double, std::complex<float> and std::complex<double>, the format picked by the file's
// extension: .npy (a 2-D array, C or Fortran order) or .h5/.hdf5 (a 2-D dataset; complex as
// h5py stores it, a compound of two floats named "r" and "i").
#pragma once

#include <complex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/io/npy.hpp"

namespace shiftop::io {

/// A matrix that owns its elements, column-major: element (r, c) is data[r + c * rows], the
/// layout of LAPACK and of svd::jacobi and svd::gsvd_hz's inputs and outputs.
template <class T>
struct Matrix {
  index_t rows = 0, cols = 0;
  std::vector<T> data;
};

/// How a matrix file is written. Auto: by the name's extension (.npy, .h5 or .hdf5, any case);
/// a caller that writes to standard output, a FIFO or a device (which have no extension to go
/// by) names Npy, the one format written front to back.
enum class MatrixFormat { Auto, Npy, Hdf5 };

/// Which HDF5 dataset holds the matrix and what the caller calls that choice in messages.
struct MatrixReadOptions {
  /// Empty: the only 2-D dataset at the file's root. Refused for an .npy file (one array).
  std::string dataset = {};
  /// The caller's option naming `dataset` ("--dataset", gsvd's "--f-dataset").
  std::string_view dataset_option = "dataset";
  /// NaN and infinity are refused, naming the first (row, column) in column-major order, as
  /// the operator and vector readers do; true accepts them.
  bool allow_nonfinite = false;
  /// The caller's name for the file ("--input"), put before its path where the values are
  /// refused (non-finite entries, a type T does not hold).
  std::string_view option = {};
};

struct MatrixWriteOptions {
  MatrixFormat format = MatrixFormat::Auto;
  /// The HDF5 dataset written (at the root; the file holds nothing else).
  std::string dataset = "matrix";
};

/// The element type the file stores, from its header alone: the T that reads it exactly.
/// Throws shiftop::Error as read_matrix does for a file that is not a 2-D matrix it reads.
Element matrix_element(const std::string& path, const MatrixReadOptions& options = {});

/// Reads a 2-D float64, float32, complex128 or complex64 matrix. Conversions that keep every
/// value exactly are made: float32 into double, a real file into a complex T (imaginary parts
/// 0), complex64 into std::complex<double>; narrowing ones (float64 into float, complex into a
/// real T) are refused. Throws shiftop::Error, one line naming `path` and what was expected,
/// for an extension other than .npy, .h5 or .hdf5, a missing, truncated or corrupt file,
/// another rank or dtype, and non-finite entries (see MatrixReadOptions). 0 x n and m x 0
/// matrices are read.
template <class T>
Matrix<T> read_matrix(const std::string& path, const MatrixReadOptions& options = {});

/// Writes the rows x cols column-major `data` as T's element type (.npy: Fortran order; HDF5:
/// a rows x cols dataset). Written under a temporary name and renamed into place
/// (io::AtomicOutput): a failure leaves no partial file, and any file at `path` as it was.
/// Throws shiftop::Error naming `path` for an unknown extension, data.size() != rows * cols
/// and a failed write.
template <class T>
void write_matrix(const std::string& path, index_t rows, index_t cols, std::span<const T> data,
                  const MatrixWriteOptions& options = {});
template <class T>
void write_matrix(const std::string& path, const Matrix<T>& matrix,
                  const MatrixWriteOptions& options = {}) {
  write_matrix(path, matrix.rows, matrix.cols, std::span<const T>(matrix.data), options);
}

/// write_matrix for a 1-D array of `values` (NumPy shape (n,); an HDF5 dataset of one
/// dimension): the singular values beside the vectors.
template <class T>
void write_values(const std::string& path, std::span<const T> values,
                  const MatrixWriteOptions& options = {});

}  // namespace shiftop::io
