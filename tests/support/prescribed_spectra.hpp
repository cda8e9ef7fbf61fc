// Test matrices whose singular values are known exactly, and graded matrices, for the accuracy
// tests of the Jacobi SVD and of its __float128 reference (support/quad_reference.hpp). Seeded,
// deterministic. (The thesis' Lambda(2)/(4) Cholesky factors and the hyperbolic G = Q Sigma V^-1
// are built in tests/svd/test_accuracy_quad.cpp.)
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "shiftop/core/error.hpp"
#include "support/quad_reference.hpp"

namespace shiftop::testing {

/// The m x n column-major matrix A = S_r P_r H_m(:, 1:n) diag(2^e) H_n^T P_c S_c / sqrt(m n): H_k
/// the Sylvester Hadamard matrix (H_k / sqrt(k) orthogonal), P random permutations, S random
/// signs. Its singular values are exactly 2^e_k, and its entries (sums of +-2^e_k over the power
/// of two sqrt(m n)) are exact in double while the exponents span at most 53 - log2(n) bits, so
/// a reference can be checked to any precision. m, n powers of two, m >= n, m n a power of four.
inline std::vector<double> exact_spectrum_matrix(std::int64_t m, std::int64_t n,
                                                 const std::vector<int>& exponents, unsigned seed) {
  const auto power_of_two = [](std::int64_t k) {
    return k > 0 && std::has_single_bit(static_cast<std::uint64_t>(k));
  };
  shiftop::require(power_of_two(m) && power_of_two(n) && m >= n &&
                       (std::countr_zero(static_cast<std::uint64_t>(m * n)) % 2 == 0),
                   "exact_spectrum_matrix: m, n must be powers of two with m >= n and m n a "
                   "power of four");
  shiftop::require(static_cast<std::int64_t>(exponents.size()) == n,
                   "exact_spectrum_matrix: exponents must have n entries");
  const auto [lo, hi] = std::minmax_element(exponents.begin(), exponents.end());
  // |partial sum| <= n 2^hi on the grid 2^lo: 53 significant bits hold it when this is <= 52.
  shiftop::require(*hi - *lo + std::countr_zero(static_cast<std::uint64_t>(n)) <= 52,
                   "exact_spectrum_matrix: the exponents span too many bits to be exact");
  std::mt19937_64 rng(seed);
  const auto permutation = [&rng](std::int64_t k) {
    std::vector<std::int64_t> p(static_cast<std::size_t>(k));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    return p;
  };
  const auto signs = [&rng](std::int64_t k) {
    std::vector<double> s(static_cast<std::size_t>(k));
    for (double& x : s)
      x = (rng() & 1) ? -1.0 : 1.0;
    return s;
  };
  const auto hadamard = [](std::int64_t i, std::int64_t j) {
    return std::popcount(static_cast<std::uint64_t>(i & j)) % 2 ? -1.0 : 1.0;
  };
  const std::vector<std::int64_t> row_perm = permutation(m), col_perm = permutation(n);
  const std::vector<double> row_sign = signs(m), col_sign = signs(n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(m * n));  // a power of two
  std::vector<double> a(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double sum = 0;  // exact: every partial sum fits in 53 bits (checked above)
      for (std::int64_t k = 0; k < n; ++k)
        sum += hadamard(row_perm[i], k) * std::ldexp(1.0, exponents[k]) * hadamard(col_perm[j], k);
      a[i + j * m] = row_sign[i] * col_sign[j] * sum * scale;
    }
  return a;
}

/// The m x n column-major B D: B normal(0, 1) (complex: real and imaginary parts normal(0, 1/2)),
/// D the scales 10^(-decades t), t = 0, 1/(n-1), .., 1, in shuffled order (the thesis' section
/// 2.5 graded case: Jacobi keeps the relative accuracy of every singular value,
/// bidiagonalisation does not). T: float, double or their std::complex; the scaling is done in
/// double and rounded once.
template <class T = double>
std::vector<T> column_graded_matrix(std::int64_t m, std::int64_t n, double decades, unsigned seed) {
  constexpr bool is_complex = !std::is_floating_point_v<T>;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, is_complex ? std::sqrt(0.5) : 1.0);
  std::vector<std::complex<double>> b(static_cast<std::size_t>(m * n));
  for (auto& x : b)
    x = is_complex ? std::complex<double>(normal(rng), normal(rng)) : normal(rng);
  std::vector<double> d(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    d[j] = std::pow(10.0, -decades * static_cast<double>(j) /
                              static_cast<double>(std::max<std::int64_t>(n - 1, 1)));
  std::shuffle(d.begin(), d.end(), rng);
  std::vector<T> a(b.size());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const std::complex<double> x = b[i + j * m] * d[j];
      if constexpr (is_complex)
        a[i + j * m] = T(x);
      else
        a[i + j * m] = static_cast<T>(x.real());
    }
  return a;
}

