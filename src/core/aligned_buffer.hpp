// Host memory aligned to 64 bytes (one cache line, one AVX-512 register), never value-initialised:
// plan workspaces are allocated once at plan creation and written before they are read.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#include "core/error.hpp"

namespace shiftop {

template <typename T>
class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    const std::size_t bytes = (count * sizeof(T) + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, bytes);
    require(p != nullptr, "out of host memory: could not allocate {} bytes", bytes);
    data_.reset(static_cast<T*>(p));
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

  /// The same storage seen as another trivially copyable type (an FP32 view of an FP64 buffer).
  template <typename U>
  U* as() {
    return reinterpret_cast<U*>(data_.get());
  }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

/// Rounds `n` up to a multiple of `multiple`.
constexpr std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace shiftop
