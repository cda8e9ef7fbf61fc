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
      .timed = {.backend = Backend::Cuda,
                .planning = Planning::Estimate,
                .gpu_engine = {.profile = true}},
      .unavailable = [] { return std::string(gpu::device_count() == 0 ? "no CUDA device" : ""); },
      .fp64_scale = 10.0,
      // The cases' slacks over eq. (6) are about 4 times the CPU's largest error/bound. The GPU
      // rounds in the same phases with its own FFTs and summation order, yet its printed ratios
      // (H100, 2026-11-23: 0.067-0.60 for EveryPrecision) equal the CPU's to the digits shown, so
      // it gets the CPU's slack: a fourfold accuracy loss fails.
      .precision_slack = 1.0};
}

SHIFTOP_PLAN_TESTS(Cuda, cuda());

}  // namespace shiftop::btt::plan_test
