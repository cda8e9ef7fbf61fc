#include "shiftop/distributed/partition.hpp"

#include <algorithm>

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {

IndexRange ceil_split(index_t count, int parts, int part) {
  require(parts >= 1 && part >= 0 && part < parts,
          "invalid split: part {} of {} (expected 0 <= part < parts)", part, parts);
  const index_t piece = (count + parts - 1) / parts;
  return {std::min(count, part * piece), std::min(count, (part + 1) * piece)};
}

Partition::Partition(const Shape& shape, GridShape grid) : shape_(shape), grid_(grid) {
  shape.validate();
  require(grid.rows >= 1 && grid.cols >= 1,
          "invalid process grid {}: rows and columns must be positive", grid.str());
}

Shape Partition::local_shape(int i, int j) const {
  return {rows(i).size(), cols(j).size(), shape_.nt};
}

std::vector<double> slice_kernels(std::span<const double> kernels, const Shape& shape,
                                  IndexRange rows, IndexRange cols) {
  require(static_cast<index_t>(kernels.size()) == shape.kernel_size(),
          "kernel array holds {} values, expected Nd*Nm*Nt = {} for shape {}", kernels.size(),
          shape.kernel_size(), shape.str());
  require(0 <= rows.begin && rows.begin <= rows.end && rows.end <= shape.nd && 0 <= cols.begin &&
              cols.begin <= cols.end && cols.end <= shape.nm,
          "slice rows [{}, {}) x cols [{}, {}) is outside the operator {}", rows.begin, rows.end,
          cols.begin, cols.end, shape.str());
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(rows.size() * cols.size() * shape.nt));
  for (index_t i = rows.begin; i < rows.end; ++i) {
    const auto first = kernels.begin() + (i * shape.nm + cols.begin) * shape.nt;
    out.insert(out.end(), first, first + cols.size() * shape.nt);
  }
  return out;
}

std::vector<double> slice_blocks(std::span<const double> vectors, index_t nrhs, index_t blocks,
                                 index_t nt, IndexRange range) {
  require(static_cast<index_t>(vectors.size()) == nrhs * blocks * nt,
          "vectors hold {} values, expected nrhs*blocks*Nt = {}*{}*{}", vectors.size(), nrhs,
          blocks, nt);
  require(0 <= range.begin && range.begin <= range.end && range.end <= blocks,
          "block range [{}, {}) is outside [0, {})", range.begin, range.end, blocks);
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(nrhs * range.size() * nt));
  for (index_t r = 0; r < nrhs; ++r) {
    const auto first = vectors.begin() + (r * blocks + range.begin) * nt;
    out.insert(out.end(), first, first + range.size() * nt);
  }
  return out;
}

}  // namespace shiftop::distributed
