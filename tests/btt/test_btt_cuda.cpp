// The CUDA backend against the CPU backend in FP64 (ctest label `gpu`): every op x every precision
// string x triangular/general x nrhs in {1, 3, 16}, with both phase-3 kernels (the fused GEMV and
// cuBLAS), on random sizes including odd and tiny ones. FP64 configurations must agree to 1e-12;
// the others must stay within kSlack times the eq. (6) bound of tests/precision_bound.hpp (for F*F
// and FF*: kappa * bound(first half) + bound(second half), the first half's error amplified by the
// second operator). Outputs are poisoned with NaN before every run so unwritten elements fail.
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error_type.hpp"
#include "shiftop/gpu/devices.hpp"
#include "support/dense_reference.hpp"
#include "support/precision_bound.hpp"

namespace shiftop::btt {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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

struct Operator {
  std::vector<double> col, row;
  Plan make(const Shape& s, bool triangular, const PlanOptions& options) const {
    return triangular ? Plan::create(col, s, options) : Plan::create_general(col, row, s, options);
  }
};

Operator random_operator(const Shape& s, unsigned seed) {
  const auto n = static_cast<std::size_t>(s.kernel_size());
  Operator op{testing::random_vector(n, seed), testing::random_vector(n, seed + 1)};
  for (index_t k = 0; k < s.nd * s.nm; ++k)
    op.row[static_cast<std::size_t>(k * s.nt)] = op.col[static_cast<std::size_t>(k * s.nt)];
  return op;
}

double mixed_bound(const PrecisionConfig& p, Op op, const Shape& s, double kappa) {
  switch (op) {
    case Op::F:
    case Op::Fadj:
      return testing::eq6_bound(p, op, s, kappa);
    case Op::FadjF:
      return kappa * testing::eq6_bound(p, Op::F, s, kappa) +
             testing::eq6_bound(p, Op::Fadj, s, kappa);
    case Op::FFadj:
      return kappa * testing::eq6_bound(p, Op::Fadj, s, kappa) +
             testing::eq6_bound(p, Op::F, s, kappa);
  }
  return 0;
}

class CudaAgainstCpu : public ::testing::TestWithParam<Case> {};

TEST_P(CudaAgainstCpu, EveryOpPrecisionAndRhsCount) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto [s, triangular, gemv, fft_length, fft] = GetParam();
  const Operator a = random_operator(s, 11);
  Plan cpu = a.make(s, triangular, {.planning = Planning::Estimate});
  Plan gpu = a.make(s, triangular,
                    {.backend = Backend::Cuda,
                     .planning = Planning::Estimate,
                     .gpu = {.gemv = gemv, .fft = fft, .fft_length = fft_length}});
  const index_t length = fft_length != 0                   ? fft_length
                         : fft == FftImplementation::Fused ? power_of_two_at_least(padded_length(s))
                                                           : padded_length(s);
  ASSERT_EQ(gpu.choices().fft_length, length);
  // Estimate plans take our transforms wherever they apply (powers of two from 16 to 8192).
  const bool fused = fft != FftImplementation::Cufft && length >= 16 && length <= 8192 &&
                     length == power_of_two_at_least(length);
  for (Op op : kAllOps)
    ASSERT_EQ(to_string(gpu.choices().of(op).transforms), fused ? "fused" : "cufft");
  const double kappa =
      testing::spectrum_condition_number(a.col, triangular ? std::span<const double>{} : a.row, s);
  for (Op op : kAllOps) {
    for (index_t nrhs : {1, 3, 16}) {
      const auto x =
          testing::random_vector(static_cast<std::size_t>(nrhs * input_blocks(op, s) * s.nt), 17);
      std::vector<double> exact(static_cast<std::size_t>(nrhs * output_blocks(op, s) * s.nt));
      cpu.apply(op, x, exact, nrhs);
      for (const PrecisionConfig& config : PrecisionConfig::all()) {
        gpu.set_precision(config.str());
        std::vector<double> y(exact.size(), kNaN);
        gpu.apply(op, x, y, nrhs);
        const double error = testing::relative_error(y, exact);
        SCOPED_TRACE(fmt::format("{} nrhs={} {} error {:.3e} kappa {:.2e}", to_string(op), nrhs,
                                 config.str(), error, kappa));
        if (config.all_double())
          ASSERT_LE(error, 1e-12);
        else
          ASSERT_LE(error, testing::kSlack * mixed_bound(config, op, s, kappa));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaAgainstCpu,
    ::testing::Values(
        Case{{1, 1, 1}, true, GemvImplementation::Fused},
        Case{{1, 1, 1}, false, GemvImplementation::Cublas},
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
  const Operator a = random_operator(s, 5);
  Plan gpu = a.make(s, false, {.backend = Backend::Cuda});
  EXPECT_TRUE(gpu.choices().fft_length == 60 || gpu.choices().fft_length == 64)
      << gpu.choices().fft_length;
  const auto dense = testing::dense_block_toeplitz(a.col, a.row, s);
  for (Op op : {Op::F, Op::Fadj}) {
    const auto x = testing::random_vector(static_cast<std::size_t>(input_blocks(op, s) * s.nt), 3);
    std::vector<double> y(static_cast<std::size_t>(output_blocks(op, s) * s.nt), kNaN);
    gpu.apply(op, x, y);
    const auto want = testing::dense_apply(dense, s.nd * s.nt, s.nm * s.nt, op == Op::Fadj, x, 1);
    EXPECT_LE(testing::relative_error(y, want), 1e-13)
        << gpu.choices().of(op).gemv_name() << ", " << to_string(gpu.choices().of(op).transforms)
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

TEST(Cuda, AdjointIdentityOnTheDevice) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Shape s{9, 70, 31};
  const Operator a = random_operator(s, 21);
  Plan gpu = a.make(s, true, {.backend = Backend::Cuda, .planning = Planning::Estimate});
  const auto m = testing::random_vector(static_cast<std::size_t>(s.nm * s.nt), 1);
  const auto d = testing::random_vector(static_cast<std::size_t>(s.nd * s.nt), 2);
  std::vector<double> fm(d.size(), kNaN), fd(m.size(), kNaN);
  gpu.apply(Op::F, m, fm);
  gpu.apply(Op::Fadj, d, fd);
  const double lhs = testing::dot(fm, d), rhs = testing::dot(m, fd);
  EXPECT_NEAR(lhs, rhs, 1e-12 * std::abs(lhs));
}

// Device pointers on a user stream, with and without CUDA graphs and with profiling, with our
// transforms and with cuFFT (L = 2 Nt = 64): the same result as the host path, and repeated calls
// (graph replay) stay correct when inputs change.
TEST(Cuda, DevicePointersGraphsAndProfiling) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Shape s{4, 90, 32};
  const Operator a = random_operator(s, 31);
  Plan reference = a.make(s, false, {.planning = Planning::Estimate});
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::vector<PlanOptions> all;
  for (FftImplementation fft : {FftImplementation::Fused, FftImplementation::Cufft}) {
    const PlanOptions plain{
        .backend = Backend::Cuda, .planning = Planning::Estimate, .gpu = {.fft = fft}};
    PlanOptions graphs = plain, profiled = plain;
    graphs.gpu.graphs = true;
    profiled.gpu.profile = true;
    all.insert(all.end(), {plain, graphs, profiled});
  }
  for (const PlanOptions& options : all) {
    Plan gpu = a.make(s, false, options);
    ASSERT_EQ(to_string(gpu.choices().of(Op::F).transforms),
              options.gpu.fft == FftImplementation::Fused ? "fused" : "cufft");
    const index_t nrhs = 3;
    const std::size_t nx = static_cast<std::size_t>(nrhs * s.nm * s.nt);
    const std::size_t ny = static_cast<std::size_t>(nrhs * s.nm * s.nt);
    double *dx = nullptr, *dy = nullptr;
    ASSERT_EQ(cudaMalloc(&dx, nx * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dy, ny * sizeof(double)), cudaSuccess);
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
    if (options.gpu.profile) {
      const PhaseTimes t = gpu.last_phase_times();
      EXPECT_GT(t[ApplyPhase::Gemv], 0.0);
      EXPECT_GT(t[ApplyPhase::Fft], 0.0);
    }
    cudaFree(dx);
    cudaFree(dy);
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
                          .gpu = {.fft = FftImplementation::Fused, .fft_length = length}});
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
