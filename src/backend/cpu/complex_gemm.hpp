// Per-frequency complex matrix products of phase 3 on planar data (planar.hpp). One call handles
// one frequency and all right-hand sides: the matrix is streamed from memory once and each of its
// elements is used for a block of kRhsBlock right-hand sides held in registers (a GEMV for one
// vector, a GEMM for many). The caller parallelises over frequencies.
#pragma once

#include <algorithm>

#include "backend/cpu/planar.hpp"

namespace shiftop::cpu {

namespace detail {

inline constexpr int kRhsBlock = 4;

template <typename T, int Width>
T horizontal_sum(const T (&v)[Width]) {
  T s = 0;
  for (int k = 0; k < Width; ++k)
    s += v[k];
  return s;
}

// Y[r][i] = sum_j A[i][j] X[r][j] for Block right-hand sides; cols is a multiple of the lanes and
// both A and X are zero beyond the true column count. Two independent accumulator sets (even and
// odd lane groups) keep two FMA chains in flight per product.
template <typename T, int Block>
void product_rows(PlanarRows<const T> a, index_t rows, index_t cols, PlanarRows<const T> x,
                  PlanarRows<T> y) {
  constexpr int W = static_cast<int>(kLanes<T>);
  for (index_t i = 0; i < rows; ++i) {
    const T* __restrict ar = a.re + i * a.ld;
    const T* __restrict ai = a.im + i * a.ld;
    T sr[Block][2][W] = {}, si[Block][2][W] = {};
    const auto accumulate = [&](index_t j, int h) {
      for (int r = 0; r < Block; ++r) {
        const T* __restrict xr = x.re + r * x.ld + j;
        const T* __restrict xi = x.im + r * x.ld + j;
#pragma omp simd
        for (int v = 0; v < W; ++v) {
          sr[r][h][v] += ar[j + v] * xr[v] - ai[j + v] * xi[v];
          si[r][h][v] += ar[j + v] * xi[v] + ai[j + v] * xr[v];
        }
      }
    };
    index_t j = 0;
    for (; j + 2 * W <= cols; j += 2 * W) {
      accumulate(j, 0);
      accumulate(j + W, 1);
    }
    if (j < cols) accumulate(j, 0);
    for (int r = 0; r < Block; ++r) {
      y.re[r * y.ld + i] = horizontal_sum(sr[r][0]) + horizontal_sum(sr[r][1]);
      y.im[r * y.ld + i] = horizontal_sum(si[r][0]) + horizontal_sum(si[r][1]);
    }
  }
}

// X[r][j] = sum_i conj(A[i][j]) Y[r][i] for Block right-hand sides and the Strips*W columns
// from j, accumulated in registers while walking down the rows of A (several right-hand sides:
// compute-bound, so each element of A is reused Block times from registers).
template <typename T, int Block, int Strips>
void adjoint_strip(PlanarRows<const T> a, index_t rows, index_t j, PlanarRows<const T> y,
                   PlanarRows<T> x) {
  constexpr int S = Strips * static_cast<int>(kLanes<T>);
  T xr[Block][S] = {}, xi[Block][S] = {};
  for (index_t i = 0; i < rows; ++i) {
    const T* __restrict ar = a.re + i * a.ld + j;
    const T* __restrict ai = a.im + i * a.ld + j;
    for (int r = 0; r < Block; ++r) {
      const T yr = y.re[r * y.ld + i], yi = y.im[r * y.ld + i];
#pragma omp simd
      for (int v = 0; v < S; ++v) {
        xr[r][v] += ar[v] * yr + ai[v] * yi;
        xi[r][v] += ar[v] * yi - ai[v] * yr;
      }
    }
  }
  for (int r = 0; r < Block; ++r)
    for (int v = 0; v < S; ++v) {
      x.re[r * x.ld + j + v] = xr[r][v];
      x.im[r * x.ld + j + v] = xi[r][v];
    }
}

// One right-hand side: x[j0:j0+JB] += conj(A[i][j0:j0+JB]) y[i] row by row, the partial x (64 kB)
// in L2, so that each row of A is read as a long contiguous run (two prefetch streams per thread).
template <typename T>
void adjoint_rows_axpy(PlanarRows<const T> a, index_t rows, index_t cols, PlanarRows<const T> y,
                       PlanarRows<T> x) {
  constexpr index_t JB = 32768 / static_cast<index_t>(sizeof(T));
  for (index_t j0 = 0; j0 < cols; j0 += JB) {
    const index_t n = std::min(JB, cols - j0);
    T* __restrict xr = x.re + j0;
    T* __restrict xi = x.im + j0;
    std::fill(xr, xr + n, T(0));
    std::fill(xi, xi + n, T(0));
    for (index_t i = 0; i < rows; ++i) {
      const T* __restrict ar = a.re + i * a.ld + j0;
      const T* __restrict ai = a.im + i * a.ld + j0;
      const T yr = y.re[i], yi = y.im[i];
#pragma omp simd
      for (index_t v = 0; v < n; ++v) {
        xr[v] += ar[v] * yr + ai[v] * yi;
        xi[v] += ar[v] * yi - ai[v] * yr;
      }
    }
  }
}

template <typename T, int Block>
void adjoint_product_columns(PlanarRows<const T> a, index_t rows, index_t cols,
                             PlanarRows<const T> y, PlanarRows<T> x) {
  if constexpr (Block == 1) {
    adjoint_rows_axpy(a, rows, cols, y, x);
  } else {
    // Register budget: 2 * Block * Strips accumulators of one SIMD register each, at most 16.
    constexpr int Strips = Block == 2 ? 4 : 2;
    constexpr index_t W = kLanes<T>;
    index_t j = 0;
    for (; j + Strips * W <= cols; j += Strips * W)
      adjoint_strip<T, Block, Strips>(a, rows, j, y, x);
    for (; j < cols; j += W)
      adjoint_strip<T, Block, 1>(a, rows, j, y, x);
  }
}

// Runs Kernel<Block> over nrhs right-hand sides in blocks of kRhsBlock, then the remainder.
template <template <typename, int> class Kernel, typename T, typename... Args>
void over_rhs_blocks(index_t nrhs, PlanarRows<const T> in, PlanarRows<T> out, Args... args) {
  index_t r = 0;
  for (; r + kRhsBlock <= nrhs; r += kRhsBlock)
    Kernel<T, kRhsBlock>::run(args..., in.shifted(r), out.shifted(r));
  switch (nrhs - r) {
    case 3:
      Kernel<T, 3>::run(args..., in.shifted(r), out.shifted(r));
      break;
    case 2:
      Kernel<T, 2>::run(args..., in.shifted(r), out.shifted(r));
      break;
    case 1:
      Kernel<T, 1>::run(args..., in.shifted(r), out.shifted(r));
      break;
    default:
      break;
  }
}

template <typename T, int Block>
struct Product {
  static void run(PlanarRows<const T> a, index_t rows, index_t cols, PlanarRows<const T> x,
                  PlanarRows<T> y) {
    product_rows<T, Block>(a, rows, cols, x, y);
  }
};

template <typename T, int Block>
struct AdjointProduct {
  static void run(PlanarRows<const T> a, index_t rows, index_t cols, PlanarRows<const T> y,
                  PlanarRows<T> x) {
    adjoint_product_columns<T, Block>(a, rows, cols, y, x);
  }
};

}  // namespace detail

/// y_r = A x_r, r < nrhs. A is rows x cols (cols padded to the lanes, zero-filled), x_r has cols
/// entries (zero beyond the true count), y_r has rows entries.
template <typename T>
void complex_product(PlanarRows<const T> a, index_t rows, index_t cols, PlanarRows<const T> x,
                     PlanarRows<T> y, index_t nrhs) {
  detail::over_rhs_blocks<detail::Product, T>(nrhs, x, y, a, rows, cols);
}

/// x_r = A^H y_r, r < nrhs; writes all `cols` (padded) entries of each x_r.
template <typename T>
void complex_adjoint_product(PlanarRows<const T> a, index_t rows, index_t cols,
                             PlanarRows<const T> y, PlanarRows<T> x, index_t nrhs) {
  detail::over_rhs_blocks<detail::AdjointProduct, T>(nrhs, y, x, a, rows, cols);
}

}  // namespace shiftop::cpu
