// A first block row prepared for the products (docs/circ.md, "Design decisions"), shared by the
// CPU and GPU engines. Nonzero (r, c) of A with c = d*nb + l (block d, column l of the block)
// contributes, for every output block i (eq. 3 with the duplicated input of eq. 5),
//   C:    Y[r][i] += v * X^[l][d + i]        X^ = (X X), rows of 2k (times nrhs) values
//   C^T:  X[l][i] += v * Y^[r][k - d + i]    Y^ = (Y Y), the same with the roles swapped,
// because block (i, j) of C^T is A_{(i-j) mod k}^T. Each product is therefore a row-by-row SpMM:
// a row of A (or of the transposed index) walks its nonzeros, each adding v times k contiguous
// values of a row of the duplicated dense operand to the row of the output.
#pragma once

#include <cstdint>
#include <vector>

#include "shiftop/circ/operator.hpp"

namespace shiftop::circ {

template <class T>
struct Layout {
  Shape shape;
  /// A by rows: indptr (mb+1), and per nonzero, each row's in ascending order of the start of
  /// its k values in X^, l*2k + d (in units of nrhs values), that start and its value.
  std::vector<std::int64_t> indptr;
  std::vector<std::uint32_t> offset;
  std::vector<T> data;
  /// The transposed index: for each column l in [0, nb) of the blocks (nb+1 offsets), its
  /// nonzeros over all blocks, rows ascending: the start of their k values in Y^,
  /// r*2k + (k - d), and the position of their value in `data`. C^T's values are A's.
  std::vector<std::int64_t> t_indptr;
  std::vector<std::uint32_t> t_offset;
  std::vector<std::uint32_t> t_source;

  std::int64_t nnz() const { return static_cast<std::int64_t>(data.size()); }
  std::size_t bytes() const;
};

/// Builds the layout from a CSR already validated against `shape`; repeated columns in a row are
/// kept as separate nonzeros (they add). Throws when nnz does not fit the 32-bit positions of the
/// transposed index.
template <class T, class I>
Layout<T> make_layout(const Shape& shape, CsrView<T, I> a);

}  // namespace shiftop::circ
