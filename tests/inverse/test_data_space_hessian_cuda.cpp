// The GPU side of the solve layer (label gpu): the device methods of the noise and the priors
// (src/inverse/cuda/) against their host methods, and the data-space Hessian on the GPU (K on the
// device, cuSOLVER's Cholesky) against the same Hessian on the CPU, which
// test_data_space_hessian.cpp checks against the dense references. The bounds are upper bounds
// of FP64 round-off differences between two orders of summation (the errors are printed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "data_space_reference.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/inverse/data_space_hessian.hpp"
#include "support/expect_error.hpp"

namespace shiftop::inverse {
namespace {

using testing::DataSpaceCase;
using testing::PriorKind;

btt::PlanOptions options_for(btt::Backend backend) {
  btt::PlanOptions options;
  options.backend = backend;
  options.planning = btt::Planning::Estimate;
  options.max_rhs = 3;
  return options;
}

// y = apply(x) on the device for a host x, through device arrays on the default stream.
template <typename Apply>
std::vector<double> on_device(const std::vector<double>& x, std::size_t out_size, Apply apply) {
  gpu::DeviceArray dx(x.size(), 0), dy(out_size, 0);
  dx.upload(x.data());
  apply(dx.data(), dy.data());
  std::vector<double> y(out_size);
  dy.download(y.data());
  gpu::synchronize(0);
  return y;
}

TEST(SolveDevice, NoiseAndPriorsMatchTheirHostMethods) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const index_t nrhs = 5, nt = 9;
  const auto problem_of = [&](PriorKind kind) {
    return testing::make_problem({{3, 4, nt}, 1, kind}, options_for(btt::Backend::Cuda), 61);
  };
  const auto noise_problem = problem_of(PriorKind::Diagonal);
  const GaussianNoise noise(noise_problem.noise_variances, nt);
  const auto d = testing::random_vector(static_cast<std::size_t>(nrhs * 3 * nt), 62);
  std::vector<double> want(d.size());
  noise.apply(d, want, nrhs);
  EXPECT_LT(testing::relative_error(on_device(d, d.size(),
                                              [&](const double* x, double* y) {
                                                noise.apply_device(x, y, nrhs, nullptr);
                                              }),
                                    want),
            1e-15);
  noise.apply_inverse(d, want, nrhs);
  EXPECT_LT(testing::relative_error(on_device(d, d.size(),
                                              [&](const double* x, double* y) {
                                                noise.apply_inverse_device(x, y, nrhs, nullptr);
                                              }),
                                    want),
            1e-15);

  for (const PriorKind kind : {PriorKind::Diagonal, PriorKind::Smoothing, PriorKind::Kernels}) {
    const auto problem = problem_of(kind);
    const auto m = testing::random_vector(static_cast<std::size_t>(nrhs * 4 * nt), 63);
    std::vector<double> host(m.size());
    problem.prior->apply_covariance(m, host, nrhs);
    const auto device = on_device(m, m.size(), [&](const double* x, double* y) {
      problem.prior->apply_covariance_device(x, y, nrhs, nullptr);
    });
    const double error = testing::relative_error(device, host);
    std::printf("%s prior on the device: relative difference %.2e\n", testing::prior_name(kind),
                error);
    EXPECT_LT(error, 1e-13) << testing::prior_name(kind);
  }
}

class DataSpaceHessianCuda : public ::testing::TestWithParam<DataSpaceCase> {};

TEST_P(DataSpaceHessianCuda, EqualsTheCpuHessian) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto cpu = testing::make_problem(GetParam(), options_for(btt::Backend::Cpu), 71);
  const auto gpu = testing::make_problem(GetParam(), options_for(btt::Backend::Cuda), 71);
  const index_t n = cpu.shape.nd * cpu.shape.nt, m = cpu.shape.nm * cpu.shape.nt;
  const auto context = gpu::Context::create(0);
  const std::size_t before = context->allocated_bytes();
  auto build = [](const testing::DataSpaceProblem& p, std::shared_ptr<gpu::Context> ctx) {
    DataSpaceHessianOptions options;
    options.rhs_per_apply = 5;
    options.qoi = p.Q;
    options.prior_mean = p.prior_mean;
    options.context = std::move(ctx);
    return std::make_unique<DataSpaceHessian>(p.F, GaussianNoise(p.noise_variances, p.shape.nt),
                                              p.prior, std::move(options));
  };
  const auto on_cpu = build(cpu, nullptr);
  const auto on_gpu = build(gpu, context);
  EXPECT_FALSE(on_cpu->on_device());
  EXPECT_TRUE(on_gpu->on_device());
  EXPECT_GE(context->allocated_bytes() - before, static_cast<std::size_t>(8 * n * n));

