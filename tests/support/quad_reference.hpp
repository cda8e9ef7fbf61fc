// An independent reference for the Jacobi SVD's relative-accuracy tests: the textbook cyclic
// one-sided Jacobi method (row-cyclic order, Rutishauser's rotation) in __float128 (113-bit
// significand, unit roundoff 1e-34), on a matrix given in double. Small and obviously right, not
// fast: n <= ~64. GCC's __float128 arithmetic needs no library; the square root is Newton's
// iteration from the double one, so nothing beyond libgcc is linked.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace shiftop::testing {

using quad = __float128;

inline quad quad_sqrt(quad x) {
  if (x <= 0) return 0;
  // x = x' 4^k with x' inside double's range (exact powers of two; the sums of squares of a
  // subnormal matrix lie far below it), then Newton from the double square root of x': each step
  // doubles the correct bits, 53 -> 106 -> 212.
  const quad four_100 = std::ldexp(1.0, 200), four_minus_100 = std::ldexp(1.0, -200);
  int k = 0;
  for (; x < std::ldexp(1.0, -800); k -= 100)
    x *= four_100;
  for (; x > std::ldexp(1.0, 800); k += 100)
    x *= four_minus_100;
  quad y = std::sqrt(static_cast<double>(x));
  for (int i = 0; i < 3; ++i)
    y = (y + x / y) / 2;
  return y * static_cast<quad>(std::ldexp(1.0, k));
}

inline quad quad_abs(quad x) {
  return x < 0 ? -x : x;
}

/// The singular values, descending, of the m x n column-major matrix a (m >= n), to about 1e-30
/// relative (the quad rounding of a's own entries is exact: a is double).
inline std::vector<double> quad_singular_values(const double* a, std::int64_t m, std::int64_t n,
                                                std::int64_t lda) {
  std::vector<quad> g(static_cast<std::size_t>(m * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      g[i + j * m] = a[i + j * lda];
  const quad tolerance = 1e-32;
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (std::int64_t p = 0; p + 1 < n; ++p)
      for (std::int64_t q = p + 1; q < n; ++q) {
        quad* gp = g.data() + p * m;
        quad* gq = g.data() + q * m;
        quad alpha = 0, beta = 0, gamma = 0;
        for (std::int64_t i = 0; i < m; ++i) {
          alpha += gp[i] * gp[i];
          beta += gq[i] * gq[i];
          gamma += gp[i] * gq[i];
        }
        if (quad_abs(gamma) <= tolerance * quad_sqrt(alpha) * quad_sqrt(beta)) continue;
        rotated = true;
        const quad zeta = (beta - alpha) / (2 * gamma);
        const quad t = (zeta >= 0 ? 1 : -1) / (quad_abs(zeta) + quad_sqrt(1 + zeta * zeta));
        const quad c = 1 / quad_sqrt(1 + t * t), s = c * t;
        for (std::int64_t i = 0; i < m; ++i) {
          const quad x = gp[i], y = gq[i];
          gp[i] = c * x - s * y;
          gq[i] = s * x + c * y;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> sigma(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    quad sum = 0;
    for (std::int64_t i = 0; i < m; ++i)
      sum += g[i + j * m] * g[i + j * m];
    sigma[j] = static_cast<double>(quad_sqrt(sum));
  }
  std::sort(sigma.begin(), sigma.end(), std::greater<>());
  return sigma;
}

}  // namespace shiftop::testing
