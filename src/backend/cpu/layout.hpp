// The memory phases of an apply (mixed-precision paper, section 2.4): zero-padding, the
// SOTI <-> TOSI reorderings, unpadding. Each fuses the cast to the next phase's precision, and
// rounds through the precision of the phase it belongs to (so an FP32 phase 1 or 5 really rounds).
#pragma once

#include <algorithm>
#include <complex>

#include "backend/cpu/planar.hpp"
#include "core/shape.hpp"

namespace shiftop::cpu {

/// Phase 1. x holds `nseries` FP64 series of `nt` values; series k of the output starts at
/// k*2*complex_stride and holds round_T1(x) followed by nt zeros (the block-circulant embedding).
template <typename T1, typename T2>
void pad_and_cast(const double* x, index_t nseries, index_t nt, index_t complex_stride, T2* series,
                  int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t k = 0; k < nseries; ++k) {
    const double* in = x + k * nt;
    T2* out = series + k * 2 * complex_stride;
    for (index_t t = 0; t < nt; ++t)
      out[t] = static_cast<T2>(static_cast<T1>(in[t]));
    std::fill(out + nt, out + 2 * nt, T2(0));
  }
}

/// Phase 5. y (FP64, nseries x nt) = the first nt samples of each series, rounded through T5.
template <typename T4, typename T5>
void unpad_and_cast(const T4* series, index_t nseries, index_t nt, index_t complex_stride,
                    double* y, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (index_t k = 0; k < nseries; ++k) {
    const T4* in = series + k * 2 * complex_stride;
    double* out = y + k * nt;
    for (index_t t = 0; t < nt; ++t)
      out[t] = static_cast<double>(static_cast<T5>(in[t]));
  }
}

namespace detail {
inline constexpr index_t kTileBlocks = 16;
inline constexpr index_t kTileFrequencies = 32;
}  // namespace detail

/// After the FFT: series (r, b) holds the complex spectrum interleaved, `nfreq` values starting at
/// element (r*nblocks + b)*2*complex_stride. Writes spec.at(w) row r, column b, cast to TP, and
/// zeros columns [nblocks, ld) so that the padded GEMV lanes read zeros.
template <typename TS, typename TP>
void soti_to_tosi(const TS* series, index_t nrhs, index_t nblocks, index_t nfreq,
                  index_t complex_stride, PlanarSpectrum<TP> spec, int threads) {
  using detail::kTileBlocks, detail::kTileFrequencies;
  const index_t wtiles = (nfreq + kTileFrequencies - 1) / kTileFrequencies;
#pragma omp parallel for num_threads(threads) collapse(2) schedule(static)
  for (index_t r = 0; r < nrhs; ++r) {
    for (index_t wt = 0; wt < wtiles; ++wt) {
      const index_t w0 = wt * kTileFrequencies, w1 = std::min(nfreq, w0 + kTileFrequencies);
      for (index_t b0 = 0; b0 < nblocks; b0 += kTileBlocks) {
        const index_t b1 = std::min(nblocks, b0 + kTileBlocks);
        for (index_t b = b0; b < b1; ++b) {
          const TS* in = series + (r * nblocks + b) * 2 * complex_stride;
          for (index_t w = w0; w < w1; ++w) {
            const PlanarRows<TP> rows = spec.at(w);
            rows.re[r * rows.ld + b] = static_cast<TP>(in[2 * w]);
            rows.im[r * rows.ld + b] = static_cast<TP>(in[2 * w + 1]);
          }
        }
      }
      for (index_t w = w0; w < w1; ++w) {
        const PlanarRows<TP> rows = spec.at(w);
        std::fill(rows.re + r * rows.ld + nblocks, rows.re + (r + 1) * rows.ld, TP(0));
        std::fill(rows.im + r * rows.ld + nblocks, rows.im + (r + 1) * rows.ld, TP(0));
      }
    }
  }
}

/// The inverse reordering before the IFFT: spec.at(w) row r, column b -> series (r, b), cast to TS.
template <typename TP, typename TS>
void tosi_to_soti(PlanarSpectrum<const TP> spec, index_t nrhs, index_t nblocks, index_t nfreq,
                  index_t complex_stride, TS* series, int threads) {
  using detail::kTileBlocks, detail::kTileFrequencies;
  const index_t btiles = (nblocks + kTileBlocks - 1) / kTileBlocks;
#pragma omp parallel for num_threads(threads) collapse(2) schedule(static)
  for (index_t r = 0; r < nrhs; ++r) {
    for (index_t bt = 0; bt < btiles; ++bt) {
      const index_t b0 = bt * kTileBlocks, b1 = std::min(nblocks, b0 + kTileBlocks);
      for (index_t w0 = 0; w0 < nfreq; w0 += kTileFrequencies) {
        const index_t w1 = std::min(nfreq, w0 + kTileFrequencies);
        for (index_t b = b0; b < b1; ++b) {
          TS* out = series + (r * nblocks + b) * 2 * complex_stride;
          for (index_t w = w0; w < w1; ++w) {
            const PlanarRows<const TP> rows = spec.at(w);
            out[2 * w] = static_cast<TS>(rows.re[r * rows.ld + b]);
            out[2 * w + 1] = static_cast<TS>(rows.im[r * rows.ld + b]);
          }
        }
      }
    }
  }
}

}  // namespace shiftop::cpu
