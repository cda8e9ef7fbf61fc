// The operator tests of plan_test.hpp on the CUDA plan (ctest label `gpu`), against the CPU plan in
// FP64: the FP64 tolerances are 10 times the CPU's (1e-12 for every op). They skip when no CUDA
// device is visible. What only the CUDA plan has (forced phase-3 and FFT implementations, FFT
// lengths, measured choices, device pointers, graphs, profiling, device indices) is in
// test_btt_cuda.cpp.
#include "btt/plan_test.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::btt::plan_test {

BackendUnderTest cuda() {
  return {
      .name = "cuda",
      .options = {.backend = Backend::Cuda, .planning = Planning::Estimate},
      .timed = {.backend = Backend::Cuda, .planning = Planning::Estimate, .gpu = {.profile = true}},
      .unavailable = [] { return std::string(gpu::device_count() == 0 ? "no CUDA device" : ""); },
      .fp64_scale = 10.0,
      // The cases' slacks over eq. (6) are about 4 times the CPU's largest error/bound. The GPU
      // rounds in the same phases but with its own FFTs and cuBLAS's summation order: twice the
      // CPU's slack, which still fails a tenfold loss. The tests print each case's largest
      // error/bound, the numbers to check this factor against.
      .precision_slack = 2.0};
}

SHIFTOP_PLAN_TESTS(Cuda, cuda());

}  // namespace shiftop::btt::plan_test
