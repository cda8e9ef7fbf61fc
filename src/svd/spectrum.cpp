#include "shiftop/svd/spectrum.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>

#include "btt/frequency_blocks.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"
#include "shiftop/svd/jacobi.hpp"

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
  check_threads(options.threads, "spectrum: threads");
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

}  // namespace

Spectrum spectrum(std::span<const double> first_column, std::span<const double> first_row,
                  const Shape& shape, const SpectrumOptions& options) {
  validate(first_column, first_row, shape, options);
  const int threads = options.threads > 0 ? options.threads : omp_get_max_threads();
  // F^[w] / (2*Nt), each stored tall so that the Jacobi SVD needs no transposition.
  const std::vector<std::complex<double>> blocks =
      btt::frequency_blocks(first_column, first_row, shape, btt::BlockLayout::Tall, 1.0, threads);

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
  // F^ is formed on the CPU (FFTW) either way; only the SVDs move to the GPU, which copies the
  // blocks there and the singular values back.
  jacobi.backend = options.backend;
  jacobi.gpu = options.gpu;
  BatchedJacobiResult<std::complex<double>> svd =
      jacobi_batched(blocks.data(), result.frequencies, m, n, m, m * n, jacobi);

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
