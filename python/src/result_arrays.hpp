// What the SVD and GSVD bindings share: NumPy arrays that own a result's buffer, and the GPU
// context of a device held for a call (one per device, made on first use and kept) with the
// caller's current CUDA device restored afterwards.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <array>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "shiftop/gpu/context.hpp"

#ifdef SHIFTOP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace shiftop::python {

/// A new NumPy array of `shape` that owns `values` (moved, not copied).
template <class T, std::size_t N>
nanobind::ndarray<nanobind::numpy, T> owned_array(std::vector<T>&& values,
                                                  const std::array<std::size_t, N>& shape) {
  auto* owner = new std::vector<T>(std::move(values));
  nanobind::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nanobind::ndarray<nanobind::numpy, T>(owner->data(), N, shape.data(), free);
}

#ifdef SHIFTOP_HAVE_CUDA
// Restores the calling thread's current CUDA device on leaving the scope; where there is none to
// restore (no GPU), the GPU run itself says why it cannot run.
class CurrentDevice {
 public:
  CurrentDevice() : saved_(cudaGetDevice(&device_) == cudaSuccess) {}
  ~CurrentDevice() {
    if (saved_) (void)cudaSetDevice(device_);
  }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int device_ = 0;
  bool saved_ = false;
};
#else
// Without CUDA there is no current device (and no GPU run).
struct [[maybe_unused]] CurrentDevice {};
#endif

// The context of GPU `device` for the calls below, held by the calling thread while this lives.
// One per device, made on first use and kept: a context (a stream, a cuBLAS handle and its 32 MB
// workspace) costs more to make than a small batch costs to solve. A context is driven by one host
// thread at a time, hence the device's mutex; take it with the GIL released, or a thread waiting
// for it would keep the GIL from the holder. The contexts are never destroyed: at exit, static
// destructors may run after the CUDA runtime has shut down.
class HeldContext {
 public:
  explicit HeldContext(int device) : slot_(slot(device)), lock_(slot_.mutex) {
    if (!slot_.context) slot_.context = gpu::Context::create(device);
  }
  const std::shared_ptr<gpu::Context>& get() const { return slot_.context; }

 private:
  struct Slot {
    std::mutex mutex;
    std::shared_ptr<gpu::Context> context;
  };
  struct Slots {
    std::mutex mutex;
    std::map<int, Slot> by_device;  // a map's elements stay where they are
  };
  static Slot& slot(int device) {
    static auto* const slots = new Slots();  // never freed: see above
    const std::lock_guard lock(slots->mutex);
    return slots->by_device[device];
  }

  Slot& slot_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace shiftop::python
