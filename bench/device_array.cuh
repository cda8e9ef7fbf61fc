// A device array for the benchmarks: cudaMalloc'd, move-only, freed with its scope. (The library's
// cuda::DeviceMemory is counted by a gpu::Context; the peers the benchmarks time have none.)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "backend/cuda/check.hpp"

namespace shiftop::bench {

template <class V>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : count_(count) {
    if (count > 0) SHIFTOP_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(V)));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept { *this = std::move(other); }
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceArray() { cudaFree(data_); }
  V* get() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(V); }

 private:
  V* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace shiftop::bench
