// What the device methods of the noise and of the priors share (include/shiftop/inverse/): scaling
// each block of SOTI vectors by a per-block value on the GPU, and the device copy of those values
// that a noise or prior object keeps in its device_data_ after the first device call.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::inverse::cuda {

/// y[r][b][t] = s[b] x[r][b][t] (or x / s[b] with `invert`) for nrhs vectors of `blocks` blocks
/// of nt values; s is a device array of `blocks` values; y may be x. Queued on `stream`.
void scale_blocks(const double* s, bool invert, const double* x, double* y, index_t nrhs,
                  index_t blocks, index_t nt, cudaStream_t stream);

/// The device copy of `values` on the current device, kept in `cache` (made on first use, and
/// again when the current device changed).
const double* device_copy(std::shared_ptr<void>& cache, const std::vector<double>& values);

}  // namespace shiftop::inverse::cuda
