// Setup phase (Venkat et al., Algorithm 1): the block-circulant embedding of F (period 2*Nt) is
// block-diagonalised by the DFT; its Nt+1 distinct diagonal blocks F^[w] (each Nd x Nm, complex)
// are computed once by real FFTs of the zero-padded kernels and stored frequency-major (TOSI).
#pragma once

#include <span>

#include "backend/cpu/planar.hpp"
#include "shiftop/btt/op.hpp"

namespace shiftop::btt {

/// Writes F^[w] / (2*Nt) for w = 0..Nt into `spectrum` (rows = Nd, ld >= Nm rounded up to the
/// SIMD lanes; columns beyond Nm are zeroed). The 1/(2*Nt) of the inverse FFT is folded in here.
/// `first_row` is empty for a block lower-triangular F; otherwise it holds the lags 0..-(Nt-1)
/// (SOTI, like `first_column`) and fills the wrapped-around half of the circulant. `series` is
/// the caller's scratch for Nm zero-padded series, Nm*2*stride doubles with `stride` (complex
/// values per series) at least frequencies(shape): the caller sizes it (btt/cpu/ CpuLayout), so
/// that the plan's memory estimate counts it.
void compute_kernel_spectrum(std::span<const double> first_column,
                             std::span<const double> first_row, const Shape& shape,
                             cpu::PlanarSpectrum<double> spectrum, std::span<double> series,
                             index_t stride, int threads);

}  // namespace shiftop::btt
