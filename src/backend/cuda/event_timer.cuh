// GPU time from CUDA events: marks recorded on a stream and the milliseconds between two of them,
// once the later one has completed. The one way shiftop times device work: a plan's phase times
// (btt/cuda/apply.cu), the tuning of the btt and circ engines, the bandwidth and GEMM ceilings
// (backend/cuda/devices.cu) and the GPU benchmarks.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "backend/cuda/check.hpp"

namespace shiftop::cuda {

/// `marks` CUDA events with timing, created on the current device and destroyed together.
class EventTimer {
 public:
  EventTimer() = default;  // no events: assign one made on the right device
  explicit EventTimer(std::size_t marks) : events_(marks, nullptr) {
    try {
      for (cudaEvent_t& event : events_)
        SHIFTOP_CUDA_CHECK(cudaEventCreate(&event));
    } catch (...) {
      destroy();
      throw;
    }
  }
  EventTimer(EventTimer&& other) noexcept : events_(std::exchange(other.events_, {})) {}
  EventTimer& operator=(EventTimer&& other) noexcept {
    std::swap(events_, other.events_);
    return *this;
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer() { destroy(); }

  /// Records mark `m` on `stream` (nullptr: the legacy default stream).
  void record(std::size_t m, cudaStream_t stream) const {
    SHIFTOP_CUDA_CHECK(cudaEventRecord(events_[m], stream));
  }
  /// Waits on the host until mark `m` has completed.
  void synchronize(std::size_t m) const { SHIFTOP_CUDA_CHECK(cudaEventSynchronize(events_[m])); }
  /// Milliseconds from mark `from` to mark `to`, both completed.
  float elapsed_ms(std::size_t from, std::size_t to) const {
    float ms = 0;
    SHIFTOP_CUDA_CHECK(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return ms;
  }
  /// Milliseconds of the work `work()` queues on `stream`: marks `from` and `to` recorded around
  /// it, waited for.
  template <typename Work>
  float time_ms(cudaStream_t stream, Work&& work, std::size_t from = 0, std::size_t to = 1) const {
    record(from, stream);
    work();
    record(to, stream);
    synchronize(to);
    return elapsed_ms(from, to);
  }

 private:
  void destroy() noexcept {
    for (cudaEvent_t event : events_)
      if (event != nullptr) cudaEventDestroy(event);
    events_.clear();
  }

  std::vector<cudaEvent_t> events_;
};

}  // namespace shiftop::cuda
