// A parallel strategy (shiftop/svd/strategy.hpp) as the GPU kernels read it (host code): for the
// one-block method a steps x pairs_per_step table of (p, q), short steps padded with p = -1; for
// the blocked method's inner method (svd/cuda/gram_jacobi.cuh) a table of units, every column in
// one unit of each step.
#pragma once

#include <vector_types.h>

#include <algorithm>
#include <vector>

#include "shiftop/svd/strategy.hpp"

namespace shiftop::svd::gpu_kernels {

struct StrategyTable {
  std::vector<int2> pairs;  ///< at least one entry, so that the table always has an address
  int steps = 0, pairs_per_step = 0;
};

inline StrategyTable strategy_table(StrategyKind kind, index_t order) {
  const Strategy strategy = Strategy::create(kind, order);
  StrategyTable table;
  table.steps = static_cast<int>(strategy.steps());
  for (index_t s = 0; s < strategy.steps(); ++s)
    table.pairs_per_step =
        std::max(table.pairs_per_step, static_cast<int>(strategy.step(s).size()));
  table.pairs.assign(static_cast<std::size_t>(std::max(1, table.steps * table.pairs_per_step)),
                     int2{-1, -1});
  for (index_t s = 0; s < strategy.steps(); ++s) {
    const auto step = strategy.step(s);
    for (std::size_t k = 0; k < step.size(); ++k)
      table.pairs[s * table.pairs_per_step + k] = int2{step[k].p, step[k].q};
  }
  return table;
}

/// The table of units of a strategy for `order` columns: steps x units_per_step, every column in
/// exactly one unit of each step (host code; the blocked method uploads it).
struct UnitTable {
  std::vector<int2> units;
  int steps = 0, units_per_step = 0;
};
inline UnitTable unit_table(StrategyKind kind, index_t order) {
  const Strategy strategy = Strategy::create(kind, order);
  std::vector<std::vector<int2>> steps;
  for (index_t s = 0; s < strategy.steps(); ++s) {
    std::vector<int2>& units = steps.emplace_back();
    std::vector<bool> used(static_cast<std::size_t>(order), false);
    for (const PivotPair pair : strategy.step(s)) {
      units.push_back(int2{pair.p, pair.q});
      used[pair.p] = used[pair.q] = true;
    }
    for (index_t j = 0; j < order; ++j)
      if (!used[j]) units.push_back(int2{static_cast<int>(j), -1});
  }
  UnitTable table;
  table.steps = static_cast<int>(steps.size());
  for (const auto& units : steps)
    table.units_per_step = std::max(table.units_per_step, static_cast<int>(units.size()));
  table.units.assign(std::max<std::size_t>(1, steps.size() * table.units_per_step), int2{-1, -1});
  for (std::size_t s = 0; s < steps.size(); ++s)
    std::copy(steps[s].begin(), steps[s].end(), table.units.begin() + s * table.units_per_step);
  return table;
}

}  // namespace shiftop::svd::gpu_kernels
