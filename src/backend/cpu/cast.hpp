// Element-wise conversion between precisions on OpenMP threads (round to nearest): the FP32 copy
// of F^ and the distributed plan's FP32 messages.
#pragma once

#include <omp.h>

#include "shiftop/core/shape.hpp"

namespace shiftop::cpu {

/// to[k] = To(from[k]) for k < count, on `threads` threads (0: OpenMP's default); small arrays
/// stay on the calling thread.
template <typename From, typename To>
void cast(const From* from, To* to, index_t count, int threads = 0) {
  const int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(team) schedule(static) if (count > (index_t{1} << 16))
  for (index_t k = 0; k < count; ++k)
    to[k] = static_cast<To>(from[k]);
}

}  // namespace shiftop::cpu
