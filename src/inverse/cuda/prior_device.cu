// The priors' apply_covariance_device (include/shiftop/inverse/prior.hpp): the diagonal prior as a
// per-block scaling, the time-smoothing prior as T's plan on the Nm*nrhs series followed by the
// variances, the kernel prior as its block Toeplitz plan, all on the caller's stream.
#include <string>

#include "inverse/cuda/block_scaling.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/inverse/prior.hpp"

namespace shiftop::inverse {
namespace {

void require_pointers(const double* x, double* y, index_t nrhs, const std::string_view prior) {
  const std::string what = std::string(prior) + " prior: apply_covariance_device";
  if (x == nullptr || y == nullptr) throw Error(what + ": null device pointer");
  if (nrhs < 1) throw Error(what + ": nrhs " + std::to_string(nrhs) + " is not positive");
}

}  // namespace

void DiagonalPrior::apply_covariance_device(const double* x, double* y, index_t nrhs,
                                            void* stream) const {
  require_pointers(x, y, nrhs, name());
  cuda::scale_blocks(cuda::device_copy(device_data_, variances_), false, x, y, nrhs, blocks(), nt_,
                     static_cast<cudaStream_t>(stream));
}

void TimeSmoothingPrior::apply_covariance_device(const double* x, double* y, index_t nrhs,
                                                 void* stream) const {
  require_pointers(x, y, nrhs, name());
  // As on the host: T on each of the nrhs*Nm series (contiguous in SOTI), then the variances.
  time_plan_->apply_device(btt::Op::F, x, y, nrhs * blocks(), stream);
  cuda::scale_blocks(cuda::device_copy(device_data_, variances_), false, y, y, nrhs, blocks(), nt_,
                     static_cast<cudaStream_t>(stream));
}

void KernelPrior::apply_covariance_device(const double* x, double* y, index_t nrhs,
                                          void* stream) const {
  require_pointers(x, y, nrhs, name());
  plan_->apply_device(btt::Op::F, x, y, nrhs, stream);
}

}  // namespace shiftop::inverse
