// Dense references for the tests of the solve layer: the explicit covariance matrices of the
// noise and the priors (SOTI rows j*Nt+t), products of row-major matrices and an SPD solve by
// LAPACK's Cholesky, all independent of shiftop's own code paths.
#pragma once

#include <lapacke.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "support/dense_reference.hpp"

namespace shiftop::testing {

/// Row-major n x n matrix of a linear map given by its action on nrhs vectors at once: column q
/// is apply(e_q) (all n unit vectors applied as one batch).
template <typename Apply>
std::vector<double> dense_from_action(index_t n, Apply apply) {
  std::vector<double> unit(static_cast<std::size_t>(n * n), 0.0);
  for (index_t q = 0; q < n; ++q)
    unit[q * n + q] = 1;
  std::vector<double> columns(unit.size());
  apply(std::span<const double>(unit), std::span<double>(columns), n);
  std::vector<double> a(unit.size());
  for (index_t q = 0; q < n; ++q)
    for (index_t p = 0; p < n; ++p)
      a[p * n + q] = columns[q * n + p];
  return a;
}

/// C = A B (A m x k, B k x n), or A^T B when transpose_a (A k x m), row-major.
inline std::vector<double> dense_product(const std::vector<double>& a, const std::vector<double>& b,
                                         index_t m, index_t k, index_t n,
                                         bool transpose_a = false) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (index_t i = 0; i < m; ++i)
    for (index_t l = 0; l < k; ++l) {
      const double ail = transpose_a ? a[l * m + i] : a[i * k + l];
      for (index_t j = 0; j < n; ++j)
        c[i * n + j] += ail * b[l * n + j];
    }
  return c;
}

/// A^T for A rows x cols, row-major.
inline std::vector<double> dense_transpose(const std::vector<double>& a, index_t rows,
                                           index_t cols) {
  std::vector<double> t(a.size());
  for (index_t p = 0; p < rows; ++p)
    for (index_t q = 0; q < cols; ++q)
      t[q * rows + p] = a[p * cols + q];
  return t;
}

/// Largest |a_pq - b_pq| over max |b_pq|.
inline double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(b[k]));
  }
  return diff / scale;
}

/// Largest |A - I| entry.
inline double distance_from_identity(const std::vector<double>& a, index_t n) {
  double diff = 0;
  for (index_t p = 0; p < n; ++p)
    for (index_t q = 0; q < n; ++q)
      diff = std::max(diff, std::abs(a[p * n + q] - (p == q)));
  return diff;
}

/// Gamma = diag(variance_j) ⊗ T with T_st = correlation(|s-t|): the dense covariance of the
/// diagonal (correlation = [k == 0]) and smoothing (rho^k) priors, row-major.
template <typename Correlation>
std::vector<double> dense_separable_covariance(const std::vector<double>& variances, index_t nt,
                                               Correlation correlation) {
  const auto nm = static_cast<index_t>(variances.size());
  const index_t n = nm * nt;
  std::vector<double> a(static_cast<std::size_t>(n * n), 0.0);
  for (index_t j = 0; j < nm; ++j)
    for (index_t s = 0; s < nt; ++s)
      for (index_t t = 0; t < nt; ++t)
        a[(j * nt + s) * n + j * nt + t] = variances[j] * correlation(s > t ? s - t : t - s);
  return a;
}

/// The first block row of a symmetric block Toeplitz matrix from its first block column
/// ([Nm][Nm][Nt]): lag -k is the transpose of lag k.
inline std::vector<double> transposed_lags(const std::vector<double>& column, index_t nm,
                                           index_t nt) {
  std::vector<double> row(column.size());
  for (index_t i = 0; i < nm; ++i)
    for (index_t j = 0; j < nm; ++j)
      for (index_t k = 0; k < nt; ++k)
        row[(i * nm + j) * nt + k] = column[(j * nm + i) * nt + k];
  return row;
}

/// A^{-1} for SPD A (n x n) by LAPACK's dpotrf/dpotri, both triangles filled.
inline std::vector<double> dense_spd_inverse(std::vector<double> a, index_t n) {
  const auto size = static_cast<lapack_int>(n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', size, a.data(), size) != 0)
    throw std::runtime_error("dense reference: matrix is not positive definite");
  if (LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', size, a.data(), size) != 0)
    throw std::runtime_error("dense reference: dpotri failed");
  for (index_t p = 0; p < n; ++p)
    for (index_t q = p + 1; q < n; ++q)
      a[p * n + q] = a[q * n + p];
  return a;
}

/// x = A^{-1} b for SPD A (n x n, row-major; symmetric, so its layout does not matter) by
/// LAPACK's dpotrf/dpotrs.
inline std::vector<double> dense_spd_solve(std::vector<double> a, std::vector<double> b,
                                           index_t n) {
  const auto size = static_cast<lapack_int>(n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', size, a.data(), size) != 0)
    throw std::runtime_error("dense reference: matrix is not positive definite");
  if (LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', size, 1, a.data(), size, b.data(), 1) != 0)
    throw std::runtime_error("dense reference: dpotrs failed");
  return b;
}

}  // namespace shiftop::testing
