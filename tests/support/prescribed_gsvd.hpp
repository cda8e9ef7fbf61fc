// Matrix pairs (F, G) with prescribed generalized singular values, for the tests and benchmarks of
// the GSVD (svd/gsvd.hpp), as in the thesis' section 3.4: F = U diag(sigma_f) X and
// G = V diag(sigma_g) X with U, V random with orthonormal columns, X random with a prescribed
// condition number, sigma_f = s / sqrt(1 + s^2), sigma_g = 1 / sqrt(1 + s^2) for the prescribed
// generalized singular values s. Everything is formed in long double (64-bit significand; complex:
// std::complex<long double>) and F, G rounded to double once, so the prescribed s are the pair's
// up to that one rounding. Seeded, deterministic.
//
// The random unitary factors are products of Householder reflectors of normal vectors (Stewart's
// construction, Haar distributed with the random signs / phases D), applied to the matrices
// column by column, never formed unless asked for: about 2 m^2 n long double operations for F,
// 2 p^2 n for G and 4 n^3 for X (n = 1000: seconds; n = 2000: about a minute).
//
// m < n: F has rank at most m, so the n - m smallest generalized singular values must be 0
// (sigma_f = 0, sigma_g = 1); U's first m columns are then an m x m unitary matrix and its other
// n - m columns are zero (the convention of GsvdResult::u: zero where sigma_f is 0). G needs
// p >= n (full column rank).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <functional>
#include <random>
#include <type_traits>
#include <vector>

#include "shiftop/core/error.hpp"

