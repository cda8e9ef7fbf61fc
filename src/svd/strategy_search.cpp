#include "svd/strategy_search.hpp"

#include <bit>

#include "shiftop/core/error.hpp"

namespace shiftop::svd::detail {
namespace {

std::uint64_t bit(int index) {
  return std::uint64_t{1} << index;
}

// A p-step of an even order n is a perfect matching of K_n, a p-strategy a 1-factorisation. Sorted
// in the order of the row-cyclic strategy, the pairs of a step are sorted by p, and each pair's p
// is the smallest index the step's earlier pairs leave free. So the lexicographic order of the
// steps (Definition 2.1, steps compared as ascending vertex sequences) is the order in which a
// depth-first search meets them when it pairs the smallest free index with its candidate partners
// in ascending order: the first complete sweep it finds is the closest one.
class RowCyclicClosestSearch {
 public:
  explicit RowCyclicClosestSearch(int order) : order_(order) {
    for (int v = 0; v < order; ++v)
      unused_[v] = all_indices() & ~bit(v);
    result_.pairs.reserve(static_cast<std::size_t>(order / 2 * (order - 1)));
  }

  SearchResult run() {
    const bool found = extend_step(0, all_indices());
    // The search is exhaustive and 1-factorisations of K_n exist for every even n.
    require(found, "strategy search: no p-strategy of order {}", order_);
    return std::move(result_);
  }

 private:
  // Pairs the smallest index of `free` (the indices step `step` has not covered yet).
  bool extend_step(int step, std::uint64_t free) {
    if (free == 0) {
      return step == order_ - 2 || extend_step(step + 1, all_indices());
    }
    const int p = std::countr_zero(free);
    const std::uint64_t rest = free & ~bit(p);
    std::uint64_t candidates = unused_[p] & rest;
    // Step s holds (0, s + 1): the pairs (0, q) must lie in n - 1 different steps, and swapping
    // the step holding the smallest unused (0, q) with step s would give a closer strategy.
    if (p == 0) candidates &= bit(step + 1);
    while (candidates != 0) {
      const int q = std::countr_zero(candidates);
      candidates &= candidates - 1;
      const std::uint64_t left = rest & ~bit(q);
      place(p, q);
      if (free_indices_can_pair(left) && extend_step(step, left)) return true;
      take_back(p, q);
    }
    return false;
  }

  std::uint64_t all_indices() const { return order_ == 64 ? ~std::uint64_t{0} : bit(order_) - 1; }

  // Tutte's condition on the indices still free in this step: they need a perfect matching in the
  // unused pairs among them, so every index needs a partner and no component may be odd.
  bool free_indices_can_pair(std::uint64_t free) const {
    for (std::uint64_t rest = free; rest != 0;) {
      std::uint64_t component = rest & (~rest + 1);
      for (std::uint64_t frontier = component; frontier != 0;) {
        std::uint64_t reached = 0;
        for (std::uint64_t f = frontier; f != 0; f &= f - 1) {
          reached |= unused_[std::countr_zero(f)];
        }
        frontier = reached & rest & ~component;
        component |= frontier;
      }
      if (std::popcount(component) % 2 != 0) return false;
      rest &= ~component;
    }
    return true;
  }

  void place(int p, int q) {
    unused_[p] &= ~bit(q);
    unused_[q] &= ~bit(p);
    result_.pairs.push_back({p, q});
  }

  void take_back(int p, int q) {
    unused_[p] |= bit(q);
    unused_[q] |= bit(p);
    result_.pairs.pop_back();
    ++result_.backtracks;
  }

  int order_;
  std::uint64_t unused_[kMaxSearchOrder] = {};  // unused_[v]: the w with (v, w) in no step yet
  SearchResult result_;
};

}  // namespace

SearchResult search_row_cyclic_closest(int order) {
  require(order >= 2 && order <= kMaxSearchOrder && order % 2 == 0,
          "strategy search: order must be even and in [2, {}], got {}", kMaxSearchOrder, order);
  return RowCyclicClosestSearch(order).run();
}

}  // namespace shiftop::svd::detail
