// The public driver of the one-sided Jacobi (H)SVD: validation, scaling, preprocessing
// (svd/preprocess.hpp), the variant (svd/pointwise.hpp, svd/blocked.hpp), singular values and
// vectors from the orthogonalised columns, the final order, and batches; Backend::Cuda goes to
// the GPU driver (svd/cuda/host_drivers.hpp).
#include "shiftop/svd/jacobi.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>

#include "shiftop/core/error.hpp"
#include "svd/blocked.hpp"
#include "svd/column_norms.hpp"
#include "svd/cuda/host_drivers.hpp"
#include "svd/driver_checks.hpp"
#include "svd/householder.hpp"
#include "svd/pointwise.hpp"
#include "svd/preprocess.hpp"

namespace shiftop::svd {

namespace {

using detail::check_entries;
using detail::conj_of;
using detail::kDefaultMaxSweeps;
using detail::validate_sizes;

// Block width and the pointwise/full-block switch of Variant::Auto, from bench/jacobi_svd_cpu.cpp
// on the idle 2-core development VM (AMD EPYC, AVX-512; bench/results/issue15-cpu-2026-11-23/):
// the pointwise method was the fastest variant at every n = 128..1024, random and graded, one and
// two threads, values only, except graded n = 1024 with U and V on one thread (full block 3.9 s,
// pointwise 4.9 s); at n = 1024, values only, one thread: pointwise 2.7 s, block-oriented 3.9 s,
// full block 5.0 s (random). The blocked variants' own kernels reach 5-17 GFLOP/s of the 51 that
// DGEMM does (bench/NOTES.md), so blocking does not pay yet; Auto stays pointwise up to n = 2048
// (not measured above 1024) and blocks beyond, where the matrix is far outside the caches.
constexpr index_t kDefaultBlockWidth = 48;
constexpr index_t kAutoBlockedFrom = 2048;

// Runs the chosen variant on G (rows x cols, leading dimension rows), accumulating into V
// (cols x cols) when v is not null.
template <class T>
JacobiStats orthogonalize(T* g, index_t rows, index_t cols, T* v,
                          std::span<const std::int8_t> signs, const JacobiOptions& options,
                          int threads) {
  const int max_sweeps = options.max_sweeps > 0 ? options.max_sweeps : kDefaultMaxSweeps;
  const index_t width = options.block_width > 0 ? options.block_width : kDefaultBlockWidth;
  Variant variant = options.variant;
  if (variant == Variant::Auto)
    variant = cols >= kAutoBlockedFrom ? Variant::FullBlock : Variant::Pointwise;
  if (cols < 4) variant = Variant::Pointwise;  // two blocks of at least two columns each
  JacobiStats stats;
  detail::SweepCounts counts;
  if (variant == Variant::Pointwise) {
    counts = detail::orthogonalize_pointwise(g, rows, cols, rows, v, cols, cols, signs,
                                             Strategy::create(options.strategy, cols), max_sweeps,
                                             true, threads, options.progress);
  } else {
    counts = detail::orthogonalize_blocked(g, rows, cols, rows, v, cols, cols, signs,
                                           options.strategy, width, variant == Variant::FullBlock,
                                           max_sweeps, threads, options.progress)
                 .counts;
  }
  stats.sweeps = counts.sweeps;
  stats.rotations = counts.rotations;
  stats.proper_rotations = counts.proper_rotations;
  stats.converged = counts.converged;
  return stats;
}

template <class T>
std::vector<T> identity(index_t n) {
  std::vector<T> v(static_cast<std::size_t>(n * n), T(0));
  for (index_t i = 0; i < n; ++i)
    v[i + i * n] = T(1);
  return v;
}

// sigma_j = ||g_j|| and g_j <- g_j / sigma_j (the left vectors of G); zero columns stay zero.
template <class T>
std::vector<Real<T>> normalize_columns(T* g, index_t rows, index_t cols) {
  std::vector<Real<T>> sigma(static_cast<std::size_t>(cols));
  for (index_t j = 0; j < cols; ++j) {
    T* col = g + j * rows;
    sigma[j] = detail::column_norm(col, rows);
    if (sigma[j] > 0)
      for (index_t i = 0; i < rows; ++i)
        col[i] /= sigma[j];
  }
  return sigma;
}

// Permutes sigma (descending; hyperbolic: within [0, n_plus) and [n_plus, r)) and the columns of
// u and v to match.
template <class T>
void sort_descending(JacobiResult<T>& result, index_t n_plus) {
  const auto r = static_cast<index_t>(result.sigma.size());
  std::vector<index_t> order(static_cast<std::size_t>(r));
  std::iota(order.begin(), order.end(), index_t{0});
  const auto by_sigma = [&](index_t x, index_t y) { return result.sigma[x] > result.sigma[y]; };
  const index_t split = n_plus >= 0 ? n_plus : r;
  std::stable_sort(order.begin(), order.begin() + split, by_sigma);
  std::stable_sort(order.begin() + split, order.end(), by_sigma);
  const auto permute = [&](auto& values, index_t rows) {
    if (values.empty()) return;
    auto copy = values;
    for (index_t j = 0; j < r; ++j)
      std::copy(copy.begin() + order[j] * rows, copy.begin() + (order[j] + 1) * rows,
                values.begin() + j * rows);
  };
  permute(result.sigma, 1);
  permute(result.u, result.m);
  permute(result.v, result.n);
}

template <class R>
std::vector<bool> is_zero(const std::vector<R>& sigma) {
  std::vector<bool> zero(sigma.size());
  for (std::size_t j = 0; j < sigma.size(); ++j)
    zero[j] = !(sigma[j] > R(0));
  return zero;
}

// m >= n, a (leading dimension m) already validated and scaled; the SVD or HSVD.
template <class T>
JacobiResult<T> solve_tall(std::vector<T>& a, index_t m, index_t n, const JacobiOptions& options,
                           int threads) {
  const bool hyperbolic = options.n_plus >= 0;
  const bool want_u = options.compute_u, want_v = options.compute_v;
  std::vector<std::int8_t> signs;
  if (hyperbolic)
    for (index_t j = 0; j < n; ++j)
      signs.push_back(j < options.n_plus ? 1 : -1);
  JacobiResult<T> result;
  result.m = m;
  result.n = n;

  const bool preprocess = options.preprocess && (!hyperbolic || m > n);
  if (!preprocess) {
    std::vector<T> v = want_v ? identity<T>(n) : std::vector<T>{};
    result.stats =
        orthogonalize(a.data(), m, n, want_v ? v.data() : nullptr, signs, options, threads);
    result.stats.rank = n;
    result.sigma = normalize_columns(a.data(), m, n);
    if (want_u) {
      result.u = std::move(a);
      detail::complete_orthonormal(result.u.data(), m, n, m, is_zero(result.sigma));
    }
    result.v = std::move(v);
    return result;
  }

  detail::Preprocessed<T> pre =
      hyperbolic
          ? detail::preprocess_hyperbolic(a.data(), m, n, m)
          : detail::preprocess_svd(a.data(), m, n, m, static_cast<Real<T>>(options.rank_tolerance));
  const index_t k = pre.rank;
  // SVD: G = R^H or L^H, U from the accumulated W, V from G's columns; HSVD: the other way.
  const bool want_w = pre.transposed ? want_u : want_v;
  std::vector<T> w = want_w ? identity<T>(k) : std::vector<T>{};
  if (k > 0)  // rank 0 (a zero matrix): nothing to orthogonalise, every singular value is 0
    result.stats =
        orthogonalize(pre.g.data(), k, k, want_w ? w.data() : nullptr, signs, options, threads);
  else
    result.stats.converged = true;
  result.stats.rank = k;
  result.sigma = normalize_columns(pre.g.data(), k, k);
  result.sigma.resize(static_cast<std::size_t>(n), Real<T>(0));
  const std::vector<bool> zero = is_zero(result.sigma);
  const T* left = pre.transposed ? w.data() : pre.g.data();
  if (want_u) {
    result.u.resize(static_cast<std::size_t>(m * n));
    detail::left_vectors(pre, left, k, result.u.data(), m);
    detail::complete_orthonormal(result.u.data(), m, n, m, zero);
  }
  if (want_v && !pre.transposed) {
    result.v = std::move(w);
  } else if (want_v) {
    result.v.resize(static_cast<std::size_t>(n * n));
    detail::right_vectors(pre, pre.g.data(), k, result.v.data(), n);
    detail::complete_orthonormal(result.v.data(), n, n, n, zero);
  }
  return result;
}

// x * 2^e, exactly (also for subnormal x, and for 2^e beyond the type's range).
template <class T>
T scale_by_power_of_two(T x, int e) {
  if constexpr (detail::kIsComplex<T>)
    return {std::scalbn(x.real(), e), std::scalbn(x.imag(), e)};
  else
    return std::scalbn(x, e);
}

// The whole computation for one validated matrix (`matrix`: its index in a batch, -1 for one).
template <class T>
JacobiResult<T> solve(const T* a, index_t m, index_t n, index_t lda, Real<T> max_entry,
                      const JacobiOptions& options, int threads, index_t matrix) {
  using R = Real<T>;
  // Scale by a power of two (exact) that brings the largest entry into [1, 2) when the entries are
  // so large that column norms or the dot products of two columns could overflow, or so small
  // that the rotations would compute in the subnormal range and lose relative accuracy (as
  // LAPACK's xGESVJ scales into the normal range first). Other matrices are left alone: scaling
  // down one with tiny entries could flush them to zero.
  const R big = std::sqrt(std::numeric_limits<R>::max()) / static_cast<R>(4 * m * n);
  const int exponent =
      max_entry > big || (max_entry > 0 && max_entry < 1 / big) ? std::ilogb(max_entry) : 0;
  const bool wide = m < n;  // then the SVD of A^H (n x m) and U, V swapped
  const index_t rows = wide ? n : m, cols = wide ? m : n;
  std::vector<T> work(static_cast<std::size_t>(rows * cols));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const T x = scale_by_power_of_two(a[i + j * lda], -exponent);
      if (wide)
        work[j + i * rows] = conj_of(x);
      else
        work[i + j * rows] = x;
    }
  JacobiOptions tall = options;
  if (wide) std::swap(tall.compute_u, tall.compute_v);
  if (options.progress && matrix > 0)
    tall.progress = [&options, matrix](SweepProgress p) {
      p.matrix = matrix;
      options.progress(p);
    };
  JacobiResult<T> result = solve_tall(work, rows, cols, tall, threads);
  if (exponent != 0)
    for (R& s : result.sigma)
      s = std::scalbn(s, exponent);
  if (options.n_plus < 0) detail::check_values_in_range<R>(result.sigma, matrix);
  if (wide) {
    std::swap(result.u, result.v);
    result.m = m;
    result.n = n;
  }
  sort_descending(result, options.n_plus);
  // Overflow where no HSVD exists (rank(A J A^H) < rank(A)) is not convergence.
  const auto finite = [](const auto& values) {
    return std::all_of(values.begin(), values.end(),
                       [](auto x) { return std::isfinite(std::abs(x)); });
  };
  if (!finite(result.sigma) || !finite(result.u) || !finite(result.v))
    result.stats.converged = false;
  return result;
}

int thread_count(const JacobiOptions& options) {
  return options.threads > 0 ? options.threads : omp_get_max_threads();
}

}  // namespace