  const double matrix_error = testing::max_relative_difference(on_gpu->matrix(), on_cpu->matrix());
  EXPECT_EQ(on_gpu->gram_assembly(), GetParam().prior == PriorKind::Diagonal);
  if (on_gpu->gram_assembly()) {  // the Gram kernels against the applies on the same GPU
    DataSpaceHessianOptions options;
    options.rhs_per_apply = 5;
    options.assembly = DataSpaceAssembly::Applies;
    options.context = context;
    const DataSpaceHessian applies(gpu.F, GaussianNoise(gpu.noise_variances, gpu.shape.nt),
                                   gpu.prior, std::move(options));
    const double gram_error = testing::max_relative_difference(on_gpu->matrix(), applies.matrix());
    std::printf("GPU Gram K vs GPU applies: %.2e\n", gram_error);
    EXPECT_LT(gram_error, 5e-15);
  }
  const index_t nrhs = 7;  // two groups of 5
  const auto d = testing::random_vector(static_cast<std::size_t>(nrhs * n), 72);
  std::vector<double> m_cpu(static_cast<std::size_t>(nrhs * m)), m_gpu(m_cpu.size(), std::nan(""));
  on_cpu->map_point(d, m_cpu, nrhs);
  on_gpu->map_point(d, m_gpu, nrhs);
  const index_t nq = cpu.nq * cpu.shape.nt;
  std::vector<double> q_cpu(static_cast<std::size_t>(nrhs * nq)), q_gpu(q_cpu.size(), std::nan(""));
  on_cpu->qoi_map(d, q_cpu, nrhs);
  on_gpu->qoi_map(d, q_gpu, nrhs);
  std::vector<ParameterIndex> indices;
  for (index_t j = 0; j < cpu.shape.nm; ++j)
    for (index_t t = 0; t < cpu.shape.nt; t += 3)
      indices.push_back({j, t});
  const auto v_cpu = on_cpu->posterior_variance(indices);
  const auto v_gpu = on_gpu->posterior_variance(indices);
  const auto qv_cpu = on_cpu->qoi_variance();
  const auto qv_gpu = on_gpu->qoi_variance();
  const std::vector<double> qv_cpu_values(qv_cpu.begin(), qv_cpu.end());
  const std::vector<double> qv_gpu_values(qv_gpu.begin(), qv_gpu.end());
  const double map_error = testing::relative_error(m_gpu, m_cpu);
  const double qoi_error = testing::relative_error(q_gpu, q_cpu);
  const double variance_error = testing::max_relative_difference(v_gpu, v_cpu);
  const double qoi_variance_error = testing::max_relative_difference(qv_gpu_values, qv_cpu_values);
  std::printf("GPU vs CPU: K %.2e, MAP %.2e, QoI MAP %.2e, variance %.2e, QoI variance %.2e\n",
              matrix_error, map_error, qoi_error, variance_error, qoi_variance_error);
  EXPECT_LT(matrix_error, 1e-12);
  EXPECT_LT(map_error, 1e-10);
  EXPECT_LT(qoi_error, 1e-10);
  EXPECT_LT(variance_error, 1e-10);
  EXPECT_LT(qoi_variance_error, 1e-10);

