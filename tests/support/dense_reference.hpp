// Independent references for the tests: the explicit dense block Toeplitz matrix (SOTI rows
// i*Nt+t, columns j*Nt+s) and the DFT of the padded kernels, both by plain loops.
#pragma once

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <span>
#include <vector>

#include "shiftop/btt/op.hpp"

namespace shiftop::testing {

/// Explicit (Nd*Nt) x (Nm*Nt) row-major matrix; `row` empty means block lower-triangular.
inline std::vector<double> dense_block_toeplitz(std::span<const double> col,
                                                std::span<const double> row, const Shape& s) {
  const index_t rows = s.nd * s.nt, cols = s.nm * s.nt;
  std::vector<double> a(static_cast<std::size_t>(rows * cols), 0.0);
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j)
      for (index_t t = 0; t < s.nt; ++t)
        for (index_t u = 0; u < s.nt; ++u) {
          const index_t kernel = (i * s.nm + j) * s.nt;
          double v = 0;
          if (t >= u)
            v = col[static_cast<std::size_t>(kernel + t - u)];
          else if (!row.empty())
            v = row[static_cast<std::size_t>(kernel + u - t)];
          a[static_cast<std::size_t>((i * s.nt + t) * cols + j * s.nt + u)] = v;
        }
  return a;
}

/// y = A x (transpose = false) or A^T x, A rows x cols row-major, nrhs vectors back to back.
inline std::vector<double> dense_apply(const std::vector<double>& a, index_t rows, index_t cols,
                                       bool transpose, std::span<const double> x, index_t nrhs) {
  const index_t n_in = transpose ? rows : cols, n_out = transpose ? cols : rows;
  std::vector<double> y(static_cast<std::size_t>(n_out * nrhs), 0.0);
  for (index_t r = 0; r < nrhs; ++r)
    for (index_t p = 0; p < rows; ++p)
      for (index_t q = 0; q < cols; ++q) {
        const double apq = a[static_cast<std::size_t>(p * cols + q)];
        if (transpose)
          y[static_cast<std::size_t>(r * n_out + q)] +=
              apq * x[static_cast<std::size_t>(r * n_in + p)];
        else
          y[static_cast<std::size_t>(r * n_out + p)] +=
              apq * x[static_cast<std::size_t>(r * n_in + q)];
      }
  return y;
}

inline std::vector<double> random_vector(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> dist;
  std::vector<double> v(n);
  for (double& x : v)
    x = dist(gen);
  return v;
}

inline double norm(std::span<const double> v) {
  double s = 0;
  for (double x : v)
    s += x * x;
  return std::sqrt(s);
}

inline double relative_error(std::span<const double> got, std::span<const double> want) {
  double diff = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    diff += (got[k] - want[k]) * (got[k] - want[k]);
  return std::sqrt(diff) / norm(want);
}

inline double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    s += a[k] * b[k];
  return s;
}

/// F^[w]_{ij} = sum_t c_ij[t] exp(-2 pi i w t / 2Nt) for the circulant's first column c, by the
/// definition of the DFT (no FFT). Returned as [w][i][j].
inline std::vector<std::complex<double>> kernel_dft(std::span<const double> col,
                                                    std::span<const double> row, const Shape& s) {
  const index_t L = 2 * s.nt;
  std::vector<std::complex<double>> out(
      static_cast<std::size_t>(btt::frequencies(s) * s.nd * s.nm));
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j) {
      std::vector<double> c(static_cast<std::size_t>(L), 0.0);
      for (index_t t = 0; t < s.nt; ++t)
        c[t] = col[static_cast<std::size_t>((i * s.nm + j) * s.nt + t)];
      if (!row.empty())
        for (index_t t = 1; t < s.nt; ++t)
          c[L - t] = row[static_cast<std::size_t>((i * s.nm + j) * s.nt + t)];
      for (index_t w = 0; w < btt::frequencies(s); ++w) {
        std::complex<double> sum = 0;
        for (index_t t = 0; t < L; ++t)
          sum += c[t] * std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(w * t) /
                                            static_cast<double>(L));
        out[static_cast<std::size_t>((w * s.nd + i) * s.nm + j)] = sum;
      }
    }
  return out;
}

}  // namespace shiftop::testing
