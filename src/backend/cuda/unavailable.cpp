// Built instead of backend/cuda/*.cu when shiftop is configured without CUDA.
#include "shiftop/core/error.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::gpu {

std::shared_ptr<Context> Context::create(int) {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF): no GPU context");
}

int device_count() {
  return 0;
}

}  // namespace shiftop::gpu
