// Parallel pivot strategies of the one-sided Jacobi method (jacobi-svd-gsvd-gpu-thesis, section
// 2.2): a sweep is a sequence of parallel steps, each a set of disjoint pivot pairs (p, q), p < q,
// so that the pairs of one step can be processed at the same time.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::svd {

/// A pivot pair of (block-)column indices, zero-based, p < q.
struct PivotPair {
  std::int32_t p = 0;
  std::int32_t q = 0;
  bool operator==(const PivotPair&) const = default;
};

enum class StrategyKind {
  /// The reverse of the p-strategy closest to row-cyclic (R-parallel reversed, section 2.2): the
  /// thesis' recommendation (fastest in its Figures 2.20-2.21). Cyclic: each pair once per sweep.
  ReversedRowCyclicClosest,
  /// The p-strategy closest to row-cyclic (Definition 2.1), from tabulated base orders 2o (o odd)
  /// expanded by the doubling procedure (Algorithm 2). Cyclic. (Doubling gives the closest block
  /// strategy; it equals the closest one for all orders 4k <= 64 but 52, test_strategy.)
  RowCyclicClosest,
  /// Modified modulus (section 3.3.1, Figure 3.2): step k holds the pairs on the antidiagonal
  /// i + j = k (mod n), plus (k/2, k/2 + n/2) on even k so every step is full. Quasi-cyclic: the
  /// pairs (a, a + n/2) come twice per sweep. An odd order n: the antidiagonals alone, n steps of
  /// (n - 1)/2 pairs, each pair once (cyclic). For comparison only.
  ModifiedModulus,
  /// The sequential row-cyclic order (0,1), (0,2), .., (0,n-1), (1,2), .., (n-2,n-1), one pair
  /// per step (no parallelism): the inner strategy of the blocked Hari-Zimmermann GSVD (Table
  /// 3.2). "rc".
  RowCyclic,
};

}  // namespace shiftop::svd

template <>
struct shiftop::EnumNames<shiftop::svd::StrategyKind> {
  static constexpr std::array<std::pair<svd::StrategyKind, std::string_view>, 4> table{
      {{svd::StrategyKind::ReversedRowCyclicClosest, "rc-closest-rev"},
       {svd::StrategyKind::RowCyclicClosest, "rc-closest"},
       {svd::StrategyKind::ModifiedModulus, "modmod"},
       {svd::StrategyKind::RowCyclic, "rc"}}};
};

namespace shiftop::svd {

/// A parallel (quasi-)sweep for `order` (block-)columns. Any order >= 1: for the row-cyclic-closest
/// kinds, an odd order, or an even order whose base 2o is not tabulated (2o > 62), is embedded in
/// the smallest even order >= it that doubling a tabulated base reaches, and the pairs that touch
/// the added indices are dropped (their steps are then not full; emptied steps are dropped too, so
/// order 1 has no steps).
class Strategy {
 public:
  static Strategy create(StrategyKind kind, index_t order);

  StrategyKind kind() const { return kind_; }
  index_t order() const { return order_; }
  /// Parallel steps per (quasi-)sweep.
  index_t steps() const { return static_cast<index_t>(offsets_.size()) - 1; }
  /// The disjoint pairs of step s (0 <= s < steps()).
  std::span<const PivotPair> step(index_t s) const {
    return {pairs_.data() + offsets_[s], pairs_.data() + offsets_[s + 1]};
  }
  /// Every pair of the sweep in order (steps concatenated).
  std::span<const PivotPair> pairs() const { return pairs_; }

  /// From explicit steps (tests, tables); checks that pairs are in range, p < q, and disjoint
  /// within a step.
  static Strategy from_steps(StrategyKind kind, index_t order,
                             const std::vector<std::vector<PivotPair>>& steps);

 private:
  StrategyKind kind_ = StrategyKind::ReversedRowCyclicClosest;
  index_t order_ = 0;
  std::vector<PivotPair> pairs_;
  std::vector<index_t> offsets_{0};
};

}  // namespace shiftop::svd