  if (!cpu.prior->has_sqrt()) return;
  const index_t count = 6;
  const auto one = std::span(d).first(static_cast<std::size_t>(n));
  std::vector<double> s_cpu(static_cast<std::size_t>(count * m)), s_gpu(s_cpu.size(), std::nan(""));
  on_cpu->sample(one, count, 99, s_cpu);  // the same seed gives the same normals on both
  on_gpu->sample(one, count, 99, s_gpu);
  const double sample_error = testing::relative_error(s_gpu, s_cpu);
  std::printf("GPU vs CPU: samples %.2e\n", sample_error);
  EXPECT_LT(sample_error, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Cuda, DataSpaceHessianCuda,
                         ::testing::Values(DataSpaceCase{{3, 4, 7}, 2, PriorKind::Diagonal},
                                           DataSpaceCase{{3, 4, 7}, 2, PriorKind::Smoothing},
                                           DataSpaceCase{{3, 4, 7}, 2, PriorKind::Kernels},
                                           DataSpaceCase{{1, 5, 9}, 1, PriorKind::Smoothing},
                                           DataSpaceCase{{4, 1, 5}, 3, PriorKind::Diagonal},
                                           DataSpaceCase{{20, 30, 64}, 2, PriorKind::Smoothing},
                                           DataSpaceCase{{20, 30, 64}, 2, PriorKind::Diagonal},
                                           DataSpaceCase{{7, 3, 300}, 1, PriorKind::Diagonal},
                                           DataSpaceCase{{1, 1, 1}, 1, PriorKind::Diagonal},
                                           DataSpaceCase{{3, 5, 1}, 1, PriorKind::Diagonal}));

TEST(DataSpaceHessianCudaInputs, RefusesAPriorOrQoiMapOnTheCpu) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const DataSpaceCase c{{2, 3, 5}, 1, PriorKind::Smoothing};
  const auto gpu = testing::make_problem(c, options_for(btt::Backend::Cuda), 81);
  const auto cpu = testing::make_problem(c, options_for(btt::Backend::Cpu), 81);
  const GaussianNoise noise(gpu.noise_variances, 5);
  testing::expect_error([&] { DataSpaceHessian(gpu.F, noise, cpu.prior); },
                        "the smoothing prior's plan runs on the CPU");
  testing::expect_error([&] { DataSpaceHessian(gpu.F, noise, gpu.prior, {.qoi = cpu.Q}); },
                        "the QoI map's plan runs on the CPU");
}

TEST(DataSpaceHessianCudaInputs, RefusesAnIndefiniteMatrix) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  // As on the CPU: F Gamma_prior F^T = -2 at every step, so K = 1e-3 - 2.
  const index_t nt = 4;
  std::vector<double> f(2 * nt, 0.0), c(4 * nt, 0.0);
  f[0] = 1;
  f[nt] = -1;
  c[0] = c[3 * nt] = 1;
  c[nt] = c[2 * nt] = 2;
  const auto options = options_for(btt::Backend::Cuda);
  const auto F = std::make_shared<btt::Plan>(btt::Plan::create(f, {1, 2, nt}, options));
  const auto prior = std::make_shared<KernelPrior>(c, Shape{2, 2, nt}, options);
  testing::expect_error([&] { DataSpaceHessian(F, GaussianNoise({1e-3}, nt), prior); },
                        "is not positive definite: its leading minor of order 1");
}

TEST(DataSpaceHessianCudaInputs, RefusesAMatrixLargerThanTheDevice) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  // K would be (1024 * 1024)^2 doubles = 8 TiB.
  const Shape shape{1024, 1, 1024};
  std::vector<double> f(static_cast<std::size_t>(shape.nd * shape.nt), 0.0);
  f[0] = 1;
  auto options = options_for(btt::Backend::Cuda);
  options.max_rhs = 1;
  const auto F = std::make_shared<btt::Plan>(btt::Plan::create(f, shape, options));
  const auto prior = std::make_shared<DiagonalPrior>(std::vector{1.0}, shape.nt);
  testing::expect_error(
      [&] {
        DataSpaceHessian(F, GaussianNoise(std::vector<double>(1024, 1.0), shape.nt), prior,
                         {.rhs_per_apply = 1});
      },
      "GiB of GPU memory (K = Gamma_noise + F Gamma_prior F* is Nd*Nt = 1048576 rows square");
}

}  // namespace
}  // namespace shiftop::inverse
