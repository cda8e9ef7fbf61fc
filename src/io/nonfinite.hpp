// Refusing NaN and infinity in operators and vectors read from files, naming where the first one
// is: a non-finite kernel entry poisons every output of a matvec, so it is almost always a sign
// of a broken upstream solve rather than data.
#pragma once

#include <span>
#include <string_view>

#include "shiftop/core/shape.hpp"

namespace shiftop::io {

/// Throws unless every entry of kernels[rows][cols][nt] is finite; the message names `where`,
/// the (row, parameter block, time) of the first NaN or infinity in whole-operator indices
/// (offset by row_begin, col_begin), and `accepted_by`, the caller's option that accepts them
/// (none if empty: a command without one must not name it).
void require_finite_kernels(std::span<const double> kernels, const Shape& slice, index_t row_begin,
                            index_t col_begin, std::string_view where,
                            std::string_view accepted_by);

/// Throws unless every entry of vectors[nrhs][blocks][nt] is finite; the message names `where`,
/// the (right-hand side, block, time) of the first NaN or infinity and `accepted_by` as above.
void require_finite_vectors(std::span<const double> values, index_t blocks, index_t nt,
                            std::string_view where, std::string_view accepted_by);

}  // namespace shiftop::io
