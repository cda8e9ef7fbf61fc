// The operator tests of plan_test.hpp on the CPU plan, against the explicit dense block Toeplitz
// product. What only the CPU has (threads, its reported choices, the GPU-only calls it refuses)
// is in test_btt_cpu.cpp.
#include "btt/plan_test.hpp"

namespace shiftop::btt::plan_test {

BackendUnderTest cpu() {
  return {.name = "cpu",
          .options = {.backend = Backend::Cpu, .planning = Planning::Estimate},
          .timed = {.backend = Backend::Cpu, .planning = Planning::Estimate},  // always timed
          .unavailable = nullptr,
          .fp64_scale = 1.0};
}

SHIFTOP_PLAN_TESTS(Cpu, cpu());

}  // namespace shiftop::btt::plan_test
