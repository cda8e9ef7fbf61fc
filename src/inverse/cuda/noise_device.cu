// GaussianNoise's device methods (include/shiftop/inverse/noise.hpp): Gamma_noise =
// diag(variance_i) ⊗ I_Nt and its inverse as a per-block scaling on the GPU.
#include <string>

#include "inverse/cuda/block_scaling.cuh"
#include "shiftop/core/error_type.hpp"
#include "shiftop/inverse/noise.hpp"

namespace shiftop::inverse {
namespace {

void require_pointers(const double* x, double* y, index_t nrhs, const char* what) {
  if (x == nullptr || y == nullptr) throw Error(std::string(what) + ": null device pointer");
  if (nrhs < 1)
    throw Error(std::string(what) + ": nrhs " + std::to_string(nrhs) + " is not positive");
}

}  // namespace

void GaussianNoise::apply_device(const double* x, double* y, index_t nrhs, void* stream) const {
  require_pointers(x, y, nrhs, "GaussianNoise::apply_device");
  cuda::scale_blocks(cuda::device_copy(device_data_, variances_), false, x, y, nrhs, blocks(), nt_,
                     static_cast<cudaStream_t>(stream));
}

void GaussianNoise::apply_inverse_device(const double* x, double* y, index_t nrhs,
                                         void* stream) const {
  require_pointers(x, y, nrhs, "GaussianNoise::apply_inverse_device");
  cuda::scale_blocks(cuda::device_copy(device_data_, variances_), true, x, y, nrhs, blocks(), nt_,
                     static_cast<cudaStream_t>(stream));
}

}  // namespace shiftop::inverse
