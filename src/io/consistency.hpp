// Checks shared by the readers and writers of every format: sizes that can be indexed, data whose
// length matches its declared shape, and the two descriptions of F_0 in a general operator.
#pragma once

#include <string_view>

#include "shiftop/core/shape.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::io {

/// Throws unless every size is positive and Nd*Nm*Nt kernel entries can be indexed (in bytes).
void require_indexable(const Shape& shape, std::string_view context);

/// Bytes of kernel data of an operator of `shape`: 8*Nd*Nm*Nt, twice that for a general one.
/// A double, so that absurd sizes from a file do not overflow before they are refused.
double stored_bytes(const Shape& shape, bool triangular);

/// For a general operator, first_row[i][j][0] and first_column[i][j][0] both hold (F_0)_ij and
/// must be equal.
void require_consistent_lag_zero(const OperatorData& op, std::string_view path);

/// Throws unless `op` holds the values its shape says (a whole operator, not a slice).
void require_writable(const OperatorData& op, std::string_view path);
/// Throws unless `vector` holds nrhs*blocks*nt values and every size is positive.
void require_writable(const VectorData& vector, std::string_view path);

}  // namespace shiftop::io
