// Algorithm 2 of jacobi-svd-gsvd-gpu-thesis (section 2.2): R-parallel_n expanded to the closest
// block p-strategy of order 2n. Seen as n x n blocks of 2 x 2, the first step diagonalises the
// diagonal blocks, (2k, 2k + 1); then each step of R-parallel_n becomes two: its pairs' (NW, SE)
// elements, then their (NE, SW) ones. The thesis verified it equals Algorithm 1 for n <= 18.
#pragma once

#include <span>
#include <vector>

#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::detail {

/// `sweep`: order - 1 steps of order / 2 pairs (order even), each step sorted by p. Returns the
/// 2 * order - 1 steps of order pairs of the expansion, each sorted by p again.
std::vector<PivotPair> expand_row_cyclic_closest(std::span<const PivotPair> sweep, index_t order);

}  // namespace shiftop::svd::detail
