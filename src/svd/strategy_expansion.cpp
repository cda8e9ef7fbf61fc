#include "svd/strategy_expansion.hpp"

#include <cstdint>

#include "shiftop/core/error.hpp"

namespace shiftop::svd::detail {

std::vector<PivotPair> expand_row_cyclic_closest(std::span<const PivotPair> sweep, index_t order) {
  const index_t half = order / 2;
  require(order >= 2 && order % 2 == 0 && static_cast<index_t>(sweep.size()) == half * (order - 1),
          "strategy expansion: expected {} pairs of an even order, got {} of order {}",
          half * (order - 1), sweep.size(), order);
  std::vector<PivotPair> expanded;
  expanded.reserve(static_cast<std::size_t>(order * (2 * order - 1)));
  for (std::int32_t k = 0; k < order; ++k)
    expanded.push_back({2 * k, 2 * k + 1});
  for (index_t step = 0; step < order - 1; ++step) {
    const std::span<const PivotPair> pairs = sweep.subspan(step * half, half);
    // NW = (2p, 2q) before SE = (2p + 1, 2q + 1): p ascending keeps the step sorted by p.
    for (const PivotPair& pair : pairs) {
      expanded.push_back({2 * pair.p, 2 * pair.q});
      expanded.push_back({2 * pair.p + 1, 2 * pair.q + 1});
    }
    // Row-cyclic takes NE = (2p, 2q + 1) before SW = (2p + 1, 2q) (column-cyclic: SW first).
    for (const PivotPair& pair : pairs) {
      expanded.push_back({2 * pair.p, 2 * pair.q + 1});
      expanded.push_back({2 * pair.p + 1, 2 * pair.q});
    }
  }
  return expanded;
}

}  // namespace shiftop::svd::detail
