// The visible CUDA devices, their bandwidth and GEMM rate, and device arrays
// (include/shiftop/gpu/devices.hpp).
#include <cuComplex.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>

#include "backend/cuda/check.hpp"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/event_timer.cuh"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::gpu {
namespace {

constexpr int kReadThreads = 256;
constexpr int kReadUnroll = 4;  // independent 16-byte loads in flight per thread and iteration

// Reads data[0, count) once, grid-stride, kReadUnroll independent 16-byte loads per iteration.
// Each thread combines the words it read (exclusive or) and writes only if the result equals
// `sentinel`, which the caller picks so that it cannot occur (every byte of the buffer is 0x01, so
// the result is 0 or 0x01010101; the sentinel is 1): the compiler cannot know that, so every load
// stays, and nothing is written. (Not zeros: a buffer of zeros might be compressed.)
__global__ void __launch_bounds__(kReadThreads)
    read_stream(const uint4* __restrict__ data, std::size_t count, unsigned sentinel,
                unsigned* __restrict__ sink) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned combined = 0;
  for (; i + (kReadUnroll - 1) * stride < count; i += kReadUnroll * stride) {
    uint4 v[kReadUnroll];
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u)
      v[u] = __ldcs(data + i + u * stride);  // streaming: no reuse, evict first
#pragma unroll
    for (int u = 0; u < kReadUnroll; ++u)
      combined ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldcs(data + i);
    combined ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (combined == sentinel) sink[blockIdx.x] = combined;
}

// Best milliseconds of `repetitions` calls of launch() on the current device, after one warm-up.
template <typename Launch>
float best_ms(int repetitions, Launch&& launch) {
  const cuda::EventTimer timer(2);
  float best = 1e30f;
  for (int k = 0; k <= repetitions; ++k) {  // the first call warms up
    const float ms = timer.time_ms(nullptr, launch);
    if (k > 0 && ms < best) best = ms;
  }
  return best;
}

}  // namespace

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
  const cuda::DeviceMemory a(bytes), b(bytes);
  SHIFTOP_CUDA_CHECK(cudaMemset(a.as<void>(), 0, bytes));
  const float best = best_ms(repetitions, [&] {
    SHIFTOP_CUDA_CHECK(cudaMemcpy(b.as<void>(), a.as<void>(), bytes, cudaMemcpyDeviceToDevice));
  });
  return 2.0 * static_cast<double>(bytes) / (1e-3 * best) / 1e9;
}

double measure_read_bandwidth_GBs(std::size_t bytes, int device, int repetitions) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t count = std::max<std::size_t>(bytes / sizeof(uint4), 1);
  int multiprocessors = 0;
  SHIFTOP_CUDA_CHECK(
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  // Full occupancy: 2048 resident threads per multiprocessor on sm_80 and later.
  const int blocks = multiprocessors * (2048 / kReadThreads);
  const cuda::DeviceArray<uint4> data(count);
  const cuda::DeviceArray<unsigned> sink(static_cast<std::size_t>(blocks));
  SHIFTOP_CUDA_CHECK(cudaMemset(data.get(), 0x01, data.bytes()));  // never combines to 1
  const float best = best_ms(repetitions, [&] {
    read_stream<<<blocks, kReadThreads>>>(data.get(), count, 1u, sink.get());
    SHIFTOP_CUDA_CHECK(cudaGetLastError());
  });
  return static_cast<double>(count * sizeof(uint4)) / (1e-3 * best) / 1e9;
}

double measure_complex_gemm_TFLOPs(bool single, int device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  constexpr int n = 4096;  // 8 n^3 = 5.5e11 flops a call, n^2 complex values per matrix
  const std::size_t element = single ? sizeof(cuComplex) : sizeof(cuDoubleComplex);
  const std::size_t matrix = std::size_t{n} * n * element;
  const cuda::DeviceMemory a(matrix), b(matrix), c(matrix);
  // Bytes 0x3f: every FP32 word 0.75, every FP64 word 4.8e-4; finite sums, nonzero operands.
  SHIFTOP_CUDA_CHECK(cudaMemset(a.as<void>(), 0x3f, matrix));
  SHIFTOP_CUDA_CHECK(cudaMemset(b.as<void>(), 0x3f, matrix));
  cublasHandle_t handle = nullptr;
  SHIFTOP_CUDA_CHECK(cublasCreate(&handle));  // default math mode, as the plans' handles
  const float best = best_ms(3, [&] {
    if (single) {
      const cuComplex one{1, 0}, zero{0, 0};
      SHIFTOP_CUDA_CHECK(cublasCgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                     a.as<const cuComplex>(), n, b.as<const cuComplex>(), n, &zero,
                                     c.as<cuComplex>(), n));
    } else {
      const cuDoubleComplex one{1, 0}, zero{0, 0};
      SHIFTOP_CUDA_CHECK(cublasZgemm(
          handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.as<const cuDoubleComplex>(), n,
          b.as<const cuDoubleComplex>(), n, &zero, c.as<cuDoubleComplex>(), n));
    }
  });
  cublasDestroy(handle);
  return 8.0 * double(n) * double(n) * double(n) / (1e-3 * best) / 1e12;
}

void synchronize(int device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceArray::DeviceArray(std::size_t count, int device) : count_(count), device_(device) {
  SHIFTOP_CUDA_CHECK(cudaSetDevice(device));
  memory_ = std::make_unique<cuda::DeviceMemory>(count * sizeof(double));
  data_ = memory_->as<double>();
}

DeviceArray::~DeviceArray() {
  cudaSetDevice(device_);  // freed on its own device
  memory_.reset();
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
