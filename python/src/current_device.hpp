// The calling thread's current CUDA device, restored on leaving a scope: a GPU context makes its
// device current, and a Python caller's own CUDA work (PyTorch, CuPy) must find its device again.
#pragma once

#ifdef SHIFTOP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace shiftop::python {

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
