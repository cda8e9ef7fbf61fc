// What the SVD and GSVD bindings share: NumPy arrays that own a result's buffer, and the caller's
// current CUDA device restored after a GPU call (which runs on the library's shared context of
// its device, gpu::shared_context).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <array>
#include <cstddef>
#include <utility>
#include <vector>

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

}  // namespace shiftop::python
