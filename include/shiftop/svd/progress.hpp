// Progress of the Jacobi SVD (jacobi.hpp) and the Hari-Zimmermann GSVD (gsvd.hpp), which run for
// tens of seconds on matrices of a few thousand columns (a 1000 x 1000 SVD took 24 s on 2 cores):
// a callback in their options sees every finished (block-)sweep, so that a caller can show how
// far it is (`shiftop svd --progress`, Python's progress=).
#pragma once

#include <cstdint>
#include <functional>

#include "shiftop/core/shape.hpp"

namespace shiftop::svd {

/// One finished sweep (block-sweep for the blocked variants) of one matrix.
struct SweepProgress {
  index_t matrix = 0;  ///< its index in a batch (0 for a single matrix)
  int sweep = 0;       ///< sweeps done on it, from 1
  int max_sweeps = 0;  ///< the most it may run
  /// Rotations (GSVD: transformations) in this sweep; the SVD has converged when it is 0.
  std::int64_t rotations = 0;
};

/// Called after every sweep on the CPU, from the thread that ran it; within a batch the calls are
/// made one at a time. An exception it throws ends the computation and reaches the caller. The
/// GPU backends run every sweep in one launch and do not call it.
using SweepCallback = std::function<void(const SweepProgress&)>;

}  // namespace shiftop::svd
