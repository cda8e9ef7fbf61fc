#include "gsvd/gsvd_pointwise.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "gsvd/hz_transform.hpp"
#include "shiftop/core/error.hpp"
#include "svd/dense_kernels.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd::detail {
namespace {

// Pairs whose columns are shorter than this (rows of F, G and Z together) run on one thread: a
// step's pairs then carry too little work to pay for OpenMP's barrier (as svd/pointwise.cpp).
constexpr index_t kParallelMinRows = 64;

template <class T>
const Real<T>* reals(const T* x) {
  return reinterpret_cast<const Real<T>*>(x);
}
template <class T>
Real<T>* reals(T* x) {
  return reinterpret_cast<Real<T>*>(x);
}

template <class R>
struct Gram2 {
  R xx = 0, yy = 0;
  Pair2<R> xy;  // x^H y
};

// ||x||^2, ||y||^2 and x^H y in one pass (complex columns as interleaved reals, so the loop
// vectorises; std::complex's operator* would call __muldc3).
template <class T>
Gram2<Real<T>> gram2(const T* x_in, const T* y_in, index_t n) {
  using R = Real<T>;
  const R* __restrict x = reals(x_in);
  const R* __restrict y = reals(y_in);
  R xx = 0, yy = 0, re = 0, im = 0;
  if constexpr (!kIsComplex<T>) {
#pragma omp simd reduction(+ : xx, yy, re)
    for (index_t i = 0; i < n; ++i) {
      xx += x[i] * x[i];
      yy += y[i] * y[i];
      re += x[i] * y[i];
    }
  } else {
#pragma omp simd reduction(+ : xx, yy, re, im)
    for (index_t i = 0; i < n; ++i) {
      const R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      xx += xr * xr + xi * xi;
      yy += yr * yr + yi * yi;
      re += xr * yr + xi * yi;
      im += xr * yi - xi * yr;
    }
  }
  return {xx, yy, {re, im}};
}

template <class T>
Real<T> sum_squares(const T* x_in, index_t n) {
  using R = Real<T>;
  const R* __restrict x = reals(x_in);
  const index_t count = kIsComplex<T> ? 2 * n : n;
  R s = 0;
#pragma omp simd reduction(+ : s)
  for (index_t i = 0; i < count; ++i)
    s += x[i] * x[i];
  return s;
}

// [x y] <- [x y] [c_xx c_xy; c_yx c_yy] (complex coefficients as Pair2; im 0 for real T).
template <class T>
void transform_pair(T* x_in, T* y_in, index_t n, Pair2<Real<T>> c_xx, Pair2<Real<T>> c_yx,
                    Pair2<Real<T>> c_xy, Pair2<Real<T>> c_yy) {
  using R = Real<T>;
  R* __restrict x = reals(x_in);
  R* __restrict y = reals(y_in);
  if constexpr (!kIsComplex<T>) {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) {
      const R xi = x[i], yi = y[i];
      x[i] = c_xx.re * xi + c_yx.re * yi;
      y[i] = c_xy.re * xi + c_yy.re * yi;
    }
  } else {
#pragma omp simd
    for (index_t i = 0; i < n; ++i) {
      const R xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
      x[2 * i] = (c_xx.re * xr - c_xx.im * xi) + (c_yx.re * yr - c_yx.im * yi);
      x[2 * i + 1] = (c_xx.re * xi + c_xx.im * xr) + (c_yx.re * yi + c_yx.im * yr);
      y[2 * i] = (c_xy.re * xr - c_xy.im * xi) + (c_yy.re * yr - c_yy.im * yi);
      y[2 * i + 1] = (c_xy.re * xi + c_xy.im * xr) + (c_yy.re * yi + c_yy.im * yr);
    }
  }
}

struct PairOutcome {
  bool transformed = false;
  bool proper = false;
  bool parallel = false;  // the columns of G became parallel: G is numerically rank deficient
  bool overflow = false;  // ||f||^2 or ||f||^2 / ||g||^2 overflowed
};

template <class R>
Pair2<R> scaled(Pair2<R> x, R s) {
  return {x.re * s, x.im * s};
}

template <class T>
void zero_column(T* x, index_t rows) {
  std::fill(x, x + rows, T(0));
}

