// Communication-aware grid choice (Venkat et al., section 3.7): the costs of eqs. 20 and 25
// against values computed by hand from the equations, and Algorithm 4's choices, node rule
// included, on cases worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "shiftop/core/error.hpp"
#include "shiftop/distributed/grid_choice.hpp"

namespace shiftop::distributed {
namespace {

using std::log2;

TEST(GridCost, IsEquation25) {
  // C(r; p, l) = (r/p) log2 r + (Nd/Nm / r) log2(p/r).
  EXPECT_DOUBLE_EQ(grid_cost(25, 100, 1, 12), 0.25 * log2(12.0));
  EXPECT_DOUBLE_EQ(grid_cost(25, 100, 2, 12), 2.0 / 12 + 0.25 / 2 * log2(6.0));
  EXPECT_DOUBLE_EQ(grid_cost(25, 100, 3, 12), 3.0 / 12 * log2(3.0) + 0.25 / 3 * 2);
  EXPECT_DOUBLE_EQ(grid_cost(25, 100, 12, 12), log2(12.0));
  EXPECT_DOUBLE_EQ(grid_cost(7, 7, 1, 1), 0.0);
  EXPECT_THROW((void)grid_cost(25, 100, 5, 12), Error);  // 5 does not divide 12
}

TEST(GridCost, CriticalPathBytesAreEquation20WithCeilLocalSizes) {
  // 8 Nt (ceil(Nm/c) log2 r + ceil(Nd/r) log2 c) for Nd = 5, Nm = 3, Nt = 7.
  const Shape s{5, 3, 7};
  EXPECT_DOUBLE_EQ(grid_critical_path_bytes(s, {2, 2}), 8.0 * 7 * (2 * 1 + 3 * 1));
  EXPECT_DOUBLE_EQ(grid_critical_path_bytes(s, {1, 4}), 8.0 * 7 * (5 * 2));
  EXPECT_DOUBLE_EQ(grid_critical_path_bytes(s, {4, 1}), 8.0 * 7 * (3 * 2));
  EXPECT_DOUBLE_EQ(grid_critical_path_bytes(s, {1, 1}), 0.0);
}

TEST(ChooseGrid, ListsEveryDivisorWithItsCosts) {
  const Shape s{25, 100, 10};
  const GridChoice choice = choose_grid(s, 12, 4);
  ASSERT_EQ(choice.candidates.size(), 6u);
  const int rows[] = {1, 2, 3, 4, 6, 12};
  // k = 4 divides r or c for 1x12, 3x4, 4x3, 12x1, not for 2x6 or 6x2.
  const bool aligned[] = {true, false, true, true, false, true};
  for (std::size_t k = 0; k < 6; ++k) {
    const GridCandidate& c = choice.candidates[k];
    EXPECT_EQ(c.grid, (GridShape{rows[k], 12 / rows[k]}));
    EXPECT_DOUBLE_EQ(c.cost, grid_cost(25, 100, rows[k], 12));
    EXPECT_DOUBLE_EQ(c.bytes, grid_critical_path_bytes(s, c.grid));
    EXPECT_EQ(c.node_aligned, aligned[k]) << c.grid.str();
  }
}

TEST(ChooseGrid, OneRankIsOneByOne) {
  const GridChoice choice = choose_grid({3, 4, 5}, 1, 1);
  EXPECT_EQ(choice.grid, (GridShape{1, 1}));
  EXPECT_DOUBLE_EQ(choice.candidates.at(0).cost, 0.0);
}

TEST(ChooseGrid, ManyMoreParametersThanDataGiveOneRow) {
  // The mixed-precision paper's scaling runs: Nd = 100, Nm = 5000 p. For p = 8, Nd/Nm = 1/400:
  // C(1) = 3/400 = 0.0075 < C(2) = 2/8 + 1/800 * 2: step 3 returns 1 x 8 (section 4.2: 1 x p).
  const GridChoice choice = choose_grid({100, 40000, 1000}, 8, 8);
  EXPECT_EQ(choice.grid, (GridShape{1, 8}));
  EXPECT_NE(choice.reason.find("step 3"), std::string::npos) << choice.reason;
}

TEST(ChooseGrid, ManyMoreDataThanParametersGiveOneColumn) {
  // Nd/Nm = 1000, p = 8: C(8) = log2 8 = 3 against C(4) = 0.5 * 2 + 250 * 1: step 4.
  const GridChoice choice = choose_grid({10000, 10, 100}, 8, 1);
  EXPECT_EQ(choice.grid, (GridShape{8, 1}));
  EXPECT_NE(choice.reason.find("step 4"), std::string::npos) << choice.reason;
}

TEST(ChooseGrid, EqualSizesOnFourRanksGiveASquare) {
  // Nd = Nm, p = 4: C(1) = 2, C(2) = 1/2 + 1/2 = 1, C(4) = 2.
  EXPECT_EQ(choose_grid({64, 64, 10}, 4, 1).grid, (GridShape{2, 2}));
  // p = 16: C(4) = 1/2 + 1/2 = 1 against C(2) = C(8) = 1.625.
  EXPECT_EQ(choose_grid({64, 64, 10}, 16, 1).grid, (GridShape{4, 4}));
}

TEST(ChooseGrid, TiesGoToMoreRowsWhenThereIsAtLeastAsMuchData) {
  // Nd = Nm, p = 2: C(1) = C(2) = 1; l = 0 asks for r >= c.
  EXPECT_EQ(choose_grid({10, 10, 5}, 2, 1).grid, (GridShape{2, 1}));
  // Nd/Nm = 0.9: C(1) = 0.9 < C(2) = 1.
  EXPECT_EQ(choose_grid({9, 10, 5}, 2, 1).grid, (GridShape{1, 2}));
}

TEST(ChooseGrid, PrefersANodeAlignedNeighbourOfTheMinimum) {
  // Nd/Nm = 1/4, p = 12: C(1) = 0.896, C(2) = 0.490, C(3) = 0.563, C(4) = 0.766, C(6) = 1.334,
  // C(12) = 3.585. The minimum r~ = 2 is inside, so step 5 looks at r = 1, 2, 3 (all r < c, as
  // l < 0 asks). One rank per node: the minimum itself.
  const Shape s{25, 100, 10};
  EXPECT_EQ(choose_grid(s, 12, 1).grid, (GridShape{2, 6}));
  // Four per node: 2 x 6 is not node-aligned (4 divides neither 2 nor 6); 1 x 12 and 3 x 4 are,
  // and 3 x 4 costs less.
  const GridChoice four = choose_grid(s, 12, 4);
  EXPECT_EQ(four.grid, (GridShape{3, 4}));
  EXPECT_NE(four.reason.find("step 5"), std::string::npos) << four.reason;
  EXPECT_NE(four.reason.find("node-aligned"), std::string::npos) << four.reason;
  // Five per node: nothing near the minimum is node-aligned, so the minimum stands.
  EXPECT_EQ(choose_grid(s, 12, 5).grid, (GridShape{2, 6}));
  // All twelve on one node: alignment is moot (on-node links only), the minimum stands.
  EXPECT_EQ(choose_grid(s, 12, 12).grid, (GridShape{2, 6}));
  // Nd = Nm on one node of 8: C(2) = C(4) = 1.25 < C(1) = C(8) = 3; l = 0 asks for r >= c, so
  // 4 x 2, not the node-aligned but 2.4x costlier 8 x 1.
  EXPECT_EQ(choose_grid({5000, 5000, 10}, 8, 8).grid, (GridShape{4, 2}));
}

TEST(ChooseGrid, FewerDataThanParametersNeverGiveMoreRowsThanColumns) {
  // Nd/Nm = 1/2, p = 4: C(1) = 1, C(2) = 1/2 + 1/4 = 0.75, C(4) = 2. The model's minimum is the
  // square 2 x 2, but for l < 0 step 5 asks for r < c: 1 x 4.
  EXPECT_EQ(choose_grid({50, 100, 10}, 4, 1).grid, (GridShape{1, 4}));
  // With as much data as parameters the square stands (l = 0 asks for r >= c).
  EXPECT_EQ(choose_grid({100, 100, 10}, 4, 1).grid, (GridShape{2, 2}));
}

TEST(ChooseGrid, RefusesBadCounts) {
  EXPECT_THROW((void)choose_grid({3, 4, 5}, 0, 1), Error);
  EXPECT_THROW((void)choose_grid({3, 4, 5}, 4, 0), Error);
  EXPECT_THROW((void)choose_grid({0, 4, 5}, 4, 1), Error);
}

}  // namespace
}  // namespace shiftop::distributed
