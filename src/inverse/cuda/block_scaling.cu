// Per-block scaling of SOTI vectors on the GPU and the device copies of per-block values
// (block_scaling.cuh). Compiled by nvcc: messages are built without fmt.
#include <algorithm>

#include "backend/cuda/check.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/runtime.cuh"
#include "inverse/cuda/block_scaling.cuh"

namespace shiftop::inverse::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void scale_blocks_kernel(const double* __restrict__ s, bool invert, const double* x,
                                    double* y, index_t count, index_t blocks, index_t nt) {
  const index_t stride = static_cast<index_t>(gridDim.x) * blockDim.x;
  for (index_t k = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += stride) {
    const double v = s[(k / nt) % blocks];
    y[k] = invert ? x[k] / v : v * x[k];
  }
}

struct DeviceValues {
  int device = -1;
  shiftop::cuda::DeviceMemory memory;
};

}  // namespace

void scale_blocks(const double* s, bool invert, const double* x, double* y, index_t nrhs,
                  index_t blocks, index_t nt, cudaStream_t stream) {
  const index_t count = nrhs * blocks * nt;
  if (count == 0) return;
  const auto grid = static_cast<unsigned>(
      std::clamp<index_t>((count + kThreads - 1) / kThreads, 1, index_t{1} << 16));
  scale_blocks_kernel<<<grid, kThreads, 0, stream>>>(s, invert, x, y, count, blocks, nt);
  SHIFTOP_CHECK_LAUNCH();
}

const double* device_copy(std::shared_ptr<void>& cache, const std::vector<double>& values) {
  int device = 0;
  SHIFTOP_CUDA_CHECK(cudaGetDevice(&device));
  auto* held = static_cast<DeviceValues*>(cache.get());
  if (held == nullptr || held->device != device) {
    auto fresh = std::make_shared<DeviceValues>();
    fresh->device = device;
    fresh->memory = shiftop::cuda::DeviceMemory(values.size() * sizeof(double));
    SHIFTOP_CUDA_CHECK(cudaMemcpy(fresh->memory.as<double>(), values.data(),
                                  values.size() * sizeof(double), cudaMemcpyHostToDevice));
    held = fresh.get();
    cache = std::move(fresh);
  }
  return held->memory.as<double>();
}

}  // namespace shiftop::inverse::cuda