template <class T>
JacobiResult<T> jacobi(const T* a, index_t m, index_t n, index_t lda,
                       const JacobiOptions& options) {
  validate_sizes(m, n, lda, options);
  require(a != nullptr, "a: expected a matrix, got a null pointer");
  const Real<T> max_entry = check_entries(a, m, n, lda, "a: ");
  if (options.backend == Backend::Cuda) {
    BatchedJacobiResult<T> one = detail::jacobi_batched_cuda(a, 1, m, n, lda, lda * n, options);
    return {.m = m,
            .n = n,
            .sigma = std::move(one.sigma),
            .u = std::move(one.u),
            .v = std::move(one.v),
            .stats = one.stats.front()};
  }
  return solve(a, m, n, lda, max_entry, options, thread_count(options), -1);
}

template <class T>
BatchedJacobiResult<T> jacobi_batched(const T* a, index_t batch, index_t m, index_t n, index_t lda,
                                      index_t stride, const JacobiOptions& options) {
  if (options.backend == Backend::Cuda)
    return detail::jacobi_batched_cuda(a, batch, m, n, lda, stride, options);
  validate_sizes(m, n, lda, options);
  detail::validate_batch(batch, n, lda, stride, a);
  std::vector<Real<T>> max_entry(static_cast<std::size_t>(batch));
  for (index_t b = 0; b < batch; ++b)
    max_entry[b] = check_entries(a + b * stride, m, n, lda, fmt::format("a: matrix {}: ", b));

  const index_t r = std::min(m, n);
  BatchedJacobiResult<T> out;
  out.batch = batch;
  out.m = m;
  out.n = n;
  out.sigma.resize(static_cast<std::size_t>(batch * r));
  if (options.compute_u) out.u.resize(static_cast<std::size_t>(batch * m * r));
  if (options.compute_v) out.v.resize(static_cast<std::size_t>(batch * n * r));
  out.stats.resize(static_cast<std::size_t>(batch));
  std::exception_ptr error;
  const int threads = thread_count(options);
  // The matrices' sweeps report one at a time (progress.hpp).
  std::mutex reporting;
  JacobiOptions each = options;
  if (options.progress)
    each.progress = [&](const SweepProgress& p) {
      const std::lock_guard<std::mutex> lock(reporting);
      options.progress(p);
    };
#pragma omp parallel for num_threads(threads) if (batch > 1) schedule(dynamic, 1)
  for (index_t b = 0; b < batch; ++b) {
    try {
      const JacobiResult<T> one =
          solve(a + b * stride, m, n, lda, max_entry[b], each, batch == 1 ? threads : 1, b);
      std::copy(one.sigma.begin(), one.sigma.end(), out.sigma.begin() + b * r);
      std::copy(one.u.begin(), one.u.end(), out.u.begin() + b * m * r);
      std::copy(one.v.begin(), one.v.end(), out.v.begin() + b * n * r);
      out.stats[b] = one.stats;
    } catch (...) {
#pragma omp critical(shiftop_svd_batched_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return out;
}

#define SHIFTOP_INSTANTIATE_JACOBI(T)                                                             \
  template JacobiResult<T> jacobi<T>(const T*, index_t, index_t, index_t, const JacobiOptions&);  \
  template BatchedJacobiResult<T> jacobi_batched<T>(const T*, index_t, index_t, index_t, index_t, \
                                                    index_t, const JacobiOptions&);
SHIFTOP_INSTANTIATE_JACOBI(float)
SHIFTOP_INSTANTIATE_JACOBI(double)
SHIFTOP_INSTANTIATE_JACOBI(std::complex<float>)
SHIFTOP_INSTANTIATE_JACOBI(std::complex<double>)
#undef SHIFTOP_INSTANTIATE_JACOBI

}  // namespace shiftop::svd
