#include "shiftop/svd/spectrum.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "btt/kernel_spectrum.hpp"
#include "core/aligned_buffer.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"

namespace shiftop::svd {
namespace {

void require_finite(std::span<const double> kernels, const Shape& shape, const char* what) {
  const auto found = std::ranges::find_if(kernels, [](double v) { return !std::isfinite(v); });
  if (found == kernels.end()) return;
  const index_t k = found - kernels.begin();
  fail("spectrum: {} holds {} at (i={}, j={}, t={}): expected finite kernel values", what,
       std::isnan(*found) ? "NaN" : "infinity", k / (shape.nm * shape.nt), k / shape.nt % shape.nm,
       k % shape.nt);
}

void validate(std::span<const double> first_column, std::span<const double> first_row,
              const Shape& shape, const SpectrumOptions& options) {
  shape.validate();
  require(static_cast<index_t>(first_column.size()) == shape.kernel_size(),
          "spectrum: the first block column holds {} values, expected Nd*Nm*Nt = {} for {}",
          first_column.size(), shape.kernel_size(), shape.str());
  require(first_row.empty() || static_cast<index_t>(first_row.size()) == shape.kernel_size(),
          "spectrum: the first block row holds {} values, expected 0 (block lower-triangular) or "
          "Nd*Nm*Nt = {} for {}",
          first_row.size(), shape.kernel_size(), shape.str());
  require(std::isfinite(options.rank_tolerance) && options.rank_tolerance >= 0.0,
          "spectrum: invalid rank tolerance {}: expected 0 (the default) or a positive number",
          options.rank_tolerance);
  require(options.threads >= 0,
          "spectrum: invalid thread count {}: expected 0 (all) or a positive number",
          options.threads);
  require_finite(first_column, shape, "the first block column");
  require_finite(first_row, shape, "the first block row");
  for (index_t k = 0; !first_row.empty() && k < shape.nd * shape.nm; ++k) {
    const auto at = static_cast<std::size_t>(k * shape.nt);
    require(first_column[at] == first_row[at],
            "spectrum: the first block row and column disagree at lag 0 in kernel (i={}, j={}): "
            "{} vs {}; both hold the diagonal block F_0",
            k / shape.nm, k % shape.nm, first_row[at], first_column[at]);
  }
}

// F^[w] / (2*Nt) for w = 0..Nt as a batch of column-major complex matrices, each stored tall
// (F^[w] when Nd >= Nm, else its transpose, which has the same singular values) so that the
// Jacobi SVD needs no transposition.
std::vector<std::complex<double>> scaled_blocks(std::span<const double> first_column,
                                                std::span<const double> first_row,
                                                const Shape& shape, int threads) {
  const index_t nfreq = btt::frequencies(shape);
  const index_t ld =
      (shape.nm + cpu::kLanes<double> - 1) / cpu::kLanes<double> * cpu::kLanes<double>;
  // FFTW's new-array execute wants strides of whole 64-byte lines (4 complex doubles).
  const index_t stride = (nfreq + 3) / 4 * 4;
  AlignedBuffer<double> planar(static_cast<std::size_t>(nfreq * 2 * shape.nd * ld));
  {
    AlignedBuffer<double> series(static_cast<std::size_t>(shape.nm * 2 * stride));
    btt::compute_kernel_spectrum(first_column, first_row, shape, {planar.data(), shape.nd, ld},
                                 {series.data(), series.size()}, stride, threads);
  }
  const bool tall = shape.nd >= shape.nm;
  const index_t row_step = tall ? 1 : shape.nm, col_step = tall ? shape.nd : 1;
  const index_t size = shape.nd * shape.nm;
  std::vector<std::complex<double>> blocks(static_cast<std::size_t>(nfreq * size));
  const cpu::PlanarSpectrum<double> spectrum{planar.data(), shape.nd, ld};
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t w = 0; w < nfreq; ++w) {
    const cpu::PlanarRows<double> rows = spectrum.at(w);
    std::complex<double>* block = blocks.data() + w * size;
    for (index_t i = 0; i < shape.nd; ++i)
      for (index_t j = 0; j < shape.nm; ++j)
        block[i * row_step + j * col_step] = {rows.re[i * ld + j], rows.im[i * ld + j]};
  }
  return blocks;
}

}  // namespace

Spectrum spectrum(std::span<const double> first_column, std::span<const double> first_row,
                  const Shape& shape, const SpectrumOptions& options) {
  validate(first_column, first_row, shape, options);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  const std::vector<std::complex<double>> blocks =
      scaled_blocks(first_column, first_row, shape, threads);

  Spectrum result;
  result.shape = shape;
  result.frequencies = btt::frequencies(shape);
  result.per_frequency = std::min(shape.nd, shape.nm);
  const index_t m = std::max(shape.nd, shape.nm), n = result.per_frequency;
  JacobiOptions jacobi = options.jacobi;
  jacobi.compute_u = false;
  jacobi.compute_v = false;
  jacobi.n_plus = -1;
  jacobi.threads = threads;
  // F^ is formed on the CPU (FFTW) either way; only the SVDs move to the GPU of the context,
  // which copies the blocks there and the singular values back.
  BatchedJacobiResult<std::complex<double>> svd =
      options.context ? jacobi_batched(*options.context, blocks.data(), result.frequencies, m, n, m,
                                       m * n, jacobi)
                      : jacobi_batched(blocks.data(), result.frequencies, m, n, m, m * n, jacobi);

  // compute_kernel_spectrum folds the inverse FFT's 1/(2*Nt) into F^; undo it on the singular
  // values (one rounding each) rather than on the entries.
  const auto period = static_cast<double>(btt::padded_length(shape));
  result.sigma = std::move(svd.sigma);
  for (double& s : result.sigma)
    s *= period;
  result.converged = true;
  for (index_t w = 0; w < result.frequencies; ++w) {
    const double* row = result.sigma.data() + w * n;
    result.sigma_max = std::max(result.sigma_max, row[0]);
    result.sigma_min = w == 0 ? row[n - 1] : std::min(result.sigma_min, row[n - 1]);
    const JacobiStats& stats = svd.stats[static_cast<std::size_t>(w)];
    result.max_sweeps = std::max(result.max_sweeps, stats.sweeps);
    result.converged = result.converged && stats.converged;
  }
  result.kappa = result.sigma_min > 0.0 ? result.sigma_max / result.sigma_min
                                        : std::numeric_limits<double>::infinity();
  result.rank_tolerance = options.rank_tolerance > 0.0
                              ? options.rank_tolerance
                              : static_cast<double>(m) * std::numeric_limits<double>::epsilon();
  // Each of the Nt+1 frequencies counts once (the embedding itself holds w = 1..Nt-1 twice).
  const double threshold = result.rank_tolerance * result.sigma_max;
  result.rank =
      std::ranges::count_if(result.sigma, [threshold](double s) { return s > threshold; });
  return result;
}

}  // namespace shiftop::svd
