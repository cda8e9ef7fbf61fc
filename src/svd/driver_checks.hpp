// The argument checks of the Jacobi (H)SVD drivers, shared by the CPU driver (svd/jacobi.cpp) and
// its GPU twin (svd/cuda/jacobi_batched.cpp), and of the GSVD drivers (gsvd/gsvd.cpp,
// gsvd/cuda/gsvd_batched.cpp), so that both twins refuse the same inputs with the same messages.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "svd/dense_kernels.hpp"

namespace shiftop::svd::detail {

inline constexpr int kDefaultMaxSweeps = 60;

inline void validate_sizes(index_t m, index_t n, index_t lda, const JacobiOptions& options) {
  require(m >= 1 && n >= 1, "svd: expected a matrix of at least 1 x 1, got {} x {}", m, n);
  require(lda >= m, "lda: expected >= m = {}, got {}", m, lda);
  require(options.n_plus >= -1 && options.n_plus <= n, "n_plus: expected -1 (SVD) or 0..{}, got {}",
          n, options.n_plus);
  require(options.n_plus < 0 || m >= n,
          "n_plus: the hyperbolic SVD needs m >= n (J acts on the columns), got {} x {}", m, n);
  require(options.block_width >= 0, "block_width: expected >= 0 (0: chosen from n), got {}",
          options.block_width);
  check_threads(options.threads, "threads");
  require(options.max_sweeps >= 0, "max_sweeps: expected >= 0 (0: the default {}), got {}",
          kDefaultMaxSweeps, options.max_sweeps);
  require(options.rank_tolerance >= 0 && options.rank_tolerance < 1,
          "rank_tolerance: expected 0 (keep every nonzero R_kk) or a value in (0, 1), got {}",
          options.rank_tolerance);
}

inline void validate_batch(index_t batch, index_t n, index_t lda, index_t stride, const void* a) {
  require(batch >= 0, "batch: expected >= 0, got {}", batch);
  require(batch <= 1 || stride >= lda * n, "stride: expected >= lda * n = {}, got {}", lda * n,
          stride);
  require(batch == 0 || a != nullptr, "a: expected a matrix, got a null pointer");
}

inline constexpr int kDefaultGsvdSweeps = 50;  // the thesis' limit (section 3.5)

/// The GSVD's sizes and options, and (batch >= 1) its batch layout and pointers.
inline void validate_gsvd(index_t batch, index_t m, index_t p, index_t n, index_t ldf,
                          index_t stride_f, index_t ldg, index_t stride_g, const void* f,
                          const void* g, const GsvdOptions& options) {
  require(m >= 1 && p >= 1 && n >= 1,
          "gsvd: expected F of m x n and G of p x n with m, p, n >= 1, got m = {}, p = {}, n = {}",
          m, p, n);
  require(ldf >= m, "ldf: expected >= m = {}, got {}", m, ldf);
  require(ldg >= p, "ldg: expected >= p = {}, got {}", p, ldg);
  require(p >= n, "g: G is {} x {} with p < n: not of full column rank", p, n);
  require(options.block_width >= 0, "block_width: expected >= 0 (0: chosen from n), got {}",
          options.block_width);
  check_threads(options.threads, "threads");
  require(options.max_sweeps >= 0, "max_sweeps: expected >= 0 (0: the default {}), got {}",
          kDefaultGsvdSweeps, options.max_sweeps);
  require(batch >= 0, "batch: expected >= 0, got {}", batch);
  require(batch <= 1 || stride_f >= ldf * n, "stride_f: expected >= ldf * n = {}, got {}", ldf * n,
          stride_f);
  require(batch <= 1 || stride_g >= ldg * n, "stride_g: expected >= ldg * n = {}, got {}", ldg * n,
          stride_g);
  require(batch == 0 || f != nullptr, "f: expected a matrix, got a null pointer");
  require(batch == 0 || g != nullptr, "g: expected a matrix, got a null pointer");
}

template <class T>
bool is_finite(T x) {
  if constexpr (kIsComplex<T>)
    return std::isfinite(x.real()) && std::isfinite(x.imag());
  else
    return std::isfinite(x);
}

template <class T>
Real<T> max_abs_part(T x) {
  if constexpr (kIsComplex<T>)
    return std::max(std::abs(x.real()), std::abs(x.imag()));
  else
    return std::abs(x);
}

/// Throws for the first non-finite entry (column by column), the message starting with `where`;
/// returns max |Re|, |Im| over the entries.
template <class T>
Real<T> check_entries(const T* a, index_t m, index_t n, index_t lda, const std::string& where) {
  Real<T> big = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const T x = a[i + j * lda];
      if (!is_finite(x)) {
        const bool nan = std::isnan(std::real(x)) || std::isnan(std::imag(x));
        fail("{}entry ({}, {}) is {}; expected finite entries", where, i, j, nan ? "nan" : "inf");
      }
      big = std::max(big, max_abs_part(x));
    }
  return big;
}

/// Throws when an ordinary SVD's singular values overflowed: the entries are finite, their
/// combination is not (a column of 1e308's). (A hyperbolic SVD that does not exist also ends in
/// non-finite values; its drivers report that as not converged instead of calling this.)
/// `matrix`: the index in a batch, named in the message (-1: a single matrix).
template <class R>
void check_values_in_range(std::span<const R> sigma, index_t matrix) {
  if (std::none_of(sigma.begin(), sigma.end(), [](R s) { return std::isinf(s); })) return;
  fail("a: {}a singular value exceeds the largest finite {} ({:.4g}); scale the matrix down",
       matrix < 0 ? std::string() : fmt::format("matrix {}: ", matrix),
       sizeof(R) == 4 ? "float32" : "float64", std::numeric_limits<R>::max());
}

}  // namespace shiftop::svd::detail
