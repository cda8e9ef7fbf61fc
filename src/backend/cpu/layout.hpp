// The memory phases of an apply (mixed-precision paper, section 2.4): zero-padding, the
// SOTI <-> TOSI reorderings, unpadding. Each works on a chunk of blocks of one right-hand side
// held in a small per-thread scratch (so the time series never leave the cache), fuses the cast
// to the next phase's precision, and rounds through the precision of the phase it belongs to (an
// FP32 phase 1 or 5 really rounds).
#pragma once

#include <algorithm>

#include "backend/cpu/planar.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::cpu {

/// Phase 1. x holds `count` FP64 series of `nt` values; series k of the scratch starts at
/// k*2*complex_stride and receives round_T1(x) followed by nt zeros (the circulant embedding).
template <typename T1, typename T2>
void pad_and_cast(const double* x, index_t count, index_t nt, index_t complex_stride, T2* series) {
  for (index_t k = 0; k < count; ++k) {
    const double* in = x + k * nt;
    T2* out = series + k * 2 * complex_stride;
    for (index_t t = 0; t < nt; ++t)
      out[t] = static_cast<T2>(static_cast<T1>(in[t]));
    std::fill(out + nt, out + 2 * nt, T2(0));
  }
}

/// Phase 5. y (FP64, count x nt) = the first nt samples of each series, rounded through T5.
template <typename T4, typename T5>
void unpad_and_cast(const T4* series, index_t count, index_t nt, index_t complex_stride,
                    double* y) {
  for (index_t k = 0; k < count; ++k) {
    const T4* in = series + k * 2 * complex_stride;
    double* out = y + k * nt;
    for (index_t t = 0; t < nt; ++t)
      out[t] = static_cast<double>(static_cast<T5>(in[t]));
  }
}

/// After the FFT: scratch series k holds `nfreq` interleaved complex values. Writes them to
/// row `row`, columns [col0, col0+count) of spec.at(w) for every w, cast to TP.
template <typename TS, typename TP>
void soti_to_tosi(const TS* series, index_t count, index_t nfreq, index_t complex_stride,
                  PlanarSpectrum<TP> spec, index_t row, index_t col0) {
  for (index_t w = 0; w < nfreq; ++w) {
    const PlanarRows<TP> rows = spec.at(w);
    TP* re = rows.re + row * rows.ld + col0;
    TP* im = rows.im + row * rows.ld + col0;
    for (index_t k = 0; k < count; ++k) {
      re[k] = static_cast<TP>(series[k * 2 * complex_stride + 2 * w]);
      im[k] = static_cast<TP>(series[k * 2 * complex_stride + 2 * w + 1]);
    }
  }
}

/// Zeros columns [from, ld) of row `row` at every frequency, so padded SIMD lanes read zeros.
template <typename TP>
void zero_padding_columns(PlanarSpectrum<TP> spec, index_t row, index_t from, index_t nfreq) {
  for (index_t w = 0; w < nfreq; ++w) {
    const PlanarRows<TP> rows = spec.at(w);
    std::fill(rows.re + row * rows.ld + from, rows.re + (row + 1) * rows.ld, TP(0));
    std::fill(rows.im + row * rows.ld + from, rows.im + (row + 1) * rows.ld, TP(0));
  }
}

/// The inverse reordering before the IFFT: row `row`, columns [col0, col0+count) of every
/// frequency -> scratch series, cast to TS.
template <typename TP, typename TS>
void tosi_to_soti(PlanarSpectrum<const TP> spec, index_t row, index_t col0, index_t count,
                  index_t nfreq, index_t complex_stride, TS* series) {
  constexpr index_t kAhead = 8;  // frequencies: each is a short run far from the last one
  for (index_t w = 0; w < nfreq; ++w) {
    const PlanarRows<const TP> rows = spec.at(w);
    const TP* re = rows.re + row * rows.ld + col0;
    const TP* im = rows.im + row * rows.ld + col0;
    if (w + kAhead < nfreq) {
      const PlanarRows<const TP> next = spec.at(w + kAhead);
      for (index_t k = 0; k < count; k += 64 / static_cast<index_t>(sizeof(TP))) {
        __builtin_prefetch(next.re + row * next.ld + col0 + k);
        __builtin_prefetch(next.im + row * next.ld + col0 + k);
      }
    }
    for (index_t k = 0; k < count; ++k) {
      series[k * 2 * complex_stride + 2 * w] = static_cast<TS>(re[k]);
      series[k * 2 * complex_stride + 2 * w + 1] = static_cast<TS>(im[k]);
    }
  }
}

}  // namespace shiftop::cpu
