// shiftop::inverse::map_cg — the MAP point of the linear Gaussian inverse problem by preconditioned
// conjugate gradients on H m = F* Gamma_noise^{-1} d + Gamma_prior^{-1} m_prior
// (mixed-precision-block-toeplitz-matvec, section 2.2, eq. 4; Ghattas and Willcox 2021).
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/inverse/hessian.hpp"

namespace shiftop::inverse {

/// M^{-1} of PCG. Prior: Gamma_prior, which never needs Gamma_prior^{-1} (works with every
/// prior, KernelPrior included). Circulant: the circulant approximation of H^{-1}
/// (circulant_preconditioner.hpp; priors with a circulant spectrum, which also have a precision).
enum class Preconditioner { Prior, Circulant };

}  // namespace shiftop::inverse

template <>
struct shiftop::EnumNames<shiftop::inverse::Preconditioner> {
  static constexpr std::array<std::pair<inverse::Preconditioner, std::string_view>, 2> table{
      {{inverse::Preconditioner::Prior, "prior"},
       {inverse::Preconditioner::Circulant, "circulant"}}};
};

namespace shiftop::inverse {

struct MapCgOptions {
  /// Stop when sqrt(r.z) / sqrt(r_0.z_0) < tolerance (the residual in the M^{-1}-norm).
  double tolerance = 1e-8;
  /// Stop after this many iterations (not converged).
  index_t max_iterations = 1000;
  Preconditioner preconditioner = Preconditioner::Prior;
  /// Called after every iteration with (iteration, relative residual); may be empty.
  std::function<void(index_t, double)> progress;
  /// OpenMP threads of the circulant preconditioner (0: OpenMP's default).
  int threads = 0;
};

struct MapCgResult {
  /// The MAP point, SOTI [Nm][Nt].
  std::vector<double> m;
  index_t iterations = 0;
  /// Relative residual sqrt(r.z)/sqrt(r_0.z_0) after each iteration, 1 at iteration 0 (0 when
  /// the prior mean already fits the data exactly: r_0 = 0).
  std::vector<double> residual_history;
  bool converged = false;
  /// Seconds building the preconditioner, and iterating.
  double setup_seconds = 0;
  double iteration_seconds = 0;
};

/// Solves H m = F* Gamma_noise^{-1} d + Gamma_prior^{-1} m_prior from m_0 = m_prior.
/// `data`: Nd*Nt values; `prior_mean`: Nm*Nt values, or empty for zero. Throws shiftop::Error on
/// sizes, on a tolerance that is not positive, on the circulant preconditioner with a prior that
/// has no circulant spectrum, and when H is found not to be positive definite (p.Hp <= 0).
MapCgResult map_cg(Hessian& hessian, std::span<const double> data,
                   std::span<const double> prior_mean = {}, const MapCgOptions& options = {});

}  // namespace shiftop::inverse
