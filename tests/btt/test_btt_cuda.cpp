// What only the CUDA plan has (ctest label `gpu`). The operator tests it shares with every backend
// (every op x precision string x nrhs against the CPU plan, the adjoint identity, many right-hand
// sides, bad inputs, ...) are in plan_test.hpp, instantiated for CUDA by test_plan_cuda.cpp. Here,
// against the CPU plan with the same check (plan_checks.hpp: FP64 to 1e-12, the other strings
// within kSlack times the eq. (6) bound, outputs poisoned with NaN): both phase-3 kernels (the
// fused GEMV and cuBLAS) and both transforms forced, and forced FFT lengths, on random sizes
// including odd and tiny ones. Against the dense product: the choices Planning::Measure makes and
// set_gemv. Device pointers on a user stream, CUDA graphs, profiling, and the refusals.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "backend/cuda/device_memory.cuh"
#include "btt/plan_checks.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"
#include "support/dense_reference.hpp"

namespace shiftop::btt {
namespace {

struct Case {
  Shape shape;
  bool triangular;
  GemvImplementation gemv;
  index_t fft_length = 0;  // 0: 2*Nt (the next power of two for FftImplementation::Fused)
  FftImplementation fft = FftImplementation::Auto;
};

index_t power_of_two_at_least(index_t n) {
  index_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  const char* fft[] = {"", "_fusedfft", "_cufft"};
  return fmt::format("nd{}_nm{}_nt{}_{}_{}_L{}{}", c.shape.nd, c.shape.nm, c.shape.nt,
                     c.triangular ? "triangular" : "general",
                     c.gemv == GemvImplementation::Fused ? "fused" : "cublas",
                     c.fft_length != 0 ? c.fft_length
                     : c.fft == FftImplementation::Fused
                         ? power_of_two_at_least(padded_length(c.shape))
                         : padded_length(c.shape),
                     fft[static_cast<int>(c.fft)]);
}

using plan_test::kNaN;
using plan_test::random_operator;
using plan_test::TestOperator;

class CudaAgainstCpu : public ::testing::TestWithParam<Case> {};

TEST_P(CudaAgainstCpu, EveryOpPrecisionAndRhsCount) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto [s, triangular, gemv, fft_length, fft] = GetParam();
  const TestOperator a = random_operator(s, triangular, 11);
  Plan gpu = a.make({.backend = Backend::Cuda,
                     .planning = Planning::Estimate,
                     .gpu_engine = {.gemv = gemv, .fft = fft, .fft_length = fft_length}});
  const index_t length = fft_length != 0                   ? fft_length
                         : fft == FftImplementation::Fused ? power_of_two_at_least(padded_length(s))
                                                           : padded_length(s);
  ASSERT_EQ(gpu.choices().fft_length, length);
  // Estimate plans take our transforms wherever they apply (powers of two from 16 to 8192).
  const bool fused = fft != FftImplementation::Cufft && length >= 16 && length <= 8192 &&
                     length == power_of_two_at_least(length);
  for (Op op : kAllOps)
    ASSERT_EQ(name_of(gpu.choices().of(op).transforms), fused ? "fused" : "cufft");
  plan_test::Reference cpu(a, Backend::Cuda);  // the CPU plan in FP64
  const index_t counts[] = {1, 3, 16, 17};  // 17: a second group of right-hand sides (max_rhs 16)
  const double worst =
      plan_test::expect_every_op_precision_and_rhs(gpu, a, cpu, counts, 17, 1e-12, testing::kSlack);
  fmt::print("largest error/bound {:.3g}\n", worst);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaAgainstCpu,
    ::testing::Values(
        Case{{1, 1, 1}, true, GemvImplementation::Fused},
        Case{{1, 1, 1}, false, GemvImplementation::Cublas},
        // Nd = 1 < Nm, Nm = 1 < Nd and Nt = 1 with several blocks, with either kernel.
        Case{{1, 4, 7}, true, GemvImplementation::Fused},
        Case{{1, 4, 7}, false, GemvImplementation::Cublas},
        Case{{5, 1, 6}, true, GemvImplementation::Cublas},
        Case{{5, 1, 6}, false, GemvImplementation::Fused},
        Case{{2, 3, 1}, true, GemvImplementation::Fused},
        Case{{2, 3, 1}, false, GemvImplementation::Cublas},
        Case{{2, 3, 5}, true, GemvImplementation::Fused},
        Case{{2, 3, 5}, false, GemvImplementation::Cublas},
        Case{{2, 3, 5}, false, GemvImplementation::Fused, 16},
        Case{{7, 33, 16}, false, GemvImplementation::Fused},
        Case{{7, 33, 16}, true, GemvImplementation::Fused, 48},
        Case{{7, 33, 16}, true, GemvImplementation::Cublas},
        Case{{5, 1031, 9}, true, GemvImplementation::Fused},
        Case{{5, 1031, 9}, false, GemvImplementation::Cublas},
        Case{{5, 1031, 9}, false, GemvImplementation::Cublas, 32},
        Case{{37, 300, 12}, false, GemvImplementation::Fused},
        Case{{37, 300, 12}, true, GemvImplementation::Cublas},
        Case{{300, 40, 7}, true, GemvImplementation::Fused},
        Case{{300, 40, 7}, false, GemvImplementation::Cublas},
        // The transforms forced either way, at lengths where Auto takes the other.
        Case{{7, 33, 16}, false, GemvImplementation::Fused, 0, FftImplementation::Cufft},
        Case{{2, 3, 5}, true, GemvImplementation::Cublas, 64, FftImplementation::Fused},
        Case{{5, 1031, 9}, true, GemvImplementation::Fused, 0, FftImplementation::Fused},
        Case{{300, 40, 7}, false, GemvImplementation::Fused, 0, FftImplementation::Fused}),
    case_name);

// Plans built with Planning::Measure time the FFT lengths (2*Nt = 60 or 64 here) and the
// phase-3 kernels and keep the fastest; the result must not depend on the choice.
TEST(Cuda, MeasuredKernelChoiceMatchesTheDenseProduct) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Shape s{6, 50, 30};
  const TestOperator a = random_operator(s, false, 5);
  Plan gpu = a.make({.backend = Backend::Cuda});
  EXPECT_TRUE(gpu.choices().fft_length == 60 || gpu.choices().fft_length == 64)
      << gpu.choices().fft_length;
  const auto dense = testing::dense_block_toeplitz(a.col, a.row, s);
  for (Op op : {Op::F, Op::Fadj}) {
    const auto x = testing::random_vector(static_cast<std::size_t>(input_blocks(op, s) * s.nt), 3);
    std::vector<double> y(static_cast<std::size_t>(output_blocks(op, s) * s.nt), kNaN);
    gpu.apply(op, x, y);
    const auto want = testing::dense_apply(dense, s.nd * s.nt, s.nm * s.nt, op == Op::Fadj, x, 1);
    EXPECT_LE(testing::relative_error(y, want), 1e-13)
        << gpu.choices().of(op).gemv_name() << ", " << name_of(gpu.choices().of(op).transforms)
        << ", L = " << gpu.choices().fft_length;
  }
  // The kernel family can be changed on the plan (as `shiftop tune` does for FP32 phase 3).
  for (GemvImplementation kernel : {GemvImplementation::Cublas, GemvImplementation::Fused}) {
    gpu.set_gemv(kernel);
    for (Op op : {Op::F, Op::Fadj}) {
      const std::string name = gpu.choices().of(op).gemv_name();
      EXPECT_EQ(name.substr(0, 5), kernel == GemvImplementation::Fused ? "fused" : "cubla") << name;
      const auto x =
          testing::random_vector(static_cast<std::size_t>(input_blocks(op, s) * s.nt), 4);
      std::vector<double> y(static_cast<std::size_t>(output_blocks(op, s) * s.nt), kNaN);
      gpu.apply(op, x, y);
      const auto want = testing::dense_apply(dense, s.nd * s.nt, s.nm * s.nt, op == Op::Fadj, x, 1);
      EXPECT_LE(testing::relative_error(y, want), 1e-13) << name;
    }
  }
}

