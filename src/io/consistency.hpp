// Checks shared by the readers and writers of every format: sizes that can be indexed, data whose
// length matches its declared shape, slices that fit in memory, and the two descriptions of F_0
// in a general operator; and the sizes of a vector from the dimensions it is stored with.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::io {

/// Throws unless every size is positive and Nd*Nm*Nt kernel entries can be indexed (in bytes).
void require_indexable(const Shape& shape, std::string_view context);

/// Bytes of kernel data of an operator of `shape`: 8*Nd*Nm*Nt, twice that for a general one.
/// A double, so that absurd sizes from a file do not overflow before they are refused.
double stored_bytes(const Shape& shape, bool triangular);

/// The slice `slice` of an operator of shape `full`, to be read: shapes and offsets set, no values
/// yet. Throws, naming `path`, if its kernels would not fit in the available memory.
OperatorData slice_to_read(const Shape& full, const ResolvedSlice& slice, bool triangular,
                           std::string_view path);

/// For a general operator, first_row[i][j][0] and first_column[i][j][0] both hold (F_0)_ij and
/// must be equal.
void require_consistent_lag_zero(const OperatorData& op, std::string_view path);

/// For formats that hold block lower-triangular operators only: refuses a general one with
/// "<path>: <holder> block lower-triangular operator only: expected no first block row (<hint>)".
void require_triangular(const OperatorData& op, std::string_view path, std::string_view holder,
                        std::string_view hint);

/// Throws unless `op` holds the values its shape says (a whole operator, not a slice).
void require_writable(const OperatorData& op, std::string_view path);
/// Throws unless `vector` holds nrhs*blocks*nt values and every size is positive.
void require_writable(const VectorData& vector, std::string_view path);

/// Sets batched, nrhs, blocks and nt of `vector` (a VectorData or a VectorInfo) from the
/// dimensions it is stored with: (blocks, Nt) or (nrhs, blocks, Nt).
template <typename Vector>
void set_sizes(Vector& vector, std::span<const index_t> dims) {
  vector.batched = dims.size() == 3;
  vector.nrhs = vector.batched ? dims[0] : 1;
  vector.blocks = dims[dims.size() - 2];
  vector.nt = dims.back();
}

/// The dimensions `vector` is stored with: (nrhs, blocks, Nt) when batched or nrhs > 1, else
/// (blocks, Nt).
std::vector<index_t> stored_dims(const VectorData& vector);

}  // namespace shiftop::io