// Transforms the pair's columns of F, G, Z and W; z_norm2 (the squared column norms of Z) follows.
template <class T>
void transform_all(const HzColumns<T>& c, Real<T>* z_norm2, index_t i, index_t j,
                   Pair2<Real<T>> c_ii, Pair2<Real<T>> c_ji, Pair2<Real<T>> c_ij,
                   Pair2<Real<T>> c_jj) {
  transform_pair(c.f + i * c.ldf, c.f + j * c.ldf, c.rows_f, c_ii, c_ji, c_ij, c_jj);
  transform_pair(c.g + i * c.ldg, c.g + j * c.ldg, c.rows_g, c_ii, c_ji, c_ij, c_jj);
  transform_pair(c.z + i * c.ldz, c.z + j * c.ldz, c.rows_z, c_ii, c_ji, c_ij, c_jj);
  z_norm2[i] = sum_squares(c.z + i * c.ldz, c.rows_z);
  z_norm2[j] = sum_squares(c.z + j * c.ldz, c.rows_z);
  if (c.w != nullptr)
    transform_pair(c.w + i * c.ldw, c.w + j * c.ldw, c.rows_w, c_ii, c_ji, c_ij, c_jj);
}

template <class T>
PairOutcome process_pair(const HzColumns<T>& c, Real<T>* z_norm2, index_t i, index_t j,
                         Real<T> tolerance, Real<T> parallel_limit, bool sort) {
  using R = Real<T>;
  PairOutcome outcome;
  Gram2<R> a = gram2(c.f + i * c.ldf, c.f + j * c.ldf, c.rows_f);
  const Gram2<R> b = gram2(c.g + i * c.ldg, c.g + j * c.ldg, c.rows_g);
  if (!(b.xx > 0 && b.yy > 0 && std::isfinite(b.xx) && std::isfinite(b.yy))) {
    outcome.parallel = true;
    return outcome;
  }
  // Columns of F at the level of rounding noise become exact zeros (see HzColumns).
  // (Not for an overflowed a.xx: that is refused below.)
  const bool zero_i = a.xx > 0 && std::isfinite(a.xx) && a.xx <= c.f_zero2 * z_norm2[i];
  const bool zero_j = a.yy > 0 && std::isfinite(a.yy) && a.yy <= c.f_zero2 * z_norm2[j];
  if (zero_i || zero_j) {
    if (zero_i) {
      zero_column(c.f + i * c.ldf, c.rows_f);
      a.xx = 0;
    }
    if (zero_j) {
      zero_column(c.f + j * c.ldf, c.rows_f);
      a.yy = 0;
    }
    a.xy = {};
  }
  // (3.14): the pivot submatrices for the columns of G scaled to unit norm.
  const R d_i = 1 / std::sqrt(b.xx), d_j = 1 / std::sqrt(b.yy);
  HzPivot<R> pivot;
  pivot.a_ii = a.xx * d_i * d_i;
  pivot.a_jj = a.yy * d_j * d_j;
  pivot.a_ij = scaled(a.xy, d_i * d_j);
  pivot.b = scaled(b.xy, d_i * d_j);
  if (!std::isfinite(pivot.a_ii) || !std::isfinite(pivot.a_jj) || !std::isfinite(pivot.a_ij.re) ||
      !std::isfinite(pivot.a_ij.im)) {
    outcome.overflow = true;
    return outcome;
  }
  const R abs_b = std::hypot(pivot.b.re, pivot.b.im);
  const R one_minus = R(1) - abs_b, one_plus = R(1) + abs_b;
  if (!(one_minus * one_plus > parallel_limit)) {
    outcome.parallel = true;
    return outcome;
  }
  // Section 3.5's test, except that a zero a_ij is orthogonal whatever a_ii, a_jj (the test's
  // |a_ij| >= tol sqrt(a_ii a_jj) holds as 0 >= 0 for a zero column).
  const R abs_a = std::hypot(pivot.a_ij.re, pivot.a_ij.im);
  const bool f_pair = abs_a > 0 && hz_needs_transform(pivot, tolerance);
  if (!(abs_b >= tolerance || f_pair)) return outcome;
  outcome.transformed = true;
  if (pivot.a_ii == R(0) || pivot.a_jj == R(0)) {
    // A zero column of F: its direction is an eigenvector of (A^, B^) for 0, so Z^ is the
    // Gram-Schmidt step that keeps it and B^-orthonormalises the other, with c = sqrt(1 - |b|^2):
    // f_i = 0: [g_i, (g_j - b g_i) / c], then swapped (the zero column last) when sorting;
    // f_j = 0: [(g_i - conj(b) g_j) / c, g_j].
    const R cc = std::sqrt(one_minus * one_plus);
    outcome.proper = true;
    if (pivot.a_ii == R(0)) {
      const Pair2<R> keep{d_i, 0}, mix = scaled(pivot.b, -d_i / cc), other{d_j / cc, 0};
      if (sort && pivot.a_jj > R(0))
        transform_all(c, z_norm2, i, j, mix, other, keep, Pair2<R>{});
      else
        transform_all(c, z_norm2, i, j, keep, Pair2<R>{}, mix, other);
    } else {
      const Pair2<R> mix = scaled(conj(pivot.b), -d_j / cc);
      transform_all(c, z_norm2, i, j, Pair2<R>{d_i / cc, 0}, mix, Pair2<R>{}, Pair2<R>{d_j, 0});
    }
    return outcome;
  }
  const HzTransform<R> t = hz_transform(pivot, sort, tolerance);
  outcome.proper = t.proper;
  // [x_i x_j] <- [d_i x_i  d_j x_j] Z^: fold the normalisation into the coefficients.
  transform_all(c, z_norm2, i, j, scaled(t.z_ii, d_i), scaled(t.z_ji, d_j), scaled(t.z_ij, d_i),
                scaled(t.z_jj, d_j));
  return outcome;
}

}  // namespace

