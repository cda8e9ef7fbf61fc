// Host memory the tool's commands need, estimated before they allocate, so that an impossible size
// is refused with "needs N GiB but only M GiB are available" (core/available_memory.hpp) instead
// of failing half-way with std::bad_alloc. A plan's own bytes are btt::Plan::host_bytes.
#pragma once

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::app {

/// Bytes of `count` doubles, as a double: products of untrusted sizes do not overflow.
double double_bytes(double count);

/// Bytes of the x and y vectors of `nrhs` applications of `op`.
double vector_bytes(const Shape& shape, btt::Op op, index_t nrhs);

}  // namespace shiftop::app
