// The visible CUDA devices and device arrays (include/shiftop/gpu/devices.hpp).
#include "backend/cuda/check.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::gpu {

int device_count() {
  int count = 0;
  // No driver or no device is a normal situation on a CPU machine, not an error.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

std::vector<DeviceInfo> visible_devices() {
  const int count = device_count();
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

double measure_copy_bandwidth_GBs(std::size_t bytes, int device, int repetitions) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  void *a = nullptr, *b = nullptr;
  SHIFTOP_CUDA_CHECK(cudaMalloc(&a, bytes));
  SHIFTOP_CUDA_CHECK(cudaMalloc(&b, bytes));
  cudaEvent_t start = nullptr, stop = nullptr;
  SHIFTOP_CUDA_CHECK(cudaEventCreate(&start));
  SHIFTOP_CUDA_CHECK(cudaEventCreate(&stop));
  SHIFTOP_CUDA_CHECK(cudaMemset(a, 0, bytes));
  float best = 1e30f;
  for (int k = 0; k <= repetitions; ++k) {  // the first copy warms up
    SHIFTOP_CUDA_CHECK(cudaEventRecord(start));
    SHIFTOP_CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
    SHIFTOP_CUDA_CHECK(cudaEventRecord(stop));
    SHIFTOP_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    SHIFTOP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (k > 0 && ms < best) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return 2.0 * static_cast<double>(bytes) / (1e-3 * best) / 1e9;
}

void synchronize(int device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceArray::DeviceArray(std::size_t count, int device) : count_(count), device_(device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  SHIFTOP_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(double)));
}

DeviceArray::~DeviceArray() {
  cudaSetDevice(device_);
  cudaFree(data_);
}

void DeviceArray::upload(const double* host) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device_));
  SHIFTOP_CUDA_CHECK(cudaMemcpy(data_, host, count_ * sizeof(double), cudaMemcpyHostToDevice));
}

void DeviceArray::download(double* host) const {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device_));
  SHIFTOP_CUDA_CHECK(cudaMemcpy(host, data_, count_ * sizeof(double), cudaMemcpyDeviceToHost));
}

}  // namespace shiftop::gpu
