// Partitioning over the process grid (Venkat et al., section 3.2) without MPI: the ceil splits,
// the slices of kernels and vectors, and the fact that makes the distributed plan possible: the
// slice of any block rows and columns of a block Toeplitz operator is block Toeplitz again, with
// the sliced kernels as its first block column and row.
#include <gtest/gtest.h>

#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/grid_shape.hpp"
#include "shiftop/distributed/partition.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::distributed {
namespace {

using testing::dense_apply;
using testing::dense_block_toeplitz;
using testing::random_vector;
using testing::relative_error;

TEST(GridShape, ParsesRowsByColumns) {
  EXPECT_EQ(GridShape::parse("2x4"), (GridShape{2, 4}));
  EXPECT_EQ(GridShape::parse("1x1"), (GridShape{1, 1}));
  EXPECT_EQ(GridShape::parse("12x3").size(), 36);
  EXPECT_EQ((GridShape{3, 5}).str(), "3x5");
}

TEST(GridShape, RefusesAnythingElse) {
  for (const char* bad : {"", "2", "2x", "x4", "0x4", "2x0", "-1x4", "2x4x1", "2X4", " 2x4", "axb"})
    EXPECT_THROW(
        {
          try {
            (void)GridShape::parse(bad);
          } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("expected ROWSxCOLS"), std::string::npos);
            throw;
          }
        },
        Error)
        << "'" << bad << "'";
}

TEST(CeilSplit, LastPartsAreSmallerOrEmpty) {
  // 7 over 4: pieces of ceil(7/4) = 2 -> 2, 2, 2, 1.
  EXPECT_EQ(ceil_split(7, 4, 0), (IndexRange{0, 2}));
  EXPECT_EQ(ceil_split(7, 4, 3), (IndexRange{6, 7}));
  // 5 over 4: pieces of 2 -> 2, 2, 1, 0: the last part owns nothing.
  EXPECT_EQ(ceil_split(5, 4, 2), (IndexRange{4, 5}));
  EXPECT_EQ(ceil_split(5, 4, 3), (IndexRange{5, 5}));
  EXPECT_TRUE(ceil_split(5, 4, 3).empty());
  // 4 over 3: pieces of 2 -> 2, 2, 0.
  EXPECT_EQ(ceil_split(4, 3, 2), (IndexRange{4, 4}));
  // 1 over 4: only the first part owns the block.
  EXPECT_EQ(ceil_split(1, 4, 0), (IndexRange{0, 1}));
  EXPECT_EQ(ceil_split(1, 4, 1), (IndexRange{1, 1}));
  EXPECT_THROW((void)ceil_split(5, 4, 4), Error);
  EXPECT_THROW((void)ceil_split(5, 0, 0), Error);
}

TEST(CeilSplit, PartsTileTheBlocksInOrder) {
  for (index_t count : {1, 2, 5, 7, 12, 13, 100})
    for (int parts : {1, 2, 3, 4, 5, 8, 13}) {
      index_t next = 0;
      const index_t piece = (count + parts - 1) / parts;
      for (int k = 0; k < parts; ++k) {
        const IndexRange r = ceil_split(count, parts, k);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.size(), piece);
        next = r.end;
      }
      EXPECT_EQ(next, count) << count << " over " << parts;
    }
}

TEST(Partition, RowsSplitDataBlocksAndColumnsSplitParameterBlocks) {
  const Partition p({5, 3, 7}, {2, 2});
  EXPECT_EQ(p.rows(0), (IndexRange{0, 3}));
  EXPECT_EQ(p.rows(1), (IndexRange{3, 5}));
  EXPECT_EQ(p.cols(0), (IndexRange{0, 2}));
  EXPECT_EQ(p.cols(1), (IndexRange{2, 3}));
  EXPECT_EQ(p.local_shape(1, 0), (Shape{2, 2, 7}));
  EXPECT_EQ(p.local_shape(0, 1), (Shape{3, 1, 7}));
  const Partition q({5, 3, 7}, {1, 4});
  EXPECT_EQ(q.local_shape(0, 3), (Shape{5, 0, 7}));  // owns no parameter block
  EXPECT_THROW(Partition({0, 3, 7}, {1, 1}), Error);
  EXPECT_THROW(Partition({5, 3, 7}, {0, 1}), Error);
}

