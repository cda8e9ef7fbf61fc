// Communication-aware choice of the process grid (Venkat et al., section 3.7, Algorithm 4).
//
// Cost model: one F (or F*) apply broadcasts the nm = ceil(Nm/c) local parameter blocks down
// each column of r ranks and reduces the nd = ceil(Nd/r) local data blocks across each row of c
// ranks, so its bandwidth term is 8 Nt (nm log r + nd log c) bytes along a tree (eq. 20 with the
// latency l = 0). Dropping constants leaves the dimensionless cost of eq. 25,
//   C(r; p, l) = (r/p) log r + (10^l / r) log(p/r),   10^l = Nd/Nm,
// minimised over the divisors r of p (logarithms base 2 here; the base does not move the minimum).
//
// Algorithm 4, with k ranks (GPUs) per node:
//   2: r~ = the divisor of p of least cost (ties: the larger r when Nd >= Nm, else the smaller).
//   3-4: r~ = 1 gives 1 x p and r~ = p gives p x 1 as they are. The paper warns that going from
//        r = 1 to r = k adds column communication even inside a node, so no node-aligned
//        neighbour is sought there.
//   5: otherwise look at r~ and its neighbouring divisors, keep those on the side the paper
//      prescribes (r >= c when Nd >= Nm, r < c otherwise) and, among them, prefer a node-aligned
//      grid (k | r or k | c: columns or rows made of whole nodes); the least cost wins.
#pragma once

#include <string>
#include <vector>

#include "shiftop/core/shape.hpp"
#include "shiftop/distributed/grid_shape.hpp"

namespace shiftop::distributed {

/// Eq. 25: the modelled communication cost of `rows` x (ranks/rows) for Nd/Nm = nd/nm.
double grid_cost(index_t nd, index_t nm, int rows, int ranks);

/// Eq. 20 with the latency set to zero and FP64 values: bytes moved along the critical path of
/// the broadcast and reduction trees of one F (or F*) apply on `grid`, with ceil local sizes.
double grid_critical_path_bytes(const Shape& shape, GridShape grid);

struct GridCandidate {
  GridShape grid;
  double cost = 0;            // grid_cost (eq. 25)
  double bytes = 0;           // grid_critical_path_bytes (eq. 20)
  bool node_aligned = false;  // k | rows or k | cols
};

struct GridChoice {
  GridShape grid;
  /// Every pr x pc with pr * pc = ranks, by increasing pr.
  std::vector<GridCandidate> candidates;
  /// Which step of Algorithm 4 decided, in words.
  std::string reason;
};

/// Algorithm 4 for `ranks` processes with `ranks_per_node` of them on each node.
/// Throws shiftop::Error for a bad shape or a non-positive count.
GridChoice choose_grid(const Shape& shape, int ranks, int ranks_per_node);

}  // namespace shiftop::distributed
