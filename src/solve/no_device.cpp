// Built instead of solve/cuda/*.cu when shiftop is configured without CUDA: the device methods
// of the noise and the priors (include/shiftop/solve/) and the data-space Hessian's GPU space
// (solve/dense_space.hpp) say why they cannot run.
#include "shiftop/core/error.hpp"
#include "shiftop/solve/noise.hpp"
#include "shiftop/solve/prior.hpp"
#include "solve/dense_space.hpp"

namespace shiftop::solve {
namespace {

[[noreturn]] void no_cuda() {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

}  // namespace

std::unique_ptr<DenseSpace> make_device_dense_space(std::shared_ptr<gpu::Context>, int) {
  no_cuda();
}
void GaussianNoise::apply_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void GaussianNoise::apply_inverse_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void DiagonalPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void TimeSmoothingPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}
void KernelPrior::apply_covariance_device(const double*, double*, index_t, void*) const {
  no_cuda();
}

}  // namespace shiftop::solve
