// The CUDA devices this process can see (`shiftop info --devices`, backend selection), their copy
// and read bandwidth and complex GEMM rate, and device arrays for callers without CUDA headers (the
// tool, tests).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace shiftop::cuda {
class DeviceMemory;
}

namespace shiftop::gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::size_t total_memory_bytes = 0;
  std::size_t free_memory_bytes = 0;
  int multiprocessors = 0;
};

/// How many CUDA devices this process sees; 0 (not an error) when there is no driver or no GPU.
int device_count();

/// All visible devices; empty (not an error) when there is no driver or no GPU.
std::vector<DeviceInfo> visible_devices();

/// Device-to-device copy bandwidth of `device`, (bytes read + bytes written) / time, best of
/// `repetitions` cudaMemcpy calls of `bytes` each: the ceiling a memory-bound kernel is held to.
double measure_copy_bandwidth_GBs(std::size_t bytes, int device, int repetitions = 10);

/// Read-only streaming bandwidth of `device`, bytes read / time, best of `repetitions` passes
/// (after one warm-up) of a kernel that reads a buffer of `bytes` with 16-byte loads and writes
/// nothing: the ceiling of a kernel that reads its operand once (use a buffer many times the L2
/// cache, e.g. 1 GiB). A read-only stream beats the copy rate, which counts a read and a write of
/// every byte.
double measure_read_bandwidth_GBs(std::size_t bytes, int device, int repetitions = 10);

/// cuBLAS's square complex GEMM rate on `device` in TFLOP/s: zgemm (FP64) or, with `single`, cgemm
/// (FP32), on n x n matrices large enough to be compute-bound (n = 4096), 8 n^3 flops per call,
/// best of a few calls after a warm-up: the flop ceiling of the phase-3 product of many vectors.
double measure_complex_gemm_TFLOPs(bool single, int device);

/// Waits for all work on `device`.
void synchronize(int device);

/// An array of doubles in device memory of `device`, for callers without CUDA headers (the tool,
/// tests): the library's device memory (backend/cuda/device_memory.cuh) behind a CUDA-free face.
class DeviceArray {
 public:
  DeviceArray(std::size_t count, int device);
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray();
  double* data() const { return data_; }
  std::size_t size() const { return count_; }
  void upload(const double* host);
  void download(double* host) const;

 private:
  std::unique_ptr<cuda::DeviceMemory> memory_;
  double* data_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;
};

}  // namespace shiftop::gpu
