// shiftop::inverse::Hessian — the Hessian of the negative log-posterior of the linear Gaussian
// inverse problem, H = F* Gamma_noise^{-1} F + Gamma_prior^{-1} = Gamma_post^{-1}
// (mixed-precision-block-toeplitz-matvec, section 2.2, eq. 4), applied matrix-free with two
// passes of F's plan per product.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {

class Hessian {
 public:
  /// F (Nd x Nm blocks, Nt steps), the noise over its Nd sensors and the prior over its Nm
  /// parameter blocks, both with F's Nt; throws shiftop::Error naming the size that disagrees.
  Hessian(std::shared_ptr<btt::Plan> forward, GaussianNoise noise,
          std::shared_ptr<const Prior> prior);

  /// Values of a parameter vector, Nm*Nt.
  index_t size() const;
  const std::shared_ptr<btt::Plan>& forward() const { return forward_; }
  const GaussianNoise& noise() const { return noise_; }
  const Prior& prior() const { return *prior_; }
  const std::shared_ptr<const Prior>& prior_pointer() const { return prior_; }

  /// y = H x for `nrhs` SOTI parameter vectors; needs the prior's precision (throws
  /// shiftop::Error for a prior without one, such as KernelPrior: map_cg with the prior
  /// preconditioner never applies it).
  void apply(std::span<const double> x, std::span<double> y, index_t nrhs = 1);
  /// y = F* Gamma_noise^{-1} F x, the data-misfit part of H.
  void apply_misfit(std::span<const double> x, std::span<double> y, index_t nrhs = 1);
  /// g = F* Gamma_noise^{-1} (d - F m) for one data vector d and parameter vector m: the
  /// right-hand side of H (x - m) = g, i.e. the residual of eq. (4) at x = m when m is the prior
  /// mean.
  void weighted_data_residual(std::span<const double> data, std::span<const double> m,
                              std::span<double> g);

 private:
  void check_parameters(std::span<const double> x, std::span<double> y, index_t nrhs,
                        const char* what) const;

  std::shared_ptr<btt::Plan> forward_;
  GaussianNoise noise_;
  std::shared_ptr<const Prior> prior_;
  std::vector<double> data_space_;  // F x for the right-hand sides of the last call
  std::vector<double> prior_term_;  // Gamma_prior^{-1} x
};

}  // namespace shiftop::inverse