/// The 2m x 2n real matrix [Re A, -Im A; Im A, Re A] of the m x n column-major A (real: A's
/// imaginary part is 0), in double: its singular values are A's, each twice, so the real
/// __float128 reference serves complex matrices too.
template <class T>
std::vector<double> real_embedding(const std::vector<T>& a, std::int64_t m, std::int64_t n) {
  std::vector<double> e(static_cast<std::size_t>(4 * m * n));
  const std::int64_t ld = 2 * m;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const std::complex<double> x(a[i + j * m]);
      e[i + j * ld] = e[(i + m) + (j + n) * ld] = x.real();
      e[(i + m) + j * ld] = x.imag();
      e[i + (j + n) * ld] = -x.imag();
    }
  return e;
}

/// The singular values of the m x n column-major A (any of the four types), descending, from the
/// __float128 reference of its real embedding, and the largest relative difference between the
/// two copies of each value the embedding gives (the reference's own accuracy: a wrong embedding
/// shows there).
struct EmbeddedReference {
  std::vector<double> sigma;
  double pair_difference = 0;
};
template <class T>
EmbeddedReference embedded_reference(const std::vector<T>& a, std::int64_t m, std::int64_t n) {
  const std::vector<double> embedded = real_embedding(a, m, n);
  const std::vector<double> doubled = quad_singular_values(embedded.data(), 2 * m, 2 * n, 2 * m);
  EmbeddedReference reference;
  for (std::int64_t i = 0; i < std::min(m, n); ++i) {
    reference.sigma.push_back(doubled[2 * i]);
    reference.pair_difference = std::max(
        reference.pair_difference, std::abs(doubled[2 * i + 1] - doubled[2 * i]) / doubled[2 * i]);
  }
  return reference;
}

/// A random orthogonal n x n matrix in __float128, column-major: a product of n Householder
/// reflectors with normal vectors.
inline std::vector<quad> quad_random_orthogonal(std::int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  std::vector<quad> q(static_cast<std::size_t>(n * n), 0);
  for (std::int64_t i = 0; i < n; ++i)
    q[i + i * n] = 1;
  std::vector<quad> v(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    quad norm2 = 0;
    for (quad& x : v) {
      x = normal(rng);
      norm2 += x * x;
    }
    for (std::int64_t i = 0; i < n; ++i) {  // row i of Q <- row i (I - 2 v v^T / v^T v)
      quad dot = 0;
      for (std::int64_t l = 0; l < n; ++l)
        dot += q[i + l * n] * v[l];
      for (std::int64_t l = 0; l < n; ++l)
        q[i + l * n] -= 2 * dot * v[l] / norm2;
    }
  }
  return q;
}

/// A J-factor G of A = U diag(lambda) U^T (U random orthogonal), the thesis' section 2.5 input
/// of the hyperbolic SVD: G J G^T = P A P^T with J = diag(I_{n_plus}, -I), P a permutation (which
/// leaves the eigenvalues lambda alone). Formed and factored in __float128, rounded to double:
/// L D L^T with symmetric diagonal pivoting (the largest |diagonal| of the remaining Schur
/// complement; only 1 x 1 pivots, which random indefinite A admit: a zero diagonal of every
/// Schur complement has probability 0), G = L |D|^{1/2} with the columns of positive d first.
struct JFactor {
  std::vector<double> g;  // n x n, column-major
  std::int64_t n_plus = 0;
};
inline JFactor j_factor_of_spectrum(const std::vector<double>& lambda, unsigned seed) {
  const std::int64_t n = static_cast<std::int64_t>(lambda.size());
  std::mt19937_64 rng(seed);
  const std::vector<quad> u = quad_random_orthogonal(n, rng);
  std::vector<quad> s(static_cast<std::size_t>(n * n), 0);  // A, then its Schur complements
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < n; ++k)
        s[i + j * n] += u[i + k * n] * lambda[k] * u[j + k * n];
  std::vector<quad> d(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t p = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (quad_abs(s[i + i * n]) > quad_abs(s[p + p * n])) p = i;
    for (std::int64_t j = 0; j < n; ++j)  // symmetric swap k <-> p (rows, then columns)
      std::swap(s[k + j * n], s[p + j * n]);
    for (std::int64_t i = 0; i < n; ++i)
      std::swap(s[i + k * n], s[i + p * n]);
    d[k] = s[k + k * n];
    shiftop::require(d[k] != 0, "j_factor_of_spectrum: a zero pivot (lambda singular?)");
    for (std::int64_t j = k + 1; j < n; ++j)
      for (std::int64_t i = k + 1; i < n; ++i)
        s[i + j * n] -= s[i + k * n] * s[k + j * n] / d[k];
    for (std::int64_t i = k + 1; i < n; ++i)
      s[i + k * n] /= d[k];  // column k of L below the unit diagonal
  }
  JFactor f;
  f.g.assign(static_cast<std::size_t>(n * n), 0.0);
  std::int64_t column = 0;
  for (const bool positive : {true, false})
    for (std::int64_t k = 0; k < n; ++k) {
      if ((d[k] > 0) != positive) continue;
      const quad scale = quad_sqrt(quad_abs(d[k]));
      f.g[k + column * n] = static_cast<double>(scale);
      for (std::int64_t i = k + 1; i < n; ++i)
        f.g[i + column * n] = static_cast<double>(s[i + k * n] * scale);
      ++column;
      f.n_plus += positive ? 1 : 0;
    }
  return f;
}

}  // namespace shiftop::testing
