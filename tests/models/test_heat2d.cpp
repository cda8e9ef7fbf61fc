// Heat2d against independent references: a dense B (A^s)^t S C (S = sum_{q<s} A^q), the causal
// convolution of its kernels,
// the adjoint identity, and the physics of diffusion.
#include "shiftop/models/heat2d.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <vector>

#include "models/model_test_support.hpp"

namespace shiftop::models {
namespace {

using namespace model_testing;

std::vector<double> random_vector(index_t size, unsigned seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(size));
  for (double& x : v)
    x = uniform(engine);
  return v;
}

// B (A^s)^t S C, S = sum_{q<s} A^q, from dense A, B, C built from the grid coordinates, with A^s
// and S formed explicitly; [nd][nm][nt].
std::vector<double> dense_kernels(const Heat2d& model) {
  const Heat2dConfig& config = model.config();
  const auto n = static_cast<std::size_t>(config.n);
  const std::size_t points = n * n;
  const double h = 1.0 / static_cast<double>(n + 1);
  const double r = config.dt * config.kappa / (h * h);

  Matrix a(points, points);
  for (std::size_t row = 0; row < n; ++row)
    for (std::size_t col = 0; col < n; ++col) {
      const std::size_t p = row * n + col;
      a(p, p) = 1 - 4 * r;
      if (row > 0) a(p, p - n) = r;
      if (row + 1 < n) a(p, p + n) = r;
      if (col > 0) a(p, p - 1) = r;
      if (col + 1 < n) a(p, p + 1) = r;
    }
  // B samples the sensor points, C has the gain dt at the source points (m is a source rate).
  return dense_lti_kernels(a, config, [&](std::size_t) { return config.dt; });
}

// d[i][k] = sum_{s<=k} sum_j F_{k-s}[i][j] m[j][s], straight from the kernels.
std::vector<double> causal_convolution(const std::vector<double>& kernels, const Shape& shape,
                                       const std::vector<double>& m) {
  const auto nd = static_cast<std::size_t>(shape.nd);
  const auto nm = static_cast<std::size_t>(shape.nm);
  const auto nt = static_cast<std::size_t>(shape.nt);
  std::vector<double> d(nd * nt, 0.0);
  for (std::size_t i = 0; i < nd; ++i)
    for (std::size_t k = 0; k < nt; ++k)
      for (std::size_t s = 0; s <= k; ++s)
        for (std::size_t j = 0; j < nm; ++j)
          d[i * nt + k] += kernels[(i * nm + j) * nt + (k - s)] * m[j * nt + s];
  return d;
}

TEST(Heat2d, KernelsMatchDenseProductOnTinyGrids) {
  const double limit5 = Heat2d::max_stable_dt(5, 0.7);
  for (const index_t substeps : {1, 3}) {
    const std::vector<Heat2d> models = {
        // A sensor on a source (12), one on the boundary row, kappa != 1, half the stable dt.
        Heat2d({.n = 5,
                .kappa = 0.7,
                .dt = 0.5 * limit5,
                .nt = 25,
                .sources = {0, 7, 12, 24},
                .sensors = {3, 12, 20},
                .substeps = substeps}),
        // Exactly at the stability limit.
        Heat2d({.n = 6,
                .dt = Heat2d::max_stable_dt(6, 1.0),
                .nt = 30,
                .sources = {1, 14, 35},
                .sensors = {5, 30},
                .substeps = substeps}),
        Heat2d::with_default_layout(4, 5, 3, 20, substeps),
    };
    for (const Heat2d& model : models) {
      EXPECT_EQ(model.config().substeps, substeps);
      const std::vector<double> reference = dense_kernels(model);
      EXPECT_LT(relative_error(model.kernels(), reference), 1e-14)
          << "n = " << model.config().n << ", substeps = " << substeps;
    }
  }
}

TEST(Heat2d, ForwardMatchesCausalConvolutionOfKernels) {
  for (const index_t substeps : {1, 4}) {
    const Heat2d model = Heat2d::with_default_layout(9, 6, 3, 40, substeps);
    const Shape shape = model.shape();
    const std::vector<double> m = random_vector(shape.nm * shape.nt, 1);
    std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
    model.apply_forward(m, d);
    EXPECT_LT(relative_error(d, causal_convolution(model.kernels(), shape, m)), 1e-12)
        << "substeps = " << substeps;
  }
}

TEST(Heat2d, AdjointIdentity) {
  for (const index_t substeps : {1, 4}) {
    const Heat2d model = Heat2d::with_default_layout(10, 7, 4, 50, substeps);
    const Shape shape = model.shape();
    expect_adjoint_identity(model, random_vector(shape.nm * shape.nt, 2),
                            random_vector(shape.nd * shape.nt, 3));
  }
}

TEST(Heat2d, ConstantSourceGivesNonnegativeIncreasingResponse) {
  const Heat2d model = Heat2d::with_default_layout(12, 4, 5, 300);
  const Shape shape = model.shape();
  const auto nt = static_cast<std::size_t>(shape.nt);
  const std::vector<double> m(static_cast<std::size_t>(shape.nm * shape.nt), 1.0);
  std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
  model.apply_forward(m, d);
  for (std::size_t i = 0; i < static_cast<std::size_t>(shape.nd); ++i) {
    const double* response = d.data() + i * nt;
    EXPECT_GE(response[0], 0.0);
    for (std::size_t k = 1; k < nt; ++k)
      EXPECT_GE(response[k], response[k - 1]) << i << " " << k;
    EXPECT_GT(response[nt - 1], response[nt / 2]) << "sensor " << i;
  }
}

TEST(Heat2d, KernelsArriveAtManhattanDistanceThenDecay) {
  const Heat2d model = Heat2d::with_default_layout(12, 4, 5, 300);
  const Heat2dConfig& config = model.config();
  const Shape shape = model.shape();
  const std::vector<double> kernels = model.kernels();
  const auto nt = static_cast<std::size_t>(shape.nt);
  for (std::size_t i = 0; i < config.sensors.size(); ++i)
    for (std::size_t j = 0; j < config.sources.size(); ++j) {
      const double* f = kernels.data() + (i * config.sources.size() + j) * nt;
      // The 5-point stencil moves heat one grid point per step.
      const index_t sensor = config.sensors[i];
      const index_t source = config.sources[j];
      const auto distance =
          static_cast<std::size_t>(std::abs(sensor / config.n - source / config.n) +
                                   std::abs(sensor % config.n - source % config.n));
      ASSERT_LT(distance, nt);
      double peak = 0;
      std::size_t peak_at = 0;
      for (std::size_t t = 0; t < nt; ++t) {
        if (t < distance)
          EXPECT_EQ(f[t], 0.0);
        else
          EXPECT_GT(f[t], 0.0);
        if (f[t] > peak) {
          peak = f[t];
          peak_at = t;
        }
      }
      // Heat diffuses and leaves through the Dirichlet boundary.
      EXPECT_LT(peak_at, nt / 2);
      EXPECT_LT(f[nt - 1], 1e-2 * peak) << "sensor " << i << ", source " << j;
    }
}

TEST(Heat2d, DefaultLayoutSeparatesSourcesAndSensors) {
  const index_t n = 8;
  const Heat2d model = Heat2d::with_default_layout(n, 10, 7, 5);
  EXPECT_EQ(model.shape(), (Shape{.nd = 7, .nm = 10, .nt = 5}));
  const Heat2dConfig& config = model.config();
  EXPECT_EQ(std::set<index_t>(config.sources.begin(), config.sources.end()).size(), 10u);
  EXPECT_EQ(std::set<index_t>(config.sensors.begin(), config.sensors.end()).size(), 7u);
  for (index_t p : config.sources)
    EXPECT_LT(p % n, n / 2);
  for (index_t p : config.sensors)
    EXPECT_GE(p % n, n / 2);
  EXPECT_EQ(config.dt, 0.9 * Heat2d::max_stable_dt(n, 1.0));
  // Every point of each half can be used.
  EXPECT_EQ(Heat2d::with_default_layout(n, 32, 32, 5).shape(),
            (Shape{.nd = 32, .nm = 32, .nt = 5}));
}

TEST(Heat2d, RejectsBadInput) {
  const Heat2dConfig config{.n = 6, .nt = 10, .sources = {0, 5}, .sensors = {30}};
  const auto expect_config_error = config_error_checker<Heat2d>(config);
  expect_config_error([](Heat2dConfig& c) { c.dt = 1.01 * Heat2d::max_stable_dt(c.n, c.kappa); },
                      "unstable for explicit Euler");
  expect_config_error([](Heat2dConfig& c) { c.sources.push_back(36); },
                      "source 2 is grid point 36, outside 0..35");
  expect_config_error([](Heat2dConfig& c) { c.sensors = {-1}; }, "sensor 0 is grid point -1");
  expect_config_error([](Heat2dConfig& c) { c.sensors.clear(); }, "no sensors");
  expect_config_error([](Heat2dConfig& c) { c.n = 0; }, "n = 0");
  expect_config_error([](Heat2dConfig& c) { c.kappa = -1; }, "kappa");
  expect_config_error([](Heat2dConfig& c) { c.substeps = 0; }, "substeps = 0 must be at least 1");
  expect_error([] { Heat2d::with_default_layout(4, 9, 1, 10); }, "expected 1..8 sources");
  expect_error([] { Heat2d::with_default_layout(4, 2, 1, 10, -2); }, "substeps = -2");

  expect_vector_size_errors(Heat2d{config});  // nd = 1, nm = 2, nt = 10
}

}  // namespace
}  // namespace shiftop::models