template <class T>
HzCounts hz_pointwise(const HzColumns<T>& columns, const Strategy& strategy, int max_sweeps,
                      bool sort, int threads, const SweepCallback& progress) {
  using R = Real<T>;
  require(strategy.order() == columns.n, "hz_pointwise: strategy of order {} for {} columns",
          strategy.order(), columns.n);
  require(columns.z != nullptr, "hz_pointwise: expected Z");
  HzCounts counts;
  if (columns.n < 2) {
    counts.converged = true;
    return counts;
  }
  const R eps = unit_roundoff<R>();
  const R order = static_cast<R>(columns.n);
  // Section 3.5's eps sqrt(n), with n at least the columns' length (svd/rotation.hpp says why).
  const R tolerance =
      orthogonality_tolerance<R>(std::max(columns.rows_f, columns.rows_g), columns.n);
  const R parallel_limit = order * eps;
  const index_t rows =
      columns.rows_f + columns.rows_g + columns.rows_z + (columns.w ? columns.rows_w : 0);
  const int team = rows >= kParallelMinRows ? std::max(1, threads) : 1;
  // The squared column norms of Z for the zero test, kept up to date by the transformations.
  std::vector<R> z_norm2(static_cast<std::size_t>(columns.n));
  for (index_t j = 0; j < columns.n; ++j)
    z_norm2[static_cast<std::size_t>(j)] = sum_squares(columns.z + j * columns.ldz, columns.rows_z);
  std::vector<PairOutcome> outcomes;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    std::int64_t transformed = 0, proper = 0;
    for (index_t s = 0; s < strategy.steps(); ++s) {
      const auto pairs = strategy.step(s);
      const auto count = static_cast<index_t>(pairs.size());
      outcomes.assign(pairs.size(), PairOutcome{});
      const auto one = [&](index_t k) {
        outcomes[static_cast<std::size_t>(k)] = process_pair(
            columns, z_norm2.data(), pairs[k].p, pairs[k].q, tolerance, parallel_limit, sort);
      };
      if (team > 1 && count > 1) {
#pragma omp parallel for num_threads(team) schedule(static)
        for (index_t k = 0; k < count; ++k)
          one(k);
      } else {  // no parallel region: the inner method's steps have one pair each
        for (index_t k = 0; k < count; ++k)
          one(k);
      }
      for (index_t k = 0; k < count; ++k) {
        const PairOutcome& o = outcomes[static_cast<std::size_t>(k)];
        if (o.parallel) {
          const index_t i = pairs[k].p, j = pairs[k].q;
          fail(
              "g: G is numerically rank deficient (columns {} and {} became parallel to working "
              "precision): the implicit Hari-Zimmermann GSVD needs G of full column rank",
              columns.columns ? columns.columns[i] : i, columns.columns ? columns.columns[j] : j);
        }
        require(!o.overflow,
                "f: ||f_i||^2 / ||g_i||^2 overflowed for columns {} and {}: generalized singular "
                "values near or above sqrt(max double) / ||F|| are out of the method's range",
                columns.columns ? columns.columns[pairs[k].p] : pairs[k].p,
                columns.columns ? columns.columns[pairs[k].q] : pairs[k].q);
        counts.transformations += o.transformed ? 1 : 0;
        counts.proper_transformations += o.proper ? 1 : 0;
        transformed += o.transformed ? 1 : 0;
        proper += o.proper ? 1 : 0;
      }
    }
    ++counts.sweeps;
    if (progress)
      progress({.sweep = counts.sweeps, .max_sweeps = max_sweeps, .rotations = transformed});
    // Converged when no transformation moved a column by more than the tolerance (hz_transform's
    // "proper", measured on the columns: a diagonal of Z^ that rounds to 1 can still move one).
    if (proper == 0) {
      counts.converged = true;
      break;
    }
  }
  return counts;
}

template HzCounts hz_pointwise<double>(const HzColumns<double>&, const Strategy&, int, bool, int,
                                       const SweepCallback&);
template HzCounts hz_pointwise<std::complex<double>>(const HzColumns<std::complex<double>>&,
                                                     const Strategy&, int, bool, int,
                                                     const SweepCallback&);

}  // namespace shiftop::svd::detail
