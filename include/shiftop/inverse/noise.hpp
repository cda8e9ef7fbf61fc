// shiftop::inverse::GaussianNoise — the noise model of the Bayesian inverse problem
// (mixed-precision-block-toeplitz-matvec, section 2.2, eqs. 3-4): d = F m + e with
// e ~ N(0, Gamma_noise), Gamma_noise = diag(variance_i) (one variance per sensor) ⊗ I_Nt, i.e.
// independent in time with a constant variance per sensor.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::inverse {

class GaussianNoise {
 public:
  /// Gamma_noise = diag(variances) ⊗ I_nt: `variances` holds one value per sensor (Nd values,
  /// each positive and finite). Throws shiftop::Error naming the first bad value.
  GaussianNoise(std::vector<double> variances, index_t nt);

  /// Number of sensors Nd (blocks of a data vector).
  index_t blocks() const { return static_cast<index_t>(variances_.size()); }
  index_t nt() const { return nt_; }
  /// One variance per sensor.
  const std::vector<double>& variances() const { return variances_; }

  /// y = Gamma_noise x for `nrhs` SOTI data vectors [rhs][Nd][Nt]; y may be x.
  void apply(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const;
  /// y = Gamma_noise^{-1} x; y may be x.
  void apply_inverse(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const;
  /// y = Gamma_noise^{1/2} x (the symmetric square root, for samples e = Gamma_noise^{1/2} xi);
  /// y may be x.
  void apply_sqrt(std::span<const double> x, std::span<double> y, index_t nrhs = 1) const;

  /// apply on device memory: x and y are device pointers, ordered on `stream` (a cudaStream_t).
  /// A build without CUDA throws shiftop::Error.
  void apply_device(const double* x, double* y, index_t nrhs, void* stream) const;
  /// apply_inverse on device memory, as apply_device.
  void apply_inverse_device(const double* x, double* y, index_t nrhs, void* stream) const;

 private:
  std::vector<double> variances_;
  index_t nt_ = 0;
  /// Device copy of the variances, made on first device use by the CUDA definitions
  /// (src/inverse/cuda/); never set in a build without CUDA. Like a plan, a noise object must not
  /// be used by two threads at once on the device.
  mutable std::shared_ptr<void> device_data_;
};

}  // namespace shiftop::inverse
