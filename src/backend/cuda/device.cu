#include "backend/cuda/check.hpp"
#include "backend/cuda/device.hpp"

namespace shiftop::cuda {

std::vector<DeviceInfo> visible_devices() {
  int count = 0;
  // No driver or no device is a normal situation on a CPU machine, not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  std::vector<DeviceInfo> devices;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    SHIFTOP_CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    DeviceInfo info;
    info.index = d;
    info.name = prop.name;
    info.compute_capability_major = prop.major;
    info.compute_capability_minor = prop.minor;
    info.total_memory_bytes = prop.totalGlobalMem;
    info.multiprocessors = prop.multiProcessorCount;
    SHIFTOP_CUDA_CHECK(cudaSetDevice(d));
    SHIFTOP_CUDA_CHECK(cudaMemGetInfo(&info.free_memory_bytes, &info.total_memory_bytes));
    devices.push_back(info);
  }
  return devices;
}

}  // namespace shiftop::cuda
