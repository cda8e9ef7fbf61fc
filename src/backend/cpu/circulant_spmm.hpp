// The CPU products of a sparse block-circulant matrix (sparse-block-circulant-spmv, section 3.1,
// Figs. 1 and 5): row-by-row SpMMs of a CSR-like index with an implicit dense operand. They run on
// rows [row_begin, row_end) of the index, so that the caller splits rows over threads by
// nonzeros and every output row is written by one thread (results do not depend on the split).
//
// The index (circ/layout.hpp) gives per nonzero e an offset o_e = row * 2k + t and a value v(e):
// nonzero e adds v(e) times the k values starting at column t of the dense operand's row `row`
// to the output row. The dense operand holds nrhs values per column (the right-hand sides are
// innermost), so w = k*nrhs values are added per nonzero: an AXPY of length w (Fig. 1, line 5).
#pragma once

#include <cstdint>

#include "shiftop/core/shape.hpp"

namespace shiftop::cpu {

/// The per-nonzero value: A's own (C) or A's through the transposed index's positions (C^T).
template <class T>
struct DirectValues {
  const T* data;
  T operator()(std::int64_t e) const { return data[e]; }
};
template <class T>
struct GatheredValues {
  const T* data;
  const std::uint32_t* source;
  T operator()(std::int64_t e) const { return data[source[e]]; }
};

/// Sizes of one product: k blocks, nrhs right-hand sides.
struct CirculantWidth {
  index_t k = 0;
  index_t nrhs = 0;
  index_t row() const { return k * nrhs; }  // w: values per output row
};

/// MM-2-s (Fig. 5): in is the duplicated operand, rows of 2k*nrhs values; every S nonzeros of a
/// row are merged into one MAXPY, so the output row is loaded and stored once per S nonzeros;
/// the row's last (count mod S) nonzeros are single AXPYs. S = 1 is MM-2.
template <int S, class T, class Values>
void circulant_mm2s(std::int64_t row_begin, std::int64_t row_end, const std::int64_t* indptr,
                    const std::uint32_t* offset, Values value, const T* in, T* out,
                    CirculantWidth width) {
  const index_t w = width.row(), r = width.nrhs;
  for (std::int64_t row = row_begin; row < row_end; ++row) {
    T* __restrict y = out + row * w;
#pragma omp simd
    for (index_t p = 0; p < w; ++p)
      y[p] = T(0);
    std::int64_t e = indptr[row];
    const std::int64_t end = indptr[row + 1];
    for (; e + S <= end; e += S) {
      T v[S];
      const T* x[S];
      for (int q = 0; q < S; ++q) {
        v[q] = value(e + q);
        x[q] = in + static_cast<std::int64_t>(offset[e + q]) * r;
      }
#pragma omp simd
      for (index_t p = 0; p < w; ++p) {
        T sum = y[p];
        for (int q = 0; q < S; ++q)
          sum += v[q] * x[q][p];
        y[p] = sum;
      }
    }
    for (; e < end; ++e) {
      const T v = value(e);
      const T* __restrict x = in + static_cast<std::int64_t>(offset[e]) * r;
#pragma omp simd
      for (index_t p = 0; p < w; ++p)
        y[p] += v * x[p];
    }
  }
}

/// MM (eq. 4): in is X itself, rows of k*nrhs values, read cyclically from column t: two AXPYs
/// per nonzero, split where the block index wraps (the paper's p0), so that both vectorise.
template <class T, class Values>
void circulant_mm(std::int64_t row_begin, std::int64_t row_end, const std::int64_t* indptr,
                  const std::uint32_t* offset, Values value, const T* in, T* out,
                  CirculantWidth width) {
  const index_t w = width.row(), r = width.nrhs, k = width.k;
  for (std::int64_t row = row_begin; row < row_end; ++row) {
    T* __restrict y = out + row * w;
#pragma omp simd
    for (index_t p = 0; p < w; ++p)
      y[p] = T(0);
    for (std::int64_t e = indptr[row]; e < indptr[row + 1]; ++e) {
      const T v = value(e);
      const auto o = static_cast<std::int64_t>(offset[e]);
      const std::int64_t source_row = o / (2 * k), t = (o % (2 * k)) % k;
      const T* __restrict x = in + source_row * w;
      const index_t head = (k - t) * r;  // outputs before the wrap
#pragma omp simd
      for (index_t p = 0; p < head; ++p)
        y[p] += v * x[t * r + p];
#pragma omp simd
      for (index_t p = head; p < w; ++p)
        y[p] += v * x[p - head];
    }
  }
}

/// The baseline of eq. (2), one CSR SpMV of the index per output block: for block i and one
/// right-hand side, out[i][row] = sum_e v(e) in[i*n + column_e], where in is the block-major
/// input duplicated to 2k blocks of n and column_e the nonzero's column in that vector (A's own
/// column for C). The index is read k times.
template <class T, class Values>
void circulant_block_spmv(std::int64_t row_begin, std::int64_t row_end, const std::int64_t* indptr,
                          const std::uint32_t* column, Values value, const T* in, index_t n, T* out,
                          index_t m, index_t k) {
  for (index_t i = 0; i < k; ++i) {
    const T* __restrict x = in + i * n;
    for (std::int64_t row = row_begin; row < row_end; ++row) {
      T sum = 0;
      for (std::int64_t e = indptr[row]; e < indptr[row + 1]; ++e)
        sum += value(e) * x[column[e]];
      out[i * m + row] = sum;
    }
  }
}

}  // namespace shiftop::cpu
