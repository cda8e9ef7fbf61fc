// Host memory the tool's commands need, estimated before they allocate, so that an impossible size
// is refused with "needs N GiB but only M GiB are available" (core/available_memory.hpp) instead
// of failing half-way with std::bad_alloc.
#pragma once

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::app {

/// Bytes of `count` doubles, as a double: products of untrusted sizes do not overflow.
double double_bytes(double count);

/// Host bytes a plan made with `options` holds at its peak: on the CPU, F^ (and its FP32 copy
/// where phase 3 is FP32), the per-thread chunk scratch, one group's spectra on both sides, F*F's
/// middle vector, and the Nm series F^ is computed through (btt/cpu/setup.cpp,
/// btt/kernel_spectrum.cpp); on the GPU none, because its engine checks the device's free memory
/// itself before it allocates.
double plan_host_bytes(const Shape& shape, const btt::PlanOptions& options);

/// Bytes of the x and y vectors of `nrhs` applications of `op`.
double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs);

}  // namespace shiftop::app
