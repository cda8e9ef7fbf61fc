// The index type of shiftop and the sizes of a block Toeplitz operator: Nd observation blocks,
// Nm parameter blocks, Nt time steps (docs/btt.md). What the operator does with them
// (its operations, the circulant embedding) is btt's: include/shiftop/btt/op.hpp.
#pragma once

#include <cstdint>
#include <string>

namespace shiftop {

using index_t = std::int64_t;

/// F is (nd*nt) x (nm*nt): nd observation blocks, nm parameter blocks, nt time steps.
struct Shape {
  index_t nd = 0;
  index_t nm = 0;
  index_t nt = 0;

  /// Number of kernel entries nd*nm*nt (the first block column).
  index_t kernel_size() const { return nd * nm * nt; }
  /// Throws shiftop::Error unless all sizes are positive and the kernel count fits in memory.
  void validate() const;
  std::string str() const;
  bool operator==(const Shape&) const = default;
};

}  // namespace shiftop
