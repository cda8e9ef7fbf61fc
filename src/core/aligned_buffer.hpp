// Host memory aligned to 64 bytes (one cache line, one AVX-512 register), never value-initialised:
// plan workspaces are allocated once at plan creation and written before they are read (test
// builds fill them with NaN to check that: core/poison.hpp). Large buffers (F^ above all, which
// every apply streams) are aligned to 2 MiB and asked to be backed by transparent huge pages: a
// 4 KiB-page stream takes a TLB miss every 64 cache lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include <sys/mman.h>

#include "core/poison.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop {

template <typename T>
class AlignedBuffer {
 public:
  static constexpr std::size_t kAlignment = 64;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kHugeThreshold = std::size_t{8} << 20;

  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    const std::size_t alignment = count * sizeof(T) >= kHugeThreshold ? kHugePage : kAlignment;
    const std::size_t bytes = (count * sizeof(T) + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, bytes);
    require(p != nullptr, "out of host memory: could not allocate {} bytes", bytes);
    if (alignment == kHugePage) (void)madvise(p, bytes, MADV_HUGEPAGE);  // a hint; may be refused
    if constexpr (kPoisonWorkspaces) poison(static_cast<unsigned char*>(p), bytes, alignment);
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
  // Large buffers are filled in a static split over the threads, as their users stream them (F^
  // by frequency, the bandwidth probe by index), so that each page is first touched by the thread
  // that reads it and stays on its NUMA node.
  static void poison(unsigned char* p, std::size_t bytes, std::size_t page) {
    if (page != kHugePage) {
      std::memset(p, kPoisonByte, bytes);
      return;
    }
    const auto pages = static_cast<std::int64_t>(bytes / page);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < pages; ++k)
      std::memset(p + static_cast<std::size_t>(k) * page, kPoisonByte, page);
  }

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