// Device pointers on a user stream, with and without CUDA graphs and with profiling, with our
// transforms and with cuFFT (L = 2 Nt = 64): the same result as the host path, and repeated calls
// (graph replay) stay correct when inputs change.
TEST(Cuda, DevicePointersGraphsAndProfiling) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Shape s{4, 90, 32};
  const TestOperator a = random_operator(s, false, 31);
  Plan reference = a.make({.planning = Planning::Estimate});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::vector<PlanOptions> all;
  for (FftImplementation fft : {FftImplementation::Fused, FftImplementation::Cufft}) {
    const PlanOptions plain{
        .backend = Backend::Cuda, .planning = Planning::Estimate, .gpu_engine = {.fft = fft}};
    PlanOptions graphs = plain, profiled = plain;
    graphs.gpu_engine.graphs = true;
    profiled.gpu_engine.profile = true;
    all.insert(all.end(), {plain, graphs, profiled});
  }
  for (const PlanOptions& options : all) {
    Plan gpu = a.make(options);
    ASSERT_EQ(name_of(gpu.choices().of(Op::F).transforms),
              options.gpu_engine.fft == FftImplementation::Fused ? "fused" : "cufft");
    const index_t nrhs = 3;
    const std::size_t nx = static_cast<std::size_t>(nrhs * s.nm * s.nt);
    const std::size_t ny = static_cast<std::size_t>(nrhs * s.nm * s.nt);
    const cuda::DeviceArray<double> x_d(nx), y_d(ny);
    double *dx = x_d.get(), *dy = y_d.get();
    for (unsigned seed : {1u, 2u, 3u}) {
      const auto x = testing::random_vector(nx, seed);
      std::vector<double> want(ny), got(ny, kNaN);
      reference.apply(Op::FadjF, x, want, nrhs);
      ASSERT_EQ(cudaMemcpyAsync(dx, x.data(), nx * sizeof(double), cudaMemcpyHostToDevice, stream),
                cudaSuccess);
      ASSERT_EQ(cudaMemsetAsync(dy, 0xff, ny * sizeof(double), stream), cudaSuccess);  // NaN
      gpu.apply_device(Op::FadjF, dx, dy, nrhs, stream);
      ASSERT_EQ(
          cudaMemcpyAsync(got.data(), dy, ny * sizeof(double), cudaMemcpyDeviceToHost, stream),
          cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      EXPECT_LE(testing::relative_error(got, want), 1e-12) << "seed " << seed;
    }
    if (options.gpu_engine.profile) {
      const PhaseTimes t = gpu.last_phase_times();
      EXPECT_GT(t[ApplyPhase::Gemv], 0.0);
      EXPECT_GT(t[ApplyPhase::Fft], 0.0);
    }
  }
  cudaStreamDestroy(stream);
}

TEST(Cuda, RefusesFusedTransformsAtOtherLengths) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  // 48 asked for at Nt = 24; or none at Nt = 5000, whose power of two (16384) is too long.
  for (index_t length : {index_t{48}, index_t{0}}) {
    const Shape shape = length == 0 ? Shape{1, 1, 5000} : Shape{1, 2, 24};
    const auto kernels = testing::random_vector(static_cast<std::size_t>(shape.kernel_size()), 2);
    try {
      (void)Plan::create(kernels, shape,
                         {.backend = Backend::Cuda,
                          .gpu_engine = {.fft = FftImplementation::Fused, .fft_length = length}});
      ADD_FAILURE() << "expected an error for length " << length;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(length == 0 ? "needs 16384" : "asked for is 48"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Cuda, RefusesABadDeviceIndex) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Shape s{1, 2, 3};
  const auto k = testing::random_vector(6, 1);
  try {
    (void)Plan::create(k, s, {.backend = Backend::Cuda, .gpu = {.device = 999}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA device 999 is not available"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace shiftop::btt
