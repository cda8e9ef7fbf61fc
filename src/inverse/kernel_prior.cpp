#include <algorithm>
#include <cmath>

#include "shiftop/core/error.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {
namespace {

// The lag-0 block may be symmetric only up to rounding (a file written by other software):
// asymmetry up to this fraction of its largest entry is accepted and symmetrised.
constexpr double kSymmetryTolerance = 1e-12;

}  // namespace

KernelPrior::KernelPrior(std::span<const double> kernels, const Shape& shape,
                         const btt::PlanOptions& options)
    : shape_(shape) {
  shape.validate();
  require(shape.nd == shape.nm, "kernel prior shape {}: expected Nm x Nm blocks (Nd = Nm)",
          shape.str());
  require(static_cast<index_t>(kernels.size()) == shape.kernel_size(),
          "kernel prior holds {} values, expected Nm*Nm*Nt = {} for shape {}", kernels.size(),
          shape.kernel_size(), shape.str());
  const index_t nm = shape.nm;
  const index_t nt = shape.nt;
  auto at = [&](index_t i, index_t j, index_t k) { return kernels[(i * nm + j) * nt + k]; };
  double largest = 0;
  for (index_t i = 0; i < nm; ++i) {
    for (index_t j = 0; j < nm; ++j)
      largest = std::max(largest, std::abs(at(i, j, 0)));
  }
  for (index_t i = 0; i < nm; ++i) {
    require(std::isfinite(at(i, i, 0)) && at(i, i, 0) > 0,
            "kernel prior: the variance C_0[{0},{0}] = {1} is not positive (a covariance's "
            "diagonal must be)",
            i, at(i, i, 0));
    for (index_t j = 0; j < i; ++j) {
      require(std::abs(at(i, j, 0) - at(j, i, 0)) <= kSymmetryTolerance * largest,
              "kernel prior: the lag-0 block is not symmetric: C_0[{},{}] = {} but C_0[{},{}] = {}",
              i, j, at(i, j, 0), j, i, at(j, i, 0));
    }
  }
  // First block column: lag k = C_k; first block row: lag -k = C_k^T. Lag 0 symmetrised, so that
  // both agree exactly as create_general requires.
  std::vector<double> column(kernels.begin(), kernels.end());
  std::vector<double> row(kernels.size());
  for (index_t i = 0; i < nm; ++i) {
    for (index_t j = 0; j < nm; ++j) {
      for (index_t k = 0; k < nt; ++k)
        row[(i * nm + j) * nt + k] = at(j, i, k);
      const double symmetric = 0.5 * (at(i, j, 0) + at(j, i, 0));
      column[(i * nm + j) * nt] = symmetric;
      row[(i * nm + j) * nt] = symmetric;
    }
  }
  plan_ = std::make_shared<btt::Plan>(btt::Plan::create_general(column, row, shape, options));
}

void KernelPrior::apply_covariance(std::span<const double> x, std::span<double> y,
                                   index_t nrhs) const {
  check_sizes(x, y, nrhs, "apply_covariance");
  plan_->apply(btt::Op::F, x, y, nrhs);
}

void KernelPrior::apply_precision(std::span<const double>, std::span<double>, index_t) const {
  fail(
      "kernel prior: no closed-form precision Gamma_prior^-1; use the prior as a preconditioner "
      "(map_cg with Preconditioner::Prior, which never applies it) or a diagonal/smoothing prior");
}

void KernelPrior::apply_sqrt(std::span<const double>, std::span<double>, index_t) const {
  fail(
      "kernel prior: no factor S with Gamma_prior = S S^T in closed form; draw samples with a "
      "diagonal or smoothing prior");
}

std::vector<double> KernelPrior::circulant_spectrum(index_t) const {
  fail(
      "kernel prior: no circulant preconditioner (its per-frequency covariance is a dense Nm x Nm "
      "matrix that need not be positive definite); use the prior preconditioner");
}

}  // namespace shiftop::inverse
