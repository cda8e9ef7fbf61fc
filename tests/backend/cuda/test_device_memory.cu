// Test builds poison every device workspace (SHIFTOP_POISON_WORKSPACES, core/poison.hpp): a new
// cuda::DeviceMemory (what cuda::allocate returns for the CUDA engine's workspaces) holds NaN in
// every element, read as FP64 and as FP32, already when the constructor returns (the fill on the
// legacy stream is waited for, so it cannot overwrite what a kernel on another stream writes).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "backend/cuda/device_memory.cuh"

namespace shiftop::cuda {
namespace {

TEST(PoisonedDeviceMemory, EveryNewBlockIsNaN) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  ASSERT_TRUE(kPoisonWorkspaces) << "configure the tests with SHIFTOP_POISON_WORKSPACES=ON";
  for (std::size_t count : {std::size_t{3}, std::size_t{1} << 20}) {
    const DeviceMemory memory(count * sizeof(double));
    std::vector<double> host(count, 0.0);
    ASSERT_EQ(cudaMemcpy(host.data(), memory.as<void>(), memory.bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](double v) { return std::isnan(v); }))
        << count << " doubles";
    std::vector<float> single(2 * count, 0.0f);
    ASSERT_EQ(cudaMemcpy(single.data(), memory.as<void>(), memory.bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_TRUE(std::all_of(single.begin(), single.end(), [](float v) { return std::isnan(v); }))
        << count << " doubles seen as floats";
  }
}

}  // namespace
}  // namespace shiftop::cuda
