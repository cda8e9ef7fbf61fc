// The public driver of the implicit Hari-Zimmermann GSVD (jacobi-svd-gsvd-gpu-thesis, chapter 3):
// validation, exact power-of-2 scaling, initZ (section 3.5), the variant
// (gsvd/gsvd_pointwise.hpp, gsvd/gsvd_blocked.hpp), the finalisation of Algorithm 5 (sigma_f,
// sigma_g, U, V, X = S Z^{-1}), the final order, and batches; Backend::Cuda goes to the GPU
// driver (svd/cuda/host_drivers.hpp).
#include "shiftop/gsvd/gsvd.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>

#include "gsvd/gsvd_blocked.hpp"
#include "gsvd/gsvd_pointwise.hpp"
#include "shiftop/core/error.hpp"
#include "svd/column_norms.hpp"
#include "svd/cuda/host_drivers.hpp"
#include "svd/driver_checks.hpp"
#include "svd/rotation.hpp"

namespace shiftop::svd {

namespace {

using detail::check_entries;

// HZ-BO-32 of Table 3.2.
constexpr index_t kDefaultBlockWidth = 32;
// Variant::Auto: pointwise below this n, block-oriented from it. Measured on the 2-core development
// VM (values only, prescribed square pairs, bench/results/issue18-cpu-2026-11-27; a shared
// machine, so +-30%): one thread, pointwise / block-oriented 0.41 / 0.59 s at n = 250, 4.75 /
// 5.55 s at 500, 81.9 / 38.7 s at 1000 (the pointwise method's columns leave L2 and its time
// grows 17x for 2x n); two threads, 1.27 / 1.08 s at 250 and 11.2 / 6.3 s at 500 (a barrier per
// step of short pairs costs the pointwise method more than it gains). 512 is in between.
constexpr index_t kAutoBlockedFrom = 512;

// The power of 2 that brings `largest` into [1, 2) (1 for 0): an exact scaling.
template <class R>
int scale_exponent(R largest) {
  if (largest == R(0)) return 0;
  int exponent = 0;
  std::frexp(largest, &exponent);  // largest = mantissa 2^exponent, mantissa in [0.5, 1)
  return 1 - exponent;
}

// Copies the rows x n matrix a (lda) into a dense rows x n block, times 2^exponent.
template <class T>
std::vector<T> scaled_copy(const T* a, index_t rows, index_t n, index_t lda, int exponent) {
  std::vector<T> out(static_cast<std::size_t>(rows * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < rows; ++i) {
      const T x = a[i + j * lda];
      if constexpr (detail::kIsComplex<T>)
        out[static_cast<std::size_t>(i + j * rows)] =
            T(std::ldexp(x.real(), exponent), std::ldexp(x.imag(), exponent));
      else
        out[static_cast<std::size_t>(i + j * rows)] = std::ldexp(x, exponent);
    }
  return out;
}

// Z^{-1} of the n x n matrix z (column-major) by LU with partial pivoting (no LAPACK in src/svd:
// this may run inside the batched driver's OpenMP region).
template <class T>
std::vector<T> inverse(std::vector<T> lu, index_t n) {
  std::vector<index_t> pivot(static_cast<std::size_t>(n));
  const auto at = [&](index_t i, index_t j) -> T& {
    return lu[static_cast<std::size_t>(i + j * n)];
  };
  for (index_t k = 0; k < n; ++k) {
    index_t best = k;
    for (index_t i = k + 1; i < n; ++i)
      if (std::abs(at(i, k)) > std::abs(at(best, k))) best = i;
    pivot[static_cast<std::size_t>(k)] = best;
    if (best != k)
      for (index_t j = 0; j < n; ++j)
        std::swap(at(k, j), at(best, j));
    const T d = at(k, k);
    for (index_t i = k + 1; i < n; ++i)
      at(i, k) /= d;
    for (index_t j = k + 1; j < n; ++j) {
      const T s = at(k, j);
      if (s == T(0)) continue;
      for (index_t i = k + 1; i < n; ++i)
        at(i, j) -= at(i, k) * s;
    }
  }
  // Solve L U Y = P I, column by column.
  std::vector<T> y(static_cast<std::size_t>(n * n), T(0));
  for (index_t c = 0; c < n; ++c) {
    T* col = y.data() + c * n;
    col[c] = T(1);
    for (index_t k = 0; k < n; ++k)
      std::swap(col[k], col[pivot[static_cast<std::size_t>(k)]]);
    for (index_t k = 0; k < n; ++k)
      for (index_t i = k + 1; i < n; ++i)
        col[i] -= at(i, k) * col[k];
    for (index_t k = n - 1; k >= 0; --k) {
      col[k] /= at(k, k);
      for (index_t i = 0; i < k; ++i)
        col[i] -= at(i, k) * col[k];
    }
  }
  return y;
}

template <class T>
detail::HzCounts run_variant(const detail::HzColumns<T>& columns, const GsvdOptions& options,
                             int threads) {
  const int max_sweeps = options.max_sweeps > 0 ? options.max_sweeps : detail::kDefaultGsvdSweeps;
  const index_t n = columns.n;
  Variant variant = options.variant;
  if (variant == Variant::Auto)
    variant = n >= kAutoBlockedFrom ? Variant::BlockOriented : Variant::Pointwise;
  if (n < 4) variant = Variant::Pointwise;  // two blocks of at least two columns each
  if (variant == Variant::Pointwise)
    return detail::hz_pointwise(columns, Strategy::create(options.strategy, n), max_sweeps,
                                options.sort, threads, options.progress);
  const index_t width = options.block_width > 0 ? options.block_width : kDefaultBlockWidth;
  return detail::hz_blocked(columns, options.strategy, options.inner_strategy, width,
                            variant == Variant::FullBlock, max_sweeps, options.sort, threads,
                            options.progress)
      .counts;
}

// The whole computation for one validated pair; max_f, max_g the largest |Re|, |Im| of F, G.
template <class T>
GsvdResult<T> solve(const T* f_in, index_t m, index_t ldf, const T* g_in, index_t p, index_t ldg,
                    index_t n, Real<T> max_f, Real<T> max_g, const GsvdOptions& options,
                    int threads) {
  using R = Real<T>;
  const int sf = scale_exponent(max_f), sg = scale_exponent(max_g);
  std::vector<T> f = scaled_copy(f_in, m, n, ldf, sf);
  std::vector<T> g = scaled_copy(g_in, p, n, ldg, sg);

  // initZ (section 3.5): Z = diag(1 / ||g_i||), F and G scaled by it. Z is accumulated also for
  // values only (G's rank test below). Y = W Z with W = diag(||f_k||) of F_s is accumulated beside
  // it for the zero test of F's columns (gsvd/gsvd_pointwise.hpp, HzColumns): the rounding noise
  // of F_s z_i is about eps sum_k ||f_k|| |z_ki| <= eps sqrt(n) ||y_i||, so a column with
  // ||f_i|| <= eps sqrt(m n) ||y_i|| is zero; invariant under column scaling like the method.
  std::vector<T> z(static_cast<std::size_t>(n * n), T(0)), y(z.size(), T(0));
  const R eps = detail::unit_roundoff<R>();
  const R zero_level = eps * std::sqrt(static_cast<R>(m) * static_cast<R>(n));
  // G's rank test is made on the columns scaled to unit norm (column scaling does not change the
  // GSVD, and the method is invariant under it): G' = G_s D^{-1} with ||G'||_F = sqrt(n), so
  // G z_j = G' (D z_j) is at rounding level when ||g_j|| <= eps sqrt(p n) sqrt(n) ||D z_j||.
  const R g_level =
      eps * std::sqrt(static_cast<R>(p) * static_cast<R>(n)) * std::sqrt(static_cast<R>(n));
  std::vector<R> g_norms(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) {
    const R norm = detail::column_norm(g.data() + j * p, p);
    require(norm > 0,
            "g: column {} of G is zero: the implicit Hari-Zimmermann GSVD needs G of full column "
            "rank",
            j);
    g_norms[static_cast<std::size_t>(j)] = norm;
    const R d = 1 / norm;
    for (index_t i = 0; i < m; ++i)
      f[static_cast<std::size_t>(i + j * m)] *= d;
    for (index_t i = 0; i < p; ++i)
      g[static_cast<std::size_t>(i + j * p)] *= d;
    z[static_cast<std::size_t>(j + j * n)] = T(d);
    y[static_cast<std::size_t>(j + j * n)] = T(detail::column_norm(f.data() + j * m, m));
  }

  detail::HzColumns<T> columns;
  columns.f = f.data();
  columns.rows_f = columns.ldf = m;
  columns.g = g.data();
  columns.rows_g = columns.ldg = p;
  columns.z = y.data();
  columns.rows_z = columns.ldz = n;
  columns.w = z.data();
  columns.rows_w = columns.ldw = n;
  columns.n = n;
  columns.f_zero2 = zero_level * zero_level;
  const detail::HzCounts counts = run_variant(columns, options, threads);

  GsvdResult<T> result;
  result.m = m;
  result.p = p;
  result.n = n;
  result.stats.sweeps = counts.sweeps;
  result.stats.transformations = counts.transformations;
  result.stats.proper_transformations = counts.proper_transformations;
  result.stats.converged = counts.converged;

  // Algorithm 5's finalisation on the scaled pair, then the scaling undone: for the scaled pair
  // F_s = 2^sf F = U diag(a) X_s, G_s = 2^sg G = V diag(b) X_s, so F = U diag(2^-sf a) X_s and
  // G = V diag(2^-sg b) X_s; the new pair (2^-sf a, 2^-sg b) / t, t its hypot, and X_s's row
  // times t. A common power 2^k keeps the hypot in range.
  std::vector<R> sigma_f(static_cast<std::size_t>(n)), sigma_g(static_cast<std::size_t>(n));
  std::vector<R> row_scale(static_cast<std::size_t>(n));
  std::vector<T> dz(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) {
    // The zero test of the iteration (HzColumns), once more: the blocked variants apply it to
    // the block pair's factors, not to F itself.
    const R nz = detail::column_norm(y.data() + j * n, n);
    R nf = detail::column_norm(f.data() + j * m, m);
    if (nf <= zero_level * nz) nf = 0;
    const R ng = detail::column_norm(g.data() + j * p, p);
    // G z_j at rounding level: G is numerically rank deficient (its null direction need not
    // show as a parallel pair during the iteration when other pairs mixed the columns first).
    for (index_t k = 0; k < n; ++k)
      dz[static_cast<std::size_t>(k)] =
          z[static_cast<std::size_t>(k + j * n)] * g_norms[static_cast<std::size_t>(k)];
    require(ng > g_level * detail::column_norm(dz.data(), n),
            "g: G is numerically rank deficient (column {} of G Z fell to rounding level: "
            "||G z|| <= eps n sqrt(p) ||D z||, D = diag(||g_k||)): the implicit Hari-Zimmermann "
            "GSVD needs G of full column rank",
            j);
    const R s = std::hypot(nf, ng);
    const R a = nf / s, b = ng / s;
    const int eb = std::ilogb(b) - sg;
    const int k = a > 0 ? std::max(std::ilogb(a) - sf, eb) : eb;
    const R a2 = std::ldexp(a, -sf - k), b2 = std::ldexp(b, -sg - k);
    const R t = std::hypot(a2, b2);
    // F and G are scaled separately, so a value sigma_f / sigma_g beyond double's range (F huge,
    // G tiny) survives the iteration and shows only here, as a sigma_g that underflows.
    require(b2 / t >= std::numeric_limits<R>::min(),
            "f: the generalized singular value of column {} is beyond double's range (sigma_g "
            "underflows: F is too large against G); scale F down or G up",
            j);
    sigma_f[static_cast<std::size_t>(j)] = a2 / t;
    sigma_g[static_cast<std::size_t>(j)] = b2 / t;
    row_scale[static_cast<std::size_t>(j)] = s * std::ldexp(t, k);  // X = diag(S t 2^k) Z^{-1}
    if (options.compute_vectors) {
      T* fj = f.data() + j * m;
      T* gj = g.data() + j * p;
      for (index_t i = 0; i < m; ++i)
        fj[i] = nf > 0 ? fj[i] / nf : T(0);
      for (index_t i = 0; i < p; ++i)
        gj[i] /= ng;
    }
  }

  // The order: sigma_f / sigma_g nonincreasing, ties kept in place.
  std::vector<index_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(), [&](index_t first, index_t second) {
    return sigma_f[static_cast<std::size_t>(first)] / sigma_g[static_cast<std::size_t>(first)] >
           sigma_f[static_cast<std::size_t>(second)] / sigma_g[static_cast<std::size_t>(second)];
  });
  result.sigma_f.resize(static_cast<std::size_t>(n));
  result.sigma_g.resize(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) {
    result.sigma_f[static_cast<std::size_t>(k)] = sigma_f[static_cast<std::size_t>(order[k])];
    result.sigma_g[static_cast<std::size_t>(k)] = sigma_g[static_cast<std::size_t>(order[k])];
  }
  if (options.compute_vectors) {
    const std::vector<T> zinv = inverse(std::move(z), n);
    result.u.resize(static_cast<std::size_t>(m * n));
    result.v.resize(static_cast<std::size_t>(p * n));
    result.x.resize(static_cast<std::size_t>(n * n));
    for (index_t k = 0; k < n; ++k) {
      const index_t j = order[static_cast<std::size_t>(k)];
      std::copy(f.begin() + j * m, f.begin() + (j + 1) * m, result.u.begin() + k * m);
      std::copy(g.begin() + j * p, g.begin() + (j + 1) * p, result.v.begin() + k * p);
      const R scale = row_scale[static_cast<std::size_t>(j)];
      for (index_t c = 0; c < n; ++c)
        result.x[static_cast<std::size_t>(k + c * n)] =
            zinv[static_cast<std::size_t>(j + c * n)] * scale;
    }
  }
  return result;
}

int thread_count(const GsvdOptions& options) {
  return options.threads > 0 ? options.threads : omp_get_max_threads();
}

}  // namespace

template <class T>
std::vector<Real<T>> GsvdResult<T>::values() const {
  std::vector<Real<T>> out(sigma_f.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = sigma_f[i] / sigma_g[i];
  return out;
}

template <class T>
GsvdResult<T> gsvd_hz(const T* f, index_t m, index_t ldf, const T* g, index_t p, index_t ldg,
                      index_t n, const GsvdOptions& options) {
  detail::validate_gsvd(1, m, p, n, ldf, ldf * n, ldg, ldg * n, f, g, options);
  const Real<T> max_f = check_entries(f, m, n, ldf, "f: F ");
  const Real<T> max_g = check_entries(g, p, n, ldg, "g: G ");
  if (options.backend == Backend::Cuda) {
    BatchedGsvdResult<T> one =
        detail::gsvd_hz_batched_cuda(f, ldf, ldf * n, g, ldg, ldg * n, 1, m, p, n, options);
    GsvdResult<T> result;
    result.m = m;
    result.p = p;
    result.n = n;
    result.sigma_f = std::move(one.sigma_f);
    result.sigma_g = std::move(one.sigma_g);
    result.u = std::move(one.u);
    result.v = std::move(one.v);
    result.x = std::move(one.x);
    result.stats = one.stats.front();
    return result;
  }
  return solve(f, m, ldf, g, p, ldg, n, max_f, max_g, options, thread_count(options));
}

template <class T>
BatchedGsvdResult<T> gsvd_hz_batched(const T* f, index_t ldf, index_t stride_f, const T* g,
                                     index_t ldg, index_t stride_g, index_t batch, index_t m,
                                     index_t p, index_t n, const GsvdOptions& options) {
  if (options.backend == Backend::Cuda)
    return detail::gsvd_hz_batched_cuda(f, ldf, stride_f, g, ldg, stride_g, batch, m, p, n,
                                        options);
  detail::validate_gsvd(batch, m, p, n, ldf, stride_f, ldg, stride_g, f, g, options);
  std::vector<Real<T>> max_f(static_cast<std::size_t>(batch)), max_g(max_f.size());
  for (index_t b = 0; b < batch; ++b) {
    max_f[static_cast<std::size_t>(b)] =
        check_entries(f + b * stride_f, m, n, ldf, fmt::format("f: pair {}: F ", b));
    max_g[static_cast<std::size_t>(b)] =
        check_entries(g + b * stride_g, p, n, ldg, fmt::format("g: pair {}: G ", b));
  }

  BatchedGsvdResult<T> out;
  out.batch = batch;
  out.m = m;
  out.p = p;
  out.n = n;
  out.sigma_f.resize(static_cast<std::size_t>(batch * n));
  out.sigma_g.resize(out.sigma_f.size());
  if (options.compute_vectors) {
    out.u.resize(static_cast<std::size_t>(batch * m * n));
    out.v.resize(static_cast<std::size_t>(batch * p * n));
    out.x.resize(static_cast<std::size_t>(batch * n * n));
  }
  out.stats.resize(static_cast<std::size_t>(batch));
  // Each pair's error message, so that the first failing pair is reported whatever the schedule.
  std::vector<std::string> errors(static_cast<std::size_t>(batch));
  const int threads = thread_count(options);
  std::mutex reporting;  // the pairs' sweeps report one at a time (progress.hpp)
#pragma omp parallel for num_threads(threads) if (batch > 1) schedule(dynamic, 1)
  for (index_t b = 0; b < batch; ++b) {
    try {
      GsvdOptions each = options;
      if (options.progress)
        each.progress = [&options, &reporting, b](SweepProgress sweep) {
          const std::lock_guard<std::mutex> lock(reporting);
          sweep.matrix = b;
          options.progress(sweep);
        };
      const GsvdResult<T> one =
          solve(f + b * stride_f, m, ldf, g + b * stride_g, p, ldg, n,
                max_f[static_cast<std::size_t>(b)], max_g[static_cast<std::size_t>(b)], each, 1);
      std::copy(one.sigma_f.begin(), one.sigma_f.end(), out.sigma_f.begin() + b * n);
      std::copy(one.sigma_g.begin(), one.sigma_g.end(), out.sigma_g.begin() + b * n);
      std::copy(one.u.begin(), one.u.end(), out.u.begin() + b * m * n);
      std::copy(one.v.begin(), one.v.end(), out.v.begin() + b * p * n);
      std::copy(one.x.begin(), one.x.end(), out.x.begin() + b * n * n);
      out.stats[static_cast<std::size_t>(b)] = one.stats;
    } catch (const std::exception& e) {
      errors[static_cast<std::size_t>(b)] = e.what();
      if (errors[static_cast<std::size_t>(b)].empty()) errors[static_cast<std::size_t>(b)] = "?";
    }
  }
  for (index_t b = 0; b < batch; ++b)
    if (!errors[static_cast<std::size_t>(b)].empty())
      fail("pair {}: {}", b, errors[static_cast<std::size_t>(b)]);
  return out;
}

#define SHIFTOP_INSTANTIATE_GSVD(T)                                                               \
  template struct GsvdResult<T>;                                                                  \
  template GsvdResult<T> gsvd_hz<T>(const T*, index_t, index_t, const T*, index_t, index_t,       \
                                    index_t, const GsvdOptions&);                                 \
  template BatchedGsvdResult<T> gsvd_hz_batched<T>(const T*, index_t, index_t, const T*, index_t, \
                                                   index_t, index_t, index_t, index_t, index_t,   \
                                                   const GsvdOptions&);
SHIFTOP_INSTANTIATE_GSVD(double)
SHIFTOP_INSTANTIATE_GSVD(std::complex<double>)
#undef SHIFTOP_INSTANTIATE_GSVD

}  // namespace shiftop::svd
