// The shape pr x pc of a 2D process grid (Venkat et al., fft-block-toeplitz-matvec-multi-gpu,
// section 3.2), without MPI: what grid choice and partitioning reason about.
#pragma once

#include <string>
#include <string_view>

namespace shiftop::distributed {

struct GridShape {
  int rows = 1;  // pr: the observation blocks (Nd) are split over the grid rows
  int cols = 1;  // pc: the parameter blocks (Nm) are split over the grid columns

  int size() const { return rows * cols; }
  /// "2x4".
  std::string str() const;
  bool operator==(const GridShape&) const = default;

  /// Parses "PRxPC" (e.g. "2x4", positive integers); throws shiftop::Error naming the text.
  static GridShape parse(std::string_view text);
};

}  // namespace shiftop::distributed
