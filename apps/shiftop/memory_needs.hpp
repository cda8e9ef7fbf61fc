// Host memory the tool's commands need, estimated before they allocate, so that an impossible size
// is refused with "needs N GiB but only M GiB are available" (core/available_memory.hpp) instead
// of failing half-way with std::bad_alloc. A plan's own bytes are btt::Plan::host_bytes.
#pragma once

#include "bench.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::app {

/// Bytes of `count` doubles, as a double: products of untrusted sizes do not overflow.
double double_bytes(double count);

/// Bytes of the x and y vectors of `nrhs` applications of `op`.
double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs);

/// Host bytes `bench` needs for the operator `shape` (the whole operator, or a rank's slice):
/// the kernels, the plan, the vectors, --check's FP64 plan and output, --direct's output,
/// checked before anything is allocated.
double host_bytes(const BenchOptions& o, const Shape& shape, btt::Op op,
                  const btt::PlanOptions& options);

/// Host bytes of measure_bandwidth's buffers: the CPU probe's two arrays (the GPU's are on it).
double probe_bytes(btt::Backend backend);

}  // namespace shiftop::app
