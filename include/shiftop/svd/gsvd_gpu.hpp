// shiftop::svd::gsvd_hz_batched on a GPU — the twin of the CPU batched implicit Hari-Zimmermann
// GSVD (svd/gsvd.hpp) with the same options, layouts and results (equal within rounding, not
// bitwise). The thesis' GPU design (jacobi-svd-gsvd-gpu-thesis, section 3.5): `initZ` (Z = I,
// the columns of F, G and Z scaled by 1 / ||g_i||), `pStep` (one parallel step: the pairs'
// columns of F, G and Z transformed), `Sigma` (Z rescaled, sigma_f, sigma_g and the vectors at the
// end), with a proper-transformation counter per pair read by the host after each sweep. One
// thread block per pair of matrices while the batch fills the GPU or the pair fits a block's
// shared memory; docs/architecture.md, section 18 describes the paths and what is refused.
// Work is queued on the context's stream; the function returns after it is synchronised.
#pragma once

#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/gsvd.hpp"

namespace shiftop::svd {

/// Host arrays as the CPU gsvd_hz_batched, copied to the GPU of `context`, the results copied
/// back. Throws shiftop::Error for what the CPU version refuses (naming the pair), for options the
/// GPU does not support, and when shiftop was built without CUDA.
template <class T>
BatchedGsvdResult<T> gsvd_hz_batched(const gpu::Context& context, const T* f, index_t ldf,
                                     index_t stride_f, const T* g, index_t ldg, index_t stride_g,
                                     index_t batch, index_t m, index_t p, index_t n,
                                     const GsvdOptions& options = {});

}  // namespace shiftop::svd
