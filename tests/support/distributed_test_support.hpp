// What the tests of the distributed plan under mpiexec share (test_dist_mpi on the CPU,
// test_dist_nccl on GPUs): random operators known whole on every rank, each rank's slice of them,
// and a verdict over all ranks on this rank's output blocks.
#pragma once

#include <mpi.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/distributed/grid.hpp"
#include "shiftop/distributed/partition.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::distributed::mpi_testing {

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// Every pr x pc with pr * pc = ranks.
inline std::vector<GridShape> grids_of(int ranks) {
  std::vector<GridShape> grids;
  for (int r = 1; r <= ranks; ++r)
    if (ranks % r == 0) grids.push_back({r, ranks / r});
  return grids;
}

inline std::array<double, 2> sum_over_ranks(std::array<double, 2> values) {
  std::array<double, 2> sums{};
  EXPECT_EQ(MPI_Allreduce(values.data(), sums.data(), 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
            MPI_SUCCESS);
  return sums;
}

struct Operator {
  Shape shape;
  bool triangular = true;
  std::vector<double> column, row;  // the whole first block column and row, on every rank
};

inline Operator random_operator(const Shape& s, bool triangular) {
  Operator a{s,
             triangular,
             shiftop::testing::random_vector(static_cast<std::size_t>(s.kernel_size()), 1),
             {}};
  if (!triangular) {
    a.row = shiftop::testing::random_vector(a.column.size(), 2);
    for (index_t k = 0; k < s.nd * s.nm; ++k)
      a.row[static_cast<std::size_t>(k * s.nt)] = a.column[static_cast<std::size_t>(k * s.nt)];
  }
  return a;
}

inline btt::PlanOptions test_options(index_t max_rhs, const std::string& precision = "DDDDD",
                                     btt::Backend backend = btt::Backend::Cpu) {
  return {.backend = backend,
          .precision = precision,
          .max_rhs = max_rhs,
          .planning = btt::Planning::Estimate,
          .cpu = {.threads = 1}};
}

inline btt::Plan whole_plan(const Operator& a, const btt::PlanOptions& options) {
  return a.triangular ? btt::Plan::create(a.column, a.shape, options)
                      : btt::Plan::create_general(a.column, a.row, a.shape, options);
}

/// Every rank passes its own slice of the kernels, as a partitioned read would give it.
inline DistributedPlan distributed_plan(const Grid& grid, const Operator& a,
                                        const btt::PlanOptions& options) {
  const Partition part(a.shape, grid.shape());
  const IndexRange rows = part.rows(grid.row()), cols = part.cols(grid.col());
  const auto column = slice_kernels(a.column, a.shape, rows, cols);
  if (a.triangular) return DistributedPlan::create(grid, a.shape, column, options);
  return DistributedPlan::create_general(grid, a.shape, column,
                                         slice_kernels(a.row, a.shape, rows, cols), options);
}

struct Verdict {
  double relative_error;  // over the whole output, all ranks
  double blocks_covered;  // output blocks held over all ranks, counted once per vector
};

/// Compares this rank's output blocks `got` with the same blocks of the whole result `want`.
inline Verdict judge(std::span<const double> got, const DistributedPlan& plan, btt::Op op,
                     std::span<const double> want, index_t nrhs) {
  const Shape& s = plan.shape();
  const IndexRange mine = plan.local_output_blocks(op);
  const auto expected = slice_blocks(want, nrhs, output_blocks(op, s), s.nt, mine);
  double squared = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    squared += (got[k] - expected[k]) * (got[k] - expected[k]);  // NaN stays NaN
  const auto [diff, covered] = sum_over_ranks({squared, static_cast<double>(mine.size())});
  return {std::sqrt(diff) / shiftop::testing::norm(want), covered};
}

}  // namespace shiftop::distributed::mpi_testing
