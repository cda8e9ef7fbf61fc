// The spectrum of a block-Toeplitz operator's block-circulant embedding (DESIGN.md, "Spectrum"):
// the circulant of period L = 2*Nt is block-diagonalised by the DFT, so its singular values are
// those of the Nt+1 dense Nd x Nm matrices F^[w] = sum_t F_t exp(-2 pi i w t / L) (and their
// conjugates), computed here by the batched one-sided Jacobi SVD (svd/jacobi.hpp) on the CPU or
// on a GPU (svd/jacobi_gpu.hpp).
#pragma once

#include <span>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/shape.hpp"
#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd {

struct SpectrumOptions {
  /// The numerical rank counts singular values > rank_tolerance * sigma_max; 0: the default
  /// max(Nd, Nm) * eps (FP64).
  double rank_tolerance = 0.0;
  /// OpenMP threads (forming F^ and, on the CPU, the SVDs over the frequencies); 0: OpenMP's
  /// default.
  int threads = 0;
  /// Passed to the batched Jacobi SVD (compute_u/compute_v, n_plus, backend and gpu are ignored:
  /// the two below say where it runs).
  JacobiOptions jacobi;
  /// Where the batched SVD of the F^[w] runs: Backend::Cuda on the GPU of `gpu`, as
  /// JacobiOptions::gpu (F^ itself is formed on the CPU, by FFTW, either way).
  Backend backend = Backend::Cpu;
  GpuOptions gpu{};
};

struct Spectrum {
  Shape shape;
  index_t frequencies = 0;    ///< Nt + 1 (w = 0 .. Nt)
  index_t per_frequency = 0;  ///< min(Nd, Nm)
  /// frequencies x per_frequency, row w holds the singular values of F^[w], descending.
  std::vector<double> sigma;
  double sigma_max = 0.0;  ///< the largest singular value of the embedding (= its 2-norm)
  /// The smallest of all min(Nd, Nm) * (Nt+1) values; 0 when some F^[w] is rank deficient.
  double sigma_min = 0.0;
  double kappa = 0.0;  ///< sigma_max / sigma_min (infinity when sigma_min is 0)
  double rank_tolerance = 0.0;
  index_t rank = 0;        ///< singular values > rank_tolerance * sigma_max, over all frequencies
  int max_sweeps = 0;      ///< the most sweeps any frequency needed
  bool converged = false;  ///< every frequency converged
};

/// The spectrum from the kernels, as btt::Plan::create takes them: `first_column` the
/// Nd x Nm x Nt kernels (SOTI, F_0..F_{Nt-1}), `first_row` empty for a block lower-triangular F or
/// the lags 0..-(Nt-1) of a general block Toeplitz F. Throws shiftop::Error on bad sizes or
/// non-finite values.
Spectrum spectrum(std::span<const double> first_column, std::span<const double> first_row,
                  const Shape& shape, const SpectrumOptions& options = {});

}  // namespace shiftop::svd