namespace shiftop::testing {

namespace prescribed_gsvd_detail {

using Long = long double;

template <class T>
inline constexpr bool is_complex_v = !std::is_floating_point_v<T>;

template <class T>
using Ext = std::conditional_t<is_complex_v<T>, std::complex<Long>, Long>;

inline std::size_t at(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

template <class E>
Long abs2(const E& x) {
  if constexpr (std::is_floating_point_v<E>)
    return x * x;
  else
    return x.real() * x.real() + x.imag() * x.imag();
}

template <class E>
E conj_of(const E& x) {
  if constexpr (std::is_floating_point_v<E>)
    return x;
  else
    return std::conj(x);
}

/// A normal sample of E (complex: real and imaginary parts normal(0, 1/2)).
template <class E>
E normal_sample(std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  if constexpr (std::is_floating_point_v<E>)
    return static_cast<Long>(normal(rng));
  else
    return E(static_cast<Long>(normal(rng)), static_cast<Long>(normal(rng))) / std::sqrt(Long(2));
}

/// A Haar random k x k unitary Q = D H_0 H_1 .. H_{k-2} (H_j = I - 2 v v^H / v^H v acting on
/// rows j..k-1, v normal; D random signs or phases), stored as its reflectors.
template <class E>
struct RandomUnitary {
  std::int64_t k = 0;
  std::vector<std::vector<E>> v;  // v[j] has k - j entries
  std::vector<E> d;

  RandomUnitary(std::int64_t size, std::mt19937_64& rng) : k(size) {
    for (std::int64_t j = 0; j + 1 < k; ++j) {
      std::vector<E> x(at(k - j));
      for (E& e : x)
        e = normal_sample<E>(rng);
      v.push_back(std::move(x));
    }
    std::uniform_real_distribution<double> angle(0.0, 2.0 * std::acos(-1.0));
    for (std::int64_t i = 0; i < k; ++i) {
      if constexpr (std::is_floating_point_v<E>)
        d.push_back((rng() & 1) ? Long(-1) : Long(1));
      else
        d.push_back(std::polar(Long(1), static_cast<Long>(angle(rng))));
    }
  }

  /// a (k x cols, column-major, leading dimension k) <- Q a.
  void apply(std::vector<E>& a, std::int64_t cols) const {
    for (std::int64_t c = 0; c < cols; ++c) {
      E* col = a.data() + at(c * k);
      for (std::int64_t j = k - 2; j >= 0; --j) {  // H_0 (H_1 (.. H_{k-2} col))
        const std::vector<E>& x = v[at(j)];
        E dot = 0;
        Long norm2 = 0;
        for (std::int64_t i = 0; i < k - j; ++i) {
          dot += conj_of(x[at(i)]) * col[j + i];
          norm2 += abs2(x[at(i)]);
        }
        const E scale = dot * (Long(2) / norm2);
        for (std::int64_t i = 0; i < k - j; ++i)
          col[j + i] -= x[at(i)] * scale;
      }
      for (std::int64_t i = 0; i < k; ++i)
        col[i] *= d[at(i)];
    }
  }
};

/// b (cols x rows) <- a^H for a (rows x cols), both column-major.
template <class E>
std::vector<E> adjoint(const std::vector<E>& a, std::int64_t rows, std::int64_t cols) {
  std::vector<E> b(a.size());
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i)
      b[at(j + i * cols)] = conj_of(a[at(i + j * rows)]);
  return b;
}

template <class T, class E>
T round_to(const E& x) {
  if constexpr (std::is_floating_point_v<E>)
    return static_cast<T>(x);
  else
    return T(static_cast<double>(x.real()), static_cast<double>(x.imag()));
}

/// Q [S X; 0] (or Q S X(0:k, :) when k < n), rounded to double: k x n, Q a random k x k unitary.
template <class T>
std::vector<T> unitary_times(const RandomUnitary<Ext<T>>& q, const std::vector<Long>& s,
                             const std::vector<Ext<T>>& x, std::int64_t n) {
  const std::int64_t k = q.k;
  std::vector<Ext<T>> a(at(k * n), Ext<T>(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < std::min(k, n); ++i)
      a[at(i + j * k)] = s[at(i)] * x[at(i + j * n)];
  q.apply(a, n);
  std::vector<T> out(a.size());
  std::transform(a.begin(), a.end(), out.begin(), [](const Ext<T>& e) { return round_to<T>(e); });
  return out;
}

/// The first `cols` columns of Q (k x k), rounded to double, padded with zero columns to n.
template <class T>
std::vector<T> unitary_columns(const RandomUnitary<Ext<T>>& q, std::int64_t n) {
  const std::int64_t k = q.k, cols = std::min(k, n);
  std::vector<Ext<T>> a(at(k * cols), Ext<T>(0));
  for (std::int64_t i = 0; i < cols; ++i)
    a[at(i + i * k)] = 1;
  q.apply(a, cols);
  std::vector<T> out(at(k * n), T(0));
  std::transform(a.begin(), a.end(), out.begin(), [](const Ext<T>& e) { return round_to<T>(e); });
  return out;
}

}  // namespace prescribed_gsvd_detail

/// A pair with known GSVD. All matrices column-major with leading dimension = rows.
template <class T>
struct PrescribedGsvd {
  std::int64_t m = 0, p = 0, n = 0;
  std::vector<T> f;  ///< m x n
  std::vector<T> g;  ///< p x n
  /// The prescribed generalized singular values, nonincreasing (what gsvd_hz's values() should
  /// return), and sigma_f, sigma_g (rounded from long double) in the same order.
  std::vector<double> sigma, sigma_f, sigma_g;
  /// With factors only: U (m x n), V (p x n, orthonormal columns), X (n x n, exactly the X the
  /// pair was formed with), so F = U diag(sigma_f) X and G = V diag(sigma_g) X up to the
  /// rounding of F, G, U, V, sigma_f and sigma_g to double.
  std::vector<T> u, v, x;
  /// The singular values of X are exactly x_condition^(-i/(n-1)), i = 0..n-1, before X is rounded.
  double x_condition = 1;
};

/// The pair F = U diag(sigma_f) X, G = V diag(sigma_g) X for the n prescribed generalized singular
/// values `sigma` (finite, >= 0, any order; sorted nonincreasing in the result; for m < n at
/// least n - m of them 0), X = Q_1 diag(x_condition^(-i/(n-1))) Q_2 with Q_1, Q_2 random unitary.
/// T: double or std::complex<double>.
template <class T = double>
PrescribedGsvd<T> prescribed_gsvd_pair(std::int64_t m, std::int64_t p, std::int64_t n,
                                       std::vector<double> sigma, double x_condition, unsigned seed,
                                       bool with_factors = false) {
  namespace d = prescribed_gsvd_detail;
  using E = d::Ext<T>;
  using d::Long;
  shiftop::require(m >= 1 && n >= 1 && p >= n,
                   "prescribed_gsvd_pair: expected m >= 1, n >= 1 and p >= n (G of full rank)");
  shiftop::require(static_cast<std::int64_t>(sigma.size()) == n,
                   "prescribed_gsvd_pair: sigma must have n entries");
  shiftop::require(std::isfinite(x_condition) && x_condition >= 1,
                   "prescribed_gsvd_pair: x_condition must be finite and >= 1");
  for (double s : sigma)
    shiftop::require(std::isfinite(s) && s >= 0,
                     "prescribed_gsvd_pair: sigma must be finite and nonnegative");
  std::sort(sigma.begin(), sigma.end(), std::greater<>());
  for (std::int64_t i = m; i < n; ++i)
    shiftop::require(sigma[d::at(i)] == 0,
                     "prescribed_gsvd_pair: for m < n the n - m smallest sigma must be 0");

  PrescribedGsvd<T> out;
  out.m = m;
  out.p = p;
  out.n = n;
  out.x_condition = x_condition;
  out.sigma = sigma;
  std::vector<Long> sf(d::at(n)), sg(d::at(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const Long s = sigma[d::at(i)], r = std::sqrt(1 + s * s);
    sf[d::at(i)] = s / r;
    sg[d::at(i)] = 1 / r;
    out.sigma_f.push_back(static_cast<double>(sf[d::at(i)]));
    out.sigma_g.push_back(static_cast<double>(sg[d::at(i)]));
  }

  std::mt19937_64 rng(seed);
  // X = Q_1 C Q_2^H, rounded to double; the rounded X is then exact for F and G.
  std::vector<E> x(d::at(n * n), E(0));
  for (std::int64_t i = 0; i < n; ++i)
    x[d::at(i + i * n)] = n == 1 ? Long(1)
                                 : std::pow(static_cast<Long>(x_condition),
                                            -static_cast<Long>(i) / static_cast<Long>(n - 1));
  const d::RandomUnitary<E> q1(n, rng), q2(n, rng);
  q1.apply(x, n);
  x = d::adjoint(x, n, n);
  q2.apply(x, n);
  x = d::adjoint(x, n, n);
  std::vector<T> x_rounded(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    x_rounded[e] = d::round_to<T>(x[e]);
    x[e] = E(x_rounded[e]);
  }

  const d::RandomUnitary<E> qu(m, rng), qv(p, rng);
  out.f = d::unitary_times<T>(qu, sf, x, n);
  out.g = d::unitary_times<T>(qv, sg, x, n);
  if (with_factors) {
    out.u = d::unitary_columns<T>(qu, n);
    out.v = d::unitary_columns<T>(qv, n);
    out.x = std::move(x_rounded);
  }
  return out;
}

/// n values log-uniform over [lo, hi] (0 < lo <= hi), nonincreasing, the last n - min(m, n) of
/// them replaced by 0 (rank(F) <= m).
inline std::vector<double> log_uniform_gsvd_values(std::int64_t m, std::int64_t n, double lo,
                                                   double hi, unsigned seed) {
  shiftop::require(lo > 0 && lo <= hi && std::isfinite(hi),
                   "log_uniform_gsvd_values: expected 0 < lo <= hi < inf");
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(std::log10(lo), std::log10(hi));
  std::vector<double> s(static_cast<std::size_t>(n));
  for (double& x : s)
    x = std::pow(10.0, exponent(rng));
  std::sort(s.begin(), s.end(), std::greater<>());
  for (std::int64_t i = std::min(m, n); i < n; ++i)
    s[static_cast<std::size_t>(i)] = 0;
  return s;
}

/// The thesis' section 3.4 pair: values log-uniform over [lo, hi] (default [1e-5, 1e4]), X of
/// condition x_condition.
template <class T = double>
PrescribedGsvd<T> random_gsvd_pair(std::int64_t m, std::int64_t p, std::int64_t n, unsigned seed,
                                   double x_condition = 10, double lo = 1e-5, double hi = 1e4,
                                   bool with_factors = false) {
  return prescribed_gsvd_pair<T>(m, p, n, log_uniform_gsvd_values(m, n, lo, hi, seed ^ 0x5eedu),
                                 x_condition, seed, with_factors);
}

}  // namespace shiftop::testing
