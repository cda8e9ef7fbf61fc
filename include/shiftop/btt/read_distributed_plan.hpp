// A distributed plan from an operator file in which every rank reads only its own slice
// (Venkat et al., Algorithm 1, line 4): no rank ever holds the whole operator.
#pragma once

#include <string>

#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/distributed/grid.hpp"

namespace shiftop::distributed {

/// Collective over the grid. Every rank learns the shape and kind from the file's metadata
/// (io::inspect_operator) and reads the kernels of its blocks partition().rows(i) x cols(j)
/// (io::read_operator with that slice; ranks that own no blocks read none) from a shiftop .h5
/// file, an FFTMatvec matrix directory or a .npy file. If reading fails on any rank, every rank
/// throws shiftop::Error naming the first failing rank and the file.
DistributedPlan read_distributed_plan(const Grid& grid, const std::string& path,
                                      const btt::PlanOptions& options = {});

}  // namespace shiftop::distributed
