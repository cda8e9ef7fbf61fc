// The dense answers the data-space Hessian must give, from the explicit matrices of a
// DataSpaceProblem by plain loops and LAPACK: K = Gamma_noise + F Gamma_prior F^T, the
// parameter-space Hessian H = F^T Gamma_noise^-1 F + Gamma_prior^-1 and Gamma_post = H^-1
// (eq. 4 of mixed-precision-block-toeplitz-matvec, solved as written, without Woodbury), the MAP
// point from the normal equations, and Matheron's rule for fixed normals.
#pragma once

#include <lapacke.h>

#include <stdexcept>
#include <vector>

#include "data_space_problem.hpp"

namespace shiftop::testing {

/// A^-1 for SPD A (n x n) by LAPACK's dpotrf/dpotri, both triangles filled.
inline std::vector<double> spd_inverse(std::vector<double> a, index_t n) {
  const auto size = static_cast<lapack_int>(n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', size, a.data(), size) != 0 ||
      LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', size, a.data(), size) != 0)
    throw std::runtime_error("dense reference: matrix is not positive definite");
  for (index_t i = 0; i < n; ++i)
    for (index_t j = i + 1; j < n; ++j)
      a[i * n + j] = a[j * n + i];
  return a;
}

struct DenseAnswers {
  std::vector<double> K;          // N x N
  std::vector<double> posterior;  // Gamma_post, M x M
  std::vector<double> H;          // M x M
};

inline DenseAnswers dense_answers(const DataSpaceProblem& p) {
  const index_t nd = p.shape.nd, nt = p.shape.nt, n = nd * nt, m = p.shape.nm * nt;
  DenseAnswers a;
  // K = Gamma_noise + F Gamma F^T.
  const auto fg = dense_product(p.dense_F, p.dense_prior, n, m, m);
  a.K = dense_product(fg, dense_transpose(p.dense_F, n, m), n, m, n);
  for (index_t k = 0; k < n; ++k)
    a.K[k * n + k] += p.noise_variances[k / nt];
  // H = F^T Gamma_noise^-1 F + Gamma^-1.
  auto scaled = p.dense_F;  // Gamma_noise^-1 F
  for (index_t r = 0; r < n; ++r)
    for (index_t c = 0; c < m; ++c)
      scaled[r * m + c] /= p.noise_variances[r / nt];
  a.H = dense_product(p.dense_F, scaled, m, n, m, true);
  const auto prior_inverse = spd_inverse(p.dense_prior, m);
  for (std::size_t k = 0; k < a.H.size(); ++k)
    a.H[k] += prior_inverse[k];
  a.posterior = spd_inverse(a.H, m);
  return a;
}

/// m_map = H^-1 (F^T Gamma_noise^-1 d + Gamma_prior^-1 m_prior) for one data vector.
inline std::vector<double> dense_map(const DataSpaceProblem& p, const DenseAnswers& a,
                                     std::span<const double> d) {
  const index_t nt = p.shape.nt, n = p.shape.nd * nt, m = p.shape.nm * nt;
  std::vector<double> weighted(d.begin(), d.end());
  for (index_t r = 0; r < n; ++r)
    weighted[r] /= p.noise_variances[r / nt];
  auto rhs = dense_apply(p.dense_F, n, m, true, weighted, 1);
  const auto prior_inverse = spd_inverse(p.dense_prior, m);
  const auto pulled = dense_apply(prior_inverse, m, m, false, p.prior_mean, 1);
  for (index_t k = 0; k < m; ++k)
    rhs[k] += pulled[k];
  return dense_spd_solve(a.H, rhs, m);
}

/// Matheron's rule with the dense matrices: m_map + S xi1 - Gamma F^T K^-1 (F S xi1 +
/// Gamma_noise^{1/2} xi2), for one sample.
inline std::vector<double> dense_sample(const DataSpaceProblem& p, const DenseAnswers& a,
                                        std::span<const double> d, std::span<const double> xi1,
                                        std::span<const double> xi2) {
  const index_t nt = p.shape.nt, n = p.shape.nd * nt, m = p.shape.nm * nt;
  const auto x = dense_apply(p.dense_sqrt, m, m, false, xi1, 1);
  auto y = dense_apply(p.dense_F, n, m, false, x, 1);
  for (index_t r = 0; r < n; ++r)
    y[r] += std::sqrt(p.noise_variances[r / nt]) * xi2[r];
  const auto z = dense_spd_solve(a.K, y, n);
  const auto lifted =
      dense_apply(p.dense_prior, m, m, false, dense_apply(p.dense_F, n, m, true, z, 1), 1);
  auto sample = dense_map(p, a, d);
  for (index_t k = 0; k < m; ++k)
    sample[k] += x[k] - lifted[k];
  return sample;
}

}  // namespace shiftop::testing
