// The Nt+1 distinct diagonal blocks F^[w] = sum_t F_t exp(-2 pi i w t / L) (L = 2*Nt, w = 0..Nt)
// of the block-circulant embedding as a batch of column-major complex matrices, from the
// plan's own setup (btt/kernel_spectrum.hpp, which folds the inverse FFT's 1/L in). Shared by the
// spectrum (svd/spectrum.cpp: the singular values) and the regularisation path
// (inverse/regpath.cpp: the GSVD of each pair with the regulariser's symbol).
#pragma once

#include <complex>
#include <span>
#include <vector>

#include "backend/cpu/planar.hpp"
#include "btt/kernel_spectrum.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/btt/op.hpp"

namespace shiftop::btt {

enum class BlockLayout {
  /// Each block Nd x Nm, column-major (leading dimension Nd).
  ColumnMajor,
  /// Each block stored tall: F^[w] (Nd x Nm) when Nd >= Nm, else its transpose (Nm x Nd, which
  /// has the same singular values), column-major with the leading dimension max(Nd, Nm).
  Tall,
};

/// `scale` * F^[w] / L for w = 0..Nt, block w at w * Nd * Nm: scale 1 gives btt's F^[w] / L,
/// scale L the unscaled F^[w]. The kernels must have been validated (sizes, finite values).
inline std::vector<std::complex<double>> frequency_blocks(std::span<const double> first_column,
                                                          std::span<const double> first_row,
                                                          const Shape& shape, BlockLayout layout,
                                                          double scale, int threads) {
  const index_t nfreq = frequencies(shape);
  const auto ld = static_cast<index_t>(
      round_up(static_cast<std::size_t>(shape.nm), static_cast<std::size_t>(cpu::kLanes<double>)));
  // FFTW's new-array execute wants strides of whole 64-byte lines (4 complex doubles).
  const auto stride = static_cast<index_t>(round_up(static_cast<std::size_t>(nfreq), 4));
  AlignedBuffer<double> planar(static_cast<std::size_t>(nfreq * 2 * shape.nd * ld));
  {
    AlignedBuffer<double> series(static_cast<std::size_t>(shape.nm * 2 * stride));
    compute_kernel_spectrum(first_column, first_row, shape, {planar.data(), shape.nd, ld},
                            {series.data(), series.size()}, stride, threads);
  }
  const bool transposed = layout == BlockLayout::Tall && shape.nd < shape.nm;
  const index_t row_step = transposed ? shape.nm : 1, col_step = transposed ? 1 : shape.nd;
  const index_t size = shape.nd * shape.nm;
  std::vector<std::complex<double>> blocks(static_cast<std::size_t>(nfreq * size));
  const cpu::PlanarSpectrum<double> spectrum{planar.data(), shape.nd, ld};
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t w = 0; w < nfreq; ++w) {
    const cpu::PlanarRows<double> rows = spectrum.at(w);
    std::complex<double>* block = blocks.data() + w * size;
    for (index_t i = 0; i < shape.nd; ++i)
      for (index_t j = 0; j < shape.nm; ++j) {
        const std::complex<double> value{rows.re[i * ld + j], rows.im[i * ld + j]};
        block[i * row_step + j * col_step] = scale == 1.0 ? value : scale * value;
      }
  }
  return blocks;
}

}  // namespace shiftop::btt
