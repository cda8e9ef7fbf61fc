// Random small inverse problems for the data-space Hessian's tests (CPU and GPU): F, Q, the noise
// and each of the three priors, with their explicit dense matrices built by plain loops from the
// same numbers (not through the priors' own code): Gamma_prior, its AR(1) factor, F, Q.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "dense_solve_reference.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::testing {

enum class PriorKind { Diagonal, Smoothing, Kernels };

inline const char* prior_name(PriorKind kind) {
  switch (kind) {
    case PriorKind::Diagonal:
      return "Diagonal";
    case PriorKind::Smoothing:
      return "Smoothing";
    case PriorKind::Kernels:
      return "Kernels";
  }
  return "?";
}

struct DataSpaceCase {
  Shape shape;  // F: (Nd, Nm, Nt)
  index_t nq;   // QoI blocks
  PriorKind prior;
};

/// A problem and its dense twin. Dense matrices are row-major, SOTI rows and columns.
struct DataSpaceProblem {
  Shape shape{};
  index_t nq = 0;
  std::shared_ptr<btt::Plan> F, Q;
  std::vector<double> noise_variances;
  std::shared_ptr<inverse::Prior> prior;
  std::vector<double> prior_mean;
  std::vector<double> dense_F, dense_Q, dense_prior, dense_sqrt;  // dense_sqrt: S (if any)
};

inline std::vector<double> positive_values(std::size_t n, unsigned seed, double low) {
  auto v = random_vector(n, seed);
  for (double& x : v)
    x = low + x * x;
  return v;
}

/// The problem of `c` with plans made with `options` (the backend under test).
inline DataSpaceProblem make_problem(const DataSpaceCase& c, const btt::PlanOptions& options,
                                     unsigned seed) {
  DataSpaceProblem p;
  p.shape = c.shape;
  p.nq = c.nq;
  const index_t nd = c.shape.nd, nm = c.shape.nm, nt = c.shape.nt;
  const auto kernels = random_vector(static_cast<std::size_t>(nd * nm * nt), seed);
  p.F = std::make_shared<btt::Plan>(btt::Plan::create(kernels, c.shape, options));
  p.dense_F = dense_block_toeplitz(kernels, {}, c.shape);
  const Shape qshape{c.nq, nm, nt};
  const auto qkernels = random_vector(static_cast<std::size_t>(c.nq * nm * nt), seed + 1);
  p.Q = std::make_shared<btt::Plan>(btt::Plan::create(qkernels, qshape, options));
  p.dense_Q = dense_block_toeplitz(qkernels, {}, qshape);
  p.noise_variances = positive_values(static_cast<std::size_t>(nd), seed + 2, 0.05);
  p.prior_mean = random_vector(static_cast<std::size_t>(nm * nt), seed + 3);

  const index_t n = nm * nt;
  const auto variances = positive_values(static_cast<std::size_t>(nm), seed + 4, 0.3);
  p.dense_prior.assign(static_cast<std::size_t>(n * n), 0.0);
  p.dense_sqrt.assign(static_cast<std::size_t>(n * n), 0.0);
  switch (c.prior) {
    case PriorKind::Diagonal:
      p.prior = std::make_shared<inverse::DiagonalPrior>(variances, nt);
      for (index_t k = 0; k < n; ++k) {
        p.dense_prior[k * n + k] = variances[k / nt];
        p.dense_sqrt[k * n + k] = std::sqrt(variances[k / nt]);
      }
      break;
    case PriorKind::Smoothing: {
      const double steps = 2.5, rho = std::exp(-1 / steps);
      p.prior = std::make_shared<inverse::TimeSmoothingPrior>(variances, steps, nt, options);
      // T_st = rho^|s-t|; the AR(1) factor L_ts = rho^(t-s) (s = 0) or rho^(t-s) sqrt(1-rho^2).
      for (index_t j = 0; j < nm; ++j)
        for (index_t s = 0; s < nt; ++s)
          for (index_t t = 0; t < nt; ++t) {
            const index_t row = j * nt + t, col = j * nt + s;
            p.dense_prior[row * n + col] = variances[j] * std::pow(rho, std::abs(t - s));
            if (s <= t)
              p.dense_sqrt[row * n + col] = std::sqrt(variances[j]) * std::pow(rho, t - s) *
                                            (s == 0 ? 1.0 : std::sqrt(1 - rho * rho));
          }
      break;
    }
    case PriorKind::Kernels: {
      // C_k = A c(k) with A = B B^T + I (SPD) and c(k) = exp(-k^2/8) (a Gaussian covariance,
      // positive definite): Gamma_prior = T ⊗ A up to ordering, positive definite.
      const auto b = random_vector(static_cast<std::size_t>(nm * nm), seed + 5);
      std::vector<double> a(static_cast<std::size_t>(nm * nm));
      for (index_t i = 0; i < nm; ++i)
        for (index_t j = 0; j < nm; ++j) {
          double sum = i == j ? 1.0 : 0.0;
          for (index_t l = 0; l < nm; ++l)
            sum += b[i * nm + l] * b[j * nm + l];
          a[i * nm + j] = 0.2 * sum;
        }
      std::vector<double> prior_kernels(static_cast<std::size_t>(nm * nm * nt));
      for (index_t i = 0; i < nm; ++i)
        for (index_t j = 0; j < nm; ++j)
          for (index_t k = 0; k < nt; ++k)
            prior_kernels[(i * nm + j) * nt + k] =
                a[i * nm + j] * std::exp(-static_cast<double>(k * k) / 8);
      p.prior = std::make_shared<inverse::KernelPrior>(prior_kernels, Shape{nm, nm, nt}, options);
      for (index_t i = 0; i < nm; ++i)
        for (index_t j = 0; j < nm; ++j)
          for (index_t t = 0; t < nt; ++t)
            for (index_t s = 0; s < nt; ++s)
              p.dense_prior[(i * nt + t) * n + j * nt + s] =
                  a[i * nm + j] * std::exp(-static_cast<double>((t - s) * (t - s)) / 8);
      p.dense_sqrt.clear();
      break;
    }
  }
  return p;
}

}  // namespace shiftop::testing