TEST(Slices, KernelsAndVectorsKeepTheirLayout) {
  const Shape s{3, 4, 2};
  std::vector<double> k(static_cast<std::size_t>(s.kernel_size()));
  for (std::size_t e = 0; e < k.size(); ++e)
    k[e] = static_cast<double>(e);  // k[i][j][t] = (i*4 + j)*2 + t
  EXPECT_EQ(slice_kernels(k, s, {1, 3}, {2, 4}),
            (std::vector<double>{12, 13, 14, 15, 20, 21, 22, 23}));
  EXPECT_TRUE(slice_kernels(k, s, {1, 3}, {4, 4}).empty());
  EXPECT_THROW((void)slice_kernels(k, s, {1, 4}, {0, 1}), Error);
  // Two vectors of 3 blocks of 2 steps: blocks [1, 3) of each.
  const std::vector<double> v = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(slice_blocks(v, 2, 3, 2, {1, 3}), (std::vector<double>{2, 3, 4, 5, 12, 13, 14, 15}));
  EXPECT_TRUE(slice_blocks(v, 2, 3, 2, {3, 3}).empty());
  EXPECT_THROW((void)slice_blocks(v, 2, 3, 3, {0, 1}), Error);
}

// Rows I and columns J of the explicit block Toeplitz matrix (SOTI rows i*Nt+t, columns j*Nt+u).
std::vector<double> dense_slice(const std::vector<double>& a, const Shape& s, IndexRange rows,
                                IndexRange cols) {
  std::vector<double> out;
  for (index_t i = rows.begin; i < rows.end; ++i)
    for (index_t t = 0; t < s.nt; ++t)
      for (index_t j = cols.begin; j < cols.end; ++j)
        for (index_t u = 0; u < s.nt; ++u)
          out.push_back(a[static_cast<std::size_t>((i * s.nt + t) * s.nm * s.nt + j * s.nt + u)]);
  return out;
}

TEST(Slices, AnyBlockSliceOfABlockToeplitzOperatorIsTheOperatorOfTheSlicedKernels) {
  const Shape s{5, 6, 4};
  const auto n = static_cast<std::size_t>(s.kernel_size());
  const std::vector<double> col = random_vector(n, 11);
  std::vector<double> row = random_vector(n, 12);
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    row[static_cast<std::size_t>(k * s.nt)] = col[static_cast<std::size_t>(k * s.nt)];
  for (bool triangular : {true, false}) {
    const std::span<const double> whole_row = triangular ? std::span<const double>{} : row;
    const auto a = dense_block_toeplitz(col, whole_row, s);
    for (const auto& [rows, cols] :
         {std::pair<IndexRange, IndexRange>{{1, 3}, {2, 6}}, {{0, 5}, {3, 4}}, {{4, 5}, {0, 6}}}) {
      const Shape local{rows.size(), cols.size(), s.nt};
      const auto local_col = slice_kernels(col, s, rows, cols);
      const auto local_row = slice_kernels(row, s, rows, cols);
      const auto sliced = dense_block_toeplitz(
          local_col, triangular ? std::span<const double>{} : std::span<const double>(local_row),
          local);
      EXPECT_EQ(sliced, dense_slice(a, s, rows, cols));

      // ...so a btt::Plan of the sliced kernels applies exactly that slice.
      btt::PlanOptions options{.planning = btt::Planning::Estimate, .cpu = {.threads = 1}};
      btt::Plan plan = triangular ? btt::Plan::create(local_col, local, options)
                                  : btt::Plan::create_general(local_col, local_row, local, options);
      const auto x = random_vector(static_cast<std::size_t>(2 * local.nm * s.nt), 13);
      std::vector<double> y(static_cast<std::size_t>(2 * local.nd * s.nt));
      plan.apply(btt::Op::F, x, y, 2);
      EXPECT_LT(
          relative_error(y, dense_apply(sliced, local.nd * s.nt, local.nm * s.nt, false, x, 2)),
          1e-13);
    }
  }
}

}  // namespace
}  // namespace shiftop::distributed
