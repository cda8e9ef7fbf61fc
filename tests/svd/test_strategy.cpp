// The parallel pivot strategies (svd/strategy.cpp): every kind and order 1..512 against the
// definitions (pairs in range and disjoint within steps, each pair once per sweep or, for modified
// modulus, where it must be), R-parallel against Algorithm 1 run here, the thesis' R_6, Lemma 2.2,
// the reverse, the table's provenance, names and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <ranges>
#include <vector>

#include "shiftop/svd/strategy.hpp"
#include "support/expect_error.hpp"
#include "svd/strategy_expansion.hpp"
#include "svd/strategy_search.hpp"
#include "svd/strategy_tables.hpp"

namespace shiftop::svd {
namespace {

using shiftop::testing::expect_error;

constexpr StrategyKind kKinds[] = {StrategyKind::ReversedRowCyclicClosest,
                                   StrategyKind::RowCyclicClosest, StrategyKind::ModifiedModulus,
                                   StrategyKind::RowCyclic};
constexpr index_t kLargestOrder = 512;

// Whether R-parallel of this even order is the tabulated base doubled, without embedding.
bool reached_by_doubling(index_t order) {
  const index_t base = 2 * (order >> std::countr_zero(static_cast<std::uint64_t>(order)));
  return order % 2 == 0 && base <= detail::largest_tabulated_base_order();
}

std::vector<PivotPair> as_pairs(std::span<const std::uint8_t> bytes) {
  std::vector<PivotPair> pairs;
  for (std::size_t k = 0; k + 1 < bytes.size(); k += 2)
    pairs.push_back({bytes[k], bytes[k + 1]});
  return pairs;
}

// How often each pair (p, q) occurs per sweep, checking range and disjointness on the way.
std::vector<int> pair_counts(const Strategy& strategy) {
  const index_t n = strategy.order();
  std::vector<int> counts(static_cast<std::size_t>(n * n), 0);
  std::vector<index_t> seen_in_step(static_cast<std::size_t>(n), -1);
  std::size_t total = 0;
  for (index_t s = 0; s < strategy.steps(); ++s) {
    EXPECT_FALSE(strategy.step(s).empty()) << "order " << n << " step " << s;
    for (const PivotPair& pair : strategy.step(s)) {
      EXPECT_TRUE(0 <= pair.p && pair.p < pair.q && pair.q < n)
          << "order " << n << " step " << s << " (" << pair.p << ", " << pair.q << ")";
      if (!(0 <= pair.p && pair.p < pair.q && pair.q < n)) continue;
      for (const std::int32_t index : {pair.p, pair.q}) {
        EXPECT_NE(seen_in_step[index], s) << "order " << n << ": index " << index << " twice";
        seen_in_step[index] = s;
      }
      ++counts[static_cast<std::size_t>(pair.p * n + pair.q)];
      ++total;
    }
  }
  EXPECT_EQ(total, strategy.pairs().size());
  return counts;
}

TEST(Strategy, CyclicKindsTakeEveryPairOncePerSweep) {
  for (const StrategyKind kind :
       {StrategyKind::ReversedRowCyclicClosest, StrategyKind::RowCyclicClosest}) {
    for (index_t n = 1; n <= kLargestOrder; ++n) {
      const Strategy strategy = Strategy::create(kind, n);
      ASSERT_EQ(strategy.order(), n);
      ASSERT_EQ(strategy.kind(), kind);
      const std::vector<int> counts = pair_counts(strategy);
      for (index_t p = 0; p < n; ++p) {
        for (index_t q = p + 1; q < n; ++q) {
          ASSERT_EQ(counts[static_cast<std::size_t>(p * n + q)], 1)
              << name_of(kind) << " order " << n << " pair (" << p << ", " << q << ")";
        }
      }
      if (reached_by_doubling(n)) {  // a p-strategy: n - 1 steps of n / 2 pairs
        ASSERT_EQ(strategy.steps(), n - 1) << n;
        for (index_t s = 0; s < strategy.steps(); ++s)
          ASSERT_EQ(strategy.step(s).size(), n / 2);
      } else {  // embedded in the next even order m reached by doubling: at most m - 1 steps
        index_t m = n + n % 2;
        while (!reached_by_doubling(m))
          m += 2;
        ASSERT_LE(strategy.steps(), m - 1) << n;
        // index 0 is in n - 1 pairs; an odd order's steps hold (n - 1) / 2 pairs at most
        ASSERT_GE(strategy.steps(), n == 1 ? 0 : n - 1 + n % 2) << n;
      }
    }
  }
}

TEST(Strategy, ModifiedModulusStepsAreTheAntidiagonals) {
  for (index_t n = 1; n <= kLargestOrder; ++n) {
    const Strategy strategy = Strategy::create(StrategyKind::ModifiedModulus, n);
    ASSERT_EQ(strategy.steps(), n == 1 ? 0 : n);  // order 1: no pairs, no steps
    const std::vector<int> counts = pair_counts(strategy);
    for (index_t p = 0; p < n; ++p) {
      for (index_t q = p + 1; q < n; ++q) {
        // Even n: (a, a + n/2) on its antidiagonal and again to fill step 2a; odd n: cyclic.
        const int expected = (n % 2 == 0 && q == p + n / 2) ? 2 : 1;
        ASSERT_EQ(counts[static_cast<std::size_t>(p * n + q)], expected) << n;
      }
    }
    for (index_t k = 0; k < strategy.steps(); ++k) {
      ASSERT_EQ(static_cast<index_t>(strategy.step(k).size()), n / 2) << n << " step " << k;
      for (const PivotPair& pair : strategy.step(k)) {
        const bool antidiagonal = (pair.p + pair.q) % n == k;
        const bool filler = n % 2 == 0 && k % 2 == 0 && pair.p == k / 2 && pair.q == k / 2 + n / 2;
        ASSERT_TRUE(antidiagonal || filler)
            << n << " step " << k << " (" << pair.p << ", " << pair.q << ")";
      }
    }
  }
}

TEST(Strategy, ReverseIsTheExactReverse) {
  for (index_t n = 1; n <= kLargestOrder; ++n) {
    const Strategy forward = Strategy::create(StrategyKind::RowCyclicClosest, n);
    const Strategy reverse = Strategy::create(StrategyKind::ReversedRowCyclicClosest, n);
    ASSERT_EQ(reverse.steps(), forward.steps());
    ASSERT_TRUE(std::ranges::equal(reverse.pairs(), forward.pairs() | std::views::reverse)) << n;
    for (index_t s = 0; s < forward.steps(); ++s) {
      ASSERT_EQ(reverse.step(forward.steps() - 1 - s).size(), forward.step(s).size()) << n;
    }
  }
}

// Lemma 2.2: the first step is (0, 1), (2, 3), ...; and step s holds (0, s + 1), the choice that
// keeps the sweep closest to row-cyclic (svd/strategy_search.cpp).
TEST(Strategy, FirstStepIsLemma22AndIndexZeroMeetsItsPartnersInOrder) {
  for (index_t n = 2; n <= kLargestOrder; ++n) {
    const Strategy strategy = Strategy::create(StrategyKind::RowCyclicClosest, n);
    const std::span<const PivotPair> first = strategy.step(0);
    ASSERT_EQ(static_cast<index_t>(first.size()), n / 2) << n;
    for (std::int32_t k = 0; k < n / 2; ++k)
      ASSERT_EQ(first[k], (PivotPair{2 * k, 2 * k + 1}));
    for (index_t s = 0; s < n - 1; ++s) {
      ASSERT_EQ(strategy.step(s)[0], (PivotPair{0, static_cast<std::int32_t>(s + 1)})) << n;
    }
  }
}

// The thesis' Figures 2.3-2.7 (the text around them): R_6, with the backtracking in steps 2-4.
TEST(Strategy, ThesisR6) {
  const std::vector<PivotPair> expected = {{0, 1}, {2, 3}, {4, 5}, {0, 2}, {1, 4},
                                           {3, 5}, {0, 3}, {1, 5}, {2, 4}, {0, 4},
                                           {1, 3}, {2, 5}, {0, 5}, {1, 2}, {3, 4}};
  const Strategy strategy = Strategy::create(StrategyKind::RowCyclicClosest, 6);
  EXPECT_TRUE(std::ranges::equal(strategy.pairs(), expected));
  EXPECT_TRUE(std::ranges::equal(detail::search_row_cyclic_closest(6).pairs, expected));
  // Figure 2.2: R_4 needs no backtracking.
  const detail::SearchResult r4 = detail::search_row_cyclic_closest(4);
  EXPECT_TRUE(std::ranges::equal(
      r4.pairs, std::vector<PivotPair>{{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 3}, {1, 2}}));
  EXPECT_EQ(r4.backtracks, 0u);
}

// The table is what Algorithm 1 gives (all of it: the search takes 0.06 s up to order 62). Its
// entries up to 26 were also produced, identically, by an earlier version of the search that
// pruned only odd components (43.8 million backtracks for 26, 0.3 s).
TEST(Strategy, TableIsAlgorithm1) {
  ASSERT_EQ(detail::largest_tabulated_base_order(), 62);
  for (index_t n = 2; n <= detail::largest_tabulated_base_order(); n += 4) {
    const std::vector<PivotPair> tabulated = as_pairs(detail::tabulated_row_cyclic_closest(n));
    EXPECT_EQ(tabulated, detail::search_row_cyclic_closest(static_cast<int>(n)).pairs) << n;
  }
  for (const index_t n : {0, 1, 3, 4, 8, 12, 24, 64, 66}) {
    EXPECT_TRUE(detail::tabulated_row_cyclic_closest(n).empty()) << n;
  }
}

// Algorithm 2 equals Algorithm 1 for every order 4k up to the search's 64 but one: the thesis
// checked orders <= 36 and claimed it for all, tentatively, yet R-parallel_52 is closer to
// row-cyclic than R-parallel_26 doubled: they part at step 45, (12, 22) against (12, 24). create()
// doubles, as the contract says (the closest *block* strategy, section 2.2).
TEST(Strategy, DoublingIsAlgorithm1ExceptAt52) {
  for (int n = 4; n <= detail::kMaxSearchOrder; n += 4) {
    const Strategy strategy = Strategy::create(StrategyKind::RowCyclicClosest, n);
    const std::span<const PivotPair> doubled = strategy.pairs();
    const std::vector<PivotPair> searched = detail::search_row_cyclic_closest(n).pairs;
    ASSERT_EQ(doubled.size(), searched.size());
    const auto [in_doubled, in_searched] = std::ranges::mismatch(doubled, searched);
    if (n != 52) {
      EXPECT_TRUE(in_doubled == doubled.end()) << n;
      continue;
    }
    ASSERT_TRUE(in_doubled != doubled.end());
    EXPECT_EQ((in_doubled - doubled.begin()) / (n / 2), 45);
    EXPECT_EQ(*in_doubled, (PivotPair{12, 24}));
    EXPECT_EQ(*in_searched, (PivotPair{12, 22}));
  }
}

TEST(Strategy, NamesRoundTrip) {
  for (const StrategyKind kind : kKinds)
    EXPECT_EQ(parse_name<StrategyKind>(name_of(kind), "strategy"), kind);
  EXPECT_EQ(name_of(StrategyKind::ReversedRowCyclicClosest), "rc-closest-rev");
  EXPECT_EQ(name_of(StrategyKind::RowCyclicClosest), "rc-closest");
  EXPECT_EQ(name_of(StrategyKind::ModifiedModulus), "modmod");
  EXPECT_EQ(name_of(StrategyKind::RowCyclic), "rc");
  expect_error([] { parse_name<StrategyKind>("x", "strategy"); },
               "strategy: expected rc-closest-rev, rc-closest, modmod or rc, got 'x'");
  expect_error([] { parse_name<StrategyKind>("", "strategy"); }, "got ''");
  expect_error([] { parse_name<StrategyKind>("RC-CLOSEST", "strategy"); }, "got 'RC-CLOSEST'");
}

// The sequential row-cyclic order (the GSVD's inner strategy): every pair once, in row order,
// one pair per step.
TEST(Strategy, RowCyclicIsTheRowOrder) {
  for (const index_t order : {1, 2, 3, 8, 33}) {
    const Strategy s = Strategy::create(StrategyKind::RowCyclic, order);
    ASSERT_EQ(s.steps(), order * (order - 1) / 2);
    index_t k = 0;
    for (index_t p = 0; p < order; ++p)
      for (index_t q = p + 1; q < order; ++q, ++k) {
        ASSERT_EQ(s.step(k).size(), 1u);
        EXPECT_EQ(s.step(k)[0],
                  (PivotPair{static_cast<std::int32_t>(p), static_cast<std::int32_t>(q)}));
      }
  }
}

TEST(Strategy, BadInput) {
  for (const StrategyKind kind : kKinds) {
    expect_error([kind] { Strategy::create(kind, 0); }, "strategy: order must be >= 1, got 0");
    expect_error([kind] { Strategy::create(kind, -3); }, "got -3");
  }
  const StrategyKind kind = StrategyKind::RowCyclicClosest;
  expect_error(
      [&] {
        Strategy::from_steps(kind, 4, {{{0, 1}}, {{2, 4}}});
      },
      "pair (2, 4) of step 1 is not 0 <= p < q < order = 4");
  expect_error([&] { Strategy::from_steps(kind, 4, {{{1, 1}}}); }, "pair (1, 1) of step 0");
  expect_error([&] { Strategy::from_steps(kind, 4, {{{2, 1}}}); }, "pair (2, 1) of step 0");
  expect_error([&] { Strategy::from_steps(kind, 4, {{{-1, 1}}}); }, "pair (-1, 1) of step 0");
  expect_error(
      [&] {
        Strategy::from_steps(kind, 4, {{{0, 1}, {1, 2}}});
      },
      "index 1 occurs twice in step 0");
  expect_error([&] { Strategy::from_steps(kind, 0, {}); }, "order must be >= 1, got 0");
  expect_error([] { detail::search_row_cyclic_closest(5); }, "got 5");
  expect_error([] { detail::search_row_cyclic_closest(66); }, "got 66");
  const Strategy given = Strategy::from_steps(kind, 4, {{{0, 1}, {2, 3}}, {}, {{1, 3}}});
  EXPECT_EQ(given.steps(), 3);
  EXPECT_TRUE(given.step(1).empty());
  EXPECT_EQ(given.step(2)[0], (PivotPair{1, 3}));
}

}  // namespace
}  // namespace shiftop::svd
