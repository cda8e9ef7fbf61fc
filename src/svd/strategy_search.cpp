#include "svd/strategy_search.hpp"

#include <array>
#include <bit>

#include "shiftop/core/error.hpp"

namespace shiftop::svd::detail {
namespace {

std::uint64_t bit(int index) {
  return std::uint64_t{1} << index;
}

// Whether the graph with edges {v, w} for w in adjacent[v] has a perfect matching on the vertex
// set `vertices` (Edmonds' blossom algorithm: an augmenting path from each unmatched vertex, odd
// cycles contracted to their base).
bool has_perfect_matching(const std::uint64_t* adjacent, std::uint64_t vertices) {
  std::array<int, kMaxSearchOrder> match;
  std::array<int, kMaxSearchOrder> parent;
  std::array<int, kMaxSearchOrder> base;
  std::array<int, kMaxSearchOrder> queue;
  match.fill(-1);
  for (std::uint64_t rest = vertices; rest != 0; rest &= rest - 1) {  // greedy start
    const int v = std::countr_zero(rest);
    if (match[v] != -1) continue;
    for (std::uint64_t partners = adjacent[v] & vertices; partners != 0; partners &= partners - 1) {
      const int w = std::countr_zero(partners);
      if (match[w] == -1) {
        match[v] = w;
        match[w] = v;
        break;
      }
    }
  }
  // The base of the blossom holding a and b: the first common vertex on their paths to the root.
  const auto common_base = [&](int a, int b) {
    std::uint64_t on_path = 0;
    for (;;) {
      a = base[a];
      on_path |= bit(a);
      if (match[a] == -1) break;
      a = parent[match[a]];
    }
    for (;;) {
      b = base[b];
      if ((on_path & bit(b)) != 0) return b;
      b = parent[match[b]];
    }
  };
  for (std::uint64_t rest = vertices; rest != 0; rest &= rest - 1) {
    const int root = std::countr_zero(rest);
    if (match[root] != -1) continue;
    // Breadth-first search for an augmenting path from root over the even ("outer") vertices.
    parent.fill(-1);
    for (int v = 0; v < kMaxSearchOrder; ++v)
      base[v] = v;
    std::uint64_t outer = bit(root);
    int head = 0;
    int tail = 0;
    queue[tail++] = root;
    int end = -1;
    while (head < tail && end == -1) {
      const int v = queue[head++];
      for (std::uint64_t next = adjacent[v] & vertices; next != 0 && end == -1; next &= next - 1) {
        const int to = std::countr_zero(next);
        if (base[v] == base[to] || match[v] == to) continue;
        if (to == root || (match[to] != -1 && parent[match[to]] != -1)) {
          // An odd cycle: contract the blossom to its base; its vertices all become outer.
          const int blossom_base = common_base(v, to);
          std::uint64_t in_blossom = 0;
          const auto mark_path = [&](int from, int child) {
            while (base[from] != blossom_base) {
              in_blossom |= bit(base[from]) | bit(base[match[from]]);
              parent[from] = child;
              child = match[from];
              from = parent[match[from]];
            }
          };
          mark_path(v, to);
          mark_path(to, v);
          for (std::uint64_t all = vertices; all != 0; all &= all - 1) {
            const int u = std::countr_zero(all);
            if ((in_blossom & bit(base[u])) == 0) continue;
            base[u] = blossom_base;
            if ((outer & bit(u)) == 0) {
              outer |= bit(u);
              queue[tail++] = u;
            }
          }
        } else if (parent[to] == -1) {
          parent[to] = v;
          if (match[to] == -1) {
            end = to;
          } else {
            outer |= bit(match[to]);
            queue[tail++] = match[to];
          }
        }
      }
    }
    if (end == -1) return false;   // root stays unmatched in every maximum matching
    for (int v = end; v != -1;) {  // augment along the path
      const int previous = parent[v];
      const int next = match[previous];
      match[v] = previous;
      match[previous] = v;
      v = next;
    }
  }
  return true;
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
      // The rest of the step must be a perfect matching of the free indices in the unused pairs:
      // checked exactly, the search never backtracks within a step.
      // The rest of the step must be a perfect matching of the free indices in the unused pairs:
      // checked exactly, so the search never backtracks within a step.
      if (has_perfect_matching(unused_, left) && extend_step(step, left)) return true;
      take_back(p, q);
    }
    return false;
  }

  std::uint64_t all_indices() const { return order_ == 64 ? ~std::uint64_t{0} : bit(order_) - 1; }

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
