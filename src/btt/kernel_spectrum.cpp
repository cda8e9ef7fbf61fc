#include "btt/kernel_spectrum.hpp"

#include <algorithm>

#include "backend/cpu/fftw_plan.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::btt {

void compute_kernel_spectrum(std::span<const double> first_column,
                             std::span<const double> first_row, const Shape& shape,
                             cpu::PlanarSpectrum<double> spectrum, std::span<double> series,
                             index_t stride, int threads) {
  const index_t nt = shape.nt, L = padded_length(shape), nfreq = frequencies(shape);
  require(stride >= nfreq && series.size() >= static_cast<std::size_t>(shape.nm * 2 * stride),
          "compute_kernel_spectrum: scratch of {} doubles with stride {} is too small for {}",
          series.size(), stride, shape.str());
  const double scale = 1.0 / static_cast<double>(L);
  const cpu::RealFftBatch<double> fft(L, shape.nm, stride, cpu::FftDirection::RealToComplex,
                                      series.data(), threads, /*measure=*/false);
  // One observation block (a row of kernels) at a time keeps the scratch at Nm series.
  for (index_t i = 0; i < shape.nd; ++i) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t j = 0; j < shape.nm; ++j) {
      // The circulant's first column: lags 0..Nt-1, a zero at Nt, then lags -(Nt-1)..-1.
      double* c = series.data() + j * 2 * stride;
      const double* col = first_column.data() + (i * shape.nm + j) * nt;
      std::copy(col, col + nt, c);
      c[nt] = 0.0;
      if (first_row.empty()) {
        std::fill(c + nt + 1, c + L, 0.0);
      } else {
        const double* row = first_row.data() + (i * shape.nm + j) * nt;
        for (index_t k = 1; k < nt; ++k)
          c[nt + k] = row[nt - k];
      }
    }
    fft.execute(series.data());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (index_t w = 0; w < nfreq; ++w) {
      const cpu::PlanarRows<double> rows = spectrum.at(w);
      double* re = rows.re + i * rows.ld;
      double* im = rows.im + i * rows.ld;
      for (index_t j = 0; j < shape.nm; ++j) {
        re[j] = series[static_cast<std::size_t>(j * 2 * stride + 2 * w)] * scale;
        im[j] = series[static_cast<std::size_t>(j * 2 * stride + 2 * w + 1)] * scale;
      }
      std::fill(re + shape.nm, re + rows.ld, 0.0);
      std::fill(im + shape.nm, im + rows.ld, 0.0);
    }
  }
}

}  // namespace shiftop::btt
