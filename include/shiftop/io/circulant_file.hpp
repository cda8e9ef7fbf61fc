// A sparse block-circulant operator in HDF5 (include/shiftop/core/circulant_data.hpp): the CSR of
// its first block row A (mB x k*nB) as datasets
//   indptr  (mB+1,) int32 or int64: row offsets, from 0, nondecreasing;
//   indices (nnz,)  int32 or int64: columns in [0, k*nB) (column c is column c mod nB of A_{c/nB});
//   data    (nnz,)  float32 or float64: the values, finite;
// and root attributes mB, nB, k (integers); the names scipy.sparse.csr_matrix uses for its arrays,
// so that h5py can write one. Indices are written as int32 when every offset and column fits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "shiftop/core/circulant_data.hpp"

namespace shiftop::io {

/// What a circulant file holds, read from its attributes and dataset headers only.
struct CirculantInfo {
  circ::Shape shape;
  std::int64_t nnz = 0;
  std::string value_type;  // "float32" or "float64"
  int index_bits = 32;     // 64 when indptr or indices is int64
  /// Bytes of the three datasets' values.
  std::int64_t stored_bytes = 0;
};

/// Checks the attributes and the datasets' types and lengths; throws shiftop::Error with one line
/// naming the file and what was expected (not HDF5, a missing dataset or attribute, a wrong type
/// or length).
CirculantInfo inspect_circulant(const std::string& path);

/// Reads and validates (circ::validate) the whole file. T = double reads float32 and float64
/// values (float32 exactly); T = float refuses float64 values rather than round them. Refuses a
/// file whose arrays would not fit in the available memory before allocating them.
template <class T>
circ::FirstBlockRow<T> read_circulant(const std::string& path);

/// A first block row in the value type its file stores, so that a copy (`shiftop convert`) keeps
/// float32 values float32.
using StoredCirculant = std::variant<circ::FirstBlockRow<float>, circ::FirstBlockRow<double>>;

/// read_circulant<float> for a file of float32 values, read_circulant<double> for float64.
StoredCirculant read_stored_circulant(const std::string& path);

struct CirculantWriteOptions {
  /// Replace a file already at the path (else refused, naming the path).
  bool overwrite = false;
  /// What replaces it in the caller's words, which the refusal names ("--overwrite" in the tool,
  /// "overwrite=True" in Python); empty names nothing.
  std::string_view overwrite_name = {};
};

/// Validates `a` and writes it to `path` atomically (a temporary file renamed into place), values
/// as float32 for T = float and float64 for T = double.
template <class T>
void write_circulant(const std::string& path, const circ::FirstBlockRow<T>& a,
                     const CirculantWriteOptions& options = {});

}  // namespace shiftop::io
