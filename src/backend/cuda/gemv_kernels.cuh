// Phase 3 on the GPU for one right-hand side: the batched complex GEMV y[w] = F^[w] x[w] (F) or
// y[w] = F^[w]^H x[w] (F*) for w = 0..Nt, fused with both reorderings. F^ is frequency-major
// [w][Nd][ld] so that each thread block streams contiguous rows; the vectors stay block-major
// [block][w] as cuFFT produces and consumes them, so no transpose pass touches them.
#pragma once

#include <cuda_runtime.h>

#include "backend/cuda/complex.cuh"
#include "backend/cuda/layout_kernels.cuh"

namespace shiftop::cuda {

struct GemvShape {
  index_t nd = 0, nm = 0;
  index_t ld = 0;  // complex values between rows of F^[w] (>= nm)
  index_t nw = 0;  // frequencies Nt+1
};

/// y = F^ x (adjoint = false; x is [nm][nw], y is [nd][nw]) or y = F^^H x (x [nd][nw],
/// y [nm][nw]), computed in TA from x in TX, written in TY.
template <typename TA, typename TX, typename TY>
void gemv_fused(bool adjoint, const complex_t<TA>* a, const GemvShape& shape,
                const complex_t<TX>* x, complex_t<TY>* y, cudaStream_t stream);

}  // namespace shiftop::cuda
