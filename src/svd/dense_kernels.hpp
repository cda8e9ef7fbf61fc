// Dense kernels of the blocked one-sided Jacobi method (jacobi-svd-gsvd-gpu-thesis, sections
// 2.1 and 2.3.1-2.3.5, adapted to CPU caches): the Gram matrix of a pivot block pair (2.7), its
// Cholesky factor, and the postmultiplication by the pair's accumulated rotations (2.9). They run
// inside OpenMP regions, so they call no BLAS (the installed OpenBLAS is the pthreads build).
//
// The pair's columns are packed once into a *planar* panel (real and imaginary parts apart, rows
// padded with zeros to a multiple of the vector width): the Gram and the postmultiplication then
// vectorise over rows with no remainder loop and no complex shuffles.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "shiftop/svd/jacobi.hpp"

namespace shiftop::svd::detail {

template <class T>
inline constexpr bool kIsComplex = !std::is_same_v<T, Real<T>>;

/// Vector lanes of one 64-byte register (AVX-512; two AVX2 registers elsewhere).
template <class R>
inline constexpr index_t kPanelLanes = 64 / static_cast<index_t>(sizeof(R));

/// Rows of a planar panel: `rows` rounded up to whole vectors.
template <class R>
index_t panel_ld(index_t rows) {
  return (rows + kPanelLanes<R> - 1) / kPanelLanes<R> * kPanelLanes<R>;
}

// Complex products written out: std::complex's operator* checks for inf/NaN through __muldc3
// (ISO C++ without -fcx-limited-range), which keeps loops from vectorising.
template <class T>
T mul(T a, T b) {
  if constexpr (kIsComplex<T>)
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
  else
    return a * b;
}
/// conj(a) * b.
template <class T>
T conj_mul(T a, T b) {
  if constexpr (kIsComplex<T>)
    return {a.real() * b.real() + a.imag() * b.imag(), a.real() * b.imag() - a.imag() * b.real()};
  else
    return a * b;
}
template <class T>
Real<T> abs2(T a) {
  if constexpr (kIsComplex<T>)
    return a.real() * a.real() + a.imag() * a.imag();
  else
    return a * a;
}
template <class T>
T conj_of(T a) {
  if constexpr (kIsComplex<T>)
    return std::conj(a);
  else
    return a;
}

/// Copies `count` columns of g (from column `first`) into columns dest.. of the planar panel
/// (re, im; im unused for real T), leading dimension ld >= rows; rows rows..ld-1 are zeroed.
template <class T>
void pack_planar(const T* g, index_t ldg, index_t rows, index_t first, index_t count, Real<T>* re,
                 Real<T>* im, index_t ld, index_t dest) {
  for (index_t j = 0; j < count; ++j) {
    const T* src = g + (first + j) * ldg;
    Real<T>* r = re + (dest + j) * ld;
    if constexpr (kIsComplex<T>) {
      Real<T>* s = im + (dest + j) * ld;
      for (index_t i = 0; i < rows; ++i) {
        r[i] = src[i].real();
        s[i] = src[i].imag();
      }
      std::fill(s + rows, s + ld, Real<T>(0));
    } else {
      std::copy(src, src + rows, r);
    }
    std::fill(r + rows, r + ld, Real<T>(0));
  }
}

/// The upper triangle (diagonal included) of H = P^H P for the c columns of a planar panel
/// (ld a multiple of the lanes, zero-padded). Register tiles of TI x TJ column pairs, each a
/// vector of partial sums over rows; the lanes are summed once at the end.
template <class T>
void gram_upper(const Real<T>* re, const Real<T>* im, index_t ld, index_t c, T* h, index_t ldh) {
  using R = Real<T>;
  constexpr int W = static_cast<int>(kPanelLanes<R>);
  constexpr int TI = kIsComplex<T> ? 2 : 4, TJ = 4;
  const auto tile = [&](index_t i0, index_t j0, auto ti_c, auto tj_c) {
    const int ti = static_cast<int>(ti_c), tj = static_cast<int>(tj_c);
    R sr[TI][TJ][W] = {}, si[TI][TJ][W] = {};
    for (index_t r = 0; r < ld; r += W) {
      for (int a = 0; a < TI; ++a) {
        if (a >= ti) break;
        const R* __restrict xr = re + (i0 + a) * ld + r;
        for (int b = 0; b < TJ; ++b) {
          if (b >= tj) break;
          const R* __restrict yr = re + (j0 + b) * ld + r;
          if constexpr (kIsComplex<T>) {
            const R* __restrict xi = im + (i0 + a) * ld + r;
            const R* __restrict yi = im + (j0 + b) * ld + r;
#pragma omp simd
            for (int v = 0; v < W; ++v) {
              sr[a][b][v] += xr[v] * yr[v] + xi[v] * yi[v];
              si[a][b][v] += xr[v] * yi[v] - xi[v] * yr[v];
            }
          } else {
#pragma omp simd
            for (int v = 0; v < W; ++v)
              sr[a][b][v] += xr[v] * yr[v];
          }
        }
      }
    }
    for (int a = 0; a < ti; ++a)
      for (int b = 0; b < tj; ++b) {
        if (i0 + a > j0 + b) continue;
        R s = 0, t = 0;
        for (int v = 0; v < W; ++v) {
          s += sr[a][b][v];
          t += si[a][b][v];
        }
        if constexpr (kIsComplex<T>)
          h[(i0 + a) + (j0 + b) * ldh] = T(s, t);
        else
          h[(i0 + a) + (j0 + b) * ldh] = s;
      }
  };
  for (index_t j0 = 0; j0 < c; j0 += TJ) {
    const int tj = static_cast<int>(std::min<index_t>(TJ, c - j0));
    for (index_t i0 = 0; i0 <= j0 + tj - 1; i0 += TI) {
      const int ti = static_cast<int>(std::min<index_t>(TI, c - i0));
      if (ti == TI && tj == TJ)  // the full tile: constant trip counts, all in registers
        tile(i0, j0, std::integral_constant<int, TI>{}, std::integral_constant<int, TJ>{});
      else
        tile(i0, j0, ti, tj);
    }
  }
}

/// Cholesky H = R^H R in place on the upper triangle of the c x c matrix h (the strict lower
/// triangle is zeroed). Returns false when a pivot r_ii^2 is not positive or keeps less than
/// `min_fraction` of h_ii: the Gram matrix then lost the pair's small singular directions
/// (r_ii^2 = h_ii - sum |r_ki|^2 cancels) and the caller shortens by QR instead (2.8).
template <class T>
bool cholesky_upper(T* h, index_t c, index_t ldh, Real<T> min_fraction) {
  using R = Real<T>;
  for (index_t i = 0; i < c; ++i) {
    R d = std::real(h[i + i * ldh]);
    const R hii = d;
    for (index_t k = 0; k < i; ++k)
      d -= abs2(h[k + i * ldh]);
    if (!(d > min_fraction * hii) || !std::isfinite(d)) return false;
    const R rii = std::sqrt(d);
    h[i + i * ldh] = T(rii);
    for (index_t j = i + 1; j < c; ++j) {
      T s = h[i + j * ldh];
      for (index_t k = 0; k < i; ++k)
        s -= conj_mul(h[k + i * ldh], h[k + j * ldh]);
      h[i + j * ldh] = s / rii;
    }
    for (index_t j = 0; j < i; ++j)
      h[i + j * ldh] = T(0);
  }
  return true;
}

/// out_j = P * x_j for the columns j0..j0+count-1 of the c x c matrix x (ldx), where P is the
/// planar panel (ld a multiple of the lanes) with `rows` valid rows; out_j is written to
/// dest + (j - j0) * ld_dest (interleaved T). Register tiles of 2 vectors of rows x TJ columns;
/// x's entries are broadcast from the cache.
template <class T>
void postmultiply(const Real<T>* re, const Real<T>* im, index_t ld, index_t rows, index_t c,
                  const T* x, index_t ldx, index_t j0, index_t count, T* dest, index_t ld_dest) {
  using R = Real<T>;
  constexpr int W = static_cast<int>(kPanelLanes<R>);
  constexpr int RB = 2 * W;
  constexpr int TJ = kIsComplex<T> ? 4 : 6;
  for (index_t r = 0; r < ld; r += RB) {
    const index_t valid = std::min<index_t>(RB, rows - r);
    if (valid <= 0) break;
    for (index_t jb = 0; jb < count; jb += TJ) {
      const int tj = static_cast<int>(std::min<index_t>(TJ, count - jb));
      R ar[TJ][RB] = {}, ai[TJ][RB] = {};
      const index_t rb = std::min<index_t>(RB, ld - r);  // ld is a multiple of W, maybe not RB
      for (index_t k = 0; k < c; ++k) {
        const R* __restrict pr = re + k * ld + r;
        const R* __restrict pi = kIsComplex<T> ? im + k * ld + r : nullptr;
        for (int b = 0; b < TJ; ++b) {
          if (b >= tj) break;
          const T xv = x[k + (j0 + jb + b) * ldx];
          if constexpr (kIsComplex<T>) {
            const R xr = xv.real(), xi = xv.imag();
            if (rb == RB) {
#pragma omp simd
              for (int v = 0; v < RB; ++v) {
                ar[b][v] += pr[v] * xr - pi[v] * xi;
                ai[b][v] += pr[v] * xi + pi[v] * xr;
              }
            } else {
              for (index_t v = 0; v < rb; ++v) {
                ar[b][v] += pr[v] * xr - pi[v] * xi;
                ai[b][v] += pr[v] * xi + pi[v] * xr;
              }
            }
          } else {
            if (rb == RB) {
#pragma omp simd
              for (int v = 0; v < RB; ++v)
                ar[b][v] += pr[v] * xv;
            } else {
              for (index_t v = 0; v < rb; ++v)
                ar[b][v] += pr[v] * xv;
            }
          }
        }
      }
      for (int b = 0; b < tj; ++b) {
        T* out = dest + (jb + b) * ld_dest + r;
        for (index_t v = 0; v < valid; ++v) {
          if constexpr (kIsComplex<T>)
            out[v] = T(ar[b][v], ai[b][v]);
          else
            out[v] = ar[b][v];
        }
      }
    }
  }
}

/// Whether a pivot block pair may be shortened by Gram + Cholesky: every squared column norm
/// h_ii (the diagonal of the c x c Gram matrix h) lies in [rows * min_normal / eps^2, sqrt(max)].
/// Below, the underflowed products (each off by at most min_normal) could reach eps^2 times the
/// norms' product, a visible part of the relative orthogonality threshold; above, the inner
/// method's dot products of R's columns could overflow. Otherwise QR shortens the pair.
template <class T>
bool gram_is_safe(const T* h, index_t c, index_t rows) {
  using R = Real<T>;
  constexpr R eps = std::numeric_limits<R>::epsilon();
  const R low = static_cast<R>(rows) * (std::numeric_limits<R>::min() / eps / eps);
  const R high = std::sqrt(std::numeric_limits<R>::max());
  for (index_t i = 0; i < c; ++i) {
    const R d = std::real(h[i + i * c]);
    if (!(d >= low && d <= high)) return false;
  }
  return true;
}

}  // namespace shiftop::svd::detail
