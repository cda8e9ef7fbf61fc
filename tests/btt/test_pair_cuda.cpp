// The operator-pair tests of pair_test.hpp on CUDA plans (ctest label gpu; they skip without a
// device), against the dense matrices with the GPU plan suite's FP64 scale (10x the CPU's), and
// what only the GPU pair has: device pointers (the middle never leaves the device), the middle
// buffer counted in a shared context, and a CPU plan with a GPU plan refused.
#include "btt/pair_test.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"

namespace shiftop::btt::pair_test {

BackendUnderTest cuda() {
  return {
      .name = "cuda",
      .options = {.backend = Backend::Cuda, .planning = Planning::Estimate},
      .timed = {},
      .unavailable = [] { return std::string(gpu::device_count() == 0 ? "no CUDA device" : ""); },
      .fp64_scale = 10.0,
      .precision_slack = 1.0};
}

SHIFTOP_PAIR_TESTS(Cuda, cuda());

// apply_device on device arrays (groups of 2, 5 right-hand sides, default stream) equals the host
// apply and the dense products; the output array is poisoned with NaN first.
TEST(CudaPair, DevicePointersEqualTheHostApply) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const PairCase c("both", Shape{3, 5, 16}, Shape{3, 5, 16}, true, 4);
  auto context = gpu::Context::create(0);
  const PlanOptions options{.backend = Backend::Cuda,
                            .max_rhs = 2,
                            .planning = Planning::Estimate,
                            .gpu = {.context = context}};
  auto f = std::make_shared<Plan>(c.f.make(options));
  auto g = std::make_shared<Plan>(c.g.make(options));
  const std::size_t before = context->allocated_bytes();
  OperatorPair pair = OperatorPair::create(f, g, {.max_rhs = 2, .gpu = {.context = context}});
  EXPECT_TRUE(pair.on_device());
  // The middle, input and output buffers of a group of 2 (at most Nm = 5 blocks of 16 doubles
  // each), counted in the shared context.
  EXPECT_EQ(context->allocated_bytes() - before, std::size_t{3 * 2 * 5 * 16 * 8});
  const index_t nrhs = 5;
  for (const PairOp op : kAllPairOps) {
    const auto x = testing::random_vector(size_of(pair, op, true, nrhs), 9);
    std::vector<double> host = poisoned(size_of(pair, op, false, nrhs));
    std::vector<double> device = poisoned(host.size());
    pair.apply(op, x, host, nrhs);
    gpu::DeviceArray dx(x.size(), 0), dy(device.size(), 0);
    dx.upload(x.data());
    dy.upload(device.data());
    pair.apply_device(op, dx.data(), dy.data(), nrhs, nullptr);
    dy.download(device.data());  // on the default stream, after the pair's work
    EXPECT_LT(testing::relative_error(device, host), 1e-15) << name_of(op);
    EXPECT_LT(testing::relative_error(device, c.reference(op, x, nrhs)), 1e-13) << name_of(op);
  }
}

TEST(CudaPair, PlansOnTwoBackendsAreRefused) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const PairCase c("both", Shape{2, 2, 4}, Shape{2, 2, 4}, true, 6);
  auto f = std::make_shared<Plan>(c.f.make({.planning = Planning::Estimate}));
  auto g =
      std::make_shared<Plan>(c.g.make({.backend = Backend::Cuda, .planning = Planning::Estimate}));
  testing::expect_error([&] { (void)OperatorPair::create(f, g); },
                        "F runs on the CPU and G on the GPU: expected both plans on one backend");
}

}  // namespace shiftop::btt::pair_test
