// Owned device memory, the one RAII type of it (the library, the benchmarks and the tests): a block
// (cudaMalloc/cudaFree) viewed as any element type, as the plan's workspaces hold FP32 or FP64
// data depending on the precision configuration, and DeviceArray<T>, a count of one type. Memory
// allocated through a gpu::Context (backend/cuda/context.cuh) is counted in its
// allocated_bytes(). Test builds fill it with NaN (core/poison.hpp).
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <utility>

#include "backend/cuda/check.hpp"
#include "core/poison.hpp"

namespace shiftop::cuda {

class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes, std::atomic<std::size_t>* account = nullptr)
      : bytes_(bytes) {
    if (bytes_ == 0) return;
    SHIFTOP_CUDA_CHECK(cudaMalloc(&data_, bytes_));
    if constexpr (kPoisonWorkspaces) {  // on the legacy stream, so wait for it
      SHIFTOP_CUDA_CHECK(cudaMemset(data_, kPoisonByte, bytes_));
      SHIFTOP_CUDA_CHECK(cudaDeviceSynchronize());
    }
    account_ = account;
    if (account_ != nullptr) *account_ += bytes_;
  }
  DeviceMemory(DeviceMemory&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        account_(std::exchange(other.account_, nullptr)) {}
  DeviceMemory& operator=(DeviceMemory&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    std::swap(account_, other.account_);
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (data_ == nullptr) return;
    cudaFree(data_);
    if (account_ != nullptr) *account_ -= bytes_;
  }

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::atomic<std::size_t>* account_ = nullptr;
};

/// `count` elements of T in device memory of the current device (none for 0).
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : memory_(count * sizeof(T)), count_(count) {}
  DeviceArray(DeviceArray&& other) noexcept
      : memory_(std::move(other.memory_)), count_(std::exchange(other.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(memory_, other.memory_);
    std::swap(count_, other.count_);
    return *this;
  }
  T* get() const { return memory_.as<T>(); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  DeviceMemory memory_;
  std::size_t count_ = 0;
};

}  // namespace shiftop::cuda
