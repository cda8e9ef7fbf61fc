// Phase 3 on the GPU for one right-hand side: the batched complex GEMV y[w] = F^[w] x[w] (F) or
// y[w] = F^[w]^H x[w] (F*) for w = 0..nw-1, fused with both reorderings. F^ is frequency-major
// [w][Nd][ld] so that each warp streams contiguous rows; the vectors stay block-major [block][w]
// as cuFFT produces and consumes them, so no transpose pass touches them.
#pragma once

#include <string>
#include <vector>

#include "backend/cuda/complex.cuh"
#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

struct GemvShape {
  index_t nd = 0, nm = 0;
  index_t ld = 0;  // complex values between rows of F^[w] (>= nm, even)
  index_t nw = 0;  // frequencies
};

/// The launch parameters of the fused kernels that depend on the shape.
/// F: `split` warps share one tile of rows and frequencies, each streaming 1/split of the columns,
/// and add their partial sums in shared memory at the end: with few rows (Nd << Nm) there are
/// otherwise too few warps to keep enough loads in flight. F*: `freqs` adjacent frequencies per
/// thread: with few rows a thread otherwise does too little work, and its writes of W adjacent
/// frequencies fill 16*W-byte segments.
/// Also for F: `rows` of F^ per warp, each x value loaded once for all of them (x is read with a
/// stride, so fewer rows cost more x traffic; more rows cost registers).
struct GemvTuning {
  int rows = 4;   // 2, 4 or 8 (F)
  int split = 1;  // 1, 2, 4 or 8 (F)
  int freqs = 2;  // 2, 4 or 8 (F*)
  /// F*: write through shared memory, W consecutive lanes storing one column's W outputs
  /// (whole 32- to 128-byte segments per instruction) instead of each thread its own column.
  bool staged = false;
  /// F*, one right-hand side, our transforms: the products go straight into the inverse FFT's
  /// shared memory (adjoint_product_inverse_fft, product_inverse_fft.cuh) instead of through
  /// device memory; the fields above are then unused.
  bool into_inverse_fft = false;
  bool operator==(const GemvTuning&) const = default;
};

/// The tunings worth timing for this shape on a device with `sms` multiprocessors, the
/// estimated best first.
std::vector<GemvTuning> gemv_tunings(bool adjoint, const GemvShape& shape, int sms);

/// "rows=4 split=8" or "freqs=4" / "freqs=8 staged" / "into inverse FFT": the parameters that
/// apply to the product.
std::string describe(const GemvTuning& tuning, bool adjoint);

/// y = F^ x (adjoint = false; x is [nm][nw], y is [nd][nw]) or y = F^^H x (x [nd][nw],
/// y [nm][nw]) from F^ in TA and x in TX, accumulated in FP64, written in TY.
template <typename TA, typename TX, typename TY>
void gemv_fused(bool adjoint, const complex_t<TA>* a, const GemvShape& shape,
                const complex_t<TX>* x, complex_t<TY>* y, const GemvTuning& tuning,
                stream_t stream);

}  // namespace shiftop::cuda
