// shiftop::inverse::CirculantPreconditioner — an approximate inverse of the Hessian
// H = F* Gamma_noise^{-1} F + Gamma_prior^{-1} (eq. 4 of mixed-precision-block-toeplitz-matvec)
// from the block-circulant embedding of period L = 2*Nt that the FFT matvec runs through
// (fft-block-toeplitz-matvec-multi-gpu, Algorithm 1). With the padding U (Nt -> L samples, zeros
// appended), F = U^T C_F U; replacing U U^T by I and Gamma_prior by the circulant P of the prior's
// spectrum gives A = C_F^T Gamma_noise^{-1} C_F + P^{-1}, which the DFT block-diagonalises:
//   A_w = F^[w]^H Gamma_noise^{-1} F^[w] + P_w^{-1},   w = 0..Nt,
// inverted by Woodbury through an Nd x Nd Cholesky factor per frequency:
//   A_w^{-1} = P_w - P_w F^[w]^H K_w^{-1} F^[w] P_w,   K_w = Gamma_noise + F^[w] P_w F^[w]^H.
// The preconditioner is M^{-1} = U^T A^{-1} U = unpad(IFFT(A_w^{-1} FFT(pad r))). It is symmetric
// positive definite, as PCG needs: A is a real symmetric circulant whose blocks A_w are
// Hermitian positive definite (P_w > 0, and F^H Gamma_noise^{-1} F is positive semidefinite), so
// A^{-1} is SPD, and U has full column rank, so x^T U^T A^{-1} U x > 0 for x != 0.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "shiftop/btt/plan.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {

class CirculantPreconditioner {
 public:
  /// Reads F's kernels back from its plan (F applied to unit impulses, F* too for a general
  /// plan), transforms them and factors K_w for every frequency. The prior must have a circulant
  /// spectrum (Diagonal, TimeSmoothing); otherwise throws shiftop::Error saying why. `threads`:
  /// OpenMP threads (0: OpenMP's default).
  CirculantPreconditioner(btt::Plan& forward, const GaussianNoise& noise, const Prior& prior,
                          int threads = 0);
  ~CirculantPreconditioner();
  CirculantPreconditioner(CirculantPreconditioner&&) noexcept;
  CirculantPreconditioner& operator=(CirculantPreconditioner&&) noexcept;

  /// z = M^{-1} r for one SOTI parameter vector (Nm*Nt values); r and z may be the same span.
  void apply(std::span<const double> r, std::span<double> z);

  /// Host bytes held: F^, the factors, the prior's spectrum and the FFT buffer.
  std::size_t memory_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace shiftop::inverse
