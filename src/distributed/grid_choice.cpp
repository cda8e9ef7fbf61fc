#include "shiftop/distributed/grid_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {
namespace {

index_t ceil_div(index_t a, index_t b) {
  return (a + b - 1) / b;
}

void check_divisor(int rows, int ranks) {
  require(ranks >= 1 && rows >= 1 && ranks % rows == 0,
          "invalid grid rows {} for {} ranks: rows must divide the number of ranks", rows, ranks);
}

}  // namespace

double grid_cost(index_t nd, index_t nm, int rows, int ranks) {
  check_divisor(rows, ranks);
  const double r = rows, p = ranks;
  const double ratio = static_cast<double>(nd) / static_cast<double>(nm);  // 10^l
  return r / p * std::log2(r) + ratio / r * std::log2(p / r);
}

double grid_critical_path_bytes(const Shape& shape, GridShape grid) {
  const index_t nd_local = ceil_div(shape.nd, grid.rows);
  const index_t nm_local = ceil_div(shape.nm, grid.cols);
  return 8.0 * static_cast<double>(shape.nt) *
         (static_cast<double>(nm_local) * std::log2(grid.rows) +
          static_cast<double>(nd_local) * std::log2(grid.cols));
}

GridChoice choose_grid(const Shape& shape, int ranks, int ranks_per_node) {
  shape.validate();
  require(ranks >= 1, "invalid number of ranks {}: expected a positive number", ranks);
  require(ranks_per_node >= 1, "invalid number of ranks per node {}: expected a positive number",
          ranks_per_node);
  GridChoice choice;
  for (int r = 1; r <= ranks; ++r) {
    if (ranks % r != 0) continue;
    const GridShape grid{r, ranks / r};
    choice.candidates.push_back(
        {.grid = grid,
         .cost = grid_cost(shape.nd, shape.nm, r, ranks),
         .bytes = grid_critical_path_bytes(shape, grid),
         .node_aligned = r % ranks_per_node == 0 || grid.cols % ranks_per_node == 0});
  }
  const std::vector<GridCandidate>& all = choice.candidates;

  // l >= 0 (Nd >= Nm) asks for r >= c, and ties go to the larger r; l < 0 the other way.
  const bool data_heavy = shape.nd >= shape.nm;
  const auto better = [&](std::size_t a, std::size_t b) {
    const double tolerance = 1e-12 * std::max(all[a].cost, all[b].cost);
    if (all[a].cost < all[b].cost - tolerance) return true;
    if (all[a].cost > all[b].cost + tolerance) return false;
    return data_heavy ? all[a].grid.rows > all[b].grid.rows : all[a].grid.rows < all[b].grid.rows;
  };
  const auto least = [&](const std::vector<std::size_t>& pool) {
    return *std::min_element(pool.begin(), pool.end(),
                             [&](std::size_t a, std::size_t b) { return better(a, b); });
  };

  std::vector<std::size_t> every(all.size());
  for (std::size_t k = 0; k < all.size(); ++k)
    every[k] = k;
  const std::size_t best = least(every);  // step 2
  const GridShape tilde = all[best].grid;
  if (tilde.rows == 1 || tilde.cols == 1) {  // steps 3 and 4
    choice.grid = tilde;
    choice.reason = fmt::format("Algorithm 4 step {}: the modelled cost (eq. 25) is least at {}",
                                tilde.rows == 1 ? 3 : 4, tilde.str());
    return choice;
  }

  // Step 5: r~ and its neighbouring divisors (both exist: 1 < r~ < p) on the prescribed side,
  // node-aligned ones first; r~ itself if none is on that side. Alignment is about on-node vs
  // off-node links (section 3.7), so it is moot when every rank is on one node.
  const bool several_nodes = ranks > ranks_per_node;
  std::vector<std::size_t> sided, aligned;
  for (std::size_t k = best - 1; k <= best + 1; ++k) {
    const GridShape g = all[k].grid;
    if (data_heavy ? g.rows < g.cols : g.rows >= g.cols) continue;
    sided.push_back(k);
    if (several_nodes && all[k].node_aligned) aligned.push_back(k);
  }
  const std::vector<std::size_t>& pool = !aligned.empty() ? aligned : sided;
  const std::size_t chosen = pool.empty() ? best : least(pool);
  choice.grid = all[chosen].grid;
  choice.reason = fmt::format(
      "Algorithm 4 step 5: the modelled cost (eq. 25) is least at {}; of it and its neighbouring "
      "divisors with rows {} columns, {} is the cheapest{} with {} ranks per node",
      tilde.str(), data_heavy ? ">=" : "<", choice.grid.str(),
      aligned.empty() ? (several_nodes ? " (none is node-aligned)" : " (all ranks on one node)")
                      : " node-aligned one",
      ranks_per_node);
  return choice;
}

}  // namespace shiftop::distributed
