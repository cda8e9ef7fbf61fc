// A parallel strategy (shiftop/svd/strategy.hpp) as the GPU kernels read it: a steps x
// pairs_per_step table of (p, q), short steps padded with p = -1 (host code; the one-block and
// the blocked methods upload it).
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

}  // namespace shiftop::svd::gpu_kernels
