// The regularisation path with the GSVDs on a GPU (RegPathOptions::backend = Backend::Cuda)
// against the same path on the CPU (test_regpath checks the CPU against the dense embedded
// problem): curves and solutions at alphas over decades, tall, wide and square frequency blocks,
// every regulariser kind. The GPU GSVD equals the CPU's within rounding, not bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/inverse/regpath.hpp"

namespace shiftop::inverse {
namespace {

struct Case {
  Shape shape;
  bool general;
  int k;
  bool laplacian;
};

class RegPathCuda : public ::testing::TestWithParam<Case> {};

TEST_P(RegPathCuda, MatchesTheCpuPath) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Case c = GetParam();
  const Shape s = c.shape;
  std::mt19937_64 rng(static_cast<unsigned>(s.nd * 1000 + s.nm * 100 + s.nt));
  std::normal_distribution<double> normal;
  std::vector<double> column(static_cast<std::size_t>(s.kernel_size())), row, data;
  for (double& v : column)
    v = normal(rng);
  if (c.general) {
    row.resize(column.size());
    for (double& v : row)
      v = normal(rng);
    for (index_t k = 0; k < s.nd * s.nm; ++k)
      row[static_cast<std::size_t>(k * s.nt)] = column[static_cast<std::size_t>(k * s.nt)];
  }
  data.resize(static_cast<std::size_t>(s.nd * s.nt));
  for (double& v : data)
    v = normal(rng);
  Regulariser r;
  r.mass = 0.8;
  r.time_derivative = c.k;
  r.time_weight = 1.2;
  if (c.laplacian) {
    r.laplacian.assign(static_cast<std::size_t>(s.nm * s.nm), 0.0);
    for (index_t i = 0; i + 1 < s.nm; ++i) {
      const auto a = static_cast<std::size_t>(i * s.nm + i), b = a + 1,
                 cc = static_cast<std::size_t>((i + 1) * s.nm + i), d = cc + 1;
      r.laplacian[a] += 1, r.laplacian[d] += 1, r.laplacian[b] -= 1, r.laplacian[cc] -= 1;
    }
  }
  RegPathOptions gpu_options;
  gpu_options.backend = Backend::Cuda;
  const RegularizationPath cpu(column, row, s, r, data);
  const RegularizationPath gpu(column, row, s, r, data, gpu_options);
  const std::vector<double> alphas = {1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0};
  const auto want = cpu.evaluate(alphas), got = gpu.evaluate(alphas);
  double worst_curve = 0, worst_m = 0;
  for (std::size_t k = 0; k < alphas.size(); ++k) {
    worst_curve =
        std::max({worst_curve,
                  std::abs(got[k].residual_norm - want[k].residual_norm) / want[k].residual_norm,
                  std::abs(got[k].seminorm - want[k].seminorm) / want[k].seminorm,
                  std::abs(got[k].gcv - want[k].gcv) / want[k].gcv});
    const auto m_cpu = cpu.solve(alphas[k]), m_gpu = gpu.solve(alphas[k]);
    double diff = 0, scale = 0;
    for (std::size_t j = 0; j < m_cpu.size(); ++j) {
      diff = std::max(diff, std::abs(m_gpu[j] - m_cpu[j]));
      scale = std::max(scale, std::abs(m_cpu[j]));
    }
    worst_m = std::max(worst_m, diff / scale);
  }
  std::printf("[ measured ] GPU vs CPU: curves %.3g, solutions %.3g\n", worst_curve, worst_m);
  // Not yet measured on a GPU (written without one): the CPU against the dense problem is at
  // most 2.7e-11 (curves) and 6.1e-14 (solutions) on the small cases; tighten once measured.
  EXPECT_LT(worst_curve, 1e-9);
  EXPECT_LT(worst_m, 1e-9);
  for (index_t w = 0; w <= s.nt; ++w) {
    const auto a = cpu.generalized_values(w), b = gpu.generalized_values(w);
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(b[i], a[i], 1e-10 * std::max(1.0, a[0])) << "w " << w << " i " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, RegPathCuda,
    ::testing::Values(Case{{1, 1, 1}, false, 0, false}, Case{{2, 3, 4}, true, 1, false},
                      Case{{4, 2, 5}, false, 2, false}, Case{{3, 5, 7}, true, 1, true},
                      Case{{16, 16, 33}, false, 0, false}, Case{{9, 40, 20}, true, 2, true}));

}  // namespace
}  // namespace shiftop::inverse
