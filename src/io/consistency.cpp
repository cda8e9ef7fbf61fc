#include "io/consistency.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <limits>

#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::io {

void require_indexable(const Shape& shape, std::string_view context) {
  require(shape.nd > 0 && shape.nm > 0 && shape.nt > 0,
          "{}: operator shape {} has an empty dimension: expected positive sizes", context,
          shape.str());
  require(stored_bytes(shape, false) < static_cast<double>(std::numeric_limits<index_t>::max() / 2),
          "{}: operator shape {} is absurdly large: expected at most {} bytes of kernels", context,
          shape.str(), std::numeric_limits<index_t>::max() / 2);
}

double stored_bytes(const Shape& shape, bool triangular) {
  const double entries =
      static_cast<double>(shape.nd) * static_cast<double>(shape.nm) * static_cast<double>(shape.nt);
  return (triangular ? 8.0 : 16.0) * entries;
}

OperatorData slice_to_read(const Shape& full, const ResolvedSlice& slice, bool triangular,
                           std::string_view path) {
  OperatorData op;
  op.full_shape = full;
  op.shape = {slice.rows(), slice.cols(), full.nt};
  op.row_begin = slice.row_begin;
  op.col_begin = slice.col_begin;
  op.triangular = triangular;
  require_available_memory(stored_bytes(op.shape, triangular),
                           fmt::format("{}: reading the operator slice {}", path, op.shape.str()));
  return op;
}

void require_consistent_lag_zero(const OperatorData& op, std::string_view path) {
  if (op.triangular) return;
  const index_t nt = op.shape.nt;
  for (index_t k = 0; k < op.shape.nd * op.shape.nm; ++k) {
    // Bitwise, so that the check is exact and a NaN accepted with --allow-nonfinite passes.
    const auto column = std::bit_cast<std::uint64_t>(op.first_column[k * nt]);
    const auto row = std::bit_cast<std::uint64_t>(op.first_row[k * nt]);
    require(column == row,
            "{}: first_row and first block column disagree at lag 0, (row {}, parameter block "
            "{}): {} vs {}: expected equal values (both are F_0)",
            path, op.row_begin + k / op.shape.nm, op.col_begin + k % op.shape.nm,
            op.first_row[k * nt], op.first_column[k * nt]);
  }
}

void require_writable(const OperatorData& op, std::string_view path) {
  require_indexable(op.shape, path);
  const auto size = static_cast<std::size_t>(op.shape.kernel_size());
  require(op.first_column.size() == size,
          "{}: cannot write: the first block column holds {} values: expected {} for shape {}",
          path, op.first_column.size(), size, op.shape.str());
  require(op.triangular ? op.first_row.empty() : op.first_row.size() == size,
          "{}: cannot write: the first block row holds {} values: expected {}", path,
          op.first_row.size(), op.triangular ? 0 : size);
  require_consistent_lag_zero(op, path);
}

void require_writable(const VectorData& vector, std::string_view path) {
  require(vector.nrhs > 0 && vector.blocks > 0 && vector.nt > 0,
          "{}: cannot write a vector with an empty dimension (nrhs={}, blocks={}, nt={})", path,
          vector.nrhs, vector.blocks, vector.nt);
  const double count = static_cast<double>(vector.nrhs) * static_cast<double>(vector.blocks) *
                       static_cast<double>(vector.nt);
  require(static_cast<double>(vector.values.size()) == count,
          "{}: cannot write: the vector holds {} values: expected nrhs*blocks*nt = {}", path,
          vector.values.size(), count);
}

std::vector<index_t> stored_dims(const VectorData& vector) {
  std::vector<index_t> dims = {vector.blocks, vector.nt};
  if (vector.batched || vector.nrhs != 1) dims.insert(dims.begin(), vector.nrhs);
  return dims;
}

void require_triangular(const OperatorData& op, std::string_view path, std::string_view holder,
                        std::string_view hint) {
  require(op.triangular,
          "{}: {} block lower-triangular operator only: expected no first block row ({})", path,
          holder, hint);
}

}  // namespace shiftop::io
