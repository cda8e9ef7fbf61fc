#include "shiftop/btt/read_distributed_plan.hpp"

#include "shiftop/core/error.hpp"
#include "shiftop/distributed/collective_check.hpp"
#include "shiftop/distributed/partition.hpp"
#include "shiftop/io/operator_file.hpp"

namespace shiftop::distributed {

DistributedPlan read_distributed_plan(const Grid& grid, const std::string& path,
                                      const btt::PlanOptions& options) {
  io::OperatorInfo info;
  io::OperatorData slice;
  run_collectively(grid.comm(), [&] {
    info = io::inspect_operator(path);
    const Partition partition(info.shape, grid.shape());
    const IndexRange rows = partition.rows(grid.row()), cols = partition.cols(grid.col());
    if (rows.empty() || cols.empty()) return;
    slice = io::read_operator(
        path, {.slice = {.rows = {rows.begin, rows.end}, .cols = {cols.begin, cols.end}}});
    require(slice.full_shape == info.shape && slice.triangular == info.triangular,
            "{}: the operator read, {} {}, differs from its metadata, {} {}", path,
            slice.triangular ? "triangular" : "general", slice.full_shape.str(),
            info.triangular ? "triangular" : "general", info.shape.str());
  });
  if (info.triangular)
    return DistributedPlan::create(grid, info.shape, slice.first_column, options);
  return DistributedPlan::create_general(grid, info.shape, slice.first_column, slice.first_row,
                                         options);
}

}  // namespace shiftop::distributed
