#include "shiftop/svd/strategy.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "shiftop/core/error.hpp"
#include "svd/strategy_expansion.hpp"
#include "svd/strategy_tables.hpp"

namespace shiftop::svd {
namespace {

// The base order 2o of an even order 2^k * 2o, o odd.
index_t base_order(index_t even_order) {
  return 2 * (even_order >> std::countr_zero(static_cast<std::uint64_t>(even_order)));
}

// The smallest even order >= order whose base is tabulated (so Algorithm 2 reaches it).
index_t embedding_order(index_t order) {
  index_t even = order + order % 2;
  while (base_order(even) > detail::largest_tabulated_base_order())
    even += 2;
  return even;
}

// R-parallel_order (full steps) for an order embedding_order() returns.
std::vector<PivotPair> row_cyclic_closest(index_t order) {
  index_t built = base_order(order);
  const std::span<const std::uint8_t> bytes = detail::tabulated_row_cyclic_closest(built);
  std::vector<PivotPair> sweep(bytes.size() / 2);
  for (std::size_t k = 0; k < sweep.size(); ++k)
    sweep[k] = {bytes[2 * k], bytes[2 * k + 1]};
  for (; built < order; built *= 2)
    sweep = detail::expand_row_cyclic_closest(sweep, built);
  return sweep;
}

// Modified modulus (section 3.3.1): step k holds the pairs with p + q = k (mod order). An even
// order leaves k / 2 and k / 2 + order / 2 out of even steps k; they are paired there, so the pairs
// (a, a + order / 2) come twice. An odd order leaves only k * (order + 1) / 2 (mod order) out of
// step k, every pair comes once: order steps of (order - 1) / 2 pairs, a cyclic strategy.
std::vector<std::vector<PivotPair>> modified_modulus_steps(index_t order) {
  if (order == 1) return {};  // no pairs, so no steps (as for the other kinds)
  std::vector<std::vector<PivotPair>> steps(static_cast<std::size_t>(order));
  for (index_t k = 0; k < order; ++k) {
    std::vector<PivotPair>& step = steps[static_cast<std::size_t>(k)];
    step.reserve(static_cast<std::size_t>(order / 2));
    for (index_t p = 0; p < order; ++p) {
      const index_t q = p <= k ? k - p : k - p + order;
      if (p < q) step.push_back({static_cast<std::int32_t>(p), static_cast<std::int32_t>(q)});
    }
    if (order % 2 == 0 && k % 2 == 0) {
      step.push_back(
          {static_cast<std::int32_t>(k / 2), static_cast<std::int32_t>(k / 2 + order / 2)});
      std::ranges::sort(step, {}, &PivotPair::p);
    }
  }
  return steps;
}

// The row-cyclic-closest kinds, forward, for any order: the sweep of the embedding order without
// the pairs that touch indices >= order, and without the steps that leaves empty.
std::vector<std::vector<PivotPair>> row_cyclic_closest_steps(index_t order) {
  const index_t embedded = embedding_order(order);
  const std::vector<PivotPair> sweep = row_cyclic_closest(embedded);
  std::vector<std::vector<PivotPair>> steps;
  for (std::size_t first = 0; first < sweep.size();
       first += static_cast<std::size_t>(embedded / 2)) {
    std::vector<PivotPair> step;
    step.reserve(static_cast<std::size_t>(embedded / 2));
    for (std::size_t k = first; k < first + static_cast<std::size_t>(embedded / 2); ++k) {
      if (sweep[k].q < order) step.push_back(sweep[k]);
    }
    if (!step.empty()) steps.push_back(std::move(step));
  }
  return steps;
}

// create() keeps the strategies of orders up to this one (the inner orders of the blocked
// variants, asked for per block pair): all of them would take 3 kinds * sum 8 n^2 / 2 bytes, 8.5
// MB. A larger order is built again each time; its sweep costs far more than building it.
constexpr index_t kLargestCachedOrder = 128;

// Row-cyclic: every pair once, in row order, one pair per step.
std::vector<std::vector<PivotPair>> row_cyclic_steps(index_t order) {
  std::vector<std::vector<PivotPair>> steps;
  steps.reserve(static_cast<std::size_t>(order * (order - 1) / 2));
  for (index_t p = 0; p < order; ++p)
    for (index_t q = p + 1; q < order; ++q)
      steps.push_back({{static_cast<std::int32_t>(p), static_cast<std::int32_t>(q)}});
  return steps;
}

Strategy build(StrategyKind kind, index_t order) {
  if (kind == StrategyKind::RowCyclic)
    return Strategy::from_steps(kind, order, row_cyclic_steps(order));
  if (kind == StrategyKind::ModifiedModulus) {
    return Strategy::from_steps(kind, order, modified_modulus_steps(order));
  }
  std::vector<std::vector<PivotPair>> steps = row_cyclic_closest_steps(order);
  if (kind == StrategyKind::ReversedRowCyclicClosest) {
    // The sweep's pairs in reverse order (section 2.2): the steps and the pairs within them.
    std::ranges::reverse(steps);
    for (std::vector<PivotPair>& step : steps)
      std::ranges::reverse(step);
  }
  return Strategy::from_steps(kind, order, steps);
}

}  // namespace

Strategy Strategy::create(StrategyKind kind, index_t order) {
  require(order >= 1, "strategy: order must be >= 1, got {}", order);
  if (order > kLargestCachedOrder) return build(kind, order);
  static std::mutex mutex;
  static std::map<std::pair<StrategyKind, index_t>, Strategy> built;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = built.find({kind, order});
  if (found == built.end()) found = built.emplace(std::pair{kind, order}, build(kind, order)).first;
  return found->second;
}

Strategy Strategy::from_steps(StrategyKind kind, index_t order,
                              const std::vector<std::vector<PivotPair>>& steps) {
  require(order >= 1, "strategy: order must be >= 1, got {}", order);
  Strategy strategy;
  strategy.kind_ = kind;
  strategy.order_ = order;
  std::size_t total = 0;
  for (const std::vector<PivotPair>& step : steps)
    total += step.size();
  strategy.pairs_.reserve(total);
  strategy.offsets_.reserve(steps.size() + 1);
  std::vector<index_t> last_step(static_cast<std::size_t>(order), -1);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (const PivotPair& pair : steps[s]) {
      require(0 <= pair.p && pair.p < pair.q && pair.q < order,
              "strategy: pair ({}, {}) of step {} is not 0 <= p < q < order = {}", pair.p, pair.q,
              s, order);
      for (const std::int32_t index : {pair.p, pair.q}) {
        index_t& last = last_step[static_cast<std::size_t>(index)];
        require(last != static_cast<index_t>(s),
                "strategy: index {} occurs twice in step {}, whose pairs must be disjoint", index,
                s);
        last = static_cast<index_t>(s);
      }
      strategy.pairs_.push_back(pair);
    }
    strategy.offsets_.push_back(static_cast<index_t>(strategy.pairs_.size()));
  }
  return strategy;
}

}  // namespace shiftop::svd
