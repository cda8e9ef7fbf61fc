// Built instead of btt/cuda/pair_device.cu when shiftop is configured without CUDA.
#include "btt/pair_device.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::btt {

std::unique_ptr<PairDevice> make_pair_device(const gpu::Context*, int, std::size_t, std::size_t,
                                             std::size_t) {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

}  // namespace shiftop::btt
