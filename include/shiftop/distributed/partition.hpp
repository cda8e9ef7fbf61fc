// Which blocks of the operator and of the vectors each rank (i, j) of a pr x pc grid owns
// (Venkat et al., section 3.2, eqs. 12-14): rank (i, j) holds the kernels of observation blocks
// [i*nd, (i+1)*nd) and parameter blocks [j*nm, (j+1)*nm), nd = ceil(Nd/pr), nm = ceil(Nm/pc),
// cut at Nd and Nm, so the last ranks may own fewer blocks or none. Parameter vectors live on
// grid row 0 (block j*nm.. on rank (0, j)), data vectors on grid column 0.
#pragma once

#include <span>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/distributed/grid_shape.hpp"

namespace shiftop::distributed {

/// The half-open range [begin, end) of block indices a rank owns (possibly empty).
struct IndexRange {
  index_t begin = 0;
  index_t end = 0;

  index_t size() const { return end - begin; }
  bool empty() const { return end == begin; }
  bool operator==(const IndexRange&) const = default;
};

/// Part `part` of `count` blocks split into `parts` ceil-sized pieces.
IndexRange ceil_split(index_t count, int parts, int part);

class Partition {
 public:
  /// Throws shiftop::Error for an invalid shape or grid.
  Partition(const Shape& shape, GridShape grid);

  const Shape& shape() const { return shape_; }
  const GridShape& grid() const { return grid_; }
  /// Observation (data) blocks of grid row i.
  IndexRange rows(int i) const { return ceil_split(shape_.nd, grid_.rows, i); }
  /// Parameter blocks of grid column j.
  IndexRange cols(int j) const { return ceil_split(shape_.nm, grid_.cols, j); }
  /// The operator slice of rank (i, j): {rows(i).size(), cols(j).size(), Nt}, either of the
  /// first two possibly zero.
  Shape local_shape(int i, int j) const;

 private:
  Shape shape_;
  GridShape grid_;
};

/// The kernels of observation blocks `rows` and parameter blocks `cols`, double[rows][cols][nt],
/// cut from the whole kernel array double[Nd][Nm][Nt] of `shape`.
std::vector<double> slice_kernels(std::span<const double> kernels, const Shape& shape,
                                  IndexRange rows, IndexRange cols);

/// Blocks `range` of each of `nrhs` vectors stored one after another as [blocks][nt]: the result
/// is nrhs vectors of range.size() blocks, again one after another.
std::vector<double> slice_blocks(std::span<const double> vectors, index_t nrhs, index_t blocks,
                                 index_t nt, IndexRange range);

}  // namespace shiftop::distributed
