// Built instead of btt/cuda/*.cu when shiftop is configured without CUDA.
#include "btt/engines.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::btt {

std::unique_ptr<Engine> make_cuda_engine(const EngineInputs&) {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

std::size_t cuda_host_bytes(const Shape&, const PlanOptions&, const PrecisionConfig&) {
  return 0;  // no GPU plan can be made; make_cuda_engine says why
}

}  // namespace shiftop::btt
