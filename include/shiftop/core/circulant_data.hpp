// The plain data of a sparse block-circulant operator C (include/shiftop/circ/operator.hpp): its
// shape and the CSR of its first block row A, with the check of one against the other. Data only,
// so that the file format (io/circulant_file.hpp) and the models that build A (models/ct2d.hpp)
// need not depend on the operator that applies C.
//
// C has k x k blocks of mb x nb, block (i, j) = A_{(j-i) mod k}, so it is (k*mb) x (k*nb) and
// A = (A_0 ... A_{k-1}), an mb x (k*nb) sparse matrix, gives all of it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::circ {

/// C is k x k blocks, each mb x nb: (k*mb) x (k*nb).
struct Shape {
  index_t k = 0;
  index_t mb = 0;
  index_t nb = 0;

  index_t rows() const { return k * mb; }
  index_t cols() const { return k * nb; }
  /// Throws shiftop::Error unless all sizes are positive and k*mb and k*nb are below 2^31 (the
  /// kernels address the dense operands with 32-bit offsets).
  void validate() const;
  /// "k=150 mb=19600 nb=8560 (2940000 x 1284000)".
  std::string str() const;
  bool operator==(const Shape&) const = default;
};

/// A non-owning view of the CSR of A (mb x k*nb): indptr has mb+1 nondecreasing entries starting
/// at 0; indices[indptr[r] .. indptr[r+1]) are the columns of row r, each in [0, k*nb) (column c
/// is column c mod nb of block A_{c / nb}), in any order, repeated columns adding; data the
/// matching finite values. I is std::int32_t or std::int64_t.
template <class T, class I>
struct CsrView {
  std::span<const I> indptr;
  std::span<const I> indices;
  std::span<const T> data;
};

/// An owned first block row with its shape: what the file reader and the CT model return.
template <class T>
struct FirstBlockRow {
  Shape shape;
  std::vector<std::int64_t> indptr;
  std::vector<std::int64_t> indices;
  std::vector<T> data;

  std::int64_t nnz() const { return static_cast<std::int64_t>(data.size()); }
  CsrView<T, std::int64_t> view() const { return {indptr, indices, data}; }
};

/// Checks a CSR against its shape (offsets, column range, finite values) and throws
/// shiftop::Error with one line naming the first violation, prefixed by `context` (a file name).
template <class T, class I>
void validate(const Shape& shape, CsrView<T, I> a, const std::string& context = "the CSR of A");

}  // namespace shiftop::circ
