// shiftop::inverse::Prior and its three concrete forms — the Gaussian prior N(m_prior,
// Gamma_prior) of the Bayesian inverse problem (mixed-precision-block-toeplitz-matvec, section
// 2.2, eqs. 3-4). Gamma_prior is shift-invariant in time (block Toeplitz over Nm parameter
// blocks), so that the circulant approximation of the Hessian (circulant_preconditioner.hpp)
// sees one matrix per frequency. Vectors are SOTI [rhs][Nm][Nt].
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::inverse {

/// A Gaussian prior covariance Gamma_prior over Nm parameter blocks of Nt time steps.
/// Calls on one prior must not overlap in time (the priors that run a btt::Plan use its
/// workspaces).
class Prior {
 public:
  virtual ~Prior() = default;

  /// Number of parameter blocks Nm.
  virtual index_t blocks() const = 0;
  virtual index_t nt() const = 0;
  /// "diagonal", "smoothing" or "kernels" (the CLI's --prior words).
  virtual std::string_view name() const = 0;

  /// y = Gamma_prior x for `nrhs` SOTI vectors [rhs][Nm][Nt]; x and y must not overlap.
  virtual void apply_covariance(std::span<const double> x, std::span<double> y,
                                index_t nrhs = 1) const = 0;
  /// apply_covariance on device memory: x and y are device pointers, ordered on `stream` (a
  /// cudaStream_t). Defined for each prior in src/inverse/cuda/; a build without CUDA throws
  /// shiftop::Error.
  virtual void apply_covariance_device(const double* x, double* y, index_t nrhs,
                                       void* stream) const = 0;

  /// Whether apply_precision is available (in closed form, without solving with Gamma_prior).
  virtual bool has_precision() const = 0;
  /// y = Gamma_prior^{-1} x; throws shiftop::Error when !has_precision(), naming what to use
  /// instead. x and y must not overlap.
  virtual void apply_precision(std::span<const double> x, std::span<double> y,
                               index_t nrhs = 1) const = 0;

  /// Whether apply_sqrt is available.
  virtual bool has_sqrt() const = 0;
  /// y = S x with S a factor of the covariance, Gamma_prior = S S^T (for samples m = S xi);
  /// throws shiftop::Error when !has_sqrt(). x and y must not overlap.
  virtual void apply_sqrt(std::span<const double> x, std::span<double> y,
                          index_t nrhs = 1) const = 0;

  /// Whether circulant_spectrum is available: Gamma_prior does not couple blocks, and its
  /// circulant embedding has a positive spectrum (after clamping, for TimeSmoothingPrior).
  virtual bool has_circulant_spectrum() const = 0;
  /// The prior's circulant approximation of period `length` (even, at least 2*Nt): the variances
  /// P_w[j] > 0 of block j at frequency w = 0..length/2 of the real FFT, as a [w][j] array of
  /// (length/2+1)*Nm values. Throws shiftop::Error when !has_circulant_spectrum(), saying why.
  virtual std::vector<double> circulant_spectrum(index_t length) const = 0;

 protected:
  /// Throws shiftop::Error unless x and y hold nrhs*Nm*Nt values each; `what` names the method.
  void check_sizes(std::span<const double> x, std::span<double> y, index_t nrhs,
                   std::string_view what) const;

  /// Device copies of what apply_covariance_device reads (variances), made on first device use
  /// by the CUDA definitions (src/inverse/cuda/); never set in a build without CUDA.
  mutable std::shared_ptr<void> device_data_;
};

/// Gamma_prior = diag(variance_j) ⊗ I_Nt: independent values, one variance per block.
class DiagonalPrior final : public Prior {
 public:
  /// `variances`: Nm values, positive and finite.
  DiagonalPrior(std::vector<double> variances, index_t nt);

  index_t blocks() const override { return static_cast<index_t>(variances_.size()); }
  index_t nt() const override { return nt_; }
  std::string_view name() const override { return "diagonal"; }
  const std::vector<double>& variances() const { return variances_; }

  void apply_covariance(std::span<const double> x, std::span<double> y,
                        index_t nrhs = 1) const override;
  void apply_covariance_device(const double* x, double* y, index_t nrhs,
                               void* stream) const override;
  bool has_precision() const override { return true; }
  void apply_precision(std::span<const double> x, std::span<double> y,
                       index_t nrhs = 1) const override;
  bool has_sqrt() const override { return true; }
  /// S = diag(sqrt(variance_j)) ⊗ I_Nt.
  void apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const override;
  bool has_circulant_spectrum() const override { return true; }
  /// P_w[j] = variance_j at every frequency.
  std::vector<double> circulant_spectrum(index_t length) const override;

 private:
  std::vector<double> variances_;
  index_t nt_ = 0;
};

/// Gamma_prior = diag(variance_j) ⊗ T with T_st = rho^|s-t|, rho = exp(-1/correlation_steps):
/// each block is a stationary Ornstein-Uhlenbeck / AR(1) series in time. T^{-1} is tridiagonal
/// in closed form and the AR(1) recursion x_0 = e_0, x_t = rho x_{t-1} + sqrt(1-rho^2) e_t is a
/// lower-triangular factor L with T = L L^T; T itself is applied as a symmetric Toeplitz matrix
/// by a general btt::Plan of shape (1, 1, Nt) on Nm*nrhs series.
class TimeSmoothingPrior final : public Prior {
 public:
  /// `variances`: Nm values, positive and finite; `correlation_steps` > 0 and finite, in time
  /// steps. `options` build T's plan (a CUDA plan makes apply_covariance_device run on the GPU).
  TimeSmoothingPrior(std::vector<double> variances, double correlation_steps, index_t nt,
                     const btt::PlanOptions& options = {});

  index_t blocks() const override { return static_cast<index_t>(variances_.size()); }
  index_t nt() const override { return nt_; }
  std::string_view name() const override { return "smoothing"; }
  const std::vector<double>& variances() const { return variances_; }
  double correlation_steps() const { return correlation_steps_; }
  /// rho = exp(-1/correlation_steps), the correlation of neighbouring time steps.
  double rho() const { return rho_; }
  /// The plan of T (shape (1, 1, Nt), general Toeplitz, symmetric).
  const std::shared_ptr<btt::Plan>& time_plan() const { return time_plan_; }

  void apply_covariance(std::span<const double> x, std::span<double> y,
                        index_t nrhs = 1) const override;
  void apply_covariance_device(const double* x, double* y, index_t nrhs,
                               void* stream) const override;
  bool has_precision() const override { return true; }
  /// diag(1/variance_j) ⊗ T^{-1}, T^{-1} = tridiag(-rho, [1, 1+rho^2, ..., 1+rho^2, 1], -rho) /
  /// (1-rho^2).
  void apply_precision(std::span<const double> x, std::span<double> y,
                       index_t nrhs = 1) const override;
  bool has_sqrt() const override { return true; }
  /// S = diag(sqrt(variance_j)) ⊗ L, L the AR(1) recursion (lower triangular, T = L L^T).
  void apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const override;
  bool has_circulant_spectrum() const override { return true; }
  /// variance_j times the real FFT of T's symmetric circulant embedding c_k = rho^min(k,
  /// length-k) (Strang's circulant), clamped below at (1-rho)/(1+rho): the minimum of T's symbol
  /// (1-rho^2)/(1-2 rho cos(theta)+rho^2), which bounds T's eigenvalues from below, whereas the
  /// embedding's spectrum can dip under it (even below 0) when rho^(length/2) is not small.
  std::vector<double> circulant_spectrum(index_t length) const override;

 private:
  std::vector<double> variances_;
  double correlation_steps_ = 0;
  double rho_ = 0;
  index_t nt_ = 0;
  std::shared_ptr<btt::Plan> time_plan_;
};

/// A general symmetric block Toeplitz covariance given by its first block column: the lag-k
/// block (k = 0..Nt-1) is kernels[:, :, k] (Nm x Nm), the lag -k block its transpose. Applied
/// by a general btt::Plan. Gamma_prior must be positive definite; shiftop checks that the lag-0
/// block is symmetric, not definiteness (a solver that meets negative curvature says so).
class KernelPrior final : public Prior {
 public:
  /// `kernels`: double[Nm][Nm][Nt] (SOTI), kernels[i][j][k] = (C_k)_ij, shape {Nm, Nm, Nt}.
  KernelPrior(std::span<const double> kernels, const Shape& shape,
              const btt::PlanOptions& options = {});

  index_t blocks() const override { return shape_.nm; }
  index_t nt() const override { return shape_.nt; }
  std::string_view name() const override { return "kernels"; }
  const Shape& shape() const { return shape_; }
  /// The plan of Gamma_prior (general block Toeplitz, shape {Nm, Nm, Nt}).
  const std::shared_ptr<btt::Plan>& plan() const { return plan_; }

  void apply_covariance(std::span<const double> x, std::span<double> y,
                        index_t nrhs = 1) const override;
  void apply_covariance_device(const double* x, double* y, index_t nrhs,
                               void* stream) const override;
  /// false: the inverse of a general block Toeplitz matrix has no closed form.
  bool has_precision() const override { return false; }
  void apply_precision(std::span<const double> x, std::span<double> y,
                       index_t nrhs = 1) const override;
  /// false: no factor in closed form.
  bool has_sqrt() const override { return false; }
  void apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const override;
  /// false: its per-frequency covariance is a dense Nm x Nm matrix, which need not be positive
  /// definite.
  bool has_circulant_spectrum() const override { return false; }
  std::vector<double> circulant_spectrum(index_t length) const override;

 private:
  Shape shape_;
  std::shared_ptr<btt::Plan> plan_;
};

}  // namespace shiftop::inverse
