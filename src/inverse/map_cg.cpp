#include "shiftop/inverse/map_cg.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "inverse/require_finite.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/inverse/circulant_preconditioner.hpp"

namespace shiftop::inverse {
namespace {

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0;
  for (std::size_t k = 0; k < a.size(); ++k)
    sum += a[k] * b[k];
  return sum;
}

}  // namespace

// PCG (Saad, Iterative Methods, Algorithm 9.1) on H x = b, b = F* Gamma_noise^{-1} d +
// Gamma_prior^{-1} m_prior, from x_0 = m_prior: r_0 = b - H x_0 = F* Gamma_noise^{-1}(d - F
// m_prior), in which Gamma_prior^{-1} cancels. With M^{-1} = Gamma_prior the search directions
// satisfy p_0 = z_0 = Gamma_prior r_0 and p_{k+1} = z_{k+1} + beta p_k, so q_k = Gamma_prior^{-1}
// p_k obeys q_0 = r_0, q_{k+1} = r_{k+1} + beta q_k, and H p_k = F* Gamma_noise^{-1} F p_k + q_k:
// the prior preconditioner never applies Gamma_prior^{-1}, which a kernel prior does not have. The
// circulant preconditioner applies it (its priors have it in closed form).
MapCgResult map_cg(Hessian& hessian, std::span<const double> data,
                   std::span<const double> prior_mean, const MapCgOptions& options) {
  const auto n = static_cast<std::size_t>(hessian.size());
  require(prior_mean.empty() || prior_mean.size() == n,
          "prior mean holds {} values, expected Nm*Nt = {}", prior_mean.size(), n);
  require_finite(data, "CG: data");
  require_finite(prior_mean, "CG: prior mean");
  require(std::isfinite(options.tolerance) && options.tolerance > 0,
          "CG tolerance {}: expected a positive number", options.tolerance);
  require(options.max_iterations >= 0, "CG max iterations {}: expected 0 or more",
          options.max_iterations);
  check_threads(options.threads, "CG: threads");
  const Prior& prior = hessian.prior();
  const bool circulant = options.preconditioner == Preconditioner::Circulant;

  MapCgResult result;
  Stopwatch watch;
  std::optional<CirculantPreconditioner> preconditioner;
  if (circulant) {
    require(prior.has_circulant_spectrum() && prior.has_precision(),
            "the circulant preconditioner needs a prior with a circulant spectrum and a precision "
            "(diagonal or smoothing); the {} prior has none: use the prior preconditioner",
            prior.name());
    preconditioner.emplace(*hessian.forward(), hessian.noise(), prior, options.threads);
  }
  result.setup_seconds = watch.lap();

  std::vector<double>& x = result.m;
  x.assign(n, 0.0);
  if (!prior_mean.empty()) std::copy(prior_mean.begin(), prior_mean.end(), x.begin());
  std::vector<double> r(n), z(n), p(n), q(n), hp(n), prior_term(n);
  hessian.weighted_data_residual(data, x, r);
  auto precondition = [&](std::span<const double> from, std::span<double> to) {
    if (circulant)
      preconditioner->apply(from, to);
    else
      prior.apply_covariance(from, to);
  };
  precondition(r, z);
  p = z;
  if (!circulant) q = r;
  double rz = dot(r, z);
  const double rz0 = rz;
  if (rz0 == 0 && std::all_of(r.begin(), r.end(), [](double v) { return v == 0; })) {
    // The prior mean fits the data exactly: it is the MAP point.
    result.residual_history = {0.0};
    result.converged = true;
    result.iteration_seconds = watch.lap();
    return result;
  }
  // M^{-1} = Gamma_prior (or the circulant approximation) must be positive definite: r.z < 0
  // shows that it is not (a kernel prior that is not a covariance).
  require(rz0 > 0,
          "CG: the preconditioner is not positive definite (r.z = {:g}); a kernel prior must be a "
          "positive definite covariance",
          rz0);
  result.residual_history = {1.0};
  for (index_t k = 1; k <= options.max_iterations; ++k) {
    hessian.apply_misfit(p, hp);
    if (circulant) {
      prior.apply_precision(p, prior_term);
      for (std::size_t l = 0; l < n; ++l)
        hp[l] += prior_term[l];
    } else {
      for (std::size_t l = 0; l < n; ++l)
        hp[l] += q[l];
    }
    const double curvature = dot(p, hp);
    require(curvature > 0,
            "CG: the Hessian is not positive definite (p.Hp = {:g} at iteration {}); a kernel "
            "prior must be a positive definite covariance",
            curvature, k);
    const double alpha = rz / curvature;
    for (std::size_t l = 0; l < n; ++l) {
      x[l] += alpha * p[l];
      r[l] -= alpha * hp[l];
    }
    precondition(r, z);
    const double rz_next = dot(r, z);
    require(rz_next >= 0,
            "CG: the preconditioner is not positive definite (r.z = {:g} at iteration {}); a "
            "kernel prior must be a positive definite covariance",
            rz_next, k);
    const double relative = std::sqrt(rz_next / rz0);
    result.residual_history.push_back(relative);
    result.iterations = k;
    if (options.progress) options.progress(k, relative);
    if (relative < options.tolerance) {
      result.converged = true;
      break;
    }
    const double beta = rz_next / rz;
    rz = rz_next;
    for (std::size_t l = 0; l < n; ++l)
      p[l] = z[l] + beta * p[l];
    if (!circulant)
      for (std::size_t l = 0; l < n; ++l)
        q[l] = r[l] + beta * q[l];
  }
  result.iteration_seconds = watch.lap();
  return result;
}

}  // namespace shiftop::inverse
