// What the Jacobi (H)SVD tests on the CPU (svd/test_jacobi_driver.cpp) and on the GPU
// (svd/test_jacobi_cuda.cpp) both measure: random test matrices, the orthogonality of computed
// factors, and the structure of a hyperbolic SVD, all in double (complex where T is).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "shiftop/svd/jacobi.hpp"

namespace shiftop::testing {

template <class T>
constexpr bool kComplex = !std::is_same_v<T, svd::Real<T>>;

/// The machine epsilon of T's real type (2 unit roundoffs).
template <class T>
constexpr double eps() {
  return static_cast<double>(std::numeric_limits<svd::Real<T>>::epsilon());
}

/// The unit roundoff of T's real type: the "eps" of bounds in units of n eps.
template <class T>
constexpr double unit_roundoff() {
  return eps<T>() / 2.0;
}

template <class T>
std::complex<double> widen(T x) {
  return {static_cast<double>(std::real(x)), static_cast<double>(std::imag(x))};
}

/// `count` entries, normal(0, 1) (complex: both parts), from mt19937_64(seed).
template <class T>
std::vector<T> random_entries(std::int64_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<T> a(static_cast<std::size_t>(count));
  for (T& x : a) {
    if constexpr (kComplex<T>)
      x = T(static_cast<svd::Real<T>>(normal(rng)), static_cast<svd::Real<T>>(normal(rng)));
    else
      x = static_cast<T>(normal(rng));
  }
  return a;
}

/// ||X^H X - I||_max of the rows x cols column-major x, in double.
template <class T>
double orthogonality(const T* x, std::int64_t rows, std::int64_t cols) {
  double worst = 0;
  for (std::int64_t i = 0; i < cols; ++i)
    for (std::int64_t j = i; j < cols; ++j) {
      std::complex<double> s = 0;
      for (std::int64_t k = 0; k < rows; ++k)
        s += std::conj(widen(x[k + i * rows])) * widen(x[k + j * rows]);
      worst = std::max(worst, std::abs(s - (i == j ? 1.0 : 0.0)));
    }
  return worst;
}

/// How far a hyperbolic SVD of the m x n a (leading dimension m) is from A V = U S and
/// V^H J V = J, J = diag(I_{n_plus}, -I_{n - n_plus}); u is m x n, v n x n.
struct HyperbolicErrors {
  double residual = 0;  ///< ||A V - U S||_F / ||A||_F
  double j_error = 0;   ///< ||V^H J V - J||_max
  double v_norm = 0;    ///< ||V||_max^2: V is not orthogonal, and its errors scale with this
};

template <class T>
HyperbolicErrors hyperbolic_errors(const T* a, std::int64_t m, std::int64_t n,
                                   const svd::Real<T>* sigma, const T* u, const T* v,
                                   std::int64_t n_plus) {
  HyperbolicErrors e;
  double norm = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      std::complex<double> av = 0;
      for (std::int64_t l = 0; l < n; ++l)
        av += widen(a[i + l * m]) * widen(v[l + j * n]);
      e.residual += std::norm(av - widen(u[i + j * m]) * static_cast<double>(sigma[j]));
      norm += std::norm(widen(a[i + j * m]));
    }
  e.residual = std::sqrt(e.residual / norm);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      std::complex<double> s = 0;
      for (std::int64_t l = 0; l < n; ++l)
        s += std::conj(widen(v[l + i * n])) * widen(v[l + j * n]) * (l < n_plus ? 1.0 : -1.0);
      const double expected = i == j ? (i < n_plus ? 1.0 : -1.0) : 0.0;
      e.j_error = std::max(e.j_error, std::abs(s - expected));
      e.v_norm = std::max(e.v_norm, std::norm(widen(v[i + j * n])));
    }
  return e;
}

}  // namespace shiftop::testing
