// The progress= callable of shiftop.svd and shiftop.gsvd as the library's per-sweep callback
// (shiftop/svd/progress.hpp).
#pragma once

#include <nanobind/nanobind.h>

#include "shiftop/svd/progress.hpp"

namespace shiftop::python {

/// Calls `progress` (None: no callback) with (matrix, sweep, max_sweeps, rotations) under the
/// GIL after every sweep. The handle is borrowed: the library copies the callback with the GIL
/// released, where no reference count may change; the caller's argument keeps it alive. An
/// exception it raises ends the computation and reaches the caller.
inline svd::SweepCallback sweep_callback(const nanobind::object& progress) {
  if (progress.is_none()) return {};
  return [callback = nanobind::handle(progress)](const svd::SweepProgress& p) {
    const nanobind::gil_scoped_acquire held;
    callback(p.matrix, p.sweep, p.max_sweeps, p.rotations);
  };
}

}  // namespace shiftop::python
