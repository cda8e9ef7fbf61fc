// Small random inverse problems for the tests of the solve layer: F (block lower-triangular or
// general Toeplitz) as a plan and as an explicit dense matrix, the noise, one of the three priors
// and its dense covariance, and the dense Hessian H = F^T Gamma_noise^{-1} F + Gamma_prior^{-1}
// and MAP point (eq. 4 of mixed-precision-block-toeplitz-matvec) by LAPACK.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "dense_solve_reference.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::testing {

enum class PriorKind { Diagonal, Smoothing, Kernels };

inline std::string to_string(PriorKind kind) {
  return kind == PriorKind::Diagonal    ? "diagonal"
         : kind == PriorKind::Smoothing ? "smoothing"
                                        : "kernels";
}

inline btt::PlanOptions quick_plan(index_t max_rhs = 16) {
  btt::PlanOptions options;
  options.planning = btt::Planning::Estimate;
  options.max_rhs = max_rhs;
  return options;
}

struct RandomInverseProblem {
  Shape shape;
  std::shared_ptr<btt::Plan> plan;
  std::vector<double> forward;  // dense F, (Nd*Nt) x (Nm*Nt)
  std::vector<double> noise_variances;
  std::shared_ptr<const inverse::Prior> prior;
  std::vector<double> prior_covariance;  // dense Gamma_prior, (Nm*Nt)^2

  inverse::GaussianNoise noise() const { return inverse::GaussianNoise(noise_variances, shape.nt); }
  index_t parameters() const { return shape.nm * shape.nt; }
  index_t observations() const { return shape.nd * shape.nt; }
};

inline std::vector<double> positive_random(std::size_t n, unsigned seed, double floor) {
  auto v = random_vector(n, seed);
  for (double& x : v)
    x = floor + x * x;
  return v;
}

/// A positive definite kernel prior: A ⊗ T (A = B B^T / Nm + I, T_st = rho^|s-t|) plus a small
/// nonsymmetric perturbation of the lags k >= 1 (the dense Cholesky of the tests checks that it
/// stays definite).
inline std::vector<double> definite_kernels(index_t nm, index_t nt, unsigned seed) {
  const auto b = random_vector(static_cast<std::size_t>(nm * nm), seed);
  const auto e = random_vector(static_cast<std::size_t>(nm * nm * nt), seed + 1);
  const double rho = 0.6;
  // A ⊗ T has eigenvalues >= (1-rho)/(1+rho) = 0.25; the perturbation's norm is about
  // 2 sqrt(Nm Nt) times its entries' size: kept near 0.1.
  const double perturbation = 0.05 / std::sqrt(static_cast<double>(nm * nt));
  std::vector<double> k(static_cast<std::size_t>(nm * nm * nt));
  for (index_t i = 0; i < nm; ++i)
    for (index_t j = 0; j < nm; ++j) {
      double a = i == j ? 1.0 : 0.0;
      for (index_t l = 0; l < nm; ++l)
        a += b[i * nm + l] * b[j * nm + l] / static_cast<double>(nm);
      for (index_t t = 0; t < nt; ++t)
        k[(i * nm + j) * nt + t] = a * std::pow(rho, static_cast<double>(t)) +
                                   (t > 0 ? perturbation * e[(i * nm + j) * nt + t] : 0.0);
    }
  return k;
}

/// Kernels of a decaying random F (lag t scaled by 0.8^t, as a stable LTI system's are).
inline RandomInverseProblem random_inverse_problem(const Shape& s, PriorKind kind, bool general,
                                                   unsigned seed, index_t max_rhs = 16) {
  RandomInverseProblem p;
  p.shape = s;
  auto column = random_vector(static_cast<std::size_t>(s.kernel_size()), seed);
  auto row = general ? random_vector(column.size(), seed + 1) : std::vector<double>{};
  for (index_t b = 0; b < s.nd * s.nm; ++b)
    for (index_t t = 0; t < s.nt; ++t) {
      const double decay = std::pow(0.8, static_cast<double>(t));
      column[b * s.nt + t] *= decay;
      if (general) row[b * s.nt + t] = t == 0 ? column[b * s.nt] : row[b * s.nt + t] * decay;
    }
  p.plan = std::make_shared<btt::Plan>(
      general ? btt::Plan::create_general(column, row, s, quick_plan(max_rhs))
              : btt::Plan::create(column, s, quick_plan(max_rhs)));
  p.forward = dense_block_toeplitz(column, row, s);
  p.noise_variances = positive_random(static_cast<std::size_t>(s.nd), seed + 2, 0.05);
  const auto variances = positive_random(static_cast<std::size_t>(s.nm), seed + 3, 0.3);
  switch (kind) {
    case PriorKind::Diagonal:
      p.prior = std::make_shared<inverse::DiagonalPrior>(variances, s.nt);
      p.prior_covariance =
          dense_separable_covariance(variances, s.nt, [](index_t k) { return k == 0 ? 1.0 : 0.0; });
      break;
    case PriorKind::Smoothing: {
      const double steps = 2.5;
      const double rho = std::exp(-1 / steps);
      p.prior = std::make_shared<inverse::TimeSmoothingPrior>(variances, steps, s.nt, quick_plan());
      p.prior_covariance = dense_separable_covariance(
          variances, s.nt, [rho](index_t k) { return std::pow(rho, static_cast<double>(k)); });
      break;
    }
    case PriorKind::Kernels: {
      const auto kernels = definite_kernels(s.nm, s.nt, seed + 4);
      const Shape prior_shape{s.nm, s.nm, s.nt};
      p.prior = std::make_shared<inverse::KernelPrior>(kernels, prior_shape, quick_plan());
      p.prior_covariance =
          dense_block_toeplitz(kernels, transposed_lags(kernels, s.nm, s.nt), prior_shape);
      break;
    }
  }
  return p;
}

/// F^T Gamma_noise^{-1} F (+ Gamma_prior^{-1} when with_prior), dense.
inline std::vector<double> dense_hessian(const RandomInverseProblem& p, bool with_prior = true) {
  const index_t n = p.parameters(), rows = p.observations();
  auto weighted = p.forward;
  for (index_t r = 0; r < rows; ++r)
    for (index_t q = 0; q < n; ++q)
      weighted[r * n + q] /= p.noise_variances[r / p.shape.nt];
  auto h = dense_product(p.forward, weighted, n, rows, n, true);
  if (with_prior) {
    const auto precision = dense_spd_inverse(p.prior_covariance, n);
    for (std::size_t k = 0; k < h.size(); ++k)
      h[k] += precision[k];
  }
  return h;
}

/// m_map = H^{-1} (F^T Gamma_noise^{-1} d + Gamma_prior^{-1} m_prior), by dense Cholesky.
inline std::vector<double> dense_map_point(const RandomInverseProblem& p,
                                           const std::vector<double>& d,
                                           const std::vector<double>& m_prior) {
  const index_t n = p.parameters(), rows = p.observations();
  std::vector<double> weighted(d.size());
  for (index_t r = 0; r < rows; ++r)
    weighted[r] = d[r] / p.noise_variances[r / p.shape.nt];
  auto b = dense_apply(p.forward, rows, n, true, weighted, 1);
  const auto precision = dense_spd_inverse(p.prior_covariance, n);
  const auto prior_term = dense_apply(precision, n, n, false, m_prior, 1);
  for (std::size_t k = 0; k < b.size(); ++k)
    b[k] += prior_term[k];
  return dense_spd_solve(dense_hessian(p), b, n);
}

}  // namespace shiftop::testing
