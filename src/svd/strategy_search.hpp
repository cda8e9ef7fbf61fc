// Algorithm 1 of jacobi-svd-gsvd-gpu-thesis (section 2.2.1): the p-strategy closest to row-cyclic,
// R-parallel_n (Definition 2.1), found by a backtracking search over perfect matchings. Exponential
// in the worst case, but an exact perfect-matching test at each pair placed keeps it to a few
// thousand backtracks up to order 62 (0.02 s; the thesis' Listing 1 needed hours for 42). Its
// results for the base orders 2o, o odd, are tabulated (svd/strategy_tables.hpp) and doubled at
// run time (svd/strategy_expansion.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::detail {

/// The largest order the search represents (its sets are the bits of one 64-bit word).
inline constexpr int kMaxSearchOrder = 64;

struct SearchResult {
  /// order - 1 steps of order / 2 pairs each, every step sorted by p.
  std::vector<PivotPair> pairs;
  /// Candidate pairs that were placed and later taken back.
  std::uint64_t backtracks = 0;
};

/// R-parallel_order for an even order, 2 <= order <= kMaxSearchOrder.
SearchResult search_row_cyclic_closest(int order);

}  // namespace shiftop::svd::detail
